"""Figure of the subsampling experiment (Ilia & Aziz 2024, App. C.1, Fig. 11), from its tables only."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from varprobe.plots.layout import legend_below, panel_grid  # noqa: E402
from varprobe.families.oracle_replacement.plots import step_histogram, system_label  # noqa: E402


def squared_error_histograms(histograms: pd.DataFrame, summary: pd.DataFrame) -> plt.Figure:
    """One panel per subsample size that could be drawn, at most three a row on a shared x axis:
    density histograms of the per-context squared errors (TVD_n - TVD_N)^2, a line per system
    (one colour in every panel), its MSE at each size in the legend below the panels (over every
    context). Squared errors beyond the table's last bin are
    not drawn; each panel's x label counts them. Sizes no context could be subsampled at
    (n >= N draws) get no panel; the figure's title names them and why."""
    drawn = sorted(summary.loc[summary["n_estimates"] > 0, "size"].unique())
    skipped = sorted(set(summary["size"]) - set(drawn))
    fig, axes = panel_grid(max(len(drawn), 1), sharex=True)
    systems = sorted(set(zip(summary["model"], summary["decoding"], strict=True)))
    colour = {system: f"C{i}" for i, system in enumerate(systems)}
    for ax, n in zip(axes, drawn, strict=False):
        rows = summary[(summary["size"] == n) & (summary["n_estimates"] > 0)]
        for row in rows.itertuples(index=False):
            part = histograms[(histograms["group"] == f"n={n}") & (histograms["model"] == row.model)
                              & (histograms["decoding"] == row.decoding)]
            step_histogram(ax, part, f"{system_label(row.model, row.decoding)}, n = {n}: MSE {row.mse:.4f}",
                           color=colour[(row.model, row.decoding)])
        beyond = int(rows["n_estimates"].sum() - histograms.loc[histograms["group"] == f"n={n}", "count"].sum())
        ax.set_title(f"subsample size n = {n}", fontsize=9)
        ax.set_xlabel("(TVD_n - TVD_N)^2 per context" + (f"\n({beyond:,} beyond the axis, not drawn)" if beyond else ""),
                      fontsize=8)
    if not drawn:
        axes[0].text(0.5, 0.5, "no size below the draw count N:\nnothing to subsample", ha="center",
                     va="center", transform=axes[0].transAxes)
    axes[0].set_ylabel("density")
    legend_below(fig, axes)
    if skipped:
        fig.suptitle(f"not drawn: n = {', '.join(map(str, skipped))} (n >= N draws per context, "
                     "nothing to subsample)", fontsize=9)
    return fig
