"""Training and validation loss during fine-tuning, one panel per model and fold (Ilia & Aziz
2024, Fig. 18). Returns the figure and the table of exactly the numbers drawn."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

STYLES = {"train": {"color": "tab:blue", "marker": "o"},
          "validation": {"color": "tab:orange", "marker": "s"}}


def loss_curves(losses: pd.DataFrame) -> tuple[plt.Figure, pd.DataFrame]:
    """Loss against epoch for each split in one panel per ``(model, fold)`` (four per row, a
    shared loss axis); the validation curve starts at epoch 0, before training."""
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
    columns = min(4, len(panels))
    rows = math.ceil(len(panels) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(3.6 * columns, 3.0 * rows), sharey=True,
                             squeeze=False)
    for ax, ((model, fold), panel) in zip(axes.flat, panels):
        for split, curve in panel.groupby("split", sort=True):
            ax.plot(curve["epoch"], curve["loss"], label=split, **STYLES[split])
        ax.set_title(model if pd.isna(fold) else f"{model}, fold {fold}", fontsize=9)
        ax.set_xlabel("epoch")
        ax.legend(fontsize=8)
    for ax in axes[:, 0]:
        ax.set_ylabel("cross-entropy (nats/token)")
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    fig.tight_layout()
    return fig, table
