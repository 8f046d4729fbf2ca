"""What do TVD differences mean? The k%-oracle replacement experiment (Ilia & Aziz 2024, Sec. 5,
App. E, Figs. 14-16) and the model-minus-oracle TVD differences (App. C.4, Fig. 12).

Oracle pairs. For oracle size s and seed index i, in context c = (t, w) with at least 2s human
responses, two disjoint oracles A and B of s responses each are drawn without replacement from the
responses (listed in word order, permuted with ``SeedSequence([seed, s, i, t, w])``; the first s
form A, the next s form B). Per context

    h(c) = TVD(A, B)        (oracle against oracle: human performance)
    m(c) = TVD(q, B)        (the model against the same oracle B)

Contexts with fewer than 2s responses, and contexts where the model has no word, are skipped and
counted.

Replacement. The C kept contexts are permuted once per (s, i) with ``SeedSequence([seed, s, i])``;
for k in the grid the first round(k C / 100) contexts of that permutation have m(c) replaced by
h(c). The replaced sets are nested (a larger k replaces a superset), so one seed's curve is free
of independent per-k noise. The replaced set's mean

    M_k = 1/C [ sum_{c replaced} h(c) + sum_{c kept} m(c) ]

runs from the model's mean M_0 to the oracles' mean M_100 and, in expectation over the
permutation, linearly: E[M_k] = M_0 - (k / 100) (M_0 - M_100). A TVD gap of d units is therefore
worth 100 d / (M_0 - M_100) percentage points of contexts given a plausible (human) distribution.

Matching k. Over the seeds, mean(M_k) and the oracle mean mean(M_100) with its seed spread
sd(M_100) (sample standard deviation over seeds; 0 with one seed). The matching k is the smallest
grid k with |mean(M_k) - mean(M_100)| <= sd(M_100): the share of plausible distributions the model
would need for its TVD to be indistinguishable, at the resolution the oracle's own seed-to-seed
variation allows, from human performance. A model already at or below the oracle mean matches at
k = 0.

TVD differences (App. C.4). Per context, TVD(q, p) - mean_r TVD(o2_r, p): the system's ``tvd``
minus the oracle control's ``tvd`` (both against all humans p).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from varprobe.analysis.next_word import ModelEstimate, human_counts
from varprobe.metrics.distributions import mle, tvd
from varprobe.metrics.histogram import histogram_rows


def disjoint_oracles(
    counts: dict[str, int], size: int, rng: np.random.Generator
) -> tuple[dict[str, int], dict[str, int]]:
    """Two disjoint samples of ``size`` responses each, drawn without replacement from ``counts``.

    The responses are listed in sorted word order (the result depends on rng alone) and permuted;
    the first ``size`` form A, the next ``size`` B. Raises ValueError when there are fewer than
    2 * size responses or size < 1.
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
    oracle_sizes: list[int],
    seeds: int,
    seed: int,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per context x oracle size x seed index: h = TVD(A, B) and m = TVD(q, B).

    Returns the pairs (columns text_id, word_number, oracle_size, seed_index, tvd_oracle_oracle,
    tvd_model_oracle) and, per oracle size, the contexts skipped (n_too_few_humans,
    n_without_words).
    """
    humans = human_counts(responses)
    rows, skipped = [], []
    for s in oracle_sizes:
        too_few = without_words = 0
        for key in sorted(humans):
            counts = humans[key]
            model = estimates.get(key, ModelEstimate(None)).distribution
            if sum(counts.values()) < 2 * s:
                too_few += 1
                continue
            if model is None:
                without_words += 1
                continue
            for i in range(seeds):
                rng = np.random.default_rng(np.random.SeedSequence([seed, s, i, *key]))
                a, b = (mle(o) for o in disjoint_oracles(counts, s, rng))
                rows.append({"text_id": key[0], "word_number": key[1], "oracle_size": s, "seed_index": i,
                             "tvd_oracle_oracle": tvd(a, b), "tvd_model_oracle": tvd(model, b)})
        skipped.append({"oracle_size": s, "n_too_few_humans": too_few, "n_without_words": without_words})
    columns = ["text_id", "word_number", "oracle_size", "seed_index", "tvd_oracle_oracle", "tvd_model_oracle"]
    return pd.DataFrame(rows, columns=columns), pd.DataFrame(skipped)


def replaced_values(pairs: pd.DataFrame, k: float, rng_seed: list[int]) -> np.ndarray:
    """One (s, seed) group's per-context TVDs after replacing round(k C / 100) of the m values by
    their h values; the contexts replaced are the first of a permutation seeded by ``rng_seed``
    (the same permutation for every k: nested sets)."""
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
    pairs: pd.DataFrame, skipped: pd.DataFrame, k_percent: list[float], seed: int, bins: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """M_k per oracle size, seed index and k (schema ``oracle_replacement`` without
    model/decoding) and the histogram of each replaced set over ``bins`` equal bins of [0, 1]
    (schema ``histogram`` without model/decoding; group ``s=S k=K``, ``seed_index`` set)."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    curve, histograms = [], []
    for s, row in skipped.set_index("oracle_size").iterrows():
        for i, group in pairs[pairs["oracle_size"] == s].groupby("seed_index"):
            for k in k_percent:
                values = replaced_values(group, k, [seed, int(s), int(i)])
                curve.append({
                    "oracle_size": s, "seed_index": i, "k": k, "n_contexts": len(values),
                    "n_replaced": int(np.floor(k * len(values) / 100 + 0.5)),
                    "n_too_few_humans": row["n_too_few_humans"], "n_without_words": row["n_without_words"],
                    "mean_tvd": float(values.mean()), "model_mean_tvd": float(group["tvd_model_oracle"].mean()),
                    "oracle_mean_tvd": float(group["tvd_oracle_oracle"].mean()),
                })
                histograms.append(histogram_rows(values, edges, f"s={s} k={k:g}", seed_index=i))
    return pd.DataFrame(curve), pd.concat(histograms, ignore_index=True) if histograms else pd.DataFrame()


def replacement_summary(curve: pd.DataFrame) -> pd.DataFrame:
    """Per system, oracle size and k: M_k's mean and spread over seeds, the oracle mean and spread,
    whether M_k matches the oracle and the matching k (module docstring; NA when none does)."""
    rows = []
    for (model, decoding, s), group in curve.groupby(["model", "decoding", "oracle_size"], sort=True):
        oracle = group.groupby("seed_index")["oracle_mean_tvd"].first()
        oracle_mean, oracle_sd = float(oracle.mean()), _sd(oracle)
        per_k = []
        for k, at_k in group.groupby("k", sort=True):
            mean = float(at_k["mean_tvd"].mean())
            per_k.append({
                "model": model, "decoding": decoding, "oracle_size": s, "k": k,
                "n_seeds": len(at_k), "n_contexts": int(at_k["n_contexts"].iloc[0]),
                "mean_tvd": mean, "sd_tvd": _sd(at_k["mean_tvd"]),
                "min_tvd": float(at_k["mean_tvd"].min()), "max_tvd": float(at_k["mean_tvd"].max()),
                "oracle_mean_tvd": oracle_mean, "oracle_sd_tvd": oracle_sd,
                "model_mean_tvd": float(at_k["model_mean_tvd"].mean()),
                "matches_oracle": abs(mean - oracle_mean) <= oracle_sd or mean <= oracle_mean,
            })
        matched = [r["k"] for r in per_k if r["matches_oracle"]]
        for r in per_k:
            r["k_match"] = min(matched) if matched else np.nan
        rows.extend(per_k)
    return pd.DataFrame(rows)


def tvd_differences(system: pd.DataFrame, oracle: pd.DataFrame) -> pd.DataFrame:
    """Per context: the system's TVD(q, p), the oracle control's mean_r TVD(o2_r, p) and their
    difference (contexts without a model word dropped). Both are ``provo_tvd`` tables; a context
    of the system missing from the oracle table raises ValueError naming it."""
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
