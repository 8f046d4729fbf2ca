"""The token-level calibration section of the results page (``varprobe.results_page.sections``):
Liu et al.'s Table 1 beside ours."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from varprobe import tables
from varprobe.results_page import paper
from varprobe.results_page.disagreements import Group, Pair
from varprobe.results_page.findings import span, table_of
from varprobe.results_page.markup import text
from varprobe.results_page.sections import Section
from varprobe.results_page.tables import markdown, number

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


def token_finding(summary: pd.DataFrame) -> list[str]:
    rsd = summary.groupby("metric")["rsd"].agg(["min", "max"])
    if not {"classwise_ece", "full_ece"} <= set(rsd.index):
        return []
    cw, full = rsd.loc["classwise_ece"], rsd.loc["full_ece"]
    ours, theirs = "{:.1%}".format, "{:.2%}".format  # as the token-calibration table prints them

    def liu(metric: str) -> str:
        values = paper.LIU_TABLE_1[metric].values()
        return span(min(values), max(values), theirs)

    return [f"Token calibration: over bin counts the RSD of cw-ECE is {span(cw['min'], cw['max'], ours)} and of "
            f"Full-ECE {span(full['min'], full['max'], ours)}; Liu et al.: {liu('classwise_ece')} and "
            f"{liu('full_ece')} (Liu et al. Table 1)."]


def metric_by_bins(found: pd.DataFrame) -> pd.DataFrame:
    """Each token-calibration metric at every bin count (schema ``token_calibration_bins``), one
    row per model, labels and metric with a column ``M=...`` per bin count, then the ratio of its
    value at the largest M to the smallest, its RSD over M and its positions."""
    keys = ["model", "labels", "metric"]
    wide = found.pivot_table(index=keys, columns="bins", values="value").reset_index()
    wide.columns = [f"M={c}" if c not in keys else c for c in wide.columns]
    ends = found.groupby(keys, as_index=False)[["ratio", "rsd", "n_positions"]].first()
    wide = wide.merge(ends, on=keys).rename(columns={"ratio": "largest / smallest M", "rsd": "RSD over M",
                                                     "n_positions": "positions"})
    return wide.sort_values(keys, ignore_index=True)


def liu_pairs(entries: list[dict], _measured: dict, _config: dict) -> list[Pair]:
    """Each model's RSD over bin counts beside Liu et al.'s Table 1."""
    frame = table_of(entries, "token_calibration_summary")
    if frame is None:
        return []
    out = []
    for r in frame[frame["metric"].isin(paper.LIU_TABLE_1)].itertuples(index=False):
        for size, value in paper.LIU_TABLE_1[r.metric].items():
            out.append(Pair("liu_rsd", f"{r.model}, {r.metric}, RSD over M (paper: {size})", ours=r.rsd,
                            low=math.nan, high=math.nan, paper=value, decimals=4))
    return out


DRAWN = "drawn from the model"
"""The labels of a model's token-calibration floor: drawn from its own distributions (a perfectly
calibrated model: the estimators' floor), beside the corpus's (``corpus``)."""


def _token_bins(entries, measured: dict, _config) -> dict | None:
    if "token_calibration_bins" not in measured:
        return None
    wide = metric_by_bins(tables.read(measured["token_calibration_bins"], "token_calibration_bins"))
    full = wide[wide["metric"] == "full_ece"].set_index(["model", "labels"])
    ms = [c for c in wide.columns if c.startswith("M=")]

    def line(model: str) -> str:
        ours, floor = full.loc[(model, "corpus")], full.loc[(model, DRAWN)]
        return (f"{text(model)}: ours {number(ours[ms[0]])} at {ms[0]} and {number(ours[ms[-1]])} at {ms[-1]}, a "
                f"perfectly calibrated model's {number(floor[ms[0]])} and {number(floor[ms[-1]])} (its largest / "
                f"smallest M {number(floor['largest / smallest M'])}, ours {number(ours['largest / smallest M'])}; "
                f"its RSD over M {floor['RSD over M']:.0%})")

    models = [m for m in dict.fromkeys(full.index.get_level_values("model"))
              if (m, DRAWN) in full.index and (m, "corpus") in full.index]
    floor = ("Measured (below): each metric at every bin count M, scored once with the corpus's labels "
             "and once with every label drawn from the model's own distribution, which makes the model "
             "perfectly calibrated: whatever it scores then is the binned estimator's finite-sample bias on "
             f"as many positions. Full-ECE: {'; '.join(map(line, models))}. The bias grows with M, as each "
             "bin holds fewer positions: at this corpus's size it makes much of Full-ECE's value at many bins, "
             "and so of its RSD over M. " if models else "")
    return {"cause": (floor + f"Liu et al. score far more positions (ours: at most {int(wide['positions'].max()):,}) "
                      "of larger models; whether the number of positions alone brings Full-ECE's RSD to theirs, "
                      "and why our cw-ECE varies less over M than theirs, is unexplained: it needs runs on a "
                      "larger corpus (`analyses.token_calibration.corpus`: a production dataset's references)."),
            "table": markdown(wide.assign(**{"RSD over M": wide["RSD over M"].map("{:.0%}".format)}))}


FINDINGS = {"token_calibration_summary": (token_finding, ("LIU-1",))}
"""Its finding (``varprobe.results_page.findings``): from its summary, with the claim its sentence
states."""

DISPUTED_BY = {"token_calibration_summary": "RSD of cw-ECE"}
"""The start of the Disagreements headings that dispute its finding."""

GROUPS = {"liu_rsd": Group("RSD of cw-ECE and Full-ECE over bin counts", "Liu et al. 2024, Table 1 (2B and 7B)")}
"""Its groups of the Disagreements section (``varprobe.results_page.disagreements``)."""

PAIRS = liu_pairs

CAUSES = {"liu_rsd": _token_bins}
