"""Figures of the replacement experiment (Ilia & Aziz 2024, Figs. 14-16) and of the model-minus-oracle
TVD differences (Fig. 12), drawn from their tables only."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from varprobe.plots.layout import bounded, legend_below  # noqa: E402


def step_histogram(ax, rows: pd.DataFrame, label: str, **style) -> None:
    """Draw one histogram table group (rows of schema ``histogram``) as a density step line."""
    rows = rows.sort_values("bin_left")
    edges = [*rows["bin_left"], rows["bin_right"].iloc[-1]]
    ax.stairs(rows["density"].fillna(0.0).to_numpy(), edges, label=label, **style)


def system_label(model: str, decoding: str) -> str:
    return f"{model} / {decoding}"


def size_order(size: str) -> tuple[int, int]:
    """Sort key of the tables' oracle sizes (``half`` or a number of responses, schema
    ``oracle_replacement``): the half split first, then the fixed sizes, smallest first."""
    return (0, 0) if size == "half" else (1, int(size))


def size_label(size: str) -> str:
    """A panel's name for an oracle size of the tables."""
    return "half split" if size == "half" else f"oracle size {size}"


def replacement_curves(summary: pd.DataFrame) -> plt.Figure:
    """Against k, one column per oracle size (the half split first): on top the mean TVD of the
    replaced set, per system the mean over seeds with the seed min-max band and the oracle mean
    (dashed) with its +- sd band; below the overlap of the replaced set's histogram with the
    oracles', the threshold dashed. The matching k is dotted in both."""
    sizes = sorted(summary["oracle_size"].unique(), key=size_order)
    fig, axes = plt.subplots(2, len(sizes), figsize=bounded(3.6 * len(sizes), 5.6), squeeze=False, sharex=True,
                             constrained_layout=True)
    for j, s in enumerate(sizes):
        top, bottom = axes[0][j], axes[1][j]
        for (model, decoding), rows in summary[summary["oracle_size"] == s].groupby(["model", "decoding"]):
            rows = rows.sort_values("k")
            line = top.plot(rows["k"], rows["mean_tvd"], marker="o", label=system_label(model, decoding))[0]
            colour = line.get_color()
            top.fill_between(rows["k"], rows["min_tvd"], rows["max_tvd"], color=colour, alpha=0.2)
            oracle, sd = rows["oracle_mean_tvd"].iloc[0], rows["oracle_sd_tvd"].iloc[0]
            top.axhline(oracle, color=colour, linestyle="--", linewidth=1)
            top.axhspan(oracle - sd, oracle + sd, color=colour, alpha=0.1)
            bottom.plot(rows["k"], rows["overlap"], marker="o", color=colour)
            k_match = rows["k_match"].iloc[0]
            if pd.notna(k_match):
                for ax in (top, bottom):
                    ax.axvline(k_match, color=colour, linestyle=":", linewidth=1)
        threshold = summary["overlap_threshold"].iloc[0]
        bottom.axhline(threshold, color="grey", linestyle="--", linewidth=1, label=f"threshold {threshold:g}")
        bottom.set_ylim(0, 1.05)
        top.set_title(size_label(s), fontsize=9)
        bottom.set_xlabel("k: % of contexts given the oracle's TVD")
    axes[0][0].set_ylabel("mean TVD to oracle B")
    axes[1][0].set_ylabel("overlap with the oracles'")
    legend_below(fig, [ax for row in axes for ax in row], columns=3)
    return fig


def replacement_histograms(histograms: pd.DataFrame, figure_k: list[float]) -> plt.Figure:
    """Pooled-over-seeds density histograms of the replaced sets: rows oracle sizes (the half
    split first), columns the ``figure_k``; in each panel a system's histogram at k (solid) over
    the oracles' at k = 100 (dashed). The oracles' histogram is drawn once per panel where every
    system's is the same (black: systems over the same contexts share their oracles), else once
    per system in its colour. ``histograms`` holds groups ``s=S k=K`` for each k of
    ``figure_k`` and k = 100."""
    sizes = sorted({g.split()[0][2:] for g in histograms["group"]}, key=size_order)
    systems = sorted(set(zip(histograms["model"], histograms["decoding"], strict=True)))
    colour = {system: f"C{i}" for i, system in enumerate(systems)}
    fig, axes = plt.subplots(len(sizes), len(figure_k), figsize=bounded(2.9 * len(figure_k), 2.3 * len(sizes) + 0.6),
                             squeeze=False, sharex=True, constrained_layout=True)
    for i, s in enumerate(sizes):
        oracles = {system: rows[rows["group"] == f"s={s} k=100"].sort_values("bin_left")
                   for system, rows in histograms.groupby(["model", "decoding"])}
        shared = len({tuple(o["density"].fillna(0.0).round(12)) for o in oracles.values()}) == 1
        for j, k in enumerate(figure_k):
            ax = axes[i][j]
            if shared:
                step_histogram(ax, next(iter(oracles.values())), "oracles (k = 100), every system",
                               color="black", linestyle="--", linewidth=1)
            for (model, decoding), rows in histograms.groupby(["model", "decoding"]):
                if not shared:
                    step_histogram(ax, oracles[(model, decoding)], f"{system_label(model, decoding)}: oracles (k = 100)",
                                   color=colour[(model, decoding)], linestyle="--", linewidth=1)
                if k != 100:
                    step_histogram(ax, rows[rows["group"] == f"s={s} k={k:g}"],
                                   f"{system_label(model, decoding)}: k% replaced", color=colour[(model, decoding)])
            ax.set_title(f"{size_label(s)}, k = {k:g}%", fontsize=9)
            ax.xaxis.set_tick_params(labelbottom=True)
            if i == len(sizes) - 1:
                ax.set_xlabel("TVD to oracle B")
        axes[i][0].set_ylabel("density")
    legend_below(fig, [ax for row in axes for ax in row], columns=2)
    return fig


def difference_histograms(histograms: pd.DataFrame) -> plt.Figure:
    """Density histograms of TVD(model, humans) - TVD(oracle 2, humans), one line per system."""
    fig, ax = plt.subplots(figsize=bounded(6.4, 4.0), constrained_layout=True)
    for (model, decoding), part in histograms.groupby(["model", "decoding"]):
        step_histogram(ax, part, system_label(model, decoding))
    ax.axvline(0.0, color="black", linestyle="--", linewidth=1)
    ax.set_xlabel("TVD(M, H) - TVD(O2, H), per context")
    ax.set_ylabel("density")
    legend_below(fig, ax)
    return fig
