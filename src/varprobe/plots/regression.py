"""The ARD regression coefficients with their 95% HDIs (Ilia & Aziz 2024, Fig. 3).

Drawn from ``regression_coefficients`` tables only; returns the figure and the table of exactly
the numbers drawn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402


def coefficient_plot(coefficients: pd.DataFrame, order: Sequence[str],
                     labels: Mapping[str, str]) -> tuple[plt.Figure, pd.DataFrame]:
    """Posterior mean and 95% HDI of every coefficient, one row per predictor in ``order`` (top
    to bottom; the analysis passes the paper's), named by ``labels`` (predictor or tag -> label),
    one colour per (model, decoding), and a vertical line at 0.

    A predictor absent from a system (its reference tag, or a tag its contexts never end on) has
    no point for that system; the legend, below the axes and off the estimates, names each
    system's reference tag. Intercept and sigma are not drawn.
    """
    rows = coefficients[coefficients["predictor"].isin(order)]
    present = [p for p in order if p in set(rows["predictor"])]
    position = {p: i for i, p in enumerate(present)}
    systems = list(dict.fromkeys(zip(rows["model"], rows["decoding"], strict=True)))
    fig, ax = plt.subplots(figsize=(6.4, 1.6 + 0.2 * len(systems) + 0.35 * len(present) * max(1, len(systems) / 2)),
                           constrained_layout=True)
    drawn = []
    step = 0.7 / max(len(systems), 1)
    for k, (model, decoding) in enumerate(systems):
        own = rows[(rows["model"] == model) & (rows["decoding"] == decoding)].copy()
        own["position"] = own["predictor"].map(position).astype(int)
        own = own.sort_values("position")
        y = own["position"] + (k - (len(systems) - 1) / 2) * step
        ax.errorbar(
            own["mean"], y,
            xerr=[own["mean"] - own["hdi_2.5%"], own["hdi_97.5%"] - own["mean"]],
            fmt="o", capsize=2, markersize=4,
            label=f"{model} / {decoding} (reference: {labels[own['reference_tag'].iloc[0]]})",
        )
        drawn.append(own)
    ax.axvline(0.0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(present)), [labels[p] for p in present])
    ax.invert_yaxis()
    ax.set_xlabel("coefficient on TVD(M, O1) (posterior mean, 95% HDI)")
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=1, fontsize=8)
    columns = ["model", "decoding", "position", "predictor", "label", "mean", "hdi_2.5%", "hdi_97.5%",
               "reference_tag"]
    table = pd.concat(drawn, ignore_index=True)[columns] if drawn else pd.DataFrame(columns=columns)
    return fig, table
