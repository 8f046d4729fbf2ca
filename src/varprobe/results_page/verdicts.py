"""The papers' claims as records, each decided on a run's tables: the verdict table that opens the
results page, and the verdicts its Findings and Disagreements state.

A ``Claim`` is one claim of Ilia & Aziz 2024, Liu et al. 2024 or Giulianelli et al. 2023: where
the paper makes it, the claim in one sentence, the paper's value with its kind (``KINDS``: a
point printed to some digits, a bound, a range, a sign, a ranking) and the test that decides it
on the run's tables. A test gives a ``Verdict`` (``VERDICTS``): reproduced, not reproduced,
partly, or not testable with the reason (the run has no such table or system, a predictor is
collinear, the generator does not do the task). The tests follow the paper's statement: a bound
is tested as a bound (the paper's "< 0.1" against our interval's ends, not widened by half a
digit), a sign only on the probes the paper reports it for (``PAPER_PROBES``) and where our
interval excludes zero, and a count over the paper's own cells.

Production variability is read only for a generator that beats copying the source on the task
(``adequacy``: the run's ``production_beats_copy`` table, ``varprobe.analysis.adequacy.
beats_copy``): for any other system, Giulianelli et al.'s claims are not testable with it, and
the verdict says why (its criterion beside the baseline's).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass

import numpy as np
import pandas as pd

from varprobe import tables
from varprobe.results_page import paper, published_systems
from varprobe.results_page.tables import (
    ADEQUACY_STATISTICS, decoding_ranks, number, printed, span, table_of, with_interval)

REPRODUCED, NOT_REPRODUCED, PARTLY, NOT_TESTABLE = "reproduced", "not reproduced", "partly", "not testable"
VERDICTS = (REPRODUCED, NOT_REPRODUCED, PARTLY, NOT_TESTABLE)
"""The verdicts a claim's test can give."""

KINDS = ("point", "bound", "range", "sign", "ranking")
"""The kinds of a paper's value: a point printed to some digits, a bound ("always lower than
0.1"), a range, a sign, a ranking (an order, or a count of cells in an order)."""

PAPER_PROBES = paper.GIULIANELLI_PROBES
"""Giulianelli et al. 2023's three main probes: the probes its signs and levels are read on."""

NO_CONTROL = paper.GIULIANELLI_NO_CONTROL
"""The tasks with no human control in the paper; ours splits DailyDialog++'s five references
2 + 3, a control that is no human level."""

COLLINEAR = 0.9
"""Two predictors correlated at least this much (a variance inflation factor above 5) share their
effect in a regression fit however it is coded, so which of them has the larger coefficient is
not identified (``_regression``)."""


@dataclass(frozen=True)
class Verdict:
    """A claim's test on a run: its verdict (``VERDICTS``), what the run gives (``ours``) and,
    for ``not testable`` or a verdict with a caveat, why (``reason``)."""

    verdict: str
    ours: str
    reason: str = ""

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r} is none of {', '.join(VERDICTS)}")


@dataclass(frozen=True)
class Run:
    """The run's tables a test reads: its registered tables (``entries``), its measured tables
    (``measured``) and its validated config."""

    entries: list
    measured: dict
    config: dict

    def table(self, prefix: str) -> pd.DataFrame | None:
        """The registered tables whose name starts with ``prefix``, as one frame (None without any)."""
        return table_of(self.entries, prefix)


@dataclass(frozen=True)
class Claim:
    """One claim of a paper: its key (``IA-1``), the paper and where in it, the claim in one
    sentence, the paper's value as printed and its kind (``KINDS``), and the test that decides
    it on a run (``Run`` -> ``Verdict``)."""

    key: str
    _: KW_ONLY
    paper: str
    where: str
    claim: str
    value: str
    kind: str
    test: Callable[[Run], Verdict]

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.key}: kind {self.kind!r} is none of {', '.join(KINDS)}")


def _count(agree: int, total: int) -> str:
    """The verdict of ``agree`` of ``total`` cells agreeing: all, none, or some (partly)."""
    return REPRODUCED if agree == total else NOT_REPRODUCED if agree == 0 else PARTLY


def _order(low: float, high: float, other_low: float, other_high: float) -> int:
    """+1 where the interval [low, high] lies above [other_low, other_high], -1 below, 0 where
    they overlap (a point is an interval of one value; a NaN end reads as the point)."""
    if high < other_low:
        return -1
    return 1 if low > other_high else 0


def _ends(mean: float, low: float, high: float) -> tuple[float, float]:
    """An interval's ends, the mean for an end the run has none of."""
    return (mean if math.isnan(low) else low), (mean if math.isnan(high) else high)


# ---- Ilia & Aziz 2024 ----

OWN_SYSTEMS, RUN_MODELS = "the paper's own systems, from their published samples", "the run's models"
"""The systems a Table 1 claim is decided on (``table_one_systems``): the paper's, where the run has them."""


def table_one_systems(run: Run, columns: tuple[str, ...] | None = None) -> tuple[pd.DataFrame, pd.Series, str] | None:
    """The Table 1 rows a claim is decided on, the oracle control's row and which systems the rows
    are: the paper's own systems (``published_systems.rows``; of its ``columns`` of Table 1 alone
    where given) where the run has them, a verdict from their own data; else the run's models."""
    summary = run.table("provo_summary")
    if summary is None:
        return None
    oracle = summary[summary["model"] == "oracle"]
    published = published_systems.columns(run.config)
    own = published_systems.rows(summary, run.config)
    if columns is not None:
        own = own[own["model"].map(published).isin(columns)]
    models = own if len(own) else summary[~summary["model"].isin(["human", "oracle", *published])]
    source = OWN_SYSTEMS if len(own) else RUN_MODELS
    return (models, oracle.iloc[0], source) if len(oracle) and len(models) else None


def _decided_on(verdict: Verdict, source: str) -> Verdict:
    """``verdict`` naming the systems it was decided on (``table_one_systems``) before what it gives; on the
    paper's own systems, its reason says so too (a sentence that states the verdict states it)."""
    reason = "; ".join(r for r in (verdict.reason, f"decided on {source}" if source == OWN_SYSTEMS else "") if r)
    return Verdict(verdict.verdict, f"{source}: {verdict.ours}", reason)


NO_PROVO = Verdict(NOT_TESTABLE, "–", "the run has no Provo study (Table 1) with a model and the oracle control")


def _above_oracle(systems: pd.DataFrame, oracle: pd.Series) -> Verdict:
    """Each system's E TVD(M, H) interval against the oracle control's E TVD(O2, O1)."""
    o_low, o_high = _ends(oracle["expected_tvd"], oracle["ci_low"], oracle["ci_high"])
    above = [_order(*_ends(r.expected_tvd, r.ci_low, r.ci_high), o_low, o_high) == 1
             for r in systems.itertuples(index=False)]
    names = ", ".join(f"{r.model} / {r.decoding} {number(r.expected_tvd)}" for r in systems.itertuples(index=False))
    return Verdict(_count(sum(above), len(above)),
                   f"{sum(above)} of {len(above)} systems with their 95% interval above the oracles' "
                   f"{with_interval(oracle['expected_tvd'], oracle['ci_low'], oracle['ci_high'])} ({names})")


def _gap(run: Run) -> Verdict:
    found = table_one_systems(run)
    if found is None:
        return NO_PROVO
    models, oracle, source = found
    return _decided_on(_above_oracle(models, oracle), source)


ECE_COLUMNS = ("ece_corpus", "ece_human_majority", "ece_oracle_majority")
"""Table 1's ECE columns, against the corpus word, the human majority and the oracle-1 majority."""


def _paper_ece_cells() -> tuple[int, int]:
    """Ilia & Aziz's Table 1: the model x gold-label ECE cells below Oracle2's, and all of them."""
    oracle = paper.TABLE_1["Oracle2"]
    models = [v for k, v in paper.TABLE_1.items() if k not in ("Human", "Oracle2")]
    below = sum(m[i] < oracle[i] for m in models for i in range(len(ECE_COLUMNS)))
    return below, len(models) * len(ECE_COLUMNS)


def _ece_opposite(run: Run) -> Verdict:
    found = table_one_systems(run)
    if found is None:
        return NO_PROVO
    models, oracle, source = found
    cells = [(getattr(r, c), oracle[c]) for r in models.itertuples(index=False) for c in ECE_COLUMNS
             if not (pd.isna(getattr(r, c)) or pd.isna(oracle[c]))]
    below = sum(m < o for m, o in cells)
    if not cells:
        return Verdict(NOT_TESTABLE, "–", "the run's Table 1 has no model ECE beside the oracle's")
    verdict = REPRODUCED if below > len(cells) / 2 else NOT_REPRODUCED if below == 0 else PARTLY
    return _decided_on(Verdict(
        verdict, f"{below} of {len(cells)} model x gold-label ECE cells below the oracle control's "
                 f"(human majority: models {span(models['ece_human_majority'].min(), models['ece_human_majority'].max())}, "
                 f"oracle {number(oracle['ece_human_majority'])})"), source)


def largest_coefficient(row) -> str:
    """A ``regression_codings`` row's largest coefficient: its predictor and value, or that ARD
    pruned every coefficient to 0.

    Parameters
    ----------
    row : pandas.Series
        A row of a ``regression_codings`` table.

    Returns
    -------
    str
    """
    if not row["largest"]:
        return "none: every coefficient pruned to 0"
    unit = " per unit" if row["units"] == "per unit" else ""
    return f"{row['largest']} ({number(row['largest_coefficient'])}{unit})"


def _regression(run: Run) -> Verdict:
    """Ours (per SD) decides the ranking where its two correlated predictors are not collinear;
    the authors' protocol (``regression_codings``: per unit, whose sizes rank the predictors'
    units) is stated beside it and decides nothing."""
    coefficients = run.table("regression_coefficients")
    if coefficients is None:
        return Verdict(NOT_TESTABLE, "–", "the run has no ARD regression")
    fitted = coefficients[~coefficients["kind"].isin(["intercept", "noise"])]
    tops = []
    for (model, decoding), system in fitted.groupby(["model", "decoding"], sort=False):
        top = system.loc[system["mean"].abs().idxmax()]
        tops.append((f"{model} / {decoding}", top["predictor"], top["label"], top["mean"]))
    ours = "; ".join(f"{s}: largest {label} ({number(mean)} per SD)" for s, _, label, mean in tops)
    path = run.measured.get("regression_codings")
    if path:
        codings = tables.read(path, "regression_codings").set_index("role")
        authors = codings.loc["authors"]
        ours += (f"; the authors' protocol on {authors['model']} / {authors['decoding']}: largest "
                 f"{largest_coefficient(authors)}")
        r = float(codings.loc["authors on resplits", "correlation"])
        if abs(r) >= COLLINEAR:
            return Verdict(NOT_TESTABLE, ours, f"human entropy and TVD between oracles correlate at r = {number(r)} "
                                               f"(at least {COLLINEAR:g}): which of them has the larger coefficient "
                                               "is not identified, per SD or per unit, where a size is also its "
                                               "predictor's unit's (the codings' table under Disagreements)")
    agree = sum(p == "tvd_oracle2_oracle1" for _, p, _, _ in tops)
    return Verdict(_count(agree, len(tops)), ours)


def _replacement(run: Run) -> Verdict:
    summary = run.table("oracle_replacement_summary")
    if summary is None:
        return Verdict(NOT_TESTABLE, "–", "the run has no k%-oracle replacement")
    share = 100 * paper.REPLACEMENT_SHARE
    threshold = float(summary["overlap_threshold"].iloc[0])
    bins = (run.config["analyses"].get("oracle_replacement") or {}).get("bins")
    theta, paper_bins = paper.REPLACEMENT_READING
    k = summary.groupby(["model", "decoding", "oracle_size"], sort=False)["k_match"].first()
    step = float(np.diff(np.sort(summary["k"].unique())).min()) if summary["k"].nunique() > 1 else 0.0
    ours = ", ".join(f"{m} / {d} (oracle size {n}): " + ("none in the grid" if pd.isna(v) else f"{v:.0f}%")
                     for (m, d, n), v in k.items())
    if threshold != theta or bins != paper_bins:
        return Verdict(NOT_TESTABLE, ours, f"the run's overlap threshold {threshold:g} over {bins or 'its'} bins is "
                                           f"not the reading ({theta:g} over {paper_bins} bins) that puts the "
                                           f"paper's histograms at its {share:.0f}%")
    half = 5.0  # "about 60%": a share printed to the tens, widened by half its last digit
    near = sum(not pd.isna(v) and abs(v - share) <= half for v in k)
    return Verdict(_count(near, len(k)), ours,
                   f"about {share:.0f}% read as {share - half:.0f}-{share + half:.0f}% (the grid's steps: "
                   f"{step:.0f} points); the overlap threshold {theta:g} over {paper_bins} bins was chosen to give "
                   f"the paper's {share:.0f}% from its GPT-2 moments, so the criterion matches the paper by "
                   "construction there, and the verdict is about our models under it")


def _finetune(run: Run) -> Verdict:
    """The paper's own fine-tuned GPT-2 (its published samples) against the oracle control in
    Table 1 where the run has it, else each fine-tuned model of the run against the oracles on its
    held-out contexts (``finetune_comparison``)."""
    found = table_one_systems(run, ("GPT2 fine-tuned",))
    if found is not None and found[2] == OWN_SYSTEMS:
        return _decided_on(_above_oracle(*found[:2]), OWN_SYSTEMS)
    comparison = run.table("finetune_comparison")
    if comparison is None:
        return Verdict(NOT_TESTABLE, "–", "the run has no fine-tuned model")
    above = [r.expected_tvd_finetuned > r.expected_tvd_oracle for r in comparison.itertuples(index=False)]
    ours = "; ".join(f"{r.model} / {r.decoding}: {number(r.expected_tvd_finetuned)} (base "
                     f"{number(r.expected_tvd_pretrained)}, d {with_interval(r.mean_difference, r.difference_ci_low, r.difference_ci_high)}) "
                     f"against the oracles' {number(r.expected_tvd_oracle)}" for r in comparison.itertuples(index=False))
    return Verdict(_count(sum(above), len(above)), ours)


def _temperature(run: Run) -> Verdict:
    """The paper's own GPT-2 at T = 0.5 (its published samples) against the oracle control where
    the run has it, else the run's models at temperature 0.5 alone."""
    found = table_one_systems(run, ("GPT2 T=0.5",))
    if found is None:
        return NO_PROVO
    models, oracle, source = found
    if source == RUN_MODELS:
        decodings = {d["name"]: d for d in (run.config["provo"]["decodings"] if "provo" in run.config else [])}
        models = models[[{k: v for k, v in decodings.get(d, {}).items() if k not in ("name", "n_samples")}
                         == {"temperature": 0.5} for d in models["decoding"]]]
    if models.empty:
        return Verdict(NOT_TESTABLE, "–", "the run has no Provo decoding at temperature 0.5 alone, nor the paper's "
                                          "GPT2 T=0.5 samples")
    return _decided_on(_above_oracle(models, oracle), source)


# ---- Liu et al. 2024 ----

def _full_ece(run: Run) -> Verdict:
    summary = run.table("token_calibration_summary")
    if summary is None or not {"classwise_ece", "full_ece"} <= set(summary["metric"]):
        return Verdict(NOT_TESTABLE, "–", "the run has no token calibration with cw-ECE and Full-ECE")
    rsd = summary.pivot_table(index="model", columns="metric", values="rsd", aggfunc="first")
    stable = [r.full_ece < r.classwise_ece for r in rsd.itertuples()]
    ours = "; ".join(f"{m}: Full-ECE {r['full_ece']:.1%}, cw-ECE {r['classwise_ece']:.1%}" for m, r in rsd.iterrows())
    bins = (run.config["analyses"].get("token_calibration") or {}).get("rsd_bins")
    caveat = "" if bins is None or list(bins) == list(paper.LIU_BINS) else \
        f"over the run's bin counts {', '.join(map(str, bins))}, not Liu et al.'s"
    return Verdict(_count(sum(stable), len(stable)), ours, caveat)


# ---- Giulianelli et al. 2023 ----

def adequacy(run: Run) -> pd.DataFrame | None:
    """The run's ``production_beats_copy`` rows (None without the table): per dataset, model and
    decoding, whether the system beats copying the source on the task's criterion."""
    return run.table("production_beats_copy")


def adequate_systems(run: Run) -> set[tuple[str, str, str]]:
    """The (dataset, model, decoding) systems that beat copying the source (``adequacy``)."""
    found = adequacy(run)
    if found is None:
        return set()
    return {(r.dataset, r.model, r.decoding) for r in found.itertuples(index=False) if r.beats_copy}


def inadequate(run: Run, summary: pd.DataFrame) -> list[str]:
    """Each system of the production ``summary`` that does not beat copying the source, with its
    criterion beside the baseline's (or that the run has no adequacy row for it)."""
    found = adequacy(run)
    rows = {} if found is None else {(r.dataset, r.model, r.decoding): r for r in found.itertuples(index=False)}
    out = []
    for key in dict.fromkeys(zip(summary["dataset"], summary["model"], summary["decoding"], strict=True)):
        r = rows.get(key)
        if r is None:
            out.append(f"{' / '.join(key[1:])} on {key[0]}: no adequacy against copying the source")
        elif not r.beats_copy:
            out.append(f"{r.model} / {r.decoding} on {r.dataset}: {ADEQUACY_STATISTICS.get(r.statistic, r.statistic)} "
                       f"{with_interval(r.mean, r.ci_low, r.ci_high)} against copying the source's {number(r.copy)}")
    return out


def _production(run: Run, decoding: str | None = "ancestral") -> tuple[pd.DataFrame | None, str]:
    """The production summary's rows of the systems that beat copying (of ``decoding`` alone, or
    every decoding for None), on the paper's probes, and why the others are not tested."""
    summary = run.table("production_summary")
    if summary is None:
        return None, "the run has no production study"
    part = summary[summary["available"] & summary["probe"].isin(PAPER_PROBES)]
    if decoding is not None:
        part = part[part["decoding"] == decoding]
    if part.empty:
        return None, f"the run has no {decoding or ''} production outputs on the paper's probes".replace("  ", " ")
    left_out = inadequate(run, part)
    keep = adequate_systems(run)
    tested = part[[k in keep for k in zip(part["dataset"], part["model"], part["decoding"], strict=True)]]
    if tested.empty:
        return None, "no generator beats copying the source on its task: " + "; ".join(left_out)
    return tested, ("not read, as it does not beat copying the source: " + "; ".join(left_out)) if left_out else ""


def _levels(run: Run) -> Verdict:
    tested, why = _production(run)
    if tested is None:
        return Verdict(NOT_TESTABLE, "–", why)
    level = paper.GIULIANELLI_LEVELS["w1_decoding"]
    w1 = tested[tested["statistic"] == "w1_C_H"]
    below, above = int((w1["ci_high"] < level).sum()), int((w1["ci_low"] > level).sum())
    verdict = REPRODUCED if below == len(w1) else NOT_REPRODUCED if above == len(w1) else PARTLY
    return Verdict(verdict, f"ancestral mean W1(C, H) {span(w1['mean'].min(), w1['mean'].max())}: {below} of {len(w1)} "
                            f"task x probe cells with their 95% interval below {level:g}, {above} above it", why)


def _signs(run: Run) -> Verdict:
    tested, why = _production(run)
    if tested is not None:
        tested = tested[(tested["statistic"] == "mean_M_minus_H")
                        & tested["dataset"].isin(list(paper.GIULIANELLI_MEAN_DIFFERENCE_SIGN))]
    if tested is None or tested.empty:
        return Verdict(NOT_TESTABLE, "–", why or "the run has no mean M - H on the paper's tasks")
    agree = decided = 0
    for r in tested.itertuples(index=False):
        sign = _order(*_ends(r.mean, r.ci_low, r.ci_high), 0.0, 0.0)
        decided += sign != 0
        agree += sign == {"+": 1, "-": -1}[paper.GIULIANELLI_MEAN_DIFFERENCE_SIGN[r.dataset][0]]
    return Verdict(_count(agree, len(tested)),
                   f"the paper's sign in {agree} of {len(tested)} task x probe cells of the paper's probes "
                   f"({decided} with their 95% interval clear of 0)", why)


def _decodings(run: Run) -> Verdict:
    tested, why = _production(run, decoding=None)
    if tested is None:
        return Verdict(NOT_TESTABLE, "–", why)
    n = tested["decoding"].nunique()
    ranks = decoding_ranks(tested)
    ranks = ranks[ranks["dataset"].isin(paper.GIULIANELLI_ANCESTRAL_BEST)] if len(ranks) else ranks
    if ranks.empty:
        return Verdict(NOT_TESTABLE, "–", (f"the run compares {n} decoding(s) of the systems that beat copying; "
                                           "the paper's ranking needs ancestral sampling beside at least two others "
                                           f"on {', '.join(paper.GIULIANELLI_ANCESTRAL_BEST)}" + (f"; {why}" if why else "")))
    lowest = int((ranks["lowest"] == "ancestral").sum())
    clear = int(((ranks["lowest"] != "ancestral") & ~ranks["overlaps ancestral"]).sum())
    return Verdict(_count(lowest, len(ranks)),
                   f"ancestral lowest in {lowest} of {len(ranks)} task x probe cells; another decoding lowest with its "
                   f"interval clear of ancestral's in {clear}", why)


def _control(run: Run) -> Verdict:
    summary = run.table("production_summary")
    if summary is None:
        return Verdict(NOT_TESTABLE, "–", "the run has no production study")
    control = summary[summary["available"] & (summary["statistic"] == "w1_control")
                      & summary["dataset"].isin(["wmt14", "asset"])].drop_duplicates(["dataset", "probe"])
    cells = []
    for dataset, by_dataset in control.groupby("dataset", sort=False):
        values = by_dataset.set_index("probe")
        if "semantic" not in values.index:
            continue
        s = values.loc["semantic"]
        for probe in ("lexical-1", "syntactic-2"):
            if probe in values.index:
                o = values.loc[probe]
                cells.append(_order(*_ends(s["mean"], s["ci_low"], s["ci_high"]),
                                    *_ends(o["mean"], o["ci_low"], o["ci_high"])))
    dialogue = ("no human level for dailydialog: the paper shows no control (fn. 11), ours splits five references "
                "2 + 3")
    if not cells:
        return Verdict(NOT_TESTABLE, "–", "the run has no human control on the semantic probe beside a form probe "
                                          f"of wmt14 or asset; {dialogue}")
    agree = sum(c == -1 for c in cells)
    return Verdict(_count(agree, len(cells)), f"the control's semantic W1 below its lexical-1 / syntactic-2 W1 in "
                                              f"{agree} of {len(cells)} pairs of wmt14 and asset", dialogue)


def _paper_signs() -> str:
    return "; ".join(f"{d} {s}" for d, (s, _, _) in paper.GIULIANELLI_MEAN_DIFFERENCE_SIGN.items())


def _paper_table_1(system: str) -> str:
    return printed(paper.TABLE_1[system][3], 2)


CLAIMS = (
    Claim("IA-1", paper="Ilia & Aziz 2024", where="Sec. 4, Table 1, Fig. 2",
          claim="No model reproduces human variability as well as a human oracle: every model's E TVD(M, H) is "
                "above E TVD(O2, O1).",
          value=f"GPT-2 {_paper_table_1('GPT2')}, every model above the oracles' {_paper_table_1('Oracle2')}",
          kind="ranking", test=_gap),
    Claim("IA-2", paper="Ilia & Aziz 2024", where="Sec. 4, Table 1",
          claim="ECE ranks most models as better calibrated than the human oracle.",
          value="{} of {} model x gold-label ECE cells below Oracle2's".format(*_paper_ece_cells()),
          kind="ranking", test=_ece_opposite),
    Claim("IA-3", paper="Ilia & Aziz 2024", where="Sec. 5, Fig. 3, App. B, Table 3",
          claim="ARD ranks TVD between oracles as the most important predictor of TVD(M, O1).",
          value=f"largest coefficient: TVD between oracles ({paper.TABLE_3['tvd_oracle2_oracle1']})",
          kind="ranking", test=_regression),
    Claim("IA-4", paper="Ilia & Aziz 2024", where="Sec. 5, App. E, Figs. 14-16",
          claim="About 60% of GPT-2's distributions must be replaced by an oracle's for its TVDs to distribute "
                "like the oracles'.",
          value=f"about {paper.REPLACEMENT_SHARE:.0%}", kind="point", test=_replacement),
    Claim("IA-5", paper="Ilia & Aziz 2024", where="Sec. 4, App. F, Table 1",
          claim="Fine-tuning on Provo does not close the gap: the fine-tuned model's E TVD(M, H) stays above the "
                "oracles'.",
          value=f"GPT2 fine-tuned {_paper_table_1('GPT2 fine-tuned')} (GPT-2 {_paper_table_1('GPT2')}) against "
                f"{_paper_table_1('Oracle2')}",
          kind="ranking", test=_finetune),
    Claim("IA-6", paper="Ilia & Aziz 2024", where="Sec. 4, fn. 7, Table 1",
          claim="Temperature scaling (T = 0.5) does not close the gap, whatever its effect on ECE.",
          value=f"GPT2 T=0.5 {_paper_table_1('GPT2 T=0.5')} against {_paper_table_1('Oracle2')}",
          kind="ranking", test=_temperature),
    Claim("LIU-1", paper="Liu et al. 2024", where="Table 1 and its text",
          claim="Full-ECE varies less over the bin count M than cw-ECE.",
          value="RSD over M: Full-ECE {}, cw-ECE {}".format(
              *("-".join(f"{100 * v:.2f}%" for v in paper.LIU_TABLE_1[m].values()) for m in ("full_ece", "classwise_ece"))),
          kind="ranking", test=_full_ece),
    Claim("G-1", paper="Giulianelli et al. 2023", where="Sec. 6.2, Fig. 5",
          claim="Unbiased sampling's mean W1(C, H) is in the ballpark of the human control: always lower than 0.1.",
          value=f"< {paper.GIULIANELLI_LEVELS['w1_decoding']:g} on every task and probe", kind="bound", test=_levels),
    Claim("G-2", paper="Giulianelli et al. 2023", where="Sec. 6.1, Fig. 3",
          claim="Mean M - H is below 0 for translation and simplification, above 0 for dialogue and stories.",
          value=_paper_signs(), kind="sign", test=_signs),
    Claim("G-3", paper="Giulianelli et al. 2023", where="Sec. 6.2, Fig. 5",
          claim="For every task but dialogue, unbiased samples match human variability best of the decodings.",
          value=f"ancestral lowest on {', '.join(paper.GIULIANELLI_ANCESTRAL_BEST)}", kind="ranking", test=_decodings),
    Claim("G-4", paper="Giulianelli et al. 2023", where="Sec. 6.2, Fig. 5, fn. 11",
          claim="The human control: two human groups agree more on the meaning of translations and "
                "simplifications than on their form.",
          value="control W1 lower on the semantic probe than on form probes (wmt14, asset)", kind="ranking",
          test=_control),
)
"""Every claim the page decides, in the verdict table's order."""


def decide(entries: list[dict], measured: dict, config: dict) -> dict[str, Verdict]:
    """Each claim's verdict on the run (``CLAIMS``' tests on its tables), by claim key."""
    run = Run(entries, measured, config)
    return {c.key: c.test(run) for c in CLAIMS}


def verdict_table(decided: dict[str, Verdict], papers: set[str] | None = None) -> pd.DataFrame:
    """The page's verdict table: one row per claim (of the ``papers`` whose studies the run made;
    None: every paper), with where the paper makes it, the paper's value and its kind, ours, and
    the verdict with its reason."""
    rows = []
    for c in CLAIMS:
        if papers is not None and c.paper not in papers:
            continue
        v = decided[c.key]
        rows.append({"claim": c.key, "paper, where": f"{c.paper}, {c.where}", "the claim": c.claim,
                     "paper's value (kind)": f"{c.value} ({c.kind})", "ours": v.ours,
                     "verdict": v.verdict + (f": {v.reason}" if v.reason else "")})
    return pd.DataFrame(rows)


def stated(claim: str, verdict: Verdict) -> str:
    """How a sentence of the page states a claim's verdict, with its reason (``STATED`` reads it
    back)."""
    return f"Verdict of claim {claim}: {verdict.verdict}" + (f" ({verdict.reason})." if verdict.reason else ".")


STATED = re.compile(r"Verdict of claim ([A-Z]+-\d+): (not reproduced|not testable|reproduced|partly)")
"""A verdict as a sentence of the page states it (``stated``)."""

TABLE_ROW = re.compile(r"^\|\s*([A-Z]+-\d+)\s*\|.*\|\s*(not reproduced|not testable|reproduced|partly)(?::[^|]*)?\s*\|\s*$")
"""A row of the page's verdict table: its claim key and its verdict (the last cell)."""


def misstated(page: str) -> list[str]:
    """Each sentence of ``page`` that states a claim's verdict (``STATED``) other than the one its
    row of the page's verdict table gives, or of a claim the table has no row for (empty when
    every stated verdict is its record's)."""
    table = {}
    for line in page.splitlines():
        m = TABLE_ROW.match(line)
        if m:
            table[m[1]] = m[2]
    return [f"{key}: stated {verdict!r}, the verdict table gives {table.get(key, 'no row')!r}"
            for key, verdict in STATED.findall(page) if table.get(key) != verdict]


def finding(claim: str, decided: dict[str, Verdict]) -> str:
    """A Findings sentence of a claim with no finding of its own table: the claim, ours and its
    verdict (``stated``)."""
    c = next(c for c in CLAIMS if c.key == claim)
    return f"{c.claim[:-1]} (the paper: {c.value}): ours {decided[claim].ours}. {stated(claim, decided[claim])}"
