"""Histograms of per-context TVD_syn or TVD_sem (Ilia & Aziz 2024, Fig. 4).

Returns the figure and the table of exactly the counts drawn.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from varprobe.plots.layout import MAX_COLUMNS, legend_below, panel_grid  # noqa: E402

BINS = np.linspace(0.0, 1.0, 21)
"""20 equal-width bins on [0, 1]; the last bin is closed, so a TVD of exactly 1 is counted."""
SERIES = {"model_humans": "TVD(M, H)", "oracle2_oracle1": "TVD(O2, O1)"}


def class_tvd_histograms(
    level: str, series: dict[tuple[str, str], dict[str, np.ndarray]]
) -> tuple[plt.Figure, pd.DataFrame]:
    """One panel per (model, decoding), at most three a row on shared axes: the density
    histogram (area 1) of its per-context class TVD to the humans (``model_humans``) over that of
    the oracle control (``oracle2_oracle1``) on the same contexts and partitions, one legend below
    the panels. NaN values (contexts without a model word) are not counted, so the series count
    different contexts: densities, not counts, compare them."""
    fig, axes = panel_grid(len(series), sharex=True, sharey=True)
    rows = []
    for ax, ((model, decoding), values) in zip(axes, series.items(), strict=True):
        for name, label in SERIES.items():
            data = np.asarray(values[name], dtype=float)
            counts, _ = np.histogram(data[np.isfinite(data)], bins=BINS)
            density = counts / (counts.sum() * np.diff(BINS)) if counts.sum() else np.full(len(counts), np.nan)
            style = {"color": "black", "linestyle": "--"} if name == "oracle2_oracle1" else {}
            ax.stairs(np.nan_to_num(density), BINS, label=label, **style)
            rows.append(pd.DataFrame({"level": level, "model": model, "decoding": decoding,
                                      "series": name, "bin_low": BINS[:-1], "bin_high": BINS[1:],
                                      "count": counts, "density": density}))
        ax.set_title(f"{model} / {decoding}", fontsize=9)
        ax.set_xlabel(f"TVD_{level[:3]} (per context)")
        ax.set_xlim(0, 1)
    for ax in axes[::MAX_COLUMNS]:
        ax.set_ylabel("density")
    legend_below(fig, axes)
    return fig, pd.concat(rows, ignore_index=True)
