"""The biased estimator's section of the results page (``varprobe.results_page.sections``):
Table 2 beside ours."""

from __future__ import annotations

import math

import pandas as pd

from varprobe.results_page import paper
from varprobe.results_page.sections import Section
from varprobe.results_page.tables import printed

SECTION = Section("The biased model estimate",
                  paper="Ilia & Aziz 2024, App. A, Table 2, Fig. 5",
                  entries=("biased_estimator_summary",),
                  figures=("biased_estimator",), position=40)

FIGURES = {"biased_estimator": "Ilia & Aziz 2024, Fig. 5"}

TABLE_2_SYSTEMS = {"biased": "GPT-2 biased", "oracle 1": "Oracle 1 (Table 1's Oracle2)", "oracle 2": "Oracle 2"}
"""The paper's systems of Table 2, as its columns are named on the page."""


def table_two(summaries: list[pd.DataFrame]) -> pd.DataFrame:
    """Ilia & Aziz 2024, Table 2 (App. A) beside ours: per gold label (corpus word, human
    majority), the ECE of each model's biased estimate and of the oracle control, with the
    paper's GPT-2 biased estimate and oracles (both halves of the humans as predictors; its
    "Oracle 1" is its Table 1's Oracle2, the system our oracle control is); the title names every
    model."""
    frame = pd.concat(summaries, ignore_index=True)
    biased = frame[frame["decoding"] == "biased"]
    oracle = frame[frame["model"] == "oracle"].head(1)
    rows = []
    for label, column in (("corpus word", "ece_corpus"), ("human majority", "ece_human_majority")):
        row = {"gold label": label}
        row.update({f"{r.model} / biased": getattr(r, column) for r in biased.itertuples(index=False)})
        row["oracle control (ours)"] = oracle[column].iloc[0] if len(oracle) else math.nan
        row.update({f"paper: {TABLE_2_SYSTEMS[k]}": printed(v) for k, v in paper.TABLE_2[label].items()})
        rows.append(row)
    table = pd.DataFrame(rows)
    table.attrs["title"] = (f"Table 2: ECE of the biased estimate of {', '.join(dict.fromkeys(biased['model']))} "
                            f"and of the oracle control, beside the paper's GPT-2 and oracles")
    return table


VIEWS = {"biased_estimator_summary": lambda frames, measured: [table_two(frames)]}


NOTE = (
    'The paper\'s oracles 1 and 2 are each half of the humans as predictors; its Table 2 "Oracle 1" is\n'
    'its Table 1 "Oracle2", the system our oracle control is (oracle 2 predicting), so the two stand\n'
    "side by side. The paper's biased estimate is GPT-2's, renormalised over 1,000 ancestral and 300 nucleus\n"
    "draws (ours: the run's draws and `nucleus_samples` per top-p value).\n"
)
"""What the page says under the table (Markdown the page writes)."""

NOTES = {'biased_estimator_summary': lambda config: NOTE}
