"""The ARD regression coefficients with their 95% HDIs (Ilia & Aziz 2024, Fig. 3) beside the
paper's (its Table 3).

Drawn from ``regression_coefficients`` tables and the paper's coefficients as a table only;
returns the figure and the table of exactly the numbers drawn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from varprobe.plots.layout import MAX_COLUMNS, legend_below, panel_grid  # noqa: E402


def coefficient_plot(coefficients: pd.DataFrame, order: Sequence[str], labels: Mapping[str, str],
                     paper: pd.DataFrame) -> tuple[plt.Figure, pd.DataFrame]:
    """Posterior mean and 95% HDI of every coefficient, one panel per (model, decoding) (at most
    three a row, the predictors shared), one row per predictor in ``order`` (top to bottom; the
    analysis passes the paper's), named by ``labels`` (predictor or tag -> label), a vertical line
    at 0, and ``paper``'s coefficients (columns predictor, mean: the paper's Table 3) as open
    diamonds in every panel.

    A predictor absent from a system (its reference tag, or a tag its contexts never end on) has
    no point in its panel; the panel's title names the system's reference tag. One legend below
    the panels. Intercept and sigma are not drawn.
    """
    rows = coefficients[coefficients["predictor"].isin(order)]
    present = [p for p in order if p in set(rows["predictor"])]
    position = {p: i for i, p in enumerate(present)}
    systems = list(dict.fromkeys(zip(rows["model"], rows["decoding"], strict=True)))
    fig, axes = panel_grid(max(len(systems), 1), height=0.25 * len(present) + 1.4, sharex=True, sharey=True)
    published = paper[paper["predictor"].isin(present)]
    drawn = []
    for k, (ax, (model, decoding)) in enumerate(zip(axes, systems, strict=False)):
        own = rows[(rows["model"] == model) & (rows["decoding"] == decoding)].copy()
        own["position"] = own["predictor"].map(position).astype(int)
        own = own.sort_values("position")
        ax.errorbar(own["mean"], own["position"],
                    xerr=[own["mean"] - own["hdi_2.5%"], own["hdi_97.5%"] - own["mean"]],
                    fmt="o", capsize=2, markersize=4, color="tab:blue", label="posterior mean, 95% HDI")
        ax.plot(published["mean"], published["predictor"].map(position), "D", markerfacecolor="none",
                color="black", markersize=5, label="the paper, GPT-2 (Table 3)")
        ax.axvline(0.0, color="grey", linewidth=0.8)
        ax.set_title(f"{model} / {decoding}\n(reference: {labels[own['reference_tag'].iloc[0]]})", fontsize=9)
        ax.set_xlabel("coefficient on TVD(M, O1)")
        if k % MAX_COLUMNS == 0:
            ax.set_yticks(range(len(present)), [labels[p] for p in present])
        drawn.append(own)
    axes[0].invert_yaxis()
    legend_below(fig, axes)
    columns = ["model", "decoding", "position", "predictor", "label", "mean", "hdi_2.5%", "hdi_97.5%",
               "reference_tag"]
    table = pd.concat(drawn, ignore_index=True)[columns] if drawn else pd.DataFrame(columns=columns)
    return fig, table
