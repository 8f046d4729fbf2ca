"""The regression's section of the results page (``varprobe.results_page.sections``): Table 3
beside ours."""

from __future__ import annotations

import pandas as pd

from varprobe.results_page import paper
from varprobe.results_page.sections import Section
from varprobe.results_page.tables import number, printed

SECTION = Section("Why can't models reproduce human variability? ARD regression",
                  paper="Ilia & Aziz 2024, Sec. 5, Fig. 3, App. B, Table 3",
                  entries=("regression_coefficients",),
                  figures=("regression",), position=10)

FIGURES = {"regression": "Ilia & Aziz 2024, Fig. 3"}

REFERENCE = "reference"
"""Table 3's cell of a system's reference tag, which its design drops (no coefficient)."""


def coefficient_table(coefficients: pd.DataFrame) -> pd.DataFrame:
    """Ilia & Aziz 2024, Table 3 beside ours: one row per predictor (schema
    ``regression_coefficients``, every system's rows), one column per model / decoding with its
    posterior mean and 95% HDI (``REFERENCE`` for its reference tag, "–" where its design lacks
    the predictor), and the paper's GPT-2 coefficient matched on the predictor id; the paper's
    predictors that no system has (every system's reference tag, a tag not in our design) on
    rows of their own."""
    systems = list(dict.fromkeys(zip(coefficients["model"], coefficients["decoding"], strict=True)))
    labels = dict(zip(coefficients["predictor"], coefficients["label"], strict=True))
    cells = {(r.model, r.decoding, r.predictor): f"{number(r.mean)} [{number(lo)}, {number(hi)}]"
             for r, lo, hi in zip(coefficients.itertuples(index=False), coefficients["hdi_2.5%"],
                                  coefficients["hdi_97.5%"], strict=True)}
    references = dict(zip(zip(coefficients["model"], coefficients["decoding"], strict=True),
                          coefficients["reference_tag"], strict=True))

    def cell(m: str, d: str, key: str) -> str:
        return cells.get((m, d, key), REFERENCE if references[(m, d)] == key else "–")

    rows = [{"predictor": label, **{f"{m} / {d}": cell(m, d, key) for m, d in systems},
             "paper (GPT-2)": printed(paper.TABLE_3[key]) if key in paper.TABLE_3 else "–"}
            for key, label in labels.items()]
    for key, value in paper.TABLE_3.items():
        if key not in labels:
            dropped = [r == key for r in references.values()]
            why = ("every system's reference level" if all(dropped) else
                   "some systems' reference level" if any(dropped) else "not in our design")
            rows.append({"predictor": f"{paper.TABLE_3_LABELS[key].lower()} ({why})",
                         **{f"{m} / {d}": cell(m, d, key) for m, d in systems}, "paper (GPT-2)": printed(value)})
    table = pd.DataFrame(rows)
    table.attrs["title"] = "ARD regression coefficients: posterior mean [95% HDI] per system (Table 3)"
    return table


VIEWS = {"regression_coefficients": lambda frames, measured: [coefficient_table(pd.concat(frames, ignore_index=True))]}


NOTE = (
    "The paper's Table 3 gives a coefficient to every tag it names and states no reference level. Each\n"
    "of our systems drops one tag, its most frequent, as the reference level: that tag's cell reads\n"
    '"reference" in the system\'s column (it has no coefficient); a paper tag that no system has a\n'
    'coefficient for is a row of its own, named for why ("every system\'s reference level", "some\n'
    'systems\' reference level" or "not in our design"). A system\'s "–" is a tag none of its contexts\n'
    'has, so its design has no column for it. Coefficients\n'
    'of continuous predictors are per standard deviation (z-scores).\n'
)
"""What the page says under the table (Markdown the page writes)."""

NOTES = {'regression_coefficients': lambda config: NOTE}
