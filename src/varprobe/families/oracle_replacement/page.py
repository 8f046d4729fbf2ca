"""The k%-oracle replacement's section of the results page (``varprobe.results_page.sections``):
the smallest k that matches the oracles, beside the paper's "about 60%"."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from varprobe.results_page import paper
from varprobe.results_page.disagreements import Group, Pair
from varprobe.results_page.findings import span, table_of
from varprobe.results_page.sections import Section
from varprobe.results_page.tables import markdown, number

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


def replacement_finding(summary: pd.DataFrame) -> list[str]:
    k = summary.groupby(["model", "decoding", "oracle_size"])["k_match"].first().dropna()
    if k.empty:
        return []
    return [f"A model's TVDs are distributed like the oracles' (their histograms overlap by the threshold) once "
            f"{span(k.min(), k.max(), '{:.0f}'.format)}% of its contexts are replaced by the oracle's TVD, over "
            f"every oracle size (the paper: about {paper.REPLACEMENT_SHARE:.0%} for GPT-2; k%-oracle replacement "
            f"table)."]


def replacement_pairs(entries: list[dict], _measured: dict, _config: dict) -> list[Pair]:
    """Each system's k needed beside the paper's share of contexts to replace."""
    frame = table_of(entries, "oracle_replacement_summary")
    if frame is None:
        return []
    ends = frame.groupby(["model", "decoding", "oracle_size"], sort=False)["k_match"].first().dropna()
    return [Pair("replacement_share", f"{m} / {d}, oracle size {n}, k needed (%)", ours=float(k), low=math.nan,
                 high=math.nan, paper=100 * paper.REPLACEMENT_SHARE, decimals=0) for (m, d, n), k in ends.items()]


def _reading(threshold: float, bins: int | None, share: float) -> str:
    """What the run's overlap ``threshold`` over ``bins`` histogram bins is against the paper's
    reading (``paper.REPLACEMENT_READING``): the paper's reading where both are its, else the
    run's own."""
    theta, paper_bins = paper.REPLACEMENT_READING
    if threshold == theta and bins == paper_bins:
        return f"ours puts normal densities with the paper's GPT-2 moments at its {share:.0f}% (docs/methods.md)"
    return (f"the run's threshold over {bins or 'its'} bins is its own, not the one that puts normal densities with "
            f"the paper's GPT-2 moments at its {share:.0f}% (`overlap_threshold: {theta:g}` over `bins: {paper_bins}`, "
            "docs/methods.md), so its k needed is not read as the paper's is")


def _replacement_cause(entries, _measured, config) -> dict | None:
    """The overlap at every grid k between the paper's share and each differing system's k needed,
    the table the criterion reads (``varprobe.families.oracle_replacement.analysis``), and whether the
    run's threshold and bins are those that read the paper's histograms as it does (``_reading``)."""
    summary = table_of(entries, "oracle_replacement_summary")
    if summary is None:
        return None
    share = paper.REPLACEMENT_SHARE * 100
    keys = ["model", "decoding", "oracle_size"]
    differing = summary[~np.isclose(summary["k_match"], share)]
    if differing.empty or not np.isclose(summary["k"], share).any():
        return None
    ks = sorted(k for k in summary["k"].unique()
                if min(share, differing["k_match"].min()) <= k <= max(share, differing["k_match"].max()))
    wide = differing[differing["k"].isin(ks)].pivot_table(index=keys + ["k_match"], columns="k", values="overlap",
                                                          sort=False)
    wide.columns = [f"overlap at k = {k:.0f}%" for k in wide.columns]
    at_share = wide[f"overlap at k = {share:.0f}%"]
    threshold = float(summary["overlap_threshold"].iloc[0])
    bins = (config["analyses"].get("oracle_replacement") or {}).get("bins")
    steps = np.diff(np.sort(summary["k"].unique()))
    off = (differing["k_match"] - share).abs()
    table = wide.reset_index().rename(columns={"oracle_size": "oracle size", "k_match": "k needed (%)"}).assign(
        threshold=f"{threshold:g}")
    return {"cause": (f"Measured: k needed is the first k of the grid (steps of {steps.min():.0f} points) at which "
                      "the histogram of the replaced TVDs, pooled over seeds, overlaps the oracles' (1 - TVD of "
                      f"their bin shares) by at least {threshold:g} (below). On these rows the overlap at "
                      f"k = {share:.0f}% is {span(at_share.min(), at_share.max())}, and each row's k needed is "
                      f"{span(off.min(), off.max(), '{:.0f}'.format)} points from the paper's. The paper reads its "
                      f"share by eye off GPT-2's histograms and prints no threshold; {_reading(threshold, bins, share)}. "
                      "Whether the difference comes "
                      "from the models or from reading a threshold off histograms is unexplained."),
            "table": markdown(table.assign(**{c: table[c].map(number) for c in wide.columns},
                                           **{"k needed (%)": table["k needed (%)"].map("{:.0f}".format)}))}


FINDINGS = {"oracle_replacement_summary": (replacement_finding, ("IA-4",))}
"""Its finding (``varprobe.results_page.findings``): from its summary, with the claim its sentence
states."""

DISPUTED_BY = {"oracle_replacement_summary": "k%-oracle replacement"}
"""The start of the Disagreements headings that dispute its finding."""

GROUPS = {
    "replacement_share": Group("k%-oracle replacement: the share of contexts to replace",
                               "Ilia & Aziz 2024, Sec. 5: about 60% for GPT-2, read off the histograms "
                               "(Figs. 14-16)"),
}
"""Its groups of the Disagreements section (``varprobe.results_page.disagreements``)."""

PAIRS = replacement_pairs

CAUSES = {"replacement_share": _replacement_cause}
