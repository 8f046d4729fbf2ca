"""Figures of the production study (Giulianelli et al. 2023, Figs. 2-5), drawn from its tables."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from varprobe.plots.layout import legend_below, panel_grid  # noqa: E402

BINS = np.linspace(0.0, 1.0, 21)


def _name_dropped(fig, dropped: list[str]) -> None:
    """Name above the panels what has no panel because it was not computed (no tagger or encoder
    for the output language), so nothing drops out of a figure silently or is read as a zero."""
    if dropped:
        fig.suptitle("no panel (not computed: no tagger or encoder for the output language): "
                     + ", ".join(dropped), fontsize="small")


def _panels(fig_panels: list, axes_of) -> tuple:
    """The figure of ``fig_panels`` (``axes_of(n)`` makes it); with none, one empty panel that
    says so (it holds no data to cover)."""
    fig, axes = axes_of(max(len(fig_panels), 1))
    if not fig_panels:
        axes[0].text(0.5, 0.5, "nothing computed to draw", ha="center", va="center", transform=axes[0].transAxes)
        axes[0].set_axis_off()
    return fig, axes


def _missing_title(title: str, expected, drawn) -> str:
    """A panel's title naming, on its second line, the datasets it has no values for (their
    probe was not computed), off the data."""
    missing = [d for d in expected if d not in drawn]
    return title + (f"\n(not computed for {', '.join(missing)})" if missing else "")


def human_variability(human: pd.DataFrame, probes: list[str]):
    """Fig. 2: density of human variability H (distances between distinct references), pooled
    over inputs, one panel per probe computed for some dataset (the others named above the
    panels) and one curve per dataset, a dataset's colour the same in every panel. ``human``: the
    H rows of a distances table per dataset (column ``dataset``)."""
    finite = human.dropna(subset=["distance"])
    drawn_probes = [p for p in probes if (finite["probe"] == p).any()]
    fig, axes = _panels(drawn_probes, lambda n: panel_grid(n, sharex=True))
    datasets = sorted(human["dataset"].unique())
    colour = {d: f"C{i}" for i, d in enumerate(datasets)}
    for ax, probe in zip(axes, drawn_probes, strict=False):
        drawn = []
        for dataset, part in finite[finite["probe"] == probe].groupby("dataset"):
            ax.hist(part["distance"], bins=BINS, density=True, histtype="step", label=dataset, color=colour[dataset])
            drawn.append(dataset)
        ax.set(title=_missing_title(probe, datasets, drawn), xlabel="distance between references", ylabel="density")
    _name_dropped(fig, [p for p in probes if p not in drawn_probes])
    legend_below(fig, axes, columns=4)
    return fig


def mean_differences(divergences: pd.DataFrame, probes: list[str], decoding: str):
    """Fig. 3: distribution over inputs of mu_M(x) - mu_H(x) under ``decoding``, one panel per
    probe computed for some dataset (the others named above the panels), one curve per dataset
    and model; below 0 the model underestimates variability."""
    chosen = divergences[divergences["decoding"] == decoding]
    finite = chosen.dropna(subset=["mean_M_minus_H"])
    drawn_probes = [p for p in probes if (finite["probe"] == p).any()]
    fig, axes = _panels(drawn_probes, lambda n: panel_grid(n, sharex=True))
    datasets = sorted(chosen["dataset"].unique())
    systems = sorted(set(zip(chosen["dataset"], chosen["model"], strict=True)))
    colour = {system: f"C{i}" for i, system in enumerate(systems)}
    for ax, probe in zip(axes, drawn_probes, strict=False):
        drawn = []
        for (dataset, model), part in finite[finite["probe"] == probe].groupby(["dataset", "model"]):
            ax.hist(part["mean_M_minus_H"], bins=np.linspace(-1, 1, 41), density=True, histtype="step",
                    label=f"{dataset} / {model} / {decoding}", color=colour[(dataset, model)])
            drawn.append(dataset)
        ax.axvline(0.0, color="grey", lw=0.8)
        ax.set(title=_missing_title(probe, datasets, drawn), xlabel="mean M - mean H", ylabel="density")
    _name_dropped(fig, [p for p in probes if p not in drawn_probes])
    legend_below(fig, axes, columns=4)
    return fig


def w1_densities(divergences: pd.DataFrame, probes: list[str], decoding: str):
    """Fig. 4: distribution over inputs of W1(C(x), H(x)) under ``decoding`` beside the human
    control W1(H_A(x), H_B(x)), one panel per dataset and probe computed (the others named above
    the panels), three a row."""
    chosen = divergences[divergences["decoding"] == decoding]
    datasets = sorted(chosen["dataset"].unique())
    parts = {(d, p): chosen[(chosen["dataset"] == d) & (chosen["probe"] == p)] for d in datasets for p in probes}
    panels = [key for key, part in parts.items() if part[["w1_C_H", "w1_control"]].notna().any(axis=None)]
    fig, axes = _panels(panels, lambda n: panel_grid(n, sharex=True))
    for ax, (dataset, probe) in zip(axes, panels, strict=False):
        part = parts[(dataset, probe)]
        for model, by_model in part.groupby("model"):
            values = by_model["w1_C_H"].dropna()
            if len(values):
                ax.hist(values, bins=BINS, density=True, histtype="step", label=f"{model} / {decoding}")
        control = part.drop_duplicates("input_id")["w1_control"].dropna()
        if len(control):
            ax.hist(control, bins=BINS, density=True, histtype="step", ls="--",
                    color="tab:orange", label="human control")
        ax.set(title=f"{dataset}: {probe}", xlabel="W1(C, H)", ylabel="density")
    _name_dropped(fig, [f"{d}: {p}" for d, p in parts if (d, p) not in panels])
    legend_below(fig, axes)
    return fig


def mean_w1(summary: pd.DataFrame, probes: list[str], paper_level: float | None = None):
    """Fig. 5: mean over inputs of W1(C, H) with its 95% bootstrap interval for every model x
    decoding (in the summary's order), and the human control, one panel per dataset and probe,
    three a row, for each dataset and probe computed (the others named above the panels); every
    panel has the same rows, named once a row of panels. ``paper_level``: the
    level the paper states for most decodings (W1 below it), drawn dotted."""
    datasets = sorted(summary["dataset"].unique())
    parts = {(d, p): summary[(summary["dataset"] == d) & (summary["probe"] == p)] for d in datasets for p in probes}
    panels = [key for key, part in parts.items()
              if len(part) and part["available"].all() and np.isfinite(part["mean"]).any()]
    w1 = summary[summary["statistic"] == "w1_C_H"]
    systems = list(dict.fromkeys(zip(w1["model"], w1["decoding"], strict=True)))
    labels = ["human control", *(f"{m} / {d}" for m, d in systems)]
    fig, axes = _panels(panels, lambda n: panel_grid(n, height=0.3 * len(labels) + 1.6, sharex=True, sharey=True))
    for ax, (dataset, probe) in zip(axes, panels, strict=False):
        part = parts[(dataset, probe)]
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
    _name_dropped(fig, [f"{d}: {p}" for d, p in parts if (d, p) not in panels])
    if paper_level is not None:
        legend_below(fig, axes)
    return fig
