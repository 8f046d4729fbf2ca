"""What do TVD differences mean? The k%-oracle replacement experiment (Ilia & Aziz 2024, Sec. 5,
App. E, Figs. 14-16) and the model-minus-oracle TVD differences (App. C.4, Fig. 12).

Oracle pairs. For an oracle size s and seed index i, in context c = (t, w), two disjoint oracles
A and B of s responses each are drawn without replacement from the responses (listed in word
order, permuted with ``SeedSequence([seed, s, i, t, w])``; the first s form A, the next s form
B). The size s is a number of responses (Figs. 15-16: 10 and 20), or ``half``, the half split of
Sec. 5 and Fig. 14: s = floor(n(c) / 2) for the context's n(c) responses, so that with an odd
n(c) one response, at random, is in neither oracle (as the authors' code drops one). Per context

    h(c) = TVD(A, B)        (oracle against oracle: human performance)
    m(c) = TVD(q, B)        (the model against the same oracle B)

Contexts with fewer than 2s responses (for ``half``, fewer than 2), and contexts where the model
has no word, are skipped and counted.

Replacement. The C kept contexts are permuted once per (s, i) with ``SeedSequence([seed, s, i])``
(``half`` enters as s = 0); for k in the grid the first round(k C / 100) contexts of that
permutation have m(c) replaced by h(c). The replaced sets are nested (a larger k replaces a
superset), so one seed's curve is free of independent per-k noise. The replaced set's mean

    M_k = 1/C [ sum_{c replaced} h(c) + sum_{c kept} m(c) ]

runs from the model's mean M_0 to the oracles' mean M_100 and, in expectation over the
permutation, linearly: E[M_k] = M_0 - (k / 100) (M_0 - M_100). A TVD gap of d units is therefore
worth 100 d / (M_0 - M_100) percentage points of contexts given a plausible (human) distribution.
A mean cannot say when the replaced TVDs are distributed like the oracles' (it reaches M_100 only
at k = 100), so it is not the criterion.

Matching k (the paper's judgement). The paper replaces k% of GPT-2's TVDs until they "distribute
similarly to human performance" (Sec. 5: about 60%), reading the histograms of Figs. 14-16. The
criterion here is that histogram's overlap: per system and oracle size, the replaced sets of all
seeds are pooled into the figure's histogram (``bins`` equal bins of [0, 1]), and

    overlap_k = sum_b min(P_k(b), P_100(b)) = 1 - TVD(P_k, P_100)

(``varprobe.metrics.histogram_overlap``), with P_k the bin shares at k and P_100 the oracles'
(every TVD replaced). The replaced set matches the oracles when overlap_k >= theta, the stated
``overlap_threshold`` (default 0.8), and the matching k is the smallest grid k that matches. The
default reproduces the paper's reading: the authors' notebook prints the TVDs' mean and sd at
k = 0 and 100 (0.633 +- 0.221, 0.399 +- 0.181); for normal densities with these moments over 20
bins, overlap_k is 0.787 at k = 50 and 0.830 at k = 60, so theta = 0.8 matches at 60%. Being a
comparison of shapes, it does not grow stricter with the number of contexts, as a two-sample test
would (its p-value would also be invalid here: the replaced TVDs are a subset of the oracles'
sample). In expectation overlap_k = 1 - (1 - k / 100) TVD(P_0, P_100), so a model matches before
k = 100 whenever theta < 1.

TVD differences (App. C.4). Per context, TVD(q, p) - mean_r TVD(o2_r, p): the system's ``tvd``
minus the oracle control's ``tvd`` (both against all humans p).

The family's declaration: ``varprobe.families.oracle_replacement``; its subcommands:
``varprobe.families.oracle_replacement.cli``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from varprobe.analysis.next_word import ModelEstimate, human_counts
from varprobe.metrics.distributions import mle, tvd
from varprobe.metrics.histogram import histogram_overlap, histogram_rows

HALF = "half"
"""The oracle size of the half split (Sec. 5, Fig. 14): each oracle holds half a context's responses."""


def oracle_size(text: str) -> str:
    """An oracle size as the tables hold it: ``half`` or a positive number of responses, as a
    string (``"10"``); ValueError naming ``text`` otherwise.

    Parameters
    ----------
    text : str
        ``half`` or a number of responses.

    Returns
    -------
    str
        The size as the tables hold it.
    """
    if str(text) == HALF:
        return HALF
    try:
        size = int(text)
    except ValueError:
        size = 0
    if size < 1 or str(size) != str(text).strip():
        raise ValueError(f"oracle size {text!r}: must be {HALF!r} or a positive integer")
    return str(size)


def _seed_part(size: str) -> int:
    return 0 if size == HALF else int(size)


def disjoint_oracles(
    counts: dict[str, int], size: int, rng: np.random.Generator
) -> tuple[dict[str, int], dict[str, int]]:
    """Two disjoint samples of ``size`` responses each, drawn without replacement from ``counts``.

    The responses are listed in sorted word order (the result depends on rng alone) and permuted;
    the first ``size`` form A, the next ``size`` B. Raises ValueError when there are fewer than
    2 * size responses or size < 1.

    Parameters
    ----------
    counts : dict of str to int
        A context's response counts.
    size : int
        Responses per oracle.
    rng : numpy.random.Generator
        The source of the permutation.

    Returns
    -------
    tuple of (dict of str to int, dict of str to int)
        Oracles A and B as counts.
    """
    if size < 1:
        raise ValueError(f"oracle size {size}: must be >= 1")
    words = sorted(counts)
    sizes = np.array([int(counts[w]) for w in words], dtype=np.int64)
    if sizes.sum() < 2 * size:
        raise ValueError(f"{sizes.sum()} responses cannot fill two disjoint oracles of size {size}")
    responses = rng.permutation(np.repeat(np.arange(len(words)), sizes))
    a = np.bincount(responses[:size], minlength=len(words))
    b = np.bincount(responses[size : 2 * size], minlength=len(words))
    return ({w: int(c) for w, c in zip(words, a) if c > 0},
            {w: int(c) for w, c in zip(words, b) if c > 0})


def oracle_pairs(
    responses: pd.DataFrame,
    estimates: dict[tuple[int, int], ModelEstimate],
    *,
    oracle_sizes: list[str],
    seeds: int,
    seed: int,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per context x oracle size x seed index: h = TVD(A, B) and m = TVD(q, B); ``oracle_sizes``
    as ``oracle_size`` gives them (``half`` or a number of responses).

    Returns the pairs (columns text_id, word_number, oracle_size, seed_index, tvd_oracle_oracle,
    tvd_model_oracle) and, per oracle size, the contexts skipped (n_too_few_humans,
    n_without_words).

    Parameters
    ----------
    responses : pandas.DataFrame
        The human responses (``provo_responses``).
    estimates : dict of (int, int) to ModelEstimate
        The model's per-context estimates.
    oracle_sizes : list of str
        The oracle sizes.
    seeds : int
        Seed indices per size.
    seed : int
        The base seed.

    Returns
    -------
    tuple of (pandas.DataFrame, pandas.DataFrame)
        The pairs and the skipped contexts.
    """
    humans = human_counts(responses)
    rows, skipped = [], []
    for s in map(oracle_size, oracle_sizes):
        too_few = without_words = 0
        for key in sorted(humans):
            counts = humans[key]
            model = estimates.get(key, ModelEstimate(None)).distribution
            size = sum(counts.values()) // 2 if s == HALF else int(s)
            if sum(counts.values()) < 2 * max(size, 1):
                too_few += 1
                continue
            if model is None:
                without_words += 1
                continue
            for i in range(seeds):
                rng = np.random.default_rng(np.random.SeedSequence([seed, _seed_part(s), i, *key]))
                a, b = (mle(o) for o in disjoint_oracles(counts, size, rng))
                rows.append({"text_id": key[0], "word_number": key[1], "oracle_size": s, "seed_index": i,
                             "tvd_oracle_oracle": tvd(a, b), "tvd_model_oracle": tvd(model, b)})
        skipped.append({"oracle_size": s, "n_too_few_humans": too_few, "n_without_words": without_words})
    columns = ["text_id", "word_number", "oracle_size", "seed_index", "tvd_oracle_oracle", "tvd_model_oracle"]
    return pd.DataFrame(rows, columns=columns), pd.DataFrame(skipped)


def replaced_values(pairs: pd.DataFrame, k: float, rng_seed: list[int]) -> np.ndarray:
    """One (s, seed) group's per-context TVDs after replacing round(k C / 100) of the m values by
    their h values; the contexts replaced are the first of a permutation seeded by ``rng_seed``
    (the same permutation for every k: nested sets).

    Parameters
    ----------
    pairs : pandas.DataFrame
        One size and seed index's rows of ``oracle_pairs``.
    k : float
        The percentage of contexts replaced.
    rng_seed : list of int
        The permutation's seed.

    Returns
    -------
    numpy.ndarray
        The per-context TVDs.
    """
    if not 0 <= k <= 100:
        raise ValueError(f"k = {k}: a percentage must lie in [0, 100]")
    ordered = pairs.sort_values(["text_id", "word_number"])
    values = ordered["tvd_model_oracle"].to_numpy(dtype=float).copy()
    oracle = ordered["tvd_oracle_oracle"].to_numpy(dtype=float)
    order = np.random.default_rng(np.random.SeedSequence(rng_seed)).permutation(len(values))
    chosen = order[: int(np.floor(k * len(values) / 100 + 0.5))]
    values[chosen] = oracle[chosen]
    return values


def replacement_curve(
    pairs: pd.DataFrame, skipped: pd.DataFrame, *, k_percent: list[float], seed: int, bins: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """M_k per oracle size, seed index and k (schema ``oracle_replacement`` without
    model/decoding) and the histogram of each replaced set over ``bins`` equal bins of [0, 1]
    (schema ``histogram`` without model/decoding; group ``s=S k=K``, ``seed_index`` set).

    Parameters
    ----------
    pairs : pandas.DataFrame
        ``oracle_pairs``' pairs.
    skipped : pandas.DataFrame
        ``oracle_pairs``' skipped contexts.
    k_percent : list of float
        The grid of k.
    seed : int
        The base seed.
    bins : int
        The histograms' bins.

    Returns
    -------
    tuple of (pandas.DataFrame, pandas.DataFrame)
        The curve and the histograms.
    """
    edges = np.linspace(0.0, 1.0, bins + 1)
    curve, histograms = [], []
    for s, row in skipped.set_index("oracle_size").iterrows():
        for i, group in pairs[pairs["oracle_size"] == s].groupby("seed_index"):
            for k in k_percent:
                values = replaced_values(group, k, [seed, _seed_part(s), int(i)])
                curve.append({
                    "oracle_size": s, "seed_index": i, "k": k, "n_contexts": len(values),
                    "n_replaced": int(np.floor(k * len(values) / 100 + 0.5)),
                    "n_too_few_humans": row["n_too_few_humans"], "n_without_words": row["n_without_words"],
                    "mean_tvd": float(values.mean()), "model_mean_tvd": float(group["tvd_model_oracle"].mean()),
                    "oracle_mean_tvd": float(group["tvd_oracle_oracle"].mean()),
                })
                histograms.append(histogram_rows(values, edges, f"s={s} k={k:g}", seed_index=i))
    return pd.DataFrame(curve), pd.concat(histograms, ignore_index=True) if histograms else pd.DataFrame()


def pooled_histograms(histograms: pd.DataFrame) -> pd.DataFrame:
    """The per-seed histograms of the replaced sets (schema ``histogram``) pooled over seeds: per
    system, group and bin the summed count, its density (area 1; NaN where nothing is counted)
    and ``seed_index`` NA.

    Parameters
    ----------
    histograms : pandas.DataFrame
        Per-seed histograms (``replacement_curve``).

    Returns
    -------
    pandas.DataFrame
        The pooled histograms.
    """
    pooled = (histograms.groupby(["model", "decoding", "group", "bin_left", "bin_right"], sort=True)["count"]
              .sum().reset_index())
    width = pooled["bin_right"] - pooled["bin_left"]
    totals = pooled.groupby(["model", "decoding", "group"])["count"].transform("sum")
    pooled["density"] = (pooled["count"] / (totals * width)).where(totals > 0, np.nan)
    pooled["seed_index"] = pd.NA
    return pooled


def replacement_overlap(pooled: pd.DataFrame) -> pd.DataFrame:
    """Per system, oracle size and k: overlap_k, the overlap of the pooled histogram at k with the
    one at k = 100 (the oracles'; module docstring). ``pooled``: ``pooled_histograms`` of groups
    ``s=S k=K``. Raises ValueError naming the system and size whose grid lacks k = 100.

    Parameters
    ----------
    pooled : pandas.DataFrame
        ``pooled_histograms``' rows.

    Returns
    -------
    pandas.DataFrame
        overlap_k per system, oracle size and k.
    """
    parts = pooled["group"].str.extract(r"^s=(?P<oracle_size>\S+) k=(?P<k>\S+)$")
    if parts.isna().any(axis=None):
        raise ValueError(f"histogram groups {sorted(pooled.loc[parts.isna().any(axis=1), 'group'].unique())}: "
                         "not of the form 's=S k=K'")
    frame = pooled.assign(oracle_size=parts["oracle_size"], k=parts["k"].astype(float))
    rows = []
    for (model, decoding, s), system in frame.groupby(["model", "decoding", "oracle_size"], sort=True):
        oracle = system[system["k"] == 100].sort_values("bin_left")["count"].to_numpy()
        if not len(oracle):
            raise ValueError(f"{model} / {decoding}, oracle size {s}: no histogram at k = 100 (the oracles'); "
                             "k_percent must hold 100")
        for k, at_k in system.groupby("k", sort=True):
            rows.append({"model": model, "decoding": decoding, "oracle_size": s, "k": k,
                         "overlap": histogram_overlap(at_k.sort_values("bin_left")["count"].to_numpy(), oracle)})
    return pd.DataFrame(rows, columns=["model", "decoding", "oracle_size", "k", "overlap"])


def replacement_summary(curve: pd.DataFrame, overlap: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """Per system, oracle size and k: M_k's mean and spread over seeds, the oracle mean and spread,
    overlap_k (``replacement_overlap``), whether it reaches ``threshold`` and the matching k, the
    smallest such k (module docstring; NA when none does).

    Parameters
    ----------
    curve : pandas.DataFrame
        ``replacement_curve``'s curve of every seed.
    overlap : pandas.DataFrame
        ``replacement_overlap``'s rows.
    threshold : float
        The overlap at which a k matches the oracles.

    Returns
    -------
    pandas.DataFrame
        One row per system, oracle size and k.
    """
    if not 0 < threshold <= 1:
        raise ValueError(f"overlap threshold {threshold}: must lie in (0, 1]")
    keys = ["model", "decoding", "oracle_size", "k"]
    overlap = overlap.set_index(keys)["overlap"]
    rows = []
    for (model, decoding, s), group in curve.groupby(["model", "decoding", "oracle_size"], sort=True):
        oracle = group.groupby("seed_index")["oracle_mean_tvd"].first()
        per_k = []
        for k, at_k in group.groupby("k", sort=True):
            if (model, decoding, s, k) not in overlap.index:
                raise ValueError(f"{model} / {decoding}, oracle size {s}, k = {k:g}: no histogram overlap")
            per_k.append({
                "model": model, "decoding": decoding, "oracle_size": s, "k": k,
                "n_seeds": len(at_k), "n_contexts": int(at_k["n_contexts"].iloc[0]),
                "mean_tvd": float(at_k["mean_tvd"].mean()), "sd_tvd": _sd(at_k["mean_tvd"]),
                "min_tvd": float(at_k["mean_tvd"].min()), "max_tvd": float(at_k["mean_tvd"].max()),
                "oracle_mean_tvd": float(oracle.mean()), "oracle_sd_tvd": _sd(oracle),
                "model_mean_tvd": float(at_k["model_mean_tvd"].mean()),
                "overlap": float(overlap[(model, decoding, s, k)]), "overlap_threshold": threshold,
            })
        matched = [r["k"] for r in per_k if r["overlap"] >= threshold]
        for r in per_k:
            r["matches_oracle"] = r["overlap"] >= threshold
            r["k_match"] = min(matched) if matched else np.nan
        rows.extend(per_k)
    return pd.DataFrame(rows)


def tvd_differences(system: pd.DataFrame, oracle: pd.DataFrame) -> pd.DataFrame:
    """Per context: the system's TVD(q, p), the oracle control's mean_r TVD(o2_r, p) and their
    difference (contexts without a model word dropped). Both are ``provo_tvd`` tables; a context
    of the system missing from the oracle table raises ValueError naming it.

    Parameters
    ----------
    system : pandas.DataFrame
        A system's ``provo_tvd`` table.
    oracle : pandas.DataFrame
        The oracle control's ``provo_tvd`` table.

    Returns
    -------
    pandas.DataFrame
        One row per context.
    """
    keys = ["text_id", "word_number"]
    merged = system[[*keys, "tvd"]].merge(
        oracle[[*keys, "tvd"]], on=keys, how="left", suffixes=("_model", "_oracle"), validate="one_to_one"
    )
    missing = merged[merged["tvd_oracle"].isna()]
    if len(missing):
        raise ValueError(f"contexts {missing[keys].values.tolist()[:5]} are not in the oracle table")
    merged = merged.dropna(subset=["tvd_model"])
    merged["difference"] = merged["tvd_model"] - merged["tvd_oracle"]
    return merged.reset_index(drop=True)


def _sd(values: pd.Series) -> float:
    return float(values.std(ddof=1)) if len(values) > 1 else 0.0


def too_few_responses(responses: pd.DataFrame, oracle_sizes: Sequence[str], corpus: str) -> str | None:
    """Why the replacement cannot run on a cloze corpus, or None where it can.

    Parameters
    ----------
    responses : pandas.DataFrame
        The corpus's responses (``provo_responses``: ``text_id``, ``word_number``, ``count``).
    oracle_sizes : sequence of str
        The config's ``oracle_sizes``: ``"half"`` or numbers of responses.
    corpus : str
        The corpus's name, for the reason.

    Returns
    -------
    str or None
        The reason when no context has responses enough for two disjoint oracles of the smallest
        size (``"half"`` counts as 1), else None.
    """
    most = int(responses.groupby(["text_id", "word_number"])["count"].sum().max())
    smallest = min((1 if s == HALF else int(s) for s in oracle_sizes))
    if most >= 2 * smallest:
        return None
    return (f"two disjoint oracles of {smallest} responses (the smallest of oracle_sizes) need a context "
            f"with at least {2 * smallest} responses, and corpus {corpus!r} has at most {most}")


def unavailable(key: str, corpus: Mapping, settings: Mapping) -> str | None:
    """Why the replacement cannot run on a cloze corpus: ``too_few_responses`` on its responses.
    A corpus that cannot be read is left to the job that reads it, which names the problem.

    Parameters
    ----------
    key : str
        ``oracle_replacement``.
    corpus : Mapping
        The cloze corpus entry (``varprobe.data.cloze``).
    settings : Mapping
        The key's config entry (its ``oracle_sizes``).

    Returns
    -------
    str or None
        The reason, or None where it can run.
    """
    from varprobe.data.cloze import read_corpus

    try:
        responses = read_corpus(corpus)["responses"]
    except (OSError, ValueError, ImportError):
        return None
    return too_few_responses(responses, settings["oracle_sizes"], corpus["name"])
