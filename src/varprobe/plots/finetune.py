"""Training and validation loss during fine-tuning, one panel per model and fold (Ilia & Aziz
2024, Fig. 18). Returns the figure and the table of exactly the numbers drawn."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from varprobe.plots.layout import MAX_COLUMNS, legend_below, panel_grid  # noqa: E402

STYLES = {"train": {"color": "tab:blue", "marker": "o"},
          "validation": {"color": "tab:orange", "marker": "s"}}


def loss_curves(losses: pd.DataFrame) -> tuple[plt.Figure, pd.DataFrame]:
    """Loss against epoch for each split in one panel per ``(model, fold)`` (at most three per
    row, a shared loss axis, one legend below); the validation curve starts at epoch 0, before
    training. A star marks the kept epoch (``kept``: its validation loss, or its training loss
    without validation), and each panel's title says what trained (``trainable_parts``)."""
    if losses.empty:
        raise ValueError("no fine-tuning losses to plot")
    unknown = sorted(set(losses["split"]) - set(STYLES))
    if unknown:
        raise ValueError(f"fine-tuning losses have unknown splits {unknown}")
    key = ["model", "fold", "split", "epoch"]
    repeated = losses[losses.duplicated(key, keep=False)]
    if not repeated.empty:
        first = repeated.iloc[0]
        raise ValueError(f"fine-tuning losses repeat model {first['model']!r} fold {first['fold']} "
                         f"{first['split']} epoch {first['epoch']} (the same run given twice?)")
    table = losses.sort_values(key, ignore_index=True)
    panels = list(table.groupby(["model", "fold"], dropna=False, sort=False))
    fig, axes = panel_grid(len(panels), width=3.6, height=3.0, sharey=True)
    for i, (ax, ((model, fold), panel)) in enumerate(zip(axes, panels, strict=True)):
        for split, curve in panel.groupby("split", sort=True):
            ax.plot(curve["epoch"], curve["loss"], label=split, **STYLES[split])
        kept = panel[panel["kept"].fillna(False).astype(bool)]
        kept = kept[kept["split"] == "validation"] if (kept["split"] == "validation").any() else kept
        ax.scatter(kept["epoch"], kept["loss"], marker="*", s=110, color="black", zorder=3,
                   label="kept epoch (its weights are the checkpoint's)")
        parts = ", ".join(sorted(set(panel["trainable_parts"].dropna())))
        name = model if pd.isna(fold) else f"{model}, fold {fold}"
        ax.set_title(f"{name} (trains {parts})" if parts else name, fontsize=9)
        ax.set_xlabel("epoch")
        if i % MAX_COLUMNS == 0:
            ax.set_ylabel("cross-entropy (nats/token)")
    legend_below(fig, axes)
    return fig, table


def tvd_histograms(paired: pd.DataFrame, model: str, base: str):
    """Density histograms (area 1) of per-context TVD to the humans, pretrained over fine-tuned,
    one panel per decoding (Ilia & Aziz 2024, Fig. 17), at most three a row, one legend below;
    ``paired`` is the ``finetune_pairs`` table. A context without a model word has no TVD, so
    the two systems may count different contexts: each series is a density over its own."""
    decodings = list(dict.fromkeys(paired["decoding"]))
    fig, axes = panel_grid(len(decodings), sharex=True)
    bins = np.linspace(0.0, 1.0, 21)
    for ax, decoding in zip(axes, decodings, strict=True):
        rows = paired[paired["decoding"] == decoding]
        for column, label, colour in (("tvd_pretrained", base, "tab:blue"), ("tvd_finetuned", model, "tab:orange")):
            values = rows[column].dropna()
            if len(values):
                ax.hist(values, bins=bins, density=True, histtype="step", color=colour, label=label)
        ax.set(title=f"{decoding} ({len(rows)} held-out contexts)", xlabel="TVD(M, H) per held-out context")
    axes[0].set_ylabel("density")
    legend_below(fig, axes)
    return fig
