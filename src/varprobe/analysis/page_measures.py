"""What the results page shows of the Provo study from its per-context tables beyond its summary
tables: the bootstrap intervals the summaries lack, and the measured causes of the page's
disagreements with the paper (failure reasons, the oracles' resplits, the human row's
tie-breaking). Each ``*_table`` function takes tables and returns one table of a declared schema
(``varprobe.tables.SCHEMAS``), which a workflow rule writes (``varprobe.cli.page_measures``) and
the page reads (``varprobe.results_page``). An analysis family's own measures of the page are in
its folder (the regression's codings, the sample-size intervals, the token-calibration bins).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from varprobe.analysis.next_word import ControlSettings, human_counts, oracle_splits
from varprobe.metrics.bootstrap import bootstrap_mean_ci, stream_rng
from varprobe.metrics.calibration import ece
from varprobe.metrics.distributions import mle, tvd
from varprobe.words import has_word_char


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
                                            stream_rng(seed, 1), n_resamples=resamples)[1:]}
    for stream, (column, target) in enumerate((("ece_corpus", "corpus_word"),
                                               ("ece_human_majority", "human_majority")), start=2):
        known = (used[target] != "").to_numpy()  # a context without a corpus word is no miss
        if known.any():
            hit = (used["model_mode"] == used[target]).to_numpy()
            out[column] = ece_interval(confidence[known], hit[known], bins=bins, resamples=resamples,
                                         rng=stream_rng(seed, stream))
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
    return bootstrap_mean_ci(oracle_tvd["tvd"].to_numpy(dtype=float), stream_rng(seed, 5), n_resamples=resamples)


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
    rng = stream_rng(settings.seed, 6)
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
