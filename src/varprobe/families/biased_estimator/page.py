"""The biased estimator's section of the results page (``varprobe.results_page.sections``):
Table 2 beside ours."""

from __future__ import annotations

import math

import pandas as pd

from varprobe.results_page import findings, paper
from varprobe.results_page.disagreements import Group, Pair, not_public, other_models
from varprobe.results_page.findings import table_of
from varprobe.results_page.markup import text
from varprobe.results_page.sections import Section
from varprobe.results_page.tables import printed
from varprobe.run_plan import RunPlan

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


def table_two_pairs(entries: list[dict], _measured: dict, _config: dict) -> list[Pair]:
    """Table 2's ECE of each biased estimate and of the oracle control beside the paper's."""
    frame = table_of(entries, "biased_estimator_summary")
    if frame is None:
        return []
    out = []
    for label, column in (("corpus word", "ece_corpus"), ("human majority", "ece_human_majority")):
        values = paper.TABLE_2[label]
        for r in frame[frame["decoding"] == "biased"].itertuples(index=False):
            out.append(Pair("table2_biased", f"{r.model} / biased, {label}", ours=getattr(r, column), low=math.nan,
                            high=math.nan, paper=values["biased"], decimals=3))
        for r in frame[frame["model"] == "oracle"].head(1).itertuples(index=False):
            out.append(Pair("table2_oracle", f"oracle control, {label} (paper: Oracle 1)", ours=getattr(r, column),
                            low=math.nan, high=math.nan, paper=values["oracle 1"], decimals=3))
    return out


def biased_support(entries, measured, config) -> str:
    """Table 2's biased estimate against GPT-2's: the support it renormalises over, the run's
    (its samples, greedy, nucleus draws, human and corpus words) beside the paper's (GPT-2's
    1,000 samples and 3 x 100 nucleus draws), then what remains (``_other_models``)."""
    settings = (config.get("analyses") or {}).get("biased_estimator")   # validated: the schema's defaults in
    provo = config.get("provo")
    if settings is None or provo is None:
        ours = "the run's samples, the greedy word, its nucleus draws, the human responses and the corpus word"
    else:
        decoding, nucleus = settings["samples_decoding"], settings["nucleus"]
        plan = RunPlan.from_config(config)
        count = plan.draws(decoding) if decoding in plan.sampled else "its"
        ours = (f"the words of its {count} {text(decoding)} draws per context, the greedy word, {len(nucleus)} x "
                f"{settings['nucleus_samples']} nucleus draws (top-p {', '.join(f'{p:g}' for p in nucleus)}), the "
                "human responses and the corpus word")
    return (f"The support differs: the run's biased estimate renormalises over {ours}; "
            f"the paper's, over GPT-2's {findings.PAPER_DRAWS:,} samples, the greedy word, 3 x 100 nucleus draws, the "
            "human responses and the corpus word (App. A), so less of the model's mass lies on ours. The run does not "
            "measure that difference alone. What remains is " + other_models(entries, measured, config))


GROUPS = {
    "table2_biased": Group("Table 2: the biased model estimate's ECE", "Ilia & Aziz 2024, Table 2, GPT-2"),
    "table2_oracle": Group("Table 2: the oracle's ECE", "Ilia & Aziz 2024, Table 2, \"Oracle 1\" (Table 1's Oracle2)"),
}
"""Its groups of the Disagreements section (``varprobe.results_page.disagreements``)."""

PAIRS = table_two_pairs

CAUSES = {
    "table2_biased": biased_support,
    "table2_oracle": not_public("Additional_Experiments/Appendix_A/uncertainty_results/cal_metrics_oracle.json",
                                "Table 2"),
}
