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
