"""Equal-width histograms as tables: the numbers behind every histogram figure."""

from __future__ import annotations

import numpy as np
import pandas as pd


def histogram_rows(values: np.ndarray, edges: np.ndarray, group: str, **extra) -> pd.DataFrame:
    """Counts and density of ``values`` over ``edges``, one row per bin: group, bin_left,
    bin_right, count, density, plus ``extra`` columns (the same value on every row).

    Bins are [e_i, e_{i+1}), the last one closed; NaN values and values outside the edges are
    not counted. density_i = count_i / (sum_j count_j * (e_{i+1} - e_i)), so the bars have area
    1; with nothing counted every density is NaN.
    """
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    counts, _ = np.histogram(values, bins=edges)
    widths = np.diff(edges)
    density = counts / (counts.sum() * widths) if counts.sum() else np.full(len(counts), np.nan)
    return pd.DataFrame({"group": group, "bin_left": edges[:-1], "bin_right": edges[1:], "count": counts,
                         "density": density, **extra})
