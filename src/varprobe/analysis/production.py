"""Production variability (Giulianelli et al. 2023, Secs. 5-7): pairwise probe distances between
human references and model samples, and their per-input and per-dataset statistics.

For an input x with references y_1..y_R and samples s_1..s_N, and a probe k:

* human variability   H_k(x) = {k(y_i, y_j) : i < j}        (pairs of distinct references)
* self-variability    M_k(x) = {k(s_i, s_j) : i < j}        (pairs of distinct samples)
* cross-variability   C_k(x) = {k(s_i, y_j) : all i, j}

Per input: the means of the three, the mean differences mu_M - mu_H and mu_C - mu_H, and the
Wasserstein-1 distances W1(M, H) and W1(C, H) between the empirical distributions
(``varprobe.metrics.w1``). A distance a probe leaves undefined (NaN: two strings
without n-grams) is left out of every statistic.

Human control: the references are split at random into two *disjoint* halves A and B (sizes
floor(R/2) and ceil(R/2)); H_A and H_B are the distances between pairs inside each half and the
control is W1(H_A, H_B), a plausible divergence between two human populations. (The paper's
reference code draws the two groups with overlap; here no reference is in both.) It needs at
least 2 references in each half (R >= 4); with fewer it is NaN.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from varprobe.metrics.bootstrap import bootstrap_mean_ci
from varprobe.metrics.wasserstein import control_w1, w1
from varprobe.probes import NEEDS, PROBES, Prepared, Probe
from varprobe.probes.semantic import embed
from varprobe.probes.syntactic import parse

KINDS = ("H", "M", "C")
STATISTICS = (
    "mean_H", "mean_M", "mean_C", "mean_M_minus_H", "mean_C_minus_H", "w1_M_H", "w1_C_H",
    "w1_control",
)


@dataclass
class Probes:
    """What computing the probes (``varprobe.probes.PROBES``) needs for one output language.

    ``nlp``: a spaCy pipeline (with a tagger, or tokenizer-only when no tagger is configured);
    ``encoder``: a sentence encoder, or None when none is configured.
    """

    orders: tuple[int, ...]
    nlp: object
    encoder: object | None
    batch_size: int = 64

    def met(self) -> set[str]:
        """The ``NEEDS`` these resources meet.

        Returns
        -------
        set of str
        """
        return {"tokenizer", *(["tagger"] if self.nlp.pipe_names else []),
                *(["encoder"] if self.encoder is not None else [])}

    def runs(self) -> list[tuple[Probe, str, int | None]]:
        """(record, name, order) of every probe these resources can compute, in table order.

        Returns
        -------
        list of (Probe, str, int or None)
        """
        met = self.met()
        return [(probe, name, n) for probe in PROBES.values() if probe.needs in met
                for name, n in probe.instances(self.orders)]

    def available(self) -> list[str]:
        """The probes these resources can compute.

        Returns
        -------
        list of str
        """
        return [name for _, name, _ in self.runs()]

    def unavailable(self, language: str) -> dict[str, str]:
        """Each probe these resources cannot compute, with why (for a table's metadata).

        Parameters
        ----------
        language : str
            The output language, an ISO 639-1 code.

        Returns
        -------
        dict of str to str
        """
        met = self.met()
        return {name: NEEDS[probe.needs].format(language=language)
                for probe in PROBES.values() if probe.needs not in met
                for name, _ in probe.instances(self.orders)}


def _pairs(n_refs: int, n_samples: int) -> list[tuple[str, int, int]]:
    """(kind, a, b) index pairs: H over references, M over samples, C sample a x reference b."""
    return [
        *(("H", a, b) for a, b in combinations(range(n_refs), 2)),
        *(("M", a, b) for a, b in combinations(range(n_samples), 2)),
        *(("C", a, b) for a in range(n_samples) for b in range(n_refs)),
    ]


@dataclass
class Features:
    """What the probes read of each distinct text: its position in ``texts`` and, per probe,
    its feature (``by_probe[probe][i]``: an n-gram multiset, an embedding)."""

    texts: list[str]
    by_probe: dict[str, object]

    def index(self) -> dict[str, int]:
        """Text -> row.

        Returns
        -------
        dict of str to int
        """
        return {t: i for i, t in enumerate(self.texts)}


def distinct_texts(items: Sequence[tuple[str, Sequence[str], Sequence[str]]]) -> list[str]:
    """Every reference and sample of ``items`` once, in order of first occurrence.

    Parameters
    ----------
    items : sequence of (str, sequence of str, sequence of str)
        (input_id, references, samples) per input.

    Returns
    -------
    list of str
    """
    return list(dict.fromkeys(t for _, refs, samples in items for t in (*refs, *samples)))


def featurise(texts: list[str], probes: Probes, parsed=None, vectors=None) -> Features:
    """Parse (unless ``parsed`` is given) and embed (unless ``vectors`` is given, or there is no
    encoder) each text once, and featurise it for every available probe.

    Parameters
    ----------
    texts : list of str
        The distinct texts.
    probes : Probes
        The probes' resources.
    parsed : list, optional
        The texts' spaCy documents, in order.
    vectors : numpy.ndarray, optional
        The texts' embeddings, shape ``(len(texts), dim)``.

    Returns
    -------
    Features
    """
    parsed = parse(texts, probes.nlp, batch_size=probes.batch_size) if parsed is None else parsed
    if vectors is None and "encoder" in probes.met():
        vectors = embed(texts, probes.encoder, probes.batch_size)
    prepared = Prepared(texts, parsed, vectors)
    return Features(texts, {name: probe.featurise(prepared, n) for probe, name, n in probes.runs()})


def pairwise_distances(items: Sequence[tuple[str, Sequence[str], Sequence[str]]],
                       probes: Probes, features: Features | None = None) -> pd.DataFrame:
    """Long table ``input_id, probe, kind, a, b, distance`` of every H, M and C pair.

    ``items``: (input_id, references, samples) per input. ``a``/``b`` index the references
    (H; b in C) and the samples (M; a in C). Each distinct text is parsed and embedded once
    (``featurise``, unless its ``features`` are given).

    Parameters
    ----------
    items : sequence of (str, sequence of str, sequence of str)
        (input_id, references, samples) per input.
    probes : Probes
        The probes' resources.
    features : Features, optional
        The texts' features, computed when None.

    Returns
    -------
    pandas.DataFrame
        One row per pair and probe (``distance`` float, NaN where undefined).
    """
    features = featurise(distinct_texts(items), probes) if features is None else features
    index = features.index()
    runs = probes.runs()
    frames = []
    for input_id, refs, samples in items:
        pairs = _pairs(len(refs), len(samples))
        if not pairs:
            continue
        kinds = [k for k, _, _ in pairs]
        left = [index[refs[a] if k == "H" else samples[a]] for k, a, _ in pairs]
        right = [index[samples[b] if k == "M" else refs[b]] for k, _, b in pairs]
        for probe, name, _ in runs:
            distance = probe.distance(features.by_probe[name], left, right)
            frames.append(pd.DataFrame({
                "input_id": input_id, "probe": name, "kind": kinds,
                "a": [a for _, a, _ in pairs], "b": [b for _, _, b in pairs],
                "distance": np.asarray(distance, dtype=float),
            }))
    columns = ["input_id", "probe", "kind", "a", "b", "distance"]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)


def input_rng(seed: int, input_id: str) -> np.random.Generator:
    """The control's generator for one input: the same for every model and job order.

    Parameters
    ----------
    seed : int
        The run's seed.
    input_id : str
        The input.

    Returns
    -------
    numpy.random.Generator
    """
    return np.random.default_rng([seed, zlib.crc32(input_id.encode())])


def input_divergences(distances: pd.DataFrame, n_refs: dict[str, int], seed: int) -> pd.DataFrame:
    """One row per input and probe: ``n_H, n_M, n_C`` (defined distances), the ``STATISTICS``.

    ``n_refs``: the number of references of each input (for the control split).

    Parameters
    ----------
    distances : pandas.DataFrame
        ``pairwise_distances``'s table.
    n_refs : dict of str to int
        References per input.
    seed : int
        The control's seed (``input_rng``).

    Returns
    -------
    pandas.DataFrame
    """
    rows = []
    for (input_id, probe), group in distances.groupby(["input_id", "probe"], sort=False):
        kind, value = group["kind"].to_numpy(), group["distance"].to_numpy(dtype=float)
        by_kind = {k: value[(kind == k) & ~np.isnan(value)] for k in KINDS}
        mean = {k: float(v.mean()) if len(v) else math.nan for k, v in by_kind.items()}
        human = kind == "H"
        control = control_w1(group["a"].to_numpy()[human], group["b"].to_numpy()[human],
                             value[human], n_refs=n_refs[input_id], rng=input_rng(seed, input_id))
        rows.append({
            "input_id": input_id, "probe": probe,
            **{f"n_{k}": len(v) for k, v in by_kind.items()},
            **{f"mean_{k}": mean[k] for k in KINDS},
            "mean_M_minus_H": mean["M"] - mean["H"], "mean_C_minus_H": mean["C"] - mean["H"],
            "w1_M_H": w1(by_kind["M"], by_kind["H"]), "w1_C_H": w1(by_kind["C"], by_kind["H"]),
            "w1_control": control,
        })
    return pd.DataFrame(rows)


def summarise(divergences: pd.DataFrame, probes: Sequence[str], seed: int,
              n_resamples: int) -> pd.DataFrame:
    """Per probe and statistic: the mean over inputs with a 95% percentile-bootstrap interval
    over inputs (``n_inputs`` that define it); NaN for a probe or statistic with no input.

    Parameters
    ----------
    divergences : pandas.DataFrame
        ``input_divergences``'s table.
    probes : sequence of str
        The probes summarised.
    seed : int
        The bootstrap's seed.
    n_resamples : int
        Bootstrap resamples.

    Returns
    -------
    pandas.DataFrame
        One row per probe and statistic.
    """
    rows = []
    for p, probe in enumerate(probes):
        part = divergences[divergences["probe"] == probe]
        for s, statistic in enumerate(STATISTICS):
            values = part[statistic].dropna().to_numpy() if len(part) else np.array([])
            rng = np.random.default_rng([seed, p, s])
            mean, low, high = (bootstrap_mean_ci(values, rng, n_resamples) if len(values)
                               else (math.nan,) * 3)
            rows.append({"probe": probe, "statistic": statistic, "n_inputs": len(values),
                         "mean": mean, "ci_low": low, "ci_high": high})
    return pd.DataFrame(rows)


def miscalibrated(divergences: pd.DataFrame, statistic: str, thresholds: dict[str, float],
                  limit: int) -> pd.DataFrame:
    """Inputs whose ``statistic`` exceeds its threshold for *every* probe in ``thresholds``
    (paper Sec. 7), most miscalibrated first (largest mean excess over the thresholds), at most
    ``limit``. Columns ``input_id, excess`` and one column per thresholded probe.

    Parameters
    ----------
    divergences : pandas.DataFrame
        ``input_divergences``'s table.
    statistic : str
        The statistic compared.
    thresholds : dict of str to float
        The threshold of each probe.
    limit : int
        The most inputs returned.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    ValueError
        When ``thresholds`` names a probe that was not computed.
    """
    wide = divergences.pivot(index="input_id", columns="probe", values=statistic)
    missing = [p for p in thresholds if p not in wide.columns]
    if missing:
        raise ValueError(f"miscalibration thresholds name probes {missing} that were not computed")
    chosen = wide[list(thresholds)]
    limits = pd.Series(thresholds)
    flagged = chosen[(chosen > limits).all(axis=1)]
    flagged = flagged.assign(excess=(flagged - limits).mean(axis=1))
    return flagged.sort_values("excess", ascending=False).head(limit).reset_index()
