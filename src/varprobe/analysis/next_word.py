"""Calibration to human uncertainty in next-word prediction (Ilia & Aziz 2024, Sec. 3-5).

For each context c the human distribution p(.|c) is the MLE of the responses and the model
distribution q(.|c) either the MLE of the model's complete-word draws (failures rejected) or,
for an exact decoding, the enumerated word masses renormalised over the resolved words (see
``varprobe.sampling.enumeration``). Per context:

* ``tvd`` = TVD(q, p), the model against all humans;
* the oracle control: the responses are split into two disjoint halves, oracle 1 and oracle 2,
  R times (``resplits``); ``tvd_model_oracle1`` = mean_r TVD(q, o1_r) and
  ``tvd_oracle2_oracle1`` = mean_r TVD(o2_r, o1_r), the TVD a human sample of half the size
  reaches — the yardstick for a model;
* entropies (nats) of p, q and the mean entropy of o1;
* the model's mode and its probability (the ECE confidence);
* for an enumeration, ``tvd_lower``/``tvd_upper``: the interval of TVD(q, p) its unresolved mass
  leaves open (``varprobe.metrics.distributions.tvd_interval``); NaN for sampled systems.

A system's summary has the expected TVD (mean over contexts) with a percentile-bootstrap 95% CI,
and ECE with 10 equal-width bins and three targets: the corpus word, the human majority word and
the oracle-1 majority word; the last is averaged over the R resplits (paper, Table 1). The ECE
against the corpus word is over the contexts that have one (a cloze corpus's optional ``word``
may be empty: no miss, a context left out, counted in ``n_contexts_without_corpus_word``). Contexts
without a model word are left out of a system's row, so a system that covers only some contexts
(a partial samples file) carries the oracle's expected TVD over the same contexts
(``oracle_expected_tvd``, a paired comparison) beside its count, and ``coverage_notes`` names it
on the console. The oracle
control is itself summarised as a system (``model == "oracle"``): oracle 2 predicts, its expected
TVD is mean TVD(o2, o1) and its ECE uses o2's mode and confidence. So is the paper's "Human"
column (``model == "human"``, ``human_summary``): the MLE of all responses predicts, with its
mode and that word's probability as confidence; it has ECE against the three targets (against
the human majority, its own mode, ECE is the mean of 1 - confidence) and no expected TVD.

The splits of context (text_id, word_number) in resplit r are drawn from
``SeedSequence([seed, text_id, word_number, r])``: every model meets the same oracles.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
import pandas as pd

from varprobe.metrics.bootstrap import bootstrap_mean_ci
from varprobe.metrics.calibration import ece
from varprobe.metrics.distributions import entropy, mle, mode, split_counts, tvd, tvd_interval


@dataclass(frozen=True)
class ControlSettings:
    """Seed and number of oracle resplits, ECE bins and bootstrap resamples: the config's ``seed``
    and ``provo`` settings, passed by the rules (the config schema holds their defaults); a
    computation that bins no ECE or resamples nothing leaves those None."""

    seed: int
    resplits: int
    ece_bins: int | None = None
    bootstrap_resamples: int | None = None


@dataclass(frozen=True)
class ModelEstimate:
    """A model's word distribution for one context (None when it has no word).

    Sampled: ``n_draws`` and ``n_words`` (draws that gave a word). Enumerated: ``masses`` =
    (resolved word masses, resolved failure mass, unresolved mass), which bound the TVD.
    """

    distribution: dict[str, float] | None
    n_draws: int | None = None
    n_words: int | None = None
    masses: tuple[dict[str, float], float, float] | None = None

    def tvd_interval(self, human: dict[str, float]) -> tuple[float, float]:
        """[lower, upper] of TVD(q, human) for an enumeration; (NaN, NaN) for samples.

        Parameters
        ----------
        human : dict of str to float
            The human distribution.

        Returns
        -------
        lower : float
        upper : float
        """
        return (np.nan, np.nan) if self.masses is None else tvd_interval(*self.masses, human)


def sampled_estimates(samples: pd.DataFrame) -> dict[tuple[int, int], ModelEstimate]:
    """Per context of a samples table: the MLE of its words and its draw counts.

    Parameters
    ----------
    samples : pandas.DataFrame
        A ``provo_samples`` table.

    Returns
    -------
    dict of (int, int) to ModelEstimate
        By ``(text_id, word_number)``.
    """
    drawn = samples.groupby(["text_id", "word_number"])["count"].sum()
    words = model_counts(samples)
    return {
        (int(t), int(w)): ModelEstimate(
            mle(words[(t, w)]) if (t, w) in words else None,
            int(n), sum(words[(t, w)].values()) if (t, w) in words else 0,
        )
        for (t, w), n in drawn.items()
    }


def failure_rate(samples: pd.DataFrame) -> float:
    """The share of a ``provo_samples`` table's draws that gave no word (by ``count``); nan when
    it holds none.

    Parameters
    ----------
    samples : pandas.DataFrame
        A ``provo_samples`` table.

    Returns
    -------
    float
        In [0, 1], or nan.
    """
    drawn = int(samples["count"].sum())
    return int(samples.loc[samples["failed"], "count"].sum()) / drawn if drawn else float("nan")


def enumerated_estimates(distribution: pd.DataFrame) -> dict[tuple[int, int], ModelEstimate]:
    """Per context of a distribution table (schema ``provo_distribution``): the resolved word
    masses renormalised to a distribution, and the masses for the TVD interval.

    Parameters
    ----------
    distribution : pandas.DataFrame
        A ``provo_distribution`` table.

    Returns
    -------
    dict of (int, int) to ModelEstimate
        By ``(text_id, word_number)``.
    """
    estimates = {}
    for (t, w), rows in distribution.groupby(["text_id", "word_number"]):
        found = rows[(rows["failure"] == "") & (rows["probability"] > 0)]
        words = dict(zip(found["word"], found["probability"].astype(float), strict=True))
        total = sum(words.values())
        masses = (words, float(rows["failure_mass"].iloc[0]), float(rows["unresolved_mass"].iloc[0]))
        estimates[(int(t), int(w))] = ModelEstimate(
            {k: v / total for k, v in words.items()} if total > 0 else None, masses=masses
        )
    return estimates


def human_counts(responses: pd.DataFrame) -> dict[tuple[int, int], dict[str, int]]:
    """``{(text_id, word_number): {response: count}}`` from a responses table.

    Parameters
    ----------
    responses : pandas.DataFrame
        A ``provo_responses`` table.

    Returns
    -------
    dict of (int, int) to dict of str to int
    """
    counts: dict[tuple[int, int], dict[str, int]] = {}
    for t, w, r, n in responses[["text_id", "word_number", "response", "count"]].itertuples(index=False):
        counts.setdefault((int(t), int(w)), {})[r] = int(n)
    return counts


def model_counts(samples: pd.DataFrame) -> dict[tuple[int, int], Counter]:
    """``{(text_id, word_number): Counter(word -> count)}`` over the draws that produced a word.

    Parameters
    ----------
    samples : pandas.DataFrame
        A ``provo_samples`` table.

    Returns
    -------
    dict of (int, int) to collections.Counter
    """
    counts: dict[tuple[int, int], Counter] = {}
    valid = samples[~samples["failed"]]
    for t, w, word, n in valid[["text_id", "word_number", "word", "count"]].itertuples(index=False):
        counts.setdefault((int(t), int(w)), Counter())[word] += int(n)
    return counts


def oracle_splits(key: tuple[int, int], counts: dict[str, int], settings: ControlSettings):
    """The R (oracle 1, oracle 2) splits of one context's responses, as MLE distributions.

    Parameters
    ----------
    key : (int, int)
        The context's ``(text_id, word_number)``, which seeds its splits with ``settings.seed``.
    counts : dict of str to int
        Its response counts.
    settings : ControlSettings
        Seed and resplits R.

    Returns
    -------
    list of (dict of str to float, dict of str to float)
        R pairs (oracle 1, oracle 2).

    Raises
    ------
    ValueError
        Naming the context, when its responses cannot be split.
    """
    splits = []
    for r in range(settings.resplits):
        rng = np.random.default_rng(np.random.SeedSequence([settings.seed, *key, r]))
        try:
            first, second = split_counts(counts, rng)
        except ValueError as err:
            raise ValueError(f"context {key[0]}:{key[1]} (text_id:word_number): {err}") from err
        splits.append((mle(first), mle(second)))
    return splits


def context_table(
    contexts: pd.DataFrame,
    responses: pd.DataFrame,
    estimates: dict[tuple[int, int], ModelEstimate],
    settings: ControlSettings,
) -> tuple[pd.DataFrame, np.ndarray]:
    """Per-context TVDs and entropies of a model (schema ``provo_tvd``), plus the oracle-1
    majority hits of its mode, shape (contexts, R), for the oracle-majority ECE.

    Contexts without a model word get NaN TVDs and entropies and are excluded from the summary,
    which counts them apart (``without_words``): never sampled (no estimate: ``n_draws`` 0), or
    sampled with every draw failed (no resolved word, for an enumeration).

    Parameters
    ----------
    contexts : pandas.DataFrame
        A ``provo_contexts`` table.
    responses : pandas.DataFrame
        Its ``provo_responses`` table.
    estimates : dict of (int, int) to ModelEstimate
        The model's estimates by context.
    settings : ControlSettings
        Seed and resplits.

    Returns
    -------
    table : pandas.DataFrame
        A ``provo_tvd`` table.
    oracle_hits : numpy.ndarray
        bool, shape ``(contexts, R)``.
    """
    humans = human_counts(responses)
    rows, hits = [], []
    for ctx in contexts.itertuples(index=False):
        key = (int(ctx.text_id), int(ctx.word_number))
        human = mle(humans[key])
        splits = oracle_splits(key, humans[key], settings)
        row = _context_row(ctx, human, splits)
        estimate = estimates.get(key, ModelEstimate(None, 0, 0))
        row.update(n_draws=estimate.n_draws, n_words=estimate.n_words,
                   n_humans=sum(humans[key].values()))
        model = estimate.distribution
        if model is None:
            row.update(tvd=np.nan, tvd_lower=np.nan, tvd_upper=np.nan, tvd_model_oracle1=np.nan,
                       entropy_model=np.nan, model_mode="", confidence=np.nan)
            hits.append(np.zeros(settings.resplits, dtype=bool))
        else:
            top, confidence = mode(model)
            lower, upper = estimate.tvd_interval(human)
            row.update(
                tvd=tvd(model, human),
                tvd_lower=lower,
                tvd_upper=upper,
                tvd_model_oracle1=float(np.mean([tvd(model, o1) for o1, _ in splits])),
                entropy_model=entropy(model),
                model_mode=top,
                confidence=confidence,
            )
            hits.append(np.array([top == mode(o1)[0] for o1, _ in splits]))
        rows.append(row)
    return pd.DataFrame(rows), np.array(hits).reshape(len(rows), settings.resplits)


def oracle_table(
    contexts: pd.DataFrame, responses: pd.DataFrame, settings: ControlSettings
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """The oracle control as a system: per context, oracle 2 in the model's place.

    Returns the ``provo_tvd`` table (``tvd`` = mean_r TVD(o2, all humans); mode and confidence
    those of the first resplit's o2), o2's confidences, shape (contexts, R), and whether o2's
    mode hits each ECE target, shape (contexts, R, 3): corpus word, human majority, o1 majority.

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
    table : pandas.DataFrame
        A ``provo_tvd`` table.
    confidences : numpy.ndarray
        float, shape ``(contexts, R)``.
    hits : numpy.ndarray
        bool, shape ``(contexts, R, 3)``.
    """
    humans = human_counts(responses)
    rows, confidences, hits = [], [], []
    for ctx in contexts.itertuples(index=False):
        key = (int(ctx.text_id), int(ctx.word_number))
        human = mle(humans[key])
        splits = oracle_splits(key, humans[key], settings)
        row = _context_row(ctx, human, splits)
        modes = [mode(o2) for _, o2 in splits]
        n = sum(humans[key].values())
        row.update(
            n_draws=n - n // 2,
            n_words=n - n // 2,
            n_humans=n,
            tvd=float(np.mean([tvd(o2, human) for _, o2 in splits])),
            tvd_lower=np.nan,
            tvd_upper=np.nan,
            tvd_model_oracle1=row["tvd_oracle2_oracle1"],
            entropy_model=float(np.mean([entropy(o2) for _, o2 in splits])),
            model_mode=modes[0][0],
            confidence=modes[0][1],
        )
        rows.append(row)
        confidences.append([p for _, p in modes])
        hits.append(
            [[w == ctx.corpus_word, w == row["human_majority"], w == mode(o1)[0]]
             for (w, _), (o1, _) in zip(modes, splits, strict=True)]
        )
    return pd.DataFrame(rows), np.array(confidences), np.array(hits, dtype=bool)


def _context_row(ctx, human: dict[str, float], splits) -> dict:
    return {
        "text_id": int(ctx.text_id),
        "word_number": int(ctx.word_number),
        "context_length": int(ctx.context_length),
        "tvd_oracle2_oracle1": float(np.mean([tvd(o2, o1) for o1, o2 in splits])),
        "entropy_human": entropy(human),
        "entropy_oracle1": float(np.mean([entropy(o1) for o1, _ in splits])),
        "corpus_word": ctx.corpus_word,
        "human_majority": mode(human)[0],
    }


def model_summary(
    table: pd.DataFrame, oracle_hits: np.ndarray, failure_rate: float, settings: ControlSettings,
) -> dict:
    """The summary row of a model (schema ``provo_system`` without model/decoding).

    ``failure_rate``: the share of failed draws (samples) or the mean resolved failure mass
    (enumeration). ``expected_tvd_lower``/``upper`` are the means of the per-context TVD
    interval ends (NaN for samples): they bound the expected TVD of the exact distributions.
    ``oracle_expected_tvd`` is the oracle control's expected TVD over the same contexts (those
    with a model word), the paired yardstick of a model that covers only some contexts.

    Parameters
    ----------
    table : pandas.DataFrame
        ``context_table``'s table.
    oracle_hits : numpy.ndarray
        ``context_table``'s oracle-1 majority hits, shape ``(contexts, R)``.
    failure_rate : float
        In [0, 1].
    settings : ControlSettings
        Seed, resplits, ECE bins and bootstrap resamples.

    Returns
    -------
    dict
        The summary row.
    """
    has_words = table["tvd"].notna().to_numpy()
    used = table[has_words]
    confidence = used["confidence"].to_numpy()
    row = _tvd_summary(used, "tvd", settings)
    row["ece_corpus"] = corpus_ece(confidence, used["model_mode"].to_numpy(), used["corpus_word"], settings)
    row["ece_human_majority"] = ece(confidence, (used["model_mode"] == used["human_majority"]).to_numpy(),
                                    settings.ece_bins)
    row["ece_oracle_majority"] = float(np.mean(
        [ece(confidence, oracle_hits[has_words, r], settings.ece_bins) for r in range(settings.resplits)]
    ))
    row.update(
        **without_words(table),
        n_contexts_without_corpus_word=without_corpus_word(table),
        oracle_expected_tvd=float(used["tvd_oracle2_oracle1"].mean()),
        failure_rate=failure_rate,
        expected_tvd_lower=float(used["tvd_lower"].mean()),
        expected_tvd_upper=float(used["tvd_upper"].mean()),
    )
    return row


def without_words(table: pd.DataFrame) -> dict[str, int]:
    """The contexts of a system's per-context table (schema ``provo_tvd``) without a model word,
    in two counts: ``n_contexts_not_sampled``, never sampled or enumerated (``n_draws`` 0: a
    fine-tuned model's training passages, an exact system's passages outside its ``texts``), and
    ``n_contexts_all_failed``, sampled but every draw failed (enumerated: no word resolved).

    Parameters
    ----------
    table : pandas.DataFrame
        A ``provo_tvd`` table.

    Returns
    -------
    dict of str to int
    """
    missing = table["tvd"].isna()
    not_sampled = (table["n_draws"] == 0).fillna(False).astype(bool)
    return {"n_contexts_not_sampled": int((missing & not_sampled).sum()),
            "n_contexts_all_failed": int((missing & ~not_sampled).sum())}


def without_corpus_word(contexts: pd.DataFrame) -> int:
    """How many contexts have no corpus word (``""``: an empty cell of a corpus's optional
    ``word`` column, or a word of punctuation alone); the ECE against the corpus word leaves
    them out.

    Parameters
    ----------
    contexts : pandas.DataFrame
        A ``provo_contexts`` or ``provo_tvd`` table (column ``word``).

    Returns
    -------
    int
    """
    return int((contexts["corpus_word"] == "").sum())


def corpus_ece(confidence: np.ndarray, modes: np.ndarray, corpus_words: pd.Series,
               settings: ControlSettings) -> float:
    """ECE of the ``modes`` with their ``confidence`` against the corpus word, over the contexts
    that have one (``without_corpus_word``: a context without one is no miss); NaN where none
    has.

    Parameters
    ----------
    confidence : numpy.ndarray
        Each context's mode probability, shape ``(contexts,)``.
    modes : numpy.ndarray
        Each context's mode (str), shape ``(contexts,)``.
    corpus_words : pandas.Series
        Each context's corpus word (``""`` for none).
    settings : ControlSettings
        The ECE bins.

    Returns
    -------
    float
    """
    known = (corpus_words != "").to_numpy()
    if not known.any():
        return np.nan
    return ece(confidence[known], (np.asarray(modes) == corpus_words.to_numpy())[known], settings.ece_bins)


def oracle_summary(
    table: pd.DataFrame, confidences: np.ndarray, hits: np.ndarray, settings: ControlSettings
) -> dict:
    """The summary row of the oracle control: expected TVD = mean TVD(o2, o1), ECE of o2.

    Parameters
    ----------
    table : pandas.DataFrame
        ``oracle_table``'s table.
    confidences : numpy.ndarray
        o2's confidences, shape ``(contexts, R)``.
    hits : numpy.ndarray
        o2's hits, shape ``(contexts, R, 3)``.
    settings : ControlSettings
        The ECE bins.

    Returns
    -------
    dict
        The summary row.
    """
    row = _tvd_summary(table, "tvd_oracle2_oracle1", settings)
    known = (table["corpus_word"] != "").to_numpy()
    for index, name in enumerate(("ece_corpus", "ece_human_majority", "ece_oracle_majority")):
        rows = known if name == "ece_corpus" else np.ones(len(table), dtype=bool)
        row[name] = float(np.mean([
            ece(confidences[rows, r], hits[rows, r, index], settings.ece_bins)
            for r in range(settings.resplits)
        ])) if rows.any() else np.nan
    row.update(n_contexts_not_sampled=0, n_contexts_all_failed=0,
               n_contexts_without_corpus_word=without_corpus_word(table),
               oracle_expected_tvd=row["expected_tvd"], failure_rate=0.0,
               expected_tvd_lower=np.nan, expected_tvd_upper=np.nan)
    return row


def human_summary(contexts: pd.DataFrame, responses: pd.DataFrame, settings: ControlSettings) -> dict:
    """The summary row of the full human MLE as a predictor (schema ``provo_system`` without
    model/decoding; Ilia & Aziz 2024, Table 1, column "Human"): ECE of its mode against the
    corpus word, the human majority and the oracle-1 majority (mean over the R resplits, the
    splits every model meets), mean entropies; no expected TVD (NaN): it is the target itself.

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
    dict
        The summary row.
    """
    humans = human_counts(responses)
    confidences, modes, hits, entropies = [], [], [], []
    for ctx in contexts.itertuples(index=False):
        key = (int(ctx.text_id), int(ctx.word_number))
        human = mle(humans[key])
        word, confidence = mode(human)
        o1_modes = [mode(o1)[0] for o1, _ in oracle_splits(key, humans[key], settings)]
        confidences.append(confidence)
        entropies.append(entropy(human))
        modes.append(word)
        hits.append([True, *(word == w for w in o1_modes)])
    confidence, hit = np.array(confidences), np.array(hits, dtype=bool)
    return {
        "n_contexts": len(contexts), "n_contexts_not_sampled": 0, "n_contexts_all_failed": 0,
        "n_contexts_without_corpus_word": without_corpus_word(contexts),
        "expected_tvd": np.nan, "ci_low": np.nan, "ci_high": np.nan,
        "expected_tvd_lower": np.nan, "expected_tvd_upper": np.nan, "expected_tvd_oracle1": np.nan,
        "oracle_expected_tvd": np.nan,
        "ece_corpus": corpus_ece(confidence, np.array(modes, dtype=object), contexts["corpus_word"], settings),
        "ece_human_majority": ece(confidence, hit[:, 0], settings.ece_bins),
        "ece_oracle_majority": float(np.mean([ece(confidence, hit[:, 1 + r], settings.ece_bins)
                                              for r in range(settings.resplits)])),
        "failure_rate": 0.0,
        "mean_entropy_model": float(np.mean(entropies)),
        "mean_entropy_human": float(np.mean(entropies)),
    }


def coverage_notes(summary: pd.DataFrame) -> list[str]:
    """A line per system of a Provo ``summary`` (schema ``provo_system``) that covers fewer
    contexts than the oracle row: its expected TVD and ECE are over those contexts only, beside
    the oracle's expected TVD over the same ones (``oracle_expected_tvd``).

    Parameters
    ----------
    summary : pandas.DataFrame
        A ``provo_system`` table.

    Returns
    -------
    list of str
    """
    oracle = summary[summary["model"] == "oracle"]
    if oracle.empty or "oracle_expected_tvd" not in summary:  # a table written before the column
        return []
    total = int(oracle["n_contexts"].iloc[0])
    partial = summary[~summary["model"].isin(["oracle", "human"]) & (summary["n_contexts"] < total)]
    return [
        f"provo: {row.model} ({row.decoding}) has words in {row.n_contexts} of the {total} configured "
        f"contexts ({row.n_contexts_not_sampled} not sampled, {row.n_contexts_all_failed} with every draw "
        f"failed); its expected TVD {row.expected_tvd:.3f} "
        f"is over those {row.n_contexts}, where the oracle's is {row.oracle_expected_tvd:.3f} "
        f"(over all {total}: {float(oracle['expected_tvd'].iloc[0]):.3f})"
        for row in partial.itertuples(index=False)
    ]


def _tvd_summary(used: pd.DataFrame, column: str, settings: ControlSettings) -> dict:
    if used.empty:
        raise ValueError("no context has a model word: every draw failed; see the samples table")
    rng = np.random.default_rng(np.random.SeedSequence([settings.seed, 1]))
    mean, low, high = bootstrap_mean_ci(
        used[column].to_numpy(), rng, n_resamples=settings.bootstrap_resamples
    )
    return {
        "n_contexts": len(used),
        "expected_tvd": mean,
        "ci_low": low,
        "ci_high": high,
        "expected_tvd_oracle1": float(used["tvd_model_oracle1"].mean()),
        "mean_entropy_model": float(used["entropy_model"].mean()),
        "mean_entropy_human": float(used["entropy_human"].mean()),
    }
