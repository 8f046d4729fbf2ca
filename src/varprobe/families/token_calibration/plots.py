"""Figure of token-level calibration (Liu et al. 2024, Table 1 drawn): each metric against the
number of bins M, one panel per metric, one line per model beside its floor. Drawn from its
table only."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import NullFormatter  # noqa: E402

from varprobe.plots.layout import MAX_COLUMNS, legend_below, panel_grid  # noqa: E402

TITLES = {
    "ece": "ECE (top-label, eq. 3)",
    "classwise_ece": "classwise ECE (eq. 7)",
    "full_ece": "Full-ECE as printed (eqs. 11-13)",
    "full_ece_weighted": "Full-ECE, probability-weighted (eq. 9)",
}


LABELS = {"corpus": "the corpus's next tokens", "drawn": "labels drawn from the model (floor)"}
"""The ``labels`` of the figure's table: the metric, and its floor, what a perfectly calibrated
model scores on as many positions (``varprobe.families.token_calibration.analysis``)."""


def metrics_against_bins(table: pd.DataFrame) -> plt.Figure:
    """One panel per metric of ``table`` (columns model, labels, metric, bins, value), at most
    three a row on a shared x axis: value against bins on a log x axis, per model a solid line
    (``labels`` corpus) beside its floor, dashed in the same colour (``labels`` drawn), one
    legend below the panels."""
    metrics = [m for m in TITLES if m in set(table["metric"])]
    models = sorted(table["model"].unique())
    colour = {m: f"C{i}" for i, m in enumerate(models)}
    fig, axes = panel_grid(len(metrics), width=3.4, height=3.0, sharex=True)
    for ax, metric in zip(axes, metrics, strict=True):
        for (model, labels), rows in table[table["metric"] == metric].groupby(["model", "labels"], sort=True):
            rows = rows.sort_values("bins")
            ax.plot(rows["bins"], rows["value"], marker="o" if labels == "corpus" else ".",
                    linestyle="-" if labels == "corpus" else "--", color=colour[model],
                    label=f"{model}: {LABELS[labels]}")
        ax.set_xscale("log")
        bins = sorted(table["bins"].unique())
        ax.set_xticks(bins, [str(b) for b in bins])  # the M computed, not powers of ten
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("number of bins M")
        ax.set_title(TITLES[metric], fontsize=9)
    for ax in axes[::MAX_COLUMNS]:
        ax.set_ylabel("value")
    legend_below(fig, axes, columns=3)
    return fig
