"""How many draws per context are enough? The subsampling experiment (Ilia & Aziz 2024, App. C.1,
Fig. 11).

For a sampled system with N draws in context c, a subsample of size n < N is drawn without
replacement from the N draws (failed draws included), then the failures are rejected as in the
study and the MLE q_n of the remaining words is re-estimated. Its TVD to the oracle is, as in the
study's ``tvd_model_oracle1``, the mean over the R oracle resplits of TVD(q_n, o1_r)
(``varprobe.analysis.next_word.oracle_splits``: the same oracles every analysis meets):

    T_n(c) = 1/R sum_r TVD(q_n, o1_r),     T_N(c) the same for the full sample q_N,

and the per-context squared error e_n(c) = (T_n(c) - T_N(c))^2. A size's MSE is the mean of
e_n(c) over the contexts and the ``repeats`` subsample draws:

    MSE(n) = 1/(|C| K) sum_c sum_k (T_n^(k)(c) - T_N(c))^2.

Subsample k of size n in context (t, w) is drawn with
``SeedSequence([seed, t, w, n, k])``. Sizes n >= N cannot be subsampled (n = N is the full
sample itself): those rows carry NaN and a ``note``. A subsample whose draws all failed has no
distribution: NaN with its own note, excluded from the MSE (counted in the summary).

The summary counts subsamples (``n_estimates``, the MSE's terms) and, per size, contexts by why
they have a subsample TVD or none (``context_counts``). A size's contexts with an estimate can be
fewer than the contexts the system has a word in (Table 1's count): a context whose draws are
mostly failures can give a subsample with no word at a small size, and that context is left out
at that size only (``n_contexts_subsample_failed``).

The family's declaration: ``varprobe.families.sample_size``; its subcommands:
``varprobe.families.sample_size.cli``.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

from varprobe.analysis.next_word import ControlSettings, human_counts, oracle_splits
from varprobe.metrics.bootstrap import bootstrap_mean_ci, stream_rng
from varprobe.metrics.distributions import mle, tvd

NOTE_TOO_LARGE = "size >= N draws: cannot subsample"
NOTE_NO_WORD = "every subsampled draw failed"
NOTE_NO_MODEL_WORD = "every draw failed: no full-sample distribution"


def context_draws(samples: pd.DataFrame) -> dict[tuple[int, int], list[str]]:
    """Per context, its draws one by one in ``sample_index`` order (rows with ``count`` > 1
    repeated); a failed draw is the empty string.

    Parameters
    ----------
    samples : pandas.DataFrame
        A ``provo_samples`` table.

    Returns
    -------
    dict of (int, int) to list of str
        Per ``(text_id, word_number)``, its draws.
    """
    ordered = samples.sort_values(["text_id", "word_number", "sample_index"], kind="stable")
    draws: dict[tuple[int, int], list[str]] = {}
    for t, w, word, failed, n in ordered[["text_id", "word_number", "word", "failed", "count"]].itertuples(
        index=False
    ):
        draws.setdefault((int(t), int(w)), []).extend(["" if failed else str(word)] * int(n))
    return draws


def word_distribution(draws: list[str]) -> dict[str, float] | None:
    """MLE of the draws that gave a word (failures rejected); None when none did.

    Parameters
    ----------
    draws : list of str
        Draws of one context; ``""`` a failed one.

    Returns
    -------
    dict of str to float or None
        The words' relative frequencies.
    """
    words = Counter(d for d in draws if d)
    return mle(words) if words else None


def subsample(draws: list[str], n: int, rng: np.random.Generator) -> list[str]:
    """``n`` of the draws, chosen uniformly without replacement (0 < n < len(draws)).

    Parameters
    ----------
    draws : list of str
        A context's N draws.
    n : int
        How many to keep.
    rng : numpy.random.Generator
        The source of the choice.

    Returns
    -------
    list of str
        The chosen draws, in their order among ``draws``.

    Raises
    ------
    ValueError
        Naming ``n`` and N where ``n`` is not in 1..N - 1.
    """
    if not 0 < n < len(draws):
        raise ValueError(f"subsample size n = {n} must lie in 1..{len(draws) - 1} (N = {len(draws)})")
    return [draws[i] for i in np.sort(rng.choice(len(draws), size=n, replace=False))]


def oracle_tvd(q: dict[str, float], splits) -> float:
    """mean_r TVD(q, o1_r) over the oracle resplits.

    Parameters
    ----------
    q : dict of str to float
        A word distribution.
    splits : sequence of (dict, dict)
        The context's oracle resplits (``oracle_splits``), oracle 1 first.

    Returns
    -------
    float
        The mean TVD.
    """
    return float(np.mean([tvd(q, o1) for o1, _ in splits]))


def sample_size_table(
    samples: pd.DataFrame,
    responses: pd.DataFrame,
    *,
    sizes: list[int],
    repeats: int,
    settings: ControlSettings,
) -> pd.DataFrame:
    """One row per context x size x repeat (schema ``sample_size_contexts``).

    Contexts of the samples table without human responses raise ValueError naming them.

    Parameters
    ----------
    samples : pandas.DataFrame
        A system's ``provo_samples`` table.
    responses : pandas.DataFrame
        The human responses (``provo_responses``).
    sizes : list of int
        Subsample sizes n.
    repeats : int
        Subsamples drawn per context and size.
    settings : ControlSettings
        The oracle resplits and the seed of the subsamples.

    Returns
    -------
    pandas.DataFrame
        The rows, without model and decoding.

    Raises
    ------
    ValueError
        Where ``repeats`` or a size is below 1, or naming contexts without responses.
    """
    if repeats < 1:
        raise ValueError(f"repeats = {repeats}: at least one subsample per size is needed")
    if any(n < 1 for n in sizes):
        raise ValueError(f"sizes {sizes}: every subsample size must be >= 1")
    humans = human_counts(responses)
    draws = context_draws(samples)
    missing = sorted(set(draws) - set(humans))
    if missing:
        raise ValueError(f"contexts {missing[:5]} have draws but no human responses")
    rows = []
    for key, context in draws.items():
        splits = oracle_splits(key, humans[key], settings)
        full = word_distribution(context)
        tvd_full = oracle_tvd(full, splits) if full is not None else np.nan
        for n in sizes:
            for k in range(repeats):
                row = {"text_id": key[0], "word_number": key[1], "n_draws": len(context), "size": n,
                       "repeat": k, "n_words": pd.NA, "tvd_full": tvd_full, "tvd_subsample": np.nan,
                       "squared_error": np.nan, "note": ""}
                if n >= len(context):
                    row["note"] = NOTE_TOO_LARGE
                elif full is None:
                    row["note"] = NOTE_NO_MODEL_WORD
                else:
                    rng = np.random.default_rng(np.random.SeedSequence([settings.seed, *key, n, k]))
                    part = subsample(context, n, rng)
                    q = word_distribution(part)
                    row["n_words"] = sum(1 for d in part if d)
                    if q is None:
                        row["note"] = NOTE_NO_WORD
                    else:
                        row["tvd_subsample"] = oracle_tvd(q, splits)
                        row["squared_error"] = (row["tvd_subsample"] - tvd_full) ** 2
                rows.append(row)
    return pd.DataFrame(rows)


def context_counts(part: pd.DataFrame) -> dict[str, int]:
    """The contexts of one size's rows (schema ``sample_size_contexts``), each counted once by why
    it has a subsample TVD or none; the last four sum to ``n_contexts``:

    * ``n_contexts_estimated``: at least one subsample TVD;
    * ``n_contexts_too_large``: n >= N draws, nothing to subsample;
    * ``n_contexts_all_failed``: every draw failed, no full-sample distribution (the contexts
      Table 1 leaves out of the system's row, its ``n_contexts_all_failed``);
    * ``n_contexts_subsample_failed``: the full sample has a word, but every subsample's draws
      all failed (Table 1 keeps these contexts).

    Parameters
    ----------
    part : pandas.DataFrame
        One size's rows of ``sample_size_table`` (every repeat of every context).

    Returns
    -------
    dict of str to int
        The five counts, by the names above.
    """
    notes = part.groupby(["text_id", "word_number"])["note"]
    estimated = part.groupby(["text_id", "word_number"])["squared_error"].apply(lambda e: e.notna().any())
    only = {note: notes.apply(lambda n, note=note: (n == note).all()) for note in
            (NOTE_TOO_LARGE, NOTE_NO_MODEL_WORD, NOTE_NO_WORD)}
    return {
        "n_contexts": len(estimated),
        "n_contexts_estimated": int(estimated.sum()),
        "n_contexts_too_large": int(only[NOTE_TOO_LARGE].sum()),
        "n_contexts_all_failed": int(only[NOTE_NO_MODEL_WORD].sum()),
        "n_contexts_subsample_failed": int(only[NOTE_NO_WORD].sum()),
    }


def sample_size_summary(table: pd.DataFrame, sizes: list[int]) -> pd.DataFrame:
    """Per size: the MSE over contexts and repeats, with the counts behind it, of subsamples and
    of contexts (``context_counts``) (schema ``sample_size_summary`` without model/decoding). A size no context could be subsampled at
    has MSE NaN and the note of the too-large sizes.

    Parameters
    ----------
    table : pandas.DataFrame
        ``sample_size_table``'s rows.
    sizes : list of int
        The subsample sizes, in the order of the rows.

    Returns
    -------
    pandas.DataFrame
        One row per size.
    """
    rows = []
    for n in sizes:
        part = table[table["size"] == n]
        errors = part["squared_error"].dropna()
        too_large = int((part["note"] == NOTE_TOO_LARGE).sum())
        rows.append({
            "size": n,
            "n_estimates": len(errors),
            "n_too_large": too_large,
            "n_without_words": int(part["note"].isin([NOTE_NO_WORD, NOTE_NO_MODEL_WORD]).sum()),
            **context_counts(part),
            "mse": float(errors.mean()) if len(errors) else np.nan,
            "note": (NOTE_TOO_LARGE if too_large and too_large == len(part)
                     else f"{too_large} of {len(part)} subsamples: {NOTE_TOO_LARGE}" if too_large else ""),
        })
    return pd.DataFrame(rows)


SHOWN_QUANTILE = 0.99
"""The histograms' bins span 0 to this quantile of every squared error: the few largest would
otherwise squeeze nearly all contexts into the first bin. The figure counts those above."""


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
            out[key] = bootstrap_mean_ci(errors, stream_rng(seed, stream), n_resamples=resamples)[1:]
    return out


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
