"""Figures of the production study (Giulianelli et al. 2023, Figs. 2-5), drawn from its tables."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from varprobe.plots.layout import legend_below, panel_grid  # noqa: E402

BINS = np.linspace(0.0, 1.0, 21)


def _mark_unavailable(ax) -> None:
    """Say on an empty panel that its probe was not computed (no tagger or encoder for the
    output language), so it is not read as a zero."""
    ax.text(0.5, 0.5, "probe unavailable\n(no tagger or encoder\nfor the output language)",
            transform=ax.transAxes, ha="center", va="center", fontsize="small")


def _mark_missing(ax, expected, drawn) -> None:
    """Name on a panel the datasets it has no values for (their probe is unavailable), so a
    dataset does not drop out of a figure silently."""
    missing = [d for d in expected if d not in drawn]
    if missing:
        ax.text(0.98, 0.98, "not drawn (probe unavailable):\n" + ", ".join(missing), transform=ax.transAxes,
                ha="right", va="top", fontsize="x-small", color="grey")


def human_variability(human: pd.DataFrame, probes: list[str]):
    """Fig. 2: density of human variability H (distances between distinct references), pooled
    over inputs, one panel per probe and one curve per dataset, a dataset's colour the same in
    every panel. ``human``: the H rows of a
    distances table per dataset (column ``dataset``)."""
    fig, axes = panel_grid(len(probes), sharex=True)
    datasets = sorted(human["dataset"].unique())
    colour = {d: f"C{i}" for i, d in enumerate(datasets)}
    for ax, probe in zip(axes, probes, strict=True):
        drawn = []
        for dataset, part in human[human["probe"] == probe].groupby("dataset"):
            values = part["distance"].dropna()
            if len(values):
                ax.hist(values, bins=BINS, density=True, histtype="step", label=dataset, color=colour[dataset])
                drawn.append(dataset)
        _mark_missing(ax, datasets, drawn)
        ax.set(title=probe, xlabel="distance between references", ylabel="density")
    legend_below(fig, axes, columns=4)
    return fig


def mean_differences(divergences: pd.DataFrame, probes: list[str], decoding: str):
    """Fig. 3: distribution over inputs of mu_M(x) - mu_H(x) under ``decoding``, one panel per
    probe, one curve per dataset and model; below 0 the model underestimates variability."""
    fig, axes = panel_grid(len(probes), sharex=True)
    chosen = divergences[divergences["decoding"] == decoding]
    datasets = sorted(chosen["dataset"].unique())
    systems = sorted(set(zip(chosen["dataset"], chosen["model"], strict=True)))
    colour = {system: f"C{i}" for i, system in enumerate(systems)}
    for ax, probe in zip(axes, probes, strict=True):
        drawn = []
        for (dataset, model), part in chosen[chosen["probe"] == probe].groupby(["dataset", "model"]):
            values = part["mean_M_minus_H"].dropna()
            if len(values):
                ax.hist(values, bins=np.linspace(-1, 1, 41), density=True, histtype="step",
                        label=f"{dataset} / {model} / {decoding}", color=colour[(dataset, model)])
                drawn.append(dataset)
        _mark_missing(ax, datasets, drawn)
        ax.axvline(0.0, color="grey", lw=0.8)
        ax.set(title=probe, xlabel="mean M - mean H", ylabel="density")
    legend_below(fig, axes, columns=4)
    return fig


def w1_densities(divergences: pd.DataFrame, probes: list[str], decoding: str):
    """Fig. 4: distribution over inputs of W1(C(x), H(x)) under ``decoding`` beside the human
    control W1(H_A(x), H_B(x)), one panel per dataset and probe, three a row."""
    chosen = divergences[divergences["decoding"] == decoding]
    datasets = sorted(chosen["dataset"].unique())
    panels = [(d, p) for d in datasets for p in probes]
    fig, axes = panel_grid(max(len(panels), 1), sharex=True)
    for ax, (dataset, probe) in zip(axes, panels, strict=False):
        part = chosen[(chosen["dataset"] == dataset) & (chosen["probe"] == probe)]
        for model, by_model in part.groupby("model"):
            values = by_model["w1_C_H"].dropna()
            if len(values):
                ax.hist(values, bins=BINS, density=True, histtype="step", label=f"{model} / {decoding}")
        control = part.drop_duplicates("input_id")["w1_control"].dropna()
        if len(control):
            ax.hist(control, bins=BINS, density=True, histtype="step", ls="--",
                    color="tab:orange", label="human control")
        if part.empty:
            _mark_unavailable(ax)
        ax.set(title=f"{dataset}: {probe}", xlabel="W1(C, H)", ylabel="density")
    if datasets:
        legend_below(fig, axes)
    return fig


def mean_w1(summary: pd.DataFrame, probes: list[str], paper_level: float | None = None):
    """Fig. 5: mean over inputs of W1(C, H) with its 95% bootstrap interval for every model x
    decoding (in the summary's order), and the human control, one panel per dataset and probe,
    three a row; every panel has the same rows, named once a row of panels. ``paper_level``: the
    level the paper states for most decodings (W1 below it), drawn dotted."""
    datasets = sorted(summary["dataset"].unique())
    panels = [(d, p) for d in datasets for p in probes]
    w1 = summary[summary["statistic"] == "w1_C_H"]
    systems = list(dict.fromkeys(zip(w1["model"], w1["decoding"], strict=True)))
    labels = ["human control", *(f"{m} / {d}" for m, d in systems)]
    fig, axes = panel_grid(max(len(panels), 1), height=0.3 * len(labels) + 1.6, sharex=True, sharey=True)
    for ax, (dataset, probe) in zip(axes, panels, strict=False):
        part = summary[(summary["dataset"] == dataset) & (summary["probe"] == probe)]
        control = part[part["statistic"] == "w1_control"].head(1)
        rows = [control] + [part[(part["statistic"] == "w1_C_H") & (part["model"] == m) & (part["decoding"] == d)]
                            for m, d in systems]
        for y, values in enumerate(rows):
            if len(values) and np.isfinite(values["mean"].iloc[0]):
                mean = values["mean"].iloc[0]
                error = [[mean - values["ci_low"].iloc[0]], [values["ci_high"].iloc[0] - mean]]
                ax.errorbar(mean, y, xerr=error, fmt="o", color="tab:red" if y == 0 else "tab:blue")
        if paper_level is not None:
            ax.axvline(paper_level, color="grey", ls=":", lw=1,
                       label=f"the paper: most decodings below {paper_level}")
        ax.set_yticks(range(len(labels)), labels, fontsize="small")
        ax.set(title=f"{dataset}: {probe}", xlabel="mean W1(C, H)")
        if not part["available"].all():
            _mark_unavailable(ax)
    if paper_level is not None:
        legend_below(fig, axes)
    return fig
