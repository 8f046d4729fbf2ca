"""Figures of the appendix experiments drawn from their tables: TVD histograms (Ilia & Aziz 2024,
Fig. 5 for the biased model estimate, Fig. 13 for the token-level study)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from varprobe.plots.layout import bounded, legend_below  # noqa: E402

BINS = np.linspace(0.0, 1.0, 21)


def tvd_histograms(series: dict[str, np.ndarray], xlabel: str) -> tuple[plt.Figure, pd.DataFrame]:
    """Overlaid histograms of per-context TVD on [0, 1] (20 equal bins, density: area 1) for each
    labelled series; NaNs (contexts without a model distribution) are left out.

    Returns the figure and the table of exactly the bars drawn (schema ``tvd_histogram``); a
    series with no finite value has zero counts and NaN density.
    """
    fig, ax = plt.subplots(figsize=bounded(6.4, 4.0), constrained_layout=True)
    rows = []
    for label, values in series.items():
        values = np.asarray(values, dtype=float)
        values = values[np.isfinite(values)]
        counts, _ = np.histogram(values, bins=BINS)
        width = np.diff(BINS)
        density = counts / (counts.sum() * width) if counts.sum() else np.full(width.shape, np.nan)
        ax.hist(values, bins=BINS, density=bool(values.size), alpha=0.5, label=f"{label} (n={values.size})")
        rows.append(pd.DataFrame({"series": label, "bin_lower": BINS[:-1], "bin_upper": BINS[1:],
                                  "count": counts, "density": density}))
    ax.set_xlabel(xlabel)
    ax.set_ylabel("density")
    ax.set_xlim(0, 1)
    legend_below(fig, ax)
    return fig, pd.concat(rows, ignore_index=True)
