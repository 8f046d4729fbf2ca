"""The token-level calibration section of the results page (``varprobe.results_page.sections``):
Liu et al.'s Table 1 beside ours."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from varprobe.results_page import paper
from varprobe.results_page.sections import Section

SECTION = Section("Token-level calibration: ECE, cw-ECE and Full-ECE over bin counts",
                  paper="Liu et al. 2024, Table 1",
                  entries=("token_calibration_summary",),
                  figures=("token_calibration",), position=80)

FIGURES = {"metrics_by_bins": "Liu et al. 2024, Table 1 (as curves)"}

GLOSSARY = {
    "`full_ece_weighted`": "Full-ECE in Liu et al.'s eq. (9) view: each (position, token) pair weighted "
    "by its probability, the weights summing to 1; `full_ece` follows their eqs. (11)-(13) as printed, "
    "whose bin weights sum to the vocabulary size.",
    "RSD": "relative standard deviation of a metric over the bin counts M (std / mean, "
    "`rsd_ddof` for the std).",
    "floor (labels drawn from the model)": "a token-calibration metric scored with every label "
    "drawn from the model's own distribution at its position, which makes the model perfectly "
    "calibrated: its value is the binned estimator's finite-sample bias on as many positions.",
}
"""The section's quantities (``varprobe.results_page.tables.glossary``)."""

def token_rsd(summary: pd.DataFrame) -> pd.DataFrame:
    """Liu et al. 2024, Table 1 beside ours: per model and metric, the value at the summary's M
    and the RSD over the bin counts, with the paper's RSD for its 2B and 7B models where it has
    one (cw-ECE and Full-ECE; none for ECE)."""
    rows = [{"model": r.model, "metric": r.metric, "value at M": r.value, "M": str(r.bins),
             "RSD over M": f"{100 * r.rsd:.1f}%",
             **{f"paper {size}": f"{100 * v:.2f}%" for size, v in paper.LIU_TABLE_1.get(r.metric, {}).items()}}
            for r in summary.itertuples(index=False)]
    return pd.DataFrame(rows, columns=["model", "metric", "value at M", "M", "RSD over M",
                                       "paper 2B", "paper 7B"]).fillna("–")


VIEWS = {"token_calibration_summary": lambda frames, measured: [token_rsd(f) for f in frames]}


def rsd_note(config: Mapping) -> str:
    """What the page says under the table (Markdown the page writes): the run's bin counts
    (``analyses.token_calibration.rsd_bins``) beside Liu et al.'s, and what the values lack."""
    bins = (config["analyses"].get("token_calibration") or {}).get("rsd_bins")
    ours = f": {', '.join(str(int(b)) for b in bins)}" if bins else ""
    other = (":\nnot Liu et al.'s, so their RSDs beside ours are over other bin counts"
             if bins and list(bins) != list(paper.LIU_BINS) else "")
    return ("RSD over M is the relative standard deviation of the metric over the run's bin counts\n"
            f"(`rsd_bins`{ours}; Liu et al.: {', '.join(str(b) for b in paper.LIU_BINS)}){other}. The paper gives "
            "no RSD of ECE, and no\n"
            "interval for any value; ours are single values over the corpus's positions, with no interval\n"
            "(a bootstrap over positions would need every position's probabilities, which the run does not keep).\n")


NOTES = {"token_calibration_summary": rsd_note}
