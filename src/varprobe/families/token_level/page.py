"""The token-level section of the results page (``varprobe.results_page.sections``): Table 4
beside ours."""

from __future__ import annotations

import pandas as pd

from varprobe.results_page import paper
from varprobe.results_page.sections import Section
from varprobe.results_page.tables import printed, with_interval

SECTION = Section("Token level",
                  paper="Ilia & Aziz 2024, App. D, Table 4, Fig. 13",
                  entries=("token_level_summary",),
                  figures=("token_level",), position=60)

FIGURES = {"token_level": "Ilia & Aziz 2024, Fig. 13"}

def table_four(summaries: list[pd.DataFrame]) -> pd.DataFrame:
    """Ilia & Aziz 2024, Table 4 (App. D) beside ours: token-level ECE against the human-majority
    first token of each model and of oracles 1 and 2, with the expected TVD to H and to O1; the
    paper's GPT-2 and oracles on rows of their own; the title names every model."""
    frame = pd.concat(summaries, ignore_index=True)
    rows = [{"model": r.model, "system": r.system,
             "E TVD(·, H) [95% CI]": with_interval(r.expected_tvd, r.ci_low, r.ci_high),
             "E TVD(·, O1)": r.expected_tvd_oracle1, "ECE human majority": r.ece_human_majority}
            for r in frame.itertuples(index=False)]
    rows += [{"model": "paper", "system": "GPT-2" if system == "model" else system,
              "ECE human majority": printed(value)} for system, value in paper.TABLE_4["human majority"].items()]
    table = pd.DataFrame(rows, columns=["model", "system", "E TVD(·, H) [95% CI]", "E TVD(·, O1)",
                                        "ECE human majority"])
    table.attrs["title"] = (f"Table 4: token-level ECE of {', '.join(dict.fromkeys(frame['model']))} and of "
                            f"its oracles 1 and 2, beside the paper's GPT-2 and oracles")
    return table


VIEWS = {"token_level_summary": lambda frames, measured: [table_four(frames)]}
