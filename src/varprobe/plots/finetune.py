"""Training and validation loss during fine-tuning, one panel per model and fold (Ilia & Aziz
2024, Fig. 18). Returns the figure and the table of exactly the numbers drawn."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
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


def tvd_histograms(paired: pd.DataFrame, model: str, base: str):
    """Histograms of per-context TVD to the humans, pretrained beside fine-tuned, one panel per
    decoding (Ilia & Aziz 2024, Fig. 17); ``paired`` is the ``finetune_pairs`` table."""
    decodings = list(dict.fromkeys(paired["decoding"]))
    fig, axes = plt.subplots(1, len(decodings), figsize=(4.5 * len(decodings), 3.4), squeeze=False)
    bins = np.linspace(0.0, 1.0, 21)
    for ax, decoding in zip(axes[0], decodings, strict=True):
        rows = paired[paired["decoding"] == decoding]
        ax.hist(rows["tvd_pretrained"], bins=bins, alpha=0.6, label=base)
        ax.hist(rows["tvd_finetuned"], bins=bins, alpha=0.6, label=model)
        ax.set(title=f"{decoding} ({len(rows)} held-out contexts)", xlabel="TVD(M, H) per held-out context",
               ylabel="contexts")
        ax.legend()
    fig.tight_layout()
    return fig
