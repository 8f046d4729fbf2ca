"""The k%-oracle replacement's section of the results page (``varprobe.results_page.sections``):
the smallest k that matches the oracles, beside the paper's "about 60%"."""

from __future__ import annotations

import pandas as pd

from varprobe.results_page import paper
from varprobe.results_page.sections import Section

SECTION = Section("What do TVD differences mean? k%-oracle replacement and TVD differences",
                  paper="Ilia & Aziz 2024, Sec. 5, App. C.4, App. E, Figs. 12, 14-16",
                  entries=("oracle_replacement_summary",),
                  figures=("oracle_replacement", "tvd_differences"), position=30)

FIGURES = {
    "tvd_differences": "Ilia & Aziz 2024, Fig. 12",
    "oracle_replacement/curves": "Ilia & Aziz 2024, Sec. 5 and App. E, drawn as a curve: the mean TVD of the "
    "replaced set against k (a line per system, the band its seeds' range), the oracles' mean dashed, the "
    "matching k dotted; the paper shows the histograms at k (Figs. 14-16), the next figure",
    "oracle_replacement/histograms": "Ilia & Aziz 2024, Figs. 14-16",
}

def replacement_headline(summary: pd.DataFrame) -> pd.DataFrame:
    """Sec. 5 and App. E: per system and oracle size, the model's and the oracles' mean TVD and
    the smallest k (% of contexts replaced by the oracle's TVD) at which the replaced TVDs'
    histogram overlaps the oracles' by the threshold, beside the paper's "about 60%" for GPT-2."""
    ends = summary.groupby(["model", "decoding", "oracle_size"], as_index=False).agg(
        model_mean_tvd=("model_mean_tvd", "first"), oracle_mean_tvd=("oracle_mean_tvd", "first"),
        k_match=("k_match", "first"), n_seeds=("n_seeds", "first"))
    ends["k needed"] = ends["k_match"].map(lambda k: "none in the grid" if pd.isna(k) else f"{k:.0f}%")
    ends["paper (GPT-2)"] = f"about {paper.REPLACEMENT_SHARE:.0%}"
    ends["oracle_size"] = ends["oracle_size"].astype(str)
    ends["n_seeds"] = ends["n_seeds"].astype(str)
    return ends.drop(columns="k_match").rename(columns={
        "oracle_size": "oracle size", "model_mean_tvd": "E TVD(M, O)", "oracle_mean_tvd": "E TVD(O, O')",
        "n_seeds": "seeds"})


VIEWS = {"oracle_replacement_summary": lambda frames, measured: [replacement_headline(f) for f in frames]}


NOTE = (
    '"k needed" is the smallest grid k at which the histogram of the model\'s TVDs, with k% of its\n'
    'contexts replaced by the TVD between two oracles of the given size (half: the half split), overlaps\n'
    "the oracles' by at least the threshold (varprobe.families.oracle_replacement.analysis). The paper reads it\n"
    'off the same histograms.\n'
)
"""What the page says under the table (Markdown the page writes)."""

NOTES = {'oracle_replacement_summary': lambda config: NOTE}
