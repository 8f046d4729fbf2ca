"""Equal-width histograms as tables: the numbers behind every histogram figure."""

from __future__ import annotations

import numpy as np
import pandas as pd


def histogram_rows(values: np.ndarray, edges: np.ndarray, group: str, **extra) -> pd.DataFrame:
    """Counts and density of ``values`` over equal-width ``edges``, one row per bin.

    Bins are [e_i, e_{i+1}), the last one closed; NaN values and values outside the edges are
    not counted. The density is

        density_i = count_i / (sum_j count_j * (e_{i+1} - e_i)),

    so the bars have area 1 (the numbers behind the histograms of Ilia & Aziz 2024, Figs. 4,
    5, 13).

    Parameters
    ----------
    values : numpy.ndarray
        The values to count.
    edges : numpy.ndarray
        The bin edges, increasing.
    group : str
        The value of the ``group`` column.
    **extra
        Further columns, each with the same value on every row.

    Returns
    -------
    pandas.DataFrame
        Columns ``group, bin_left, bin_right, count, density`` and the ``extra`` ones; with
        nothing counted every density is NaN.

    Examples
    --------
    >>> rows = histogram_rows(np.array([0.1, 0.6, 0.7, np.nan]), np.array([0.0, 0.5, 1.0]), "model")
    >>> rows["count"].tolist(), rows["density"].tolist()
    ([1, 2], [0.6666666666666666, 1.3333333333333333])
    """
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    counts, _ = np.histogram(values, bins=edges)
    widths = np.diff(edges)
    density = counts / (counts.sum() * widths) if counts.sum() else np.full(len(counts), np.nan)
    return pd.DataFrame({"group": group, "bin_left": edges[:-1], "bin_right": edges[1:], "count": counts,
                         "density": density, **extra})


def histogram_overlap(counts: np.ndarray, other: np.ndarray) -> float:
    """The overlap of two histograms over the same bins: the mass their normalised bars share.

    With p_i = a_i / sum_j a_j and q_i = b_i / sum_j b_j the bin shares of the counts a and b,

        overlap(a, b) = sum_i min(p_i, q_i) = 1 - TVD(p, q),

    1 for histograms of the same shape and 0 for histograms on disjoint bins. Ilia & Aziz (2024,
    Sec. 5, App. E, Figs. 14-16) judge by it, by eye, whether a set of TVDs "distributes similarly"
    to the oracles'. It compares shapes: the number counted does not enter, so systems with
    different context counts are compared alike.

    Parameters
    ----------
    counts, other : numpy.ndarray
        Non-negative counts per bin, the same bins in the same order; each with a positive sum.

    Returns
    -------
    float
        The overlap, in [0, 1].

    Raises
    ------
    ValueError
        When the lengths differ, a count is negative or not finite, or a histogram is empty.

    Examples
    --------
    >>> histogram_overlap(np.array([1, 1, 2]), np.array([0, 2, 2]))
    0.75
    >>> histogram_overlap(np.array([3, 0]), np.array([0, 5]))
    0.0
    """
    a, b = np.asarray(counts, dtype=float), np.asarray(other, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"histograms of {a.shape} and {b.shape} bins: the bins must be the same")
    for name, c in (("counts", a), ("other", b)):
        if not np.all(np.isfinite(c)) or np.any(c < 0):
            raise ValueError(f"{name} {c.tolist()}: counts must be finite and non-negative")
        if c.sum() == 0:
            raise ValueError(f"{name}: an empty histogram has no shape to compare")
    return float(np.minimum(a / a.sum(), b / b.sum()).sum())
