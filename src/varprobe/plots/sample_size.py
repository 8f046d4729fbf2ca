"""Figure of the subsampling experiment (Ilia & Aziz 2024, App. C.1, Fig. 11), from its tables only."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from varprobe.plots.oracle_replacement import step_histogram, system_label  # noqa: E402


def squared_error_histograms(histograms: pd.DataFrame, summary: pd.DataFrame) -> plt.Figure:
    """One panel per subsample size: density histograms of the per-context squared errors
    (TVD_n - TVD_N)^2, a line per system, its MSE in the legend. A size that no context could be
    subsampled at (n >= N) gets an empty panel saying so."""
    sizes = sorted(summary["size"].unique())
    fig, axes = plt.subplots(1, len(sizes), figsize=(3.4 * len(sizes), 3.2), squeeze=False, sharex=True)
    for ax, n in zip(axes[0], sizes, strict=True):
        rows = summary[summary["size"] == n]
        for row in rows.itertuples(index=False):
            part = histograms[(histograms["group"] == f"n={n}") & (histograms["model"] == row.model)
                              & (histograms["decoding"] == row.decoding)]
            if row.n_estimates:
                step_histogram(ax, part, f"{system_label(row.model, row.decoding)}: MSE {row.mse:.4f}")
        if not rows["n_estimates"].any():
            ax.text(0.5, 0.5, f"n = {n} >= N draws:\nnot subsampled", ha="center", va="center",
                    transform=ax.transAxes)
        else:
            ax.legend(fontsize=6)
        ax.set_title(f"subsample size n = {n}", fontsize=9)
        ax.set_xlabel("(TVD_n - TVD_N)^2 per context")
    axes[0][0].set_ylabel("density")
    fig.tight_layout()
    return fig
