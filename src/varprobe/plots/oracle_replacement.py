"""Figures of the replacement experiment (Ilia & Aziz 2024, Figs. 14-16) and of the model-minus-oracle
TVD differences (Fig. 12), drawn from their tables only."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from varprobe.plots.layout import legend_below  # noqa: E402


def step_histogram(ax, rows: pd.DataFrame, label: str, **style) -> None:
    """Draw one histogram table group (rows of schema ``histogram``) as a density step line."""
    rows = rows.sort_values("bin_left")
    edges = [*rows["bin_left"], rows["bin_right"].iloc[-1]]
    ax.stairs(rows["density"].fillna(0.0).to_numpy(), edges, label=label, **style)


def system_label(model: str, decoding: str) -> str:
    return f"{model} / {decoding}"


def replacement_curves(summary: pd.DataFrame) -> plt.Figure:
    """Mean TVD of the replaced set against k, one panel per oracle size: per system the mean over
    seeds with the seed min-max band, the oracle mean (dashed) with its +- sd band, and the
    matching k marked."""
    sizes = sorted(summary["oracle_size"].unique())
    fig, axes = plt.subplots(1, len(sizes), figsize=(4.8 * len(sizes), 4.2), squeeze=False, constrained_layout=True)
    for ax, s in zip(axes[0], sizes, strict=True):
        for (model, decoding), rows in summary[summary["oracle_size"] == s].groupby(["model", "decoding"]):
            rows = rows.sort_values("k")
            line = ax.plot(rows["k"], rows["mean_tvd"], marker="o", label=system_label(model, decoding))[0]
            ax.fill_between(rows["k"], rows["min_tvd"], rows["max_tvd"], color=line.get_color(), alpha=0.2)
            oracle, sd = rows["oracle_mean_tvd"].iloc[0], rows["oracle_sd_tvd"].iloc[0]
            ax.axhline(oracle, color=line.get_color(), linestyle="--", linewidth=1)
            ax.axhspan(oracle - sd, oracle + sd, color=line.get_color(), alpha=0.1)
            k_match = rows["k_match"].iloc[0]
            if pd.notna(k_match):
                ax.axvline(k_match, color=line.get_color(), linestyle=":", linewidth=1)
        ax.set_title(f"oracle size {s}")
        ax.set_xlabel("k: % of contexts given the oracle's TVD")
        ax.set_ylabel("mean TVD to oracle B")
    legend_below(fig, list(axes[0]), columns=3)
    return fig


def replacement_histograms(histograms: pd.DataFrame) -> plt.Figure:
    """Pooled-over-seeds histograms of the replaced sets: rows oracle sizes, columns k."""
    groups = histograms["group"].unique()
    sizes = sorted({g.split()[0] for g in groups}, key=lambda g: int(g[2:]))
    ks = sorted({g.split()[1] for g in groups}, key=lambda g: float(g[2:]))
    fig, axes = plt.subplots(len(sizes), len(ks), figsize=(3.2 * len(ks), 2.6 * len(sizes) + 0.4),
                             squeeze=False, sharex=True, constrained_layout=True)
    for i, s in enumerate(sizes):
        for j, k in enumerate(ks):
            ax = axes[i][j]
            rows = histograms[histograms["group"] == f"{s} {k}"]
            for (model, decoding), part in rows.groupby(["model", "decoding"]):
                step_histogram(ax, part, system_label(model, decoding))
            ax.set_title(f"oracle {s}, {k}%", fontsize=9)
            ax.set_xlabel("TVD")
    legend_below(fig, [ax for row in axes for ax in row], columns=3)
    return fig


def difference_histograms(histograms: pd.DataFrame) -> plt.Figure:
    """Density histograms of TVD(model, humans) - TVD(oracle 2, humans), one line per system."""
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for (model, decoding), part in histograms.groupby(["model", "decoding"]):
        step_histogram(ax, part, system_label(model, decoding))
    ax.axvline(0.0, color="black", linestyle="--", linewidth=1)
    ax.set_xlabel("TVD(M, H) - TVD(O2, H), per context")
    ax.set_ylabel("density")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
