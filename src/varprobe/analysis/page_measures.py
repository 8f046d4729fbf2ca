"""What the results page shows from a run's per-context tables beyond its summary tables: the
bootstrap intervals the summaries lack, and the measured causes of the page's disagreements with
the papers (failure reasons, the oracles' resplits, the regression's coding, the human row's
tie-breaking, the bin counts behind Full-ECE's RSD). Each ``*_table`` function takes tables and
returns one table of a declared schema (``varprobe.tables.SCHEMAS``), which a workflow rule
writes (``varprobe.cli.page_measures``) and the page reads (``varprobe.results_page``).
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass

import numpy as np
import pandas as pd

from varprobe.analysis.next_word import ControlSettings, human_counts, oracle_splits
from varprobe.metrics.bootstrap import bootstrap_mean_ci
from varprobe.metrics.calibration import ece
from varprobe.metrics.distributions import mle, tvd
from varprobe.metrics.token_calibration import relative_std
from varprobe.words import has_word_char


def _rng(seed: int, stream: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([seed, 39, stream]))


def ece_interval(confidence: np.ndarray, hit: np.ndarray, *, bins: int, resamples: int,
                 rng: np.random.Generator) -> tuple[float, float]:
    """95% percentile-bootstrap interval of ECE over contexts: resample the contexts with
    replacement ``resamples`` times and recompute the binned ECE of each resample.

    Parameters
    ----------
    confidence : numpy.ndarray
        Each context's confidence, in [0, 1], shape ``(contexts,)``.
    hit : numpy.ndarray
        Whether each context's prediction is right, bool, shape ``(contexts,)``.
    bins : int
        The ECE's equal-width bins.
    resamples : int
        Bootstrap resamples.
    rng : numpy.random.Generator
        The bootstrap's generator.

    Returns
    -------
    lower : float
    upper : float
    """
    n = len(confidence)
    values = [ece(confidence[i], hit[i], bins) for i in (rng.integers(0, n, n) for _ in range(resamples))]
    return float(np.quantile(values, 0.025)), float(np.quantile(values, 0.975))


def system_intervals(tvd: pd.DataFrame, bins: int, resamples: int, seed: int) -> dict[str, tuple]:
    """Bootstrap intervals over contexts (those with a model word) of one system's per-context
    table (schema ``provo_tvd``): E TVD(M, O1) and the ECE against the corpus word and against
    the human majority (the former over the contexts that have a corpus word). The
    oracle-1-majority ECE needs each resplit's oracle mode, which the table does not keep: it has
    none. A system with no word anywhere has no interval.

    Parameters
    ----------
    tvd : pandas.DataFrame
        A ``provo_tvd`` table.
    bins : int
        The ECE's bins.
    resamples : int
        Bootstrap resamples.
    seed : int
        The bootstrap's seed.

    Returns
    -------
    dict of str to (float, float)
        Each quantity's interval (empty for a system with no word).
    """
    used = tvd[tvd["tvd"].notna()]
    if used.empty:
        return {}
    confidence = used["confidence"].to_numpy(dtype=float)
    out = {"tvd_oracle1": bootstrap_mean_ci(used["tvd_model_oracle1"].to_numpy(dtype=float),
                                            _rng(seed, 1), n_resamples=resamples)[1:]}
    for stream, (column, target) in enumerate((("ece_corpus", "corpus_word"),
                                               ("ece_human_majority", "human_majority")), start=2):
        known = (used[target] != "").to_numpy()  # a context without a corpus word is no miss
        if known.any():
            hit = (used["model_mode"] == used[target]).to_numpy()
            out[column] = ece_interval(confidence[known], hit[known], bins=bins, resamples=resamples,
                                         rng=_rng(seed, stream))
    return out


def oracle_to_humans(oracle_tvd: pd.DataFrame, resamples: int, seed: int) -> tuple[float, float, float]:
    """E TVD(O2, H), oracle 2 against all humans, with its bootstrap interval (the oracle
    control's ``tvd`` column): half against all, not the paper's oracle number.

    Parameters
    ----------
    oracle_tvd : pandas.DataFrame
        The oracle control's ``provo_tvd`` table.
    resamples : int
        Bootstrap resamples.
    seed : int
        The bootstrap's seed.

    Returns
    -------
    mean : float
    lower : float
    upper : float
    """
    return bootstrap_mean_ci(oracle_tvd["tvd"].to_numpy(dtype=float), _rng(seed, 5), n_resamples=resamples)


def mse_intervals(contexts: pd.DataFrame, resamples: int, seed: int) -> dict[tuple, tuple[float, float]]:
    """Bootstrap intervals over contexts of the sample-size MSE (schema ``sample_size_contexts``):
    per (model, decoding, size), the mean of the finite squared errors resampled ``resamples``
    times.

    Parameters
    ----------
    contexts : pandas.DataFrame
        A ``sample_size_contexts`` table.
    resamples : int
        Bootstrap resamples.
    seed : int
        The bootstrap's seed.

    Returns
    -------
    dict of (str, str, int) to (float, float)
        The interval by ``(model, decoding, size)``.
    """
    out = {}
    for stream, (key, group) in enumerate(contexts.groupby(["model", "decoding", "size"]), start=10):
        errors = group["squared_error"].to_numpy(dtype=float)
        errors = errors[np.isfinite(errors)]
        if errors.size:
            out[key] = bootstrap_mean_ci(errors, _rng(seed, stream), n_resamples=resamples)[1:]
    return out


PAPER_PROTOCOL = {
    "ended_before_word": "failure (no letter or digit before the text ended)",
    "token_budget": "a word: its first letters within 5 tokens, truncated; a failure only without any",
    "extends_context_word": "a word: the glued letters are read as the next word",
    "undecodable": "failure",
}
"""How the authors' sampler (``GPT2_sampling.py``: 5 new tokens, punctuation removed, the first
non-empty run taken) reads a draw that ours rejects, by our failure reason."""


def failure_breakdown(samples: pd.DataFrame) -> pd.DataFrame:
    """Per failure reason of one sampled system (schema ``provo_samples``), most draws first: its
    draws, their share of all draws, how many of them hold no letter or digit at all (a failure
    under either protocol) and how the paper's 5-token protocol reads it (``PAPER_PROTOCOL``).

    Parameters
    ----------
    samples : pandas.DataFrame
        A ``provo_samples`` table.

    Returns
    -------
    pandas.DataFrame
        One row per failure reason.
    """
    total = int(samples["count"].sum())
    failed = samples[samples["failed"]]
    rows = []
    for reason, group in failed.groupby("failure", sort=False):
        no_letter = int(group.loc[~group["text"].map(has_word_char), "count"].sum())
        draws = int(group["count"].sum())
        rows.append({"reason": reason, "draws": draws, "share_of_draws": draws / total,
                     "draws_without_letter": no_letter,
                     "paper_protocol": PAPER_PROTOCOL.get(reason, "unknown")})
    return pd.DataFrame(rows, columns=["reason", "draws", "share_of_draws", "draws_without_letter",
                                       "paper_protocol"]).sort_values("draws", ascending=False)


def human_oracle_majority_ece(contexts: pd.DataFrame, responses: pd.DataFrame,
                              settings: ControlSettings) -> dict[str, float]:
    """ECE of the full human MLE's mode against each resplit's oracle-1 majority (the human
    row's third ECE), with modes tie-broken as ours (the lexicographically smallest word) and at
    random among the tied words (as the authors' code does through Python's set order), and the
    share of contexts whose human mode is tied.

    Parameters
    ----------
    contexts : pandas.DataFrame
        A ``provo_contexts`` table.
    responses : pandas.DataFrame
        Its ``provo_responses`` table.
    settings : ControlSettings
        Seed, resplits and ECE bins.

    Returns
    -------
    dict of str to float
        The two ECEs and the tied share.
    """
    humans = human_counts(responses)
    rng = _rng(settings.seed, 6)
    confidence, fixed, random_, tied = [], [], [], 0
    for ctx in contexts.itertuples(index=False):
        key = (int(ctx.text_id), int(ctx.word_number))
        human = mle(humans[key])
        top = max(human.values())
        modes = sorted(w for w, p in human.items() if p == top)
        tied += len(modes) > 1
        confidence.append(top)
        row_fixed, row_random = [], []
        for o1, _ in oracle_splits(key, humans[key], settings):
            o1_top = max(o1.values())
            o1_modes = sorted(w for w, p in o1.items() if p == o1_top)
            row_fixed.append(modes[0] == o1_modes[0])
            row_random.append(rng.choice(modes) == rng.choice(o1_modes))
        fixed.append(row_fixed)
        random_.append(row_random)
    confidence, fixed, random_ = np.array(confidence), np.array(fixed), np.array(random_)
    r = settings.resplits
    return {
        "ties_lexicographic": float(np.mean([ece(confidence, fixed[:, i], settings.ece_bins) for i in range(r)])),
        "ties_random": float(np.mean([ece(confidence, random_[:, i], settings.ece_bins) for i in range(r)])),
        "accuracy_lexicographic": float(fixed.mean()), "accuracy_random": float(random_.mean()),
        "mean_confidence": float(confidence.mean()), "share_tied": tied / len(contexts),
    }


@dataclass(frozen=True)
class Coding:
    """One coding of the regression (``REGRESSION_CODINGS``): the reference tag (``frequent``:
    the most frequent tag dropped; ``none``: a column for every tag, as the paper's Table 3 and
    the authors' design, cell 9, have), whether the continuous predictors are z-scored (their
    coefficients per standard deviation) or in their own units (per TVD unit, nat and word),
    the predictors left out, the split the target TVD(M, O1) and the predictor TVD(O2, O1) come
    from, and its role on the page (``ROLES``; empty for none). ``split``: ``None``, the means
    over the run's R resplits (``provo_tvd``); ``(0, k)``, the authors' one split
    (``varprobe.families.regression.authors.one_split``) seeded s for the target and s + k for
    the predictor, s = ``AUTHORS_SEED`` (the value) and s in ``SPREAD_SEEDS`` (its spread): k = 0
    is the authors' protocol, both from one split."""

    reference: str
    _: KW_ONLY
    z_scores: bool
    drop: tuple[str, ...] = ()
    split: tuple[int, int] | None = None
    role: str = ""


ROLES = {
    "authors": "the authors' protocol",
    "authors on resplits": "the authors' coding on our resplit means: it differs from theirs in the split alone, "
                           "so the two coefficients' difference is what one shared split changes",
    "own split": "the authors' protocol with the predictor from a split of its own: one split's noise in target "
                 "and predictor, none shared",
    "without human entropy": "ours without human entropy: what the two correlated predictors share",
}
"""The codings the page's text names, by the ``role`` column it finds them with."""

REGRESSION_CODINGS = {
    "ours: reference = most frequent tag, z-scores": Coding("frequent", z_scores=True),
    "paper's Table 3: a column for every tag, z-scores": Coding("none", z_scores=True),
    "ours, original units": Coding("frequent", z_scores=False),
    "every tag, original units": Coding("none", z_scores=False, role="authors on resplits"),
    "ours, without human entropy": Coding("frequent", z_scores=True, drop=("entropy_human",),
                                          role="without human entropy"),
    "the authors' protocol: one seed-0 split for target and predictor, original units, every tag":
        Coding("none", z_scores=False, split=(0, 0), role="authors"),
    "the authors' protocol, the predictor from another split (seed 1)":
        Coding("none", z_scores=False, split=(0, 1), role="own split"),
}
"""The codings of the regression compared in ``regression_codings``: ours, the paper's tags, each
in z-scores and in original units, ours without human entropy, the authors' protocol and the
same with the predictor from a split of its own (``ROLES``)."""

SPREAD_SEEDS = range(20)
"""The seeds s of a split coding's spread (``Coding``): the authors' own seeds, ``seed = k``
for k < 20, of their oracle-majority ECE (``TVD/Oracle/oracle_processing.ipynb``, cell 17)."""

def split_words(split: tuple[int, int] | None) -> str:
    """The ``split`` column of a coding: which split its target and predictor come from.

    Parameters
    ----------
    split : (int, int) or None
        ``Coding.split``.

    Returns
    -------
    str
    """
    if split is None:
        return "mean of the resplits"
    target, offset = split
    if offset == 0:
        return f"one split (seed {target}) for both"
    return f"target seed {target}, predictor seed {target + offset}"


def regression_codings(tvd: pd.DataFrame, tags: list[str], responses: pd.DataFrame,
                       estimates: dict) -> pd.DataFrame:
    """The coefficient of TVD between oracles and of human entropy under each coding of
    ``REGRESSION_CODINGS``, by scikit-learn's ``ARDRegression()`` with its defaults (type-II
    maximum likelihood: the authors' fit, ``varprobe.families.regression.authors.
    ard_coefficients``; for ours a quick stand-in for the NUTS posterior of the workflow's fit),
    over the contexts with every predictor and a model distribution (schema
    ``regression_codings`` without the system's columns). Per coding: its ``role``, ``units``
    (``per SD`` for z-scores, else ``per unit``: per TVD unit, nat, word and tag), ``split``
    (``split_words``), for a split coding the coefficient's range and mean over ``SPREAD_SEEDS``
    (NaN otherwise), ``sd_tvd_oracle2_oracle1`` (the predictor's standard deviation, ddof 0: a
    per-unit coefficient times it is per SD), the predictor with the largest coefficient in
    absolute value (``largest``, its label, empty where ARD prunes every one to 0, with its
    value), the contexts and the correlation of
    TVD between oracles with human entropy.

    Parameters
    ----------
    tvd : pandas.DataFrame
        A ``provo_tvd`` table.
    tags : list of str
        The part-of-speech tag of each of its contexts, in order.
    responses : pandas.DataFrame
        Its ``provo_responses`` table, which the split codings split.
    estimates : dict of (int, int) to ModelEstimate
        The system's distribution per context (``varprobe.commands.read_estimates``).

    Returns
    -------
    pandas.DataFrame
        One row per coding.
    """
    from varprobe.families.regression.authors import ard_coefficients, split_tvds
    from varprobe.families.regression.analysis import CONTINUOUS, LABELS, TARGET, TAG_ORDER

    frame = tvd.assign(_tag=tags)
    modelled = np.array([estimates.get((t, w)) is not None and estimates[(t, w)].distribution is not None
                         for t, w in zip(frame["text_id"], frame["word_number"], strict=True)], dtype=bool)
    frame = frame[frame[[TARGET, *CONTINUOUS]].notna().all(axis=1) & modelled].reset_index(drop=True)
    counts = frame["_tag"].value_counts()
    frequent = max(counts.index, key=lambda t: (counts[t], -TAG_ORDER.index(t)))
    offsets = {c.split[1] for c in REGRESSION_CODINGS.values() if c.split is not None}
    seeds = sorted({s + k for s in SPREAD_SEEDS for k in offsets})
    splits = split_tvds(responses, estimates, seeds).set_index(["seed", "text_id", "word_number"])
    keys = list(zip(frame["text_id"], frame["word_number"], strict=True))

    def fitted(coding: Coding, seed: int) -> tuple[dict, pd.DataFrame]:
        data = frame[[TARGET, *CONTINUOUS]].astype(float)
        if coding.split is not None:
            target, predictor = seed, seed + coding.split[1]
            data[TARGET] = splits.loc[[(target, *k) for k in keys], TARGET].to_numpy()
            data["tvd_oracle2_oracle1"] = splits.loc[[(predictor, *k) for k in keys],
                                                     "tvd_oracle2_oracle1"].to_numpy()
        x = data[[c for c in CONTINUOUS if c not in coding.drop]]
        if coding.z_scores:
            x = (x - x.mean()) / x.std(ddof=0)
        dummies = pd.get_dummies(frame["_tag"], dtype=float)
        if coding.reference == "frequent":
            dummies = dummies.drop(columns=frequent)
        return ard_coefficients(pd.concat([x, dummies], axis=1), data[TARGET].to_numpy()), data

    rows = []
    for name, coding in REGRESSION_CODINGS.items():
        coef, data = fitted(coding, coding.split[0] if coding.split else 0)
        spread = ([fitted(coding, s)[0]["tvd_oracle2_oracle1"] for s in SPREAD_SEEDS]
                  if coding.split is not None else [np.nan])
        largest = max(coef, key=lambda c: abs(coef[c]))
        rows.append({"coding": name, "role": coding.role,
                     "reference": frequent if coding.reference == "frequent" else "none",
                     "units": "per SD" if coding.z_scores else "per unit", "split": split_words(coding.split),
                     "tvd_oracle2_oracle1": coef["tvd_oracle2_oracle1"],
                     "seed_min": float(np.min(spread)), "seed_mean": float(np.mean(spread)),
                     "seed_max": float(np.max(spread)),
                     "entropy_human": coef.get("entropy_human", np.nan),
                     "largest": LABELS[largest] if coef[largest] else "",
                     "largest_coefficient": coef[largest],
                     "sd_tvd_oracle2_oracle1": float(data["tvd_oracle2_oracle1"].std(ddof=0)),
                     "n_contexts": len(frame),
                     "correlation": float(np.corrcoef(data["tvd_oracle2_oracle1"], data["entropy_human"])[0, 1])})
    return pd.DataFrame(rows)


def metric_by_bins(metrics: pd.DataFrame) -> pd.DataFrame:
    """Each token-calibration metric's value at every bin count M (schema ``token_calibration``
    with a ``labels`` column: whose labels were scored), one column per M, with the ratio of its
    value at the largest M to its value at the smallest and its RSD over the Ms (ddof 1): what
    its RSD over M is made of.

    Parameters
    ----------
    metrics : pandas.DataFrame
        ``token_calibration`` tables with a ``labels`` column.

    Returns
    -------
    pandas.DataFrame
    """
    keys = ["model", "labels", "metric"]
    wide = metrics.pivot_table(index=keys, columns="bins", values="value").reset_index()
    ms = sorted(c for c in wide.columns if isinstance(c, (int, np.integer)))
    wide["largest / smallest M"] = wide[ms[-1]] / wide[ms[0]]
    wide["RSD over M"] = [relative_std(row) for row in wide[ms].to_numpy()]
    wide["positions"] = wide["model"].map(metrics.groupby("model")["n_positions"].first())
    wide.columns = [f"M={c}" if isinstance(c, (int, np.integer)) else c for c in wide.columns]
    return wide.sort_values(keys, ignore_index=True)


def interval_table(systems: list[tuple[str, str, pd.DataFrame]], bins: int, resamples: int,
                   seed: int) -> pd.DataFrame:
    """Table 1's bootstrap intervals (schema ``provo_intervals``), one row per system and
    quantity: for the oracle control (model ``oracle``) E TVD(O2, H) with its mean
    (``oracle_to_humans``, quantity ``tvd_humans``); for a model the intervals of
    ``system_intervals`` (its means are in the Provo summary: NaN here). ``systems``: (model,
    decoding, per-context table of schema ``provo_tvd``) each.

    Parameters
    ----------
    systems : list of (str, str, pandas.DataFrame)
        (model, decoding, ``provo_tvd`` table) per system.
    bins : int
        The ECE's bins.
    resamples : int
        Bootstrap resamples.
    seed : int
        The bootstrap's seed.

    Returns
    -------
    pandas.DataFrame
        A ``provo_intervals`` table.
    """
    rows = []
    for model, decoding, tvd_table in systems:
        if model == "oracle":
            found = {"tvd_humans": oracle_to_humans(tvd_table, resamples, seed)}
        else:
            found = {k: (np.nan, *v) for k, v in system_intervals(tvd_table, bins, resamples, seed).items()}
        rows.extend({"model": model, "decoding": decoding, "quantity": quantity, "mean": mean,
                     "ci_low": low, "ci_high": high} for quantity, (mean, low, high) in found.items())
    return pd.DataFrame(rows, columns=["model", "decoding", "quantity", "mean", "ci_low", "ci_high"])


def failure_table(systems: list[tuple[str, str, pd.DataFrame]]) -> pd.DataFrame:
    """``failure_breakdown`` of every sampled system (schema ``provo_failures``), with its draws
    in all (``total_draws``); a system without a failed draw has one row of reason ``""`` and 0
    draws. ``systems``: (model, decoding, table of schema ``provo_samples``).

    Parameters
    ----------
    systems : list of (str, str, pandas.DataFrame)
        (model, decoding, ``provo_samples`` table) per system.

    Returns
    -------
    pandas.DataFrame
        A ``provo_failures`` table.
    """
    none = pd.DataFrame([{"reason": "", "draws": 0, "share_of_draws": 0.0, "draws_without_letter": 0,
                          "paper_protocol": ""}])
    frames = [(failure_breakdown(samples) if samples["failed"].any() else none).assign(
                  model=model, decoding=decoding, total_draws=int(samples["count"].sum()))
              for model, decoding, samples in systems]
    columns = ["model", "decoding", "reason", "draws", "share_of_draws", "draws_without_letter",
               "paper_protocol", "total_draws"]
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)


def oracle_split_table(contexts: pd.DataFrame, responses: pd.DataFrame,
                       settings: ControlSettings) -> pd.DataFrame:
    """Per oracle resplit (schema ``provo_oracle_splits``): the mean over contexts of TVD(O2, O1)
    between the resplit's halves and of TVD(O2, H), half against all the humans.

    Parameters
    ----------
    contexts : pandas.DataFrame
        A ``provo_contexts`` table.
    responses : pandas.DataFrame
        Its ``provo_responses`` table.
    settings : ControlSettings
        Seed and resplits.

    Returns
    -------
    pandas.DataFrame
        A ``provo_oracle_splits`` table.
    """
    humans = human_counts(responses)
    keys = [(int(t), int(w)) for t, w in contexts[["text_id", "word_number"]].itertuples(index=False)]
    splits = {k: oracle_splits(k, humans[k], settings) for k in keys}
    between = pd.DataFrame([[tvd(o2, o1) for o1, o2 in splits[k]] for k in keys]).mean()
    half = pd.DataFrame([[tvd(o2, mle(humans[k])) for _, o2 in splits[k]] for k in keys]).mean()
    return pd.DataFrame({"resplit": range(len(between)), "tvd_oracle2_oracle1": between.to_numpy(),
                         "tvd_oracle2_humans": half.to_numpy()})


def bins_table(metrics: pd.DataFrame) -> pd.DataFrame:
    """``metric_by_bins`` long (schema ``token_calibration_bins``): one row per model, labels,
    metric and bin count with the value there, and the metric's largest / smallest M ratio, RSD
    over M and positions repeated on its rows.

    Parameters
    ----------
    metrics : pandas.DataFrame
        As for ``metric_by_bins``.

    Returns
    -------
    pandas.DataFrame
        A ``token_calibration_bins`` table.
    """
    wide = metric_by_bins(metrics)
    keys = ["model", "labels", "metric"]
    ms = [c for c in wide.columns if c.startswith("M=")]
    long = wide.melt(id_vars=[*keys, "largest / smallest M", "RSD over M", "positions"], value_vars=ms,
                     var_name="bins", value_name="value")
    long["bins"] = long["bins"].str.removeprefix("M=").astype(int)
    return long.rename(columns={"largest / smallest M": "ratio", "RSD over M": "rsd",
                                "positions": "n_positions"}).sort_values([*keys, "bins"], ignore_index=True)


def mse_interval_table(contexts: pd.DataFrame, resamples: int, seed: int) -> pd.DataFrame:
    """``mse_intervals`` as a table (schema ``sample_size_intervals``).

    Parameters
    ----------
    contexts : pandas.DataFrame
        A ``sample_size_contexts`` table.
    resamples : int
        Bootstrap resamples.
    seed : int
        The bootstrap's seed.

    Returns
    -------
    pandas.DataFrame
        A ``sample_size_intervals`` table.
    """
    rows = [{"model": m, "decoding": d, "size": size, "ci_low": low, "ci_high": high}
            for (m, d, size), (low, high) in mse_intervals(contexts, resamples, seed).items()]
    return pd.DataFrame(rows, columns=["model", "decoding", "size", "ci_low", "ci_high"])
