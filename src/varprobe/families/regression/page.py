"""The regression's section of the results page (``varprobe.results_page.sections``): Table 3
beside ours."""

from __future__ import annotations

import math

import pandas as pd

from varprobe import tables
from varprobe.results_page import paper, verdicts
from varprobe.results_page.disagreements import Group, Pair, moves, other_models
from varprobe.results_page.findings import span, table_of
from varprobe.results_page.markup import text
from varprobe.results_page.sections import Section
from varprobe.results_page.tables import markdown, number, printed, with_interval

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


def regression_finding(coefficients: pd.DataFrame) -> list[str]:
    first = coefficients[(coefficients["kind"] != "intercept") & (coefficients["kind"] != "noise")]
    first = first[(first["model"] == first["model"].iloc[0]) & (first["decoding"] == first["decoding"].iloc[0])]
    top = first.loc[first["mean"].abs().idxmax()]
    oracle = first[first["predictor"] == "tvd_oracle2_oracle1"]
    said = (f"; TVD between oracles {number(oracle['mean'].iloc[0])} "
            f"[{number(oracle['hdi_2.5%'].iloc[0])}, {number(oracle['hdi_97.5%'].iloc[0])}], the paper's "
            f"largest ({paper.TABLE_3['tvd_oracle2_oracle1']}, per unit of its predictor, not per SD)") \
        if len(oracle) else ""
    return [f"The largest ARD coefficient of {top['model']} / {top['decoding']} is {top['label']} "
            f"({number(top['mean'])} per SD){said} (Table 3)."]


def table_three_pairs(entries: list[dict], _measured: dict, _config: dict) -> list[Pair]:
    """Table 3's coefficients of every system beside the paper's."""
    frame = table_of(entries, "regression_coefficients")
    if frame is None:
        return []
    shown = frame[frame["predictor"].isin(paper.TABLE_3)]
    return [Pair("table3_tvd_oracles" if r.predictor == "tvd_oracle2_oracle1" else "table3_coefficients",
                 f"{r.model} / {r.decoding}, {r.label}", ours=r.mean, low=lo, high=hi,
                 paper=paper.TABLE_3[r.predictor], decimals=3)
            for r, lo, hi in zip(shown.itertuples(index=False), shown["hdi_2.5%"], shown["hdi_97.5%"], strict=True)]


APPENDIX_B = "`Additional_Experiments/Appendix_B/analysis_predictors.ipynb`"
"""The authors' notebook of Table 3 (github.com/evgeniael/predict_next_word)."""


PRINTED_TVD_ORACLES = 0.1152
"""What that notebook's ``clf.coef_`` (cell 16) prints for TVD between oracles, where Table 3
prints 0.117."""


def _per_sd(row) -> float:
    """A ``regression_codings`` row's coefficient of TVD between oracles per standard deviation of
    the predictor: itself for z-scores, else times the predictor's SD."""
    return row["tvd_oracle2_oracle1"] * (1.0 if row["units"] == "per SD" else row["sd_tvd_oracle2_oracle1"])


def _regression_text(codings: pd.DataFrame) -> str:
    """What each protocol's coefficient of TVD between oracles is and what it can identify, from a
    ``regression_codings`` table; every number it cites is in ``_regression_table``."""
    role = codings[codings["role"] != ""].set_index("role")
    authors, resplits = role.loc["authors"], role.loc["authors on resplits"]
    ours = [_per_sd(r) for _, r in codings[codings["seed_min"].isna()
                                           & (codings["role"] != "without human entropy")].iterrows()]
    change, mean_change = (authors[c] - resplits["tvd_oracle2_oracle1"] for c in ("tvd_oracle2_oracle1", "seed_mean"))
    return (
        f"The coefficients of TVD between oracles below are three quantities. Ours (Table 3) is a NUTS posterior "
        f"mean on z-scored predictors: TVD(M, O1) per standard deviation (SD) of TVD(O2, O1), the target and "
        f"the predictor each the mean over the run's resplits. The paper's "
        f"+{printed(paper.TABLE_3['tvd_oracle2_oracle1'])} is the authors' `sklearn.linear_model.ARDRegression()` "
        f"with its defaults on raw predictors ({APPENDIX_B}, cells 11-16; its cell 16 prints "
        f"{PRINTED_TVD_ORACLES}): TVD(M, O1) per unit of TVD(O2, O1), the target and "
        f"the predictor from one split of the responses, `random.seed(0)` in every context (cell 1:44-68, cell "
        f"2:41-53). The authors' protocol on this system gives {number(authors['tvd_oracle2_oracle1'])} per unit, "
        f"{number(_per_sd(authors))} per SD, and {span(authors['seed_min'], authors['seed_max'])} (mean "
        f"{number(authors['seed_mean'])}) over the seeds 0-19 of its one split; the same coding on the resplit means "
        f"gives {number(resplits['tvd_oracle2_oracle1'])}: one split shared by target and predictor {moves(change)} "
        f"the coefficient by {number(abs(change))} at seed 0 and {moves(mean_change)} it by "
        f"{number(abs(mean_change))} on average over the seeds, and with the predictor from a split of its own (one "
        f"split's noise in each, none shared) it is {number(role.loc['own split', 'tvd_oracle2_oracle1'])}. What "
        f"each can identify: a per-unit coefficient's size is also its predictor's unit's (TVD in [0, 1], nats, "
        f"words, a 0/1 tag), so its largest (the authors' protocol: {verdicts.largest_coefficient(authors)}) "
        f"ranks no importance; a per-SD coefficient does, "
        f"{_identified(resplits['correlation'], authors['correlation'])}. Per SD, across reference level and "
        f"units, ours is {span(min(ours), max(ours))} on the resplit means, without human entropy in the design "
        f"{number(role.loc['without human entropy', 'tvd_oracle2_oracle1'])}. What remains between the paper's "
        f"digits and the authors' protocol here (GPT-2 against the run's models, 1,000 draws against the run's) is "
        f"unexplained.")


def _identified(r: float, one_split: float) -> str:
    """Whether a per-SD coefficient ranks human entropy against TVD between oracles, whose
    correlation is ``r`` over the resplit means and ``one_split`` in the authors' one split
    (``verdicts.COLLINEAR``, the verdict's threshold)."""
    said = f"correlate at {number(r)} over these contexts ({number(one_split)} in one split)"
    if abs(r) >= verdicts.COLLINEAR:
        return (f"but not between human entropy and TVD between oracles, which {said}: the fit shares one effect "
                f"between them as its prior prunes, so which of the two is the larger is identified under neither "
                f"protocol")
    return f"and human entropy and TVD between oracles, which {said}, are told apart"


def _regression_table(codings: pd.DataFrame, coefficients: pd.DataFrame | None) -> pd.DataFrame:
    """The paper's coefficient of TVD between oracles, ours (the NUTS posterior of the codings'
    system, where the run has it) and each coding's (``regression_codings``), each in its units
    and per SD; a one-split coding's change from the same coding on the resplit means."""
    role = codings[codings["role"] != ""].set_index("role")
    authors, resplits = role.loc["authors"], role.loc["authors on resplits"]
    paper_value = paper.TABLE_3["tvd_oracle2_oracle1"]
    rows = [{"coding": "the paper's (GPT-2; cell 16 prints it)", "split": authors["split"], "units": "per unit",
             "TVD between oracles": f"{printed(paper_value)} ({PRINTED_TVD_ORACLES})",
             "per SD": f"{number(paper_value * authors['sd_tvd_oracle2_oracle1'])} (at the authors' protocol's SD)"}]
    if coefficients is not None:
        mine = coefficients[(coefficients["model"] == authors["model"])
                            & (coefficients["decoding"] == authors["decoding"])
                            & (coefficients["predictor"] == "tvd_oracle2_oracle1")]
        rows += [{"coding": "ours: NUTS posterior mean [95% HDI] (Table 3)", "split": resplits["split"],
                  "units": "per SD", "TVD between oracles": with_interval(r["mean"], r["hdi_2.5%"], r["hdi_97.5%"]),
                  "per SD": number(r["mean"])} for _, r in mine.iterrows()]
    for _, r in codings.iterrows():
        one_split = not math.isnan(r["seed_min"])
        rows.append({
            "coding": r["coding"], "reference": r["reference"], "split": r["split"], "units": r["units"],
            "TVD between oracles": number(r["tvd_oracle2_oracle1"]), "per SD": number(_per_sd(r)),
            "over seeds 0-19": (f"{span(r['seed_min'], r['seed_max'])} (mean {number(r['seed_mean'])})"
                                if one_split else "–"),
            "change from the resplit means": (
                f"{number(r['tvd_oracle2_oracle1'] - resplits['tvd_oracle2_oracle1'])} (over the seeds "
                f"{number(r['seed_mean'] - resplits['tvd_oracle2_oracle1'])})" if one_split else "–"),
            "SD of TVD(O2, O1)": number(r["sd_tvd_oracle2_oracle1"]), "human entropy": number(r["entropy_human"]),
            "largest": verdicts.largest_coefficient(r),
            "contexts": str(r["n_contexts"]), "correlation of the two predictors": number(r["correlation"])})
    return pd.DataFrame(rows, columns=list(rows[-1])).fillna("–")


def _regression(entries, measured: dict, _config) -> dict | None:
    if "regression_codings" not in measured:
        return None
    codings = tables.read(measured["regression_codings"], "regression_codings")
    model, decoding = codings["model"].iloc[0], codings["decoding"].iloc[0]
    return {"cause": (f"Measured on {text(model)} / {text(decoding)} by `ARDRegression()` under each coding "
                      f"(below). " + _regression_text(codings)),
            "table": markdown(_regression_table(codings, table_of(entries, "regression_coefficients")))}


def _coefficients(entries, measured: dict, config) -> dict | None:
    """The other coefficients: the codings' human-entropy coefficient beside the paper's."""
    if "regression_codings" not in measured:
        return None
    codings = tables.read(measured["regression_codings"], "regression_codings")
    human = codings["entropy_human"].dropna()
    return (f"Measured: under the codings of the TVD-between-oracles entry the human-entropy coefficient is "
            f"{span(human.min(), human.max())} (the paper: {paper.TABLE_3['entropy_human']}); the two "
            f"predictors correlate at {number(codings['correlation'].iloc[0])} (the codings' table), so the fit shares their effect "
            f"differently by coding; the rest is " + other_models(entries, measured, config))


FINDINGS = {"regression_coefficients": (regression_finding, ("IA-3",))}
"""Its finding (``varprobe.results_page.findings``): from its coefficients table, with the claim
its sentence states."""

DISPUTED_BY = {"regression_coefficients": "Table 3"}
"""The start of the Disagreements headings that dispute its finding."""

GROUPS = {
    "table3_tvd_oracles": Group("Table 3: the coefficient of TVD between oracles", "Ilia & Aziz 2024, Table 3"),
    "table3_coefficients": Group("Table 3: the other coefficients", "Ilia & Aziz 2024, Table 3"),
}
"""Its groups of the Disagreements section (``varprobe.results_page.disagreements``)."""

PAIRS = table_three_pairs

CAUSES = {"table3_tvd_oracles": _regression, "table3_coefficients": _coefficients}
