"""Equal-width histograms as tables: the numbers behind every histogram figure."""

from __future__ import annotations

import numpy as np
import pandas as pd


def histogram_rows(values: np.ndarray, edges: np.ndarray, group: str, **extra) -> pd.DataFrame:
    """Counts and density (area 1) of ``values`` over ``edges`` (the last bin closed), one row
    per bin: group, bin_left, bin_right, count, density, plus ``extra`` columns."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    counts, _ = np.histogram(values, bins=edges)
    widths = np.diff(edges)
    density = counts / (counts.sum() * widths) if counts.sum() else np.full(len(counts), np.nan)
    return pd.DataFrame({"group": group, "bin_left": edges[:-1], "bin_right": edges[1:], "count": counts,
                         "density": density, **extra})
