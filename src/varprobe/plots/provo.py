"""Figures of the next-word study: TVD densities (Ilia & Aziz 2024, Fig. 2) and word bars (Fig. 1).

Each function returns the figure and the table of exactly the numbers drawn.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy.stats import gaussian_kde  # noqa: E402

from varprobe.plots.layout import bounded, legend_below  # noqa: E402

GRID = np.linspace(0.0, 1.0, 201)


def tvd_density(series: dict[tuple[str, str], np.ndarray]) -> tuple[plt.Figure, pd.DataFrame]:
    """Gaussian KDE (Scott's bandwidth) of per-context TVD on [0, 1] for each (model, decoding).

    The oracle control enters as ``("oracle", "control")`` with its TVD(O2, O1), the systems with
    their TVD(M, H), as the paper's Fig. 2 draws them; the legend names each definition and its
    number of contexts (a system over a subset, exact or fine-tuned, has fewer). A series with fewer than two distinct
    values has no density and is drawn as a vertical line at its value (density NaN in the table).
    """
    fig, ax = plt.subplots(figsize=bounded(6.4, 4.6), constrained_layout=True)
    rows = []
    for (model, decoding), values in series.items():
        values = np.asarray(values, dtype=float)
        values = values[np.isfinite(values)]
        label = ("oracle: TVD(O2, O1)" if model == "oracle" else f"{model} / {decoding}: TVD(M, H)") \
            + f", n = {values.size:,} contexts"
        style = {"color": "black", "linestyle": "--"} if model == "oracle" else {}
        if np.unique(values).size >= 2:
            density = gaussian_kde(values)(GRID)
            ax.plot(GRID, density, label=label, **style)
        else:
            density = np.full(GRID.shape, np.nan)
            ax.axvline(values[0] if values.size else np.nan, label=label, **style)
        rows.append(pd.DataFrame({"model": model, "decoding": decoding, "n_contexts": values.size, "tvd": GRID,
                                  "density": density}))
    ax.set_xlabel("per-context TVD: a system's to all humans, TVD(M, H); the oracle's between halves, TVD(O2, O1)",
                  fontsize=8)
    ax.set_ylabel("density")
    ax.set_xlim(0, 1)
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=2, fontsize=8)
    return fig, pd.concat(rows, ignore_index=True)


def word_bars(
    contexts: pd.DataFrame,
    human: dict[tuple[int, int], dict[str, float]],
    model: dict[tuple[int, int], dict[str, float]],
    model_label: str,
    *,
    top: int = 15,
) -> tuple[plt.Figure, pd.DataFrame]:
    """For each context, the ``top`` most probable words of the human and model distributions,
    each panel titled with the mass its bars show (the rest lies on rarer words).

    Ranks break ties alphabetically. ``contexts`` holds the chosen contexts' rows.
    """
    n = len(contexts)
    fig, axes = plt.subplots(n, 2, figsize=bounded(10, 3.2 * n), squeeze=False)
    rows = []
    for i, ctx in enumerate(contexts.itertuples(index=False)):
        key = (int(ctx.text_id), int(ctx.word_number))
        for j, (source, dist) in enumerate((("human", human[key]), (model_label, model.get(key, {})))):
            ranked = sorted(dist.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
            words = [w for w, _ in ranked]
            probs = [p for _, p in ranked]
            ax = axes[i][j]
            ax.barh(range(len(words))[::-1], probs, color="tab:blue" if j == 0 else "tab:orange")
            ax.set_yticks(range(len(words))[::-1], words, fontsize=7)
            ax.set_xlim(0, 1)
            ax.set_xlabel("probability", fontsize=7)
            ax.set_title(f"{source}: …{' '.join(ctx.context.split()[-6:])} ___\n"
                         f"{len(words)} most probable word{'s' * (len(words) != 1)}: {sum(probs):.0%} of the mass",
                         fontsize=8)
            rows.extend(
                {"text_id": key[0], "word_number": key[1], "context": ctx.context, "source": source,
                 "word": w, "probability": p, "rank": r + 1}
                for r, (w, p) in enumerate(ranked)
            )
    fig.tight_layout()
    return fig, pd.DataFrame(rows)


def model_size(table: pd.DataFrame, labels: dict[str, str]) -> plt.Figure:
    """Table 1's quantities against model size: one panel per quantity (``labels``: quantity ->
    its axis label), each decoding's models by their stated parameter count (log axis) with the
    E TVD's 95% interval, and the oracle control as a dashed line (with its interval as a band).

    Parameters
    ----------
    table : pandas.DataFrame
        A ``provo_model_size`` table (``varprobe.analysis.model_size.size_table``): every number
        drawn.
    labels : dict of str to str
        The quantities to draw, in order, with their labels.

    Returns
    -------
    matplotlib.figure.Figure
    """
    columns = 2
    rows_ = -(-len(labels) // columns)
    fig, grid = plt.subplots(rows_, columns, figsize=bounded(4.2 * columns, 3.0 * rows_), squeeze=False,
                             constrained_layout=True)
    axes = [ax for row in grid for ax in row]
    for ax in axes[len(labels):]:
        ax.remove()
    sized = table[table["parameters"].notna()]
    sizes = sorted(set(sized["parameters"].astype(int)))
    for ax, (quantity, label) in zip(axes, labels.items(), strict=True):
        for decoding, rows in sized[sized["quantity"] == quantity].groupby("decoding", sort=True):
            rows = rows.sort_values("parameters")
            x = rows["parameters"].to_numpy(dtype=float)
            y = rows["value"].to_numpy(dtype=float)
            spread = np.vstack([y - rows["ci_low"].to_numpy(dtype=float), rows["ci_high"].to_numpy(dtype=float) - y])
            ax.errorbar(x, y, yerr=np.nan_to_num(spread), marker="o", capsize=3, label=f"models, {decoding}")
            for xi, yi, name in zip(x, y, rows["model"], strict=True):
                ax.annotate(name, (xi, yi), textcoords="offset points", xytext=(3, 3), fontsize=6)
        for _, oracle in table[(table["model"] == "oracle") & (table["quantity"] == quantity)].iterrows():
            if np.isfinite(oracle["ci_low"]):
                ax.axhspan(oracle["ci_low"], oracle["ci_high"], color="grey", alpha=0.25, label="oracle control, 95% interval")
            ax.axhline(oracle["value"], color="black", linestyle="--", label="oracle control")
        ax.set_xscale("log")
        ax.set_xticks(sizes, [f"{n / 1e6:.0f}M" for n in sizes])
        ax.minorticks_off()
        ax.set_ylabel(label, fontsize=8)
        ax.set_xlabel("parameters (as the model card states)", fontsize=8)
    legend_below(fig, axes)
    return fig
