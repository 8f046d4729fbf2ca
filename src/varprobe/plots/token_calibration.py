"""Figure of token-level calibration (Liu et al. 2024, Table 1 drawn): each metric against the
number of bins M, one panel per metric, one line per model. Drawn from its table only."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from varprobe.plots.layout import MAX_COLUMNS, legend_below, panel_grid  # noqa: E402

TITLES = {
    "ece": "ECE (top-label, eq. 3)",
    "classwise_ece": "classwise ECE (eq. 7)",
    "full_ece": "Full-ECE as printed (eqs. 11-13)",
    "full_ece_weighted": "Full-ECE, probability-weighted (eq. 9)",
}


def metrics_against_bins(table: pd.DataFrame) -> plt.Figure:
    """One panel per metric of ``table`` (columns model, metric, bins, value), at most three a
    row on a shared x axis: value against bins on a log x axis, one line per model, one legend
    below the panels."""
    metrics = [m for m in TITLES if m in set(table["metric"])]
    fig, axes = panel_grid(len(metrics), width=3.4, height=3.0, sharex=True)
    for ax, metric in zip(axes, metrics, strict=True):
        for model, rows in table[table["metric"] == metric].groupby("model", sort=True):
            rows = rows.sort_values("bins")
            ax.plot(rows["bins"], rows["value"], marker="o", label=model)
        ax.set_xscale("log")
        ax.set_xlabel("number of bins M")
        ax.set_title(TITLES[metric], fontsize=9)
    for ax in axes[::MAX_COLUMNS]:
        ax.set_ylabel("value")
    legend_below(fig, axes, columns=3)
    return fig
