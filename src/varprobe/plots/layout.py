"""Panel grids a reader can read at the page's width: at most ``MAX_COLUMNS`` panels a row, no
empty panel left on the canvas, no figure wider than ``MAX_WIDE``:1 or taller than 1:``MAX_TALL``,
and legends off the data."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MAX_COLUMNS = 3
"""Panels per row (the results page is about one panel of 3.6 inches wide per third)."""
MAX_WIDE = 3.2
"""The widest a figure may be: width / height at most this."""
MAX_TALL = 2.2
"""The tallest a figure may be: height / width at most this."""


def bounded(width: float, height: float) -> tuple[float, float]:
    """A figure size (inches) within the aspect bounds: a figure wider than ``MAX_WIDE``:1 gets
    the height that brings it there, one taller than 1:``MAX_TALL`` the width; a size within
    them is returned as it is."""
    if width > MAX_WIDE * height:
        return width, width / MAX_WIDE
    if height > MAX_TALL * width:
        return height / MAX_TALL, height
    return width, height


def panel_grid(n: int, width: float = 3.6, height: float = 2.8, **shared) -> tuple[plt.Figure, list]:
    """A figure of ``n`` panels in rows of at most ``MAX_COLUMNS`` (its size ``bounded``), the
    unused cells of the last row removed, and every panel labelling its x axis's ticks (a shared
    axis too: a panel of a top row reads without the one below it); ``shared``: ``sharex``/``sharey``
    for panels that are compared."""
    columns = max(1, min(n, MAX_COLUMNS))
    rows = max(1, math.ceil(n / columns))
    fig, axes = plt.subplots(rows, columns, figsize=bounded(width * columns, height * rows), squeeze=False,
                             constrained_layout=True, **shared)
    flat = [ax for row in axes for ax in row]
    for ax in flat[n:]:
        ax.remove()
    for ax in flat[:n]:
        ax.xaxis.set_tick_params(labelbottom=True)  # shared x or not, each panel reads alone
    return fig, flat[:n]


def legend_below(fig: plt.Figure, axes, columns: int = 2) -> None:
    """One legend for the figure, below its panels, off the data: every label of ``axes`` (an
    axes or a list of them) once, in the order first drawn."""
    found = {}
    for ax in axes if isinstance(axes, list) else [axes]:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            found.setdefault(label, handle)
    if found:
        fig.legend(list(found.values()), list(found), loc="outside lower center", ncols=columns, fontsize="small")
