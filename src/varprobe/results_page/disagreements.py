"""The page's Disagreements section, generated from the tables it shows.

Every value of ours that the page prints beside a paper's is a ``Pair`` (``pairs``: one builder
per table, reading the same tables as the table's view). A pair *differs* (``Pair.differs``)
when the paper's value, widened by half its last printed digit, lies outside our interval, or,
without an interval, farther from ours than ``RELATIVE`` of itself. Each pair belongs to a
``GROUPS`` entry (a heading and the paper it quotes); every group with a differing pair is one
entry of the section: the differing pairs in a table and the group's cause (``CAUSES``: text
formatted from the run's tables, naming its measurement: a number, a switch, a file and line of
the authors' code), or ``UNEXPLAINED`` where the group has no cause or the run did not measure
it. So every differing pair is under Disagreements by construction; the entries that compare no
single value (failure rates, signs, decoding ranks) come from ``findings``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass

import numpy as np
import pandas as pd

from varprobe import tables
from varprobe.run_plan import RunPlan
from varprobe.results_page import authors_measures, findings, paper, published_systems, verdicts
from varprobe.results_page.findings import span, table_of
from varprobe.results_page.markup import Markup, code, text
from varprobe.results_page.tables import (
    AUTHORS_CODE, AUTHORS_VALUES, MARKUP, PUBLISHED_LABELS, RELATIVE, TABLE_ONE_COLUMNS, authors_row, intervals,
    markdown, metric_by_bins, number, printed, published_comparison, with_interval)

UNEXPLAINED = "unexplained"
"""The cause of a group with none in ``CAUSES``, or whose measuring table the run lacks."""


@dataclass(frozen=True)
class Pair:
    """One value of ours shown beside a paper value: its group (``GROUPS``), where it is (the
    page's table, row and column), ours with its interval (NaN without one), the paper's value
    and its printed decimals; ``bound``: the paper states an upper bound, not a value."""

    group: str
    where: str
    _: KW_ONLY
    ours: float
    low: float
    high: float
    paper: float
    decimals: int
    bound: bool = False

    def differs(self) -> bool:
        """Whether ours disagrees with the paper's: the paper's value, widened by half its last
        printed digit, against our interval, else ours within ``RELATIVE`` of the paper's value;
        a paper's bound (``bound``: "always lower than 0.1") as a bound, not widened: our interval
        (without one, ours beyond ``RELATIVE`` of it) above it."""
        half = 0.0 if self.bound else 0.5 * 10 ** -self.decimals
        floor, top = (-math.inf if self.bound else self.paper - half), self.paper + half
        if not (math.isnan(self.low) or math.isnan(self.high)):
            return top < self.low or self.high < floor
        return (self.ours - top if self.ours > top else floor - self.ours if self.ours < floor else 0.0) \
            > RELATIVE * abs(self.paper)

    def row(self) -> dict:
        """The pair as a row of its entry's table."""
        show = number if self.decimals else "{:.0f}".format
        ours = show(self.ours) if math.isnan(self.low) else f"{show(self.ours)} [{show(self.low)}, {show(self.high)}]"
        return {"where": self.where, "ours": ours,
                "paper": ("< " if self.bound else "") + printed(self.paper, self.decimals)}


@dataclass(frozen=True)
class Group:
    """A heading of the Disagreements section and the paper values its pairs quote."""

    title: str
    paper: str


GROUPS = {
    **{f"table1_{key}": Group(f"Table 1: {label}", "Ilia & Aziz 2024, Table 1")
       for key, label in AUTHORS_VALUES.items()},
    "table1_models": Group("Table 1: the models' rows", "Ilia & Aziz 2024, Table 1, the GPT-2 columns"),
    "table1_published": Group("Table 1: the paper's own systems, from their published samples",
                              "Ilia & Aziz 2024, Table 1, each system's own column"),
    "table2_biased": Group("Table 2: the biased model estimate's ECE", "Ilia & Aziz 2024, Table 2, GPT-2"),
    "table2_oracle": Group("Table 2: the oracle's ECE", "Ilia & Aziz 2024, Table 2, \"Oracle 1\" (Table 1's Oracle2)"),
    "table3_tvd_oracles": Group("Table 3: the coefficient of TVD between oracles", "Ilia & Aziz 2024, Table 3"),
    "table3_coefficients": Group("Table 3: the other coefficients", "Ilia & Aziz 2024, Table 3"),
    "table4_model": Group("Table 4: the model's token-level ECE", "Ilia & Aziz 2024, Table 4, GPT-2"),
    "table4_oracle": Group("Table 4: the oracles' token-level ECE", "Ilia & Aziz 2024, Table 4, oracles 1 and 2"),
    "finetune": Group("Fine-tuning: the expected TVDs", "Ilia & Aziz 2024, Table 1, GPT2 and GPT2 fine-tuned"),
    "replacement_share": Group("k%-oracle replacement: the share of contexts to replace",
                               "Ilia & Aziz 2024, Sec. 5: about 60% for GPT-2, read off the histograms "
                               "(Figs. 14-16)"),
    "liu_rsd": Group("RSD of cw-ECE and Full-ECE over bin counts", "Liu et al. 2024, Table 1 (2B and 7B)"),
    "production_w1": Group("Production: the level of W1(C, H)",
                           "Giulianelli et al. 2023, Sec. 6.2: \"always lower than 0.1\""),
}
"""Every group of pairs, by the key ``CAUSES`` uses."""


# ---- the pairs, one builder per table of the page ----

def paper_system(decoding: dict, finetuned: bool) -> str | None:
    """The paper's Table 1 column a run system answers: plain sampling GPT2 (GPT2 fine-tuned for
    a fine-tuned model), temperature 0.5 alone GPT2 T=0.5; None for another decoding."""
    settings = {k: v for k, v in decoding.items() if k not in ("name", "n_samples")}
    if not settings:
        return "GPT2 fine-tuned" if finetuned else "GPT2"
    return "GPT2 T=0.5" if settings == {"temperature": 0.5} and not finetuned else None


def _paper_column(r, published: dict[str, str], decodings: dict, finetuned: set) -> str | None:
    """The paper's Table 1 column a row of the Provo summary answers: Human and Oracle2 for the
    human and oracle rows, a published model's own column for its given draws
    (``published_systems.columns``), else its decoding's (``paper_system``); None for none."""
    if r.model in ("human", "oracle"):
        return {"human": "Human", "oracle": "Oracle2"}[r.model]
    if r.model in published:
        return published[r.model] if r.decoding == published_systems.DECODING else None
    return paper_system(decodings[r.decoding], r.model in finetuned) if r.decoding in decodings else None


def _table_one(entries: list[dict], measured: dict, config: dict) -> list[Pair]:
    summary = table_of(entries, "provo_summary")
    if summary is None or "provo_intervals" not in measured:
        return []
    found = intervals(tables.read(measured["provo_intervals"], "provo_intervals"))
    columns = dict(zip(paper.TABLE_1_COLUMNS, published_systems.VALUES, strict=True))
    decodings = {d["name"]: d for d in (config["provo"]["decodings"] if "provo" in config else [])}
    comparison = table_of(entries, "finetune_comparison")
    finetuned = set() if comparison is None else set(comparison["model"])
    published = published_systems.columns(config)
    out = []
    for r in summary.itertuples(index=False):
        column = _paper_column(r, published, decodings, finetuned)
        if column is None:
            continue
        extra = found.get((r.model, r.decoding), {})
        for name, value in zip(paper.TABLE_1_COLUMNS, paper.TABLE_1[column], strict=True):
            ours = getattr(r, columns[name])
            if value is None or pd.isna(ours):
                continue
            low, high = ((r.ci_low, r.ci_high) if name == "avg_tvd" else extra.get(columns[name], (math.nan,) * 2))
            group = (f"table1_{r.model}_{'expected_tvd' if name == 'avg_tvd' else columns[name]}"
                     if r.model in ("human", "oracle") else "table1_published" if r.model in published
                     else "table1_models")
            shown = TABLE_ONE_COLUMNS["tvd_oracle1" if r.model == "oracle" else "tvd_humans"] \
                if name == "avg_tvd" else TABLE_ONE_COLUMNS[columns[name]]
            where = f"{r.model} / {r.decoding}, {shown.removesuffix(' [95% CI]')} (paper: {column})"
            out.append(Pair(group, where, ours=float(ours), low=float(low), high=float(high), paper=value,
                            decimals=2))
    return out


def _table_two(entries: list[dict]) -> list[Pair]:
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


def _table_three(entries: list[dict]) -> list[Pair]:
    frame = table_of(entries, "regression_coefficients")
    if frame is None:
        return []
    shown = frame[frame["predictor"].isin(paper.TABLE_3)]
    return [Pair("table3_tvd_oracles" if r.predictor == "tvd_oracle2_oracle1" else "table3_coefficients",
                 f"{r.model} / {r.decoding}, {r.label}", ours=r.mean, low=lo, high=hi,
                 paper=paper.TABLE_3[r.predictor], decimals=3)
            for r, lo, hi in zip(shown.itertuples(index=False), shown["hdi_2.5%"], shown["hdi_97.5%"], strict=True)]


def _table_four(entries: list[dict]) -> list[Pair]:
    frame = table_of(entries, "token_level_summary")
    if frame is None:
        return []
    values = paper.TABLE_4["human majority"]
    return [Pair("table4_model" if r.system == "model" else "table4_oracle", f"{r.model}, {r.system}",
                 ours=r.ece_human_majority, low=math.nan, high=math.nan, paper=values[r.system], decimals=3)
            for r in frame.itertuples(index=False) if r.system in values]


def _finetune(entries: list[dict]) -> list[Pair]:
    frame = table_of(entries, "finetune_comparison")
    if frame is None:
        return []
    out = []
    for r in frame.itertuples(index=False):
        out.append(Pair("finetune", f"{r.base} / {r.decoding} (base of {r.model}), E TVD(base, H)",
                        ours=r.expected_tvd_pretrained, low=math.nan, high=math.nan,
                        paper=paper.TABLE_1["GPT2"][3], decimals=2))
        out.append(Pair("finetune", f"{r.model} / {r.decoding}, E TVD(fine-tuned, H)",
                        ours=r.expected_tvd_finetuned, low=math.nan, high=math.nan,
                        paper=paper.TABLE_1["GPT2 fine-tuned"][3], decimals=2))
    return out


def _replacement(entries: list[dict]) -> list[Pair]:
    frame = table_of(entries, "oracle_replacement_summary")
    if frame is None:
        return []
    ends = frame.groupby(["model", "decoding", "oracle_size"], sort=False)["k_match"].first().dropna()
    return [Pair("replacement_share", f"{m} / {d}, oracle size {n}, k needed (%)", ours=float(k), low=math.nan,
                 high=math.nan, paper=100 * paper.REPLACEMENT_SHARE, decimals=0) for (m, d, n), k in ends.items()]


def _liu(entries: list[dict]) -> list[Pair]:
    frame = table_of(entries, "token_calibration_summary")
    if frame is None:
        return []
    out = []
    for r in frame[frame["metric"].isin(paper.LIU_TABLE_1)].itertuples(index=False):
        for size, value in paper.LIU_TABLE_1[r.metric].items():
            out.append(Pair("liu_rsd", f"{r.model}, {r.metric}, RSD over M (paper: {size})", ours=r.rsd,
                            low=math.nan, high=math.nan, paper=value, decimals=4))
    return out


def _production(entries: list[dict]) -> list[Pair]:
    """W1(C, H) beside the paper's bound, on its probes (``verdicts.PAPER_PROBES``), of the
    systems that beat copying the source (``verdicts.adequate_systems``): the others' levels
    are not read (their claim is not testable)."""
    frame = table_of(entries, "production_summary")
    if frame is None:
        return []
    keep = verdicts.adequate_systems(verdicts.Run(entries, {}, {}))
    w1 = frame[frame["available"] & (frame["statistic"] == "w1_C_H") & frame["probe"].isin(verdicts.PAPER_PROBES)]
    w1 = w1[[k in keep for k in zip(w1["dataset"], w1["model"], w1["decoding"], strict=True)]]
    return [Pair("production_w1", f"{r.dataset}, {r.model} / {r.decoding}, {r.probe}, W1(C, H)",
                 ours=r.mean, low=r.ci_low, high=r.ci_high, paper=paper.GIULIANELLI_LEVELS["w1_decoding"],
                 decimals=1, bound=True)
            for r in w1.itertuples(index=False)]


def pairs(entries: list[dict], measured: dict, config: dict) -> list[Pair]:
    """Every value of ours the page shows beside a paper value, from the tables the page shows
    (``entries``: the registered tables; ``measured``: the page's measured tables)."""
    return [*_table_one(entries, measured, config), *_table_two(entries), *_table_three(entries),
            *_table_four(entries), *_finetune(entries), *_replacement(entries), *_liu(entries),
            *_production(entries)]


# ---- the causes, by group: each formats its measurement from the run's tables ----

SWITCH_CODE = {
    "raw_responses": "cell 5:9-10", "raw_corpus_word": "`TVD/GPT2/GPT2_sampling.py` lines 37 and 307",
    "authors_contexts": "cells 12:9, 17:14", "authors_split": "cell 4", "shared_seed": "cell 4:5",
    "carried_removal": "cell 4:11", "single_split": "cell 17:18", "first_max_ties": "cell 6:6-8",
    "authors_bins": "cell 10:11-13",
}
"""The line of the authors' code each switch of ``varprobe.analysis.authors_protocol`` follows."""

MOVES = 0.005
"""A switch that moves a value by more than this is named in its cause."""


def _authors(measured: dict) -> pd.DataFrame | None:
    path = measured.get("provo_authors")
    return tables.read(path, "provo_authors") if path else None


def _moved(found: pd.DataFrame, value: str, lines: dict[str, str]) -> str:
    """The switches that move ``value`` by more than ``MOVES``: alone on ours, and off alone
    from the authors' protocol, each with its value and its line of the authors' code
    (``lines``), from a table of rows ``protocol``, ``switch`` and the value."""
    ours, authors = authors_row(found, "ours")[value], authors_row(found, "authors")[value]
    parts = []
    for protocol, base, words in (("ours + switch", ours, "alone on ours"),
                                  ("authors - switch", authors, "off alone from theirs")):
        rows = found[(found["protocol"] == protocol) & ((found[value] - base).abs() > MOVES)]
        if len(rows):
            parts.append(f"{words}: " + ", ".join(f"`{r['switch']}` {number(r[value])} ({lines[r['switch']]})"
                                                  for r in rows.to_dict("records")))
    return "; ".join(parts) if parts else f"no switch alone moves it by more than {MOVES}"


def _switches(found: pd.DataFrame, value: str) -> str:
    """What the authors' protocol gives ``value`` and the switches that move it (``_moved``)."""
    ours, authors = authors_row(found, "ours")[value], authors_row(found, "authors")[value]
    return (f"Measured (the authors' protocol table): ours {number(ours)}, the authors' protocol "
            f"{number(authors)} ({AUTHORS_CODE}); {_moved(found, value, SWITCH_CODE)}.")


def _authors_value(value: str, extra: Callable[[pd.DataFrame, dict], tuple[str, pd.DataFrame | None]] | None = None):
    """The cause of a human or oracle value of Table 1: what the authors' protocol gives and the
    switches that move it (``_switches``), then ``extra``'s text, with the table it measured
    (None: none)."""

    def cause(entries, measured, _config):
        found = _authors(measured)
        if found is None:
            return None
        text, table = extra(found, measured) if extra else ("", None)
        return {"cause": _switches(found, value) + (" " + text if text else ""),
                "table": None if table is None else markdown(table)}

    return cause


def _corpus_word(found: pd.DataFrame, _measured: dict) -> tuple[str, None]:
    return ("The authors' gold is the passage token as printed (`Text.split(' ')[Word_Number - 1]`), compared "
            "with lowercased responses: a token with punctuation or a capital (`space,`) never matches a "
            "response."), None


def _gpt2_ece(found: pd.DataFrame, measured: dict) -> tuple[str, pd.DataFrame | None]:
    """The paper's human value is GPT-2's; with the run's ``provo_human_ties`` table, the human
    row's ECE under both tie-breakings of the human mode (the table it returns)."""
    text = (f"The paper's {printed(paper.TABLE_1['Human'][2], 2)} is not the human's: cell 15:5 averages "
            f"`ece_gpt2_oracle_maj`, GPT-2's list; the human's own under the authors' protocol is "
            f"{number(authors_row(found, 'authors')['human_ece_oracle_majority'])}.")
    if not measured.get("provo_human_ties"):
        return text, None
    m = tables.read(measured["provo_human_ties"], "provo_human_ties").iloc[0]
    text += (f" Tie-breaking (below): the human mode is tied in {m['share_tied']:.0%} of contexts; broken "
             f"lexicographically (ours) the ECE is {number(m['ties_lexicographic'])}, at random "
             f"{number(m['ties_random'])}.")
    return text, pd.DataFrame([{"contexts with a tied human mode": f"{m['share_tied']:.0%}",
                                "ECE, ties broken lexicographically (ours)": m["ties_lexicographic"],
                                "ECE, ties broken at random": m["ties_random"]}])


def _oracle_tvd(found: pd.DataFrame, measured: dict) -> tuple[str, pd.DataFrame | None]:
    """The authors' one split against its mean over splits; with the run's
    ``provo_oracle_splits`` table, ours per resplit (the table it returns)."""
    value = "oracle_expected_tvd"
    text = (f"The authors' {number(authors_row(found, 'authors')[value])} is one split, seed 1 (cell 17:18), drawn "
            f"from a random state every context shares (cell 4:5); averaged over its 20 splits the same protocol "
            f"gives {number(authors_row(found, 'authors - switch', 'single_split')[value])}.")
    if not measured.get("provo_oracle_splits"):
        return text, None
    splits = tables.read(measured["provo_oracle_splits"], "provo_oracle_splits")
    per_split = splits["tvd_oracle2_oracle1"]
    text += (f" Seeded per context, one split gives {span(per_split.min(), per_split.max())} over our "
             f"{len(per_split)} resplits (its table); half against all, E TVD(O2, H) (the last column), is not "
             f"the paper's number.")
    return text, pd.DataFrame({"resplit": splits["resplit"].astype(str), "E TVD(O2, O1)": per_split,
                               "E TVD(O2, H)": splits["tvd_oracle2_humans"]})


def _run_models(config: dict) -> str:
    """The run's model names, as the causes cite them; the paper's own systems
    (``published_systems``) are not the run's models."""
    published = published_systems.columns(config)
    return ", ".join(code(m["name"]) for m in config.get("models", []) if m["name"] not in published) or "the run's"


def _other_models(entries, measured, config) -> str:
    """What remains of a model's value against GPT-2's once the run has measured what it can:
    the models themselves, unexplained."""
    return f"{UNEXPLAINED}: the run's models ({_run_models(config)}) against the paper's GPT-2."


def _draws(entries, measured, config) -> str:
    """Table 1's model rows against GPT-2's: the draws, isolated where the run samples a model
    both at its own count and at the paper's 1,000 (two plain decodings, one with ``n_samples:
    1000``), each one's E TVD(M, H) at both; the paper's T = 0.5 column drawn 40 times per
    context, as the run's; what remains (``_other_models``)."""
    provo = config.get("provo") or {"decodings": []}
    plan = RunPlan.from_config(config)
    counts = {d["name"]: plan.draws(d["name"]) for d in provo["decodings"]
              if d.get("method", "sample") == "sample" and paper_system(d, False) == "GPT2"}
    summary = table_of(entries, "provo_summary")
    lines = []
    for model, rows in ([] if summary is None else summary[summary["decoding"].isin(counts)].groupby("model",
                                                                                                     sort=False)):
        at = dict(zip(rows["decoding"].map(counts), rows["expected_tvd"], strict=True))
        if len(at) >= 2 and max(at) >= findings.PAPER_DRAWS:
            few, many = min(at), max(at)
            lines.append(f"{text(model)} {number(at[few])} at {few:,} draws per context and {number(at[many])} at "
                         f"{many:,} ({_moves(at[many] - at[few])} it by {number(abs(at[many] - at[few]))})")
    drawn = text(findings.draws_per_context(provo)) if provo else "the run's"
    if lines:
        head = (f"Measured, the draws alone: E TVD(M, H) of {'; '.join(lines)}; the paper's GPT-2 "
                f"{printed(paper.TABLE_1['GPT2'][3])} at {findings.PAPER_DRAWS:,}. ")
    else:
        head = (f"The run samples {drawn} times per context against GPT-2's {findings.PAPER_DRAWS:,} and no model at "
                "both, so it does not measure the draws alone (`configs/paper-scale.yaml`'s `ancestral-1000` does). ")
    return head + ("The paper's GPT2 T=0.5 column was drawn 40 times per context (Sec. 4), as the run's rows "
                   "beside it, so the draws are no cause there. What remains is " + _other_models(entries, measured,
                                                                                                    config))


def _published_protocol(entries, measured, _config) -> dict | None:
    """The paper's own systems' rows against their columns: each one's values under the authors'
    protocol on the same published samples (its ``provo_published`` table) and how many are the
    paper's digits; where they are, the samples are the paper's and the difference of ours is the
    protocol, each of its definitions named; what the authors' protocol leaves between itself and
    the paper is unexplained. The table is ``published_comparison``'s, every number cited in it."""
    found = published_systems.authors_tables(measured)
    if not found:
        return None
    lines, rest = [], []
    for model, table in found.items():
        authors, matched = published_systems.protocol_row(table, "authors"), published_systems.paper_digits(table)
        values = ", ".join(f"{PUBLISHED_LABELS[v]} {number(authors[v])}" for v in published_systems.VALUES)
        lines.append(f"{code(model)} ({text(authors['column'])}, {int(authors['n_contexts']):,} contexts): "
                     f"{values}, the paper's digits in {len(matched)} of {len(published_systems.VALUES)}")
        missed = [PUBLISHED_LABELS[v] for v in published_systems.VALUES if v not in matched]
        if missed:
            rest.append(f"{code(model)}'s {', '.join(missed)}")
    cause = ("Measured (each system's `authors.parquet`, schema `provo_published`; the table below): on the same "
             "published samples the authors' protocol (`varprobe.analysis.published_samples`) gives "
             + "; ".join(lines) + ". Where it gives the paper's digits, the samples are the paper's, and what "
             "moves ours off them is the protocol: ours reads each draw's first word by our rule and each context "
             "once (theirs: their words, lowercased, the records in published order with the last left out), "
             "scores the word the corpus token reads as (theirs: the token as printed, punctuation and case "
             "kept), breaks a tied mode lexicographically (theirs: the first most probable word), splits each "
             "context's oracles with a seed of its own (theirs: a seed every context shares), and closes the "
             "last ECE bin (theirs: a confidence of 1 lies in no bin and adds nothing). The table does not switch "
             "these definitions one at a time, so which of them moves ours most is not measured here.")
    if rest:
        cause += (f" What remains between the authors' protocol and the paper ({'; '.join(rest)}) is "
                  f"{UNEXPLAINED}: the run has of these systems their published samples alone, over the contexts "
                  "named.")
    return {"cause": cause, "table": markdown(published_comparison(table_of(entries, "provo_summary"), found))}


def _biased_support(entries, measured, config) -> str:
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
            "measure that difference alone. What remains is " + _other_models(entries, measured, config))


def _finetune_draws(entries, measured, config) -> str:
    """The fine-tuning rows against GPT-2's: the run's draws per context beside the paper's
    1,000 for GPT2 and GPT2 fine-tuned, then what remains (``_other_models``)."""
    provo = config.get("provo") or {}
    drawn = text(findings.draws_per_context(provo)) if provo else "the run's"
    return (f"The run samples {drawn} times per context, the paper's GPT2 and GPT2 fine-tuned rows "
            f"{findings.PAPER_DRAWS:,}, and the run fine-tunes no model at both counts. What remains is "
            + _other_models(entries, measured, config))


def _exact_softmax(entries, measured, config) -> str:
    """Table 4's model row against GPT-2's: both are exact next-token distributions (the softmax,
    no draws), so only the models differ (``_other_models``)."""
    return ("Both are exact: Table 4 scores the model's softmax over its vocabulary, as the run does, so no "
            "draw enters either value (and each model's own tokenizer makes the first tokens). What remains is "
            + _other_models(entries, measured, config))


def _token_oracles(_entries, _measured, _config) -> dict:
    """The oracles' Table 4 ECE under the authors' protocol and each of its definitions alone, as
    ``varprobe.families.token_level.authors`` measured it (``authors_measures.TABLE4_ORACLES``, which
    a test recomputes from the Provo norms), with the table of every number it cites."""
    m, lines = authors_measures.TABLE4_ORACLES, authors_measures.TOKEN_SWITCH_CODE
    oracles = list(authors_measures.ORACLES)
    found = pd.DataFrame(m.switches, columns=["protocol", "switch", *oracles])
    ours, authors = authors_row(found, "ours"), authors_row(found, "authors")
    seed, resplits, bins = (m.settings[k] for k in ("seed", "resplits", "ece_bins"))
    seeds = f"seeds 0-{resplits - 1}"
    (low1, mean1, high1), (low2, mean2, high2) = m.splits["authors"]
    (ours_low1, _, ours_high1), (ours_low2, _, ours_high2) = m.splits["ours"]
    shares = [f"{a:.1%}" for a in m.accuracy]
    extra = pd.DataFrame([
        ("authors, the mirror's response order", "", *m.mirror),
        (f"authors' one split over {seeds}: lowest", "", low1, low2),
        (f"authors' one split over {seeds}: highest", "", high1, high2),
        (f"ours, one resplit of {resplits}: lowest", "", ours_low1, ours_low2),
        (f"ours, one resplit of {resplits}: highest", "", ours_high1, ours_high2),
        ("authors' split: contexts whose human-majority token it names", "", *shares),
        ("authors' split: mean confidence", "", *m.confidence),
    ], columns=found.columns)
    folder = authors_measures.TOKEN_CODE_FOLDER
    cause = (
        f"Measured (`varprobe.families.token_level.authors` on the Provo norms with GPT-2's tokenizer, seed {seed}, "
        f"{resplits} resplits, {bins} bins; `tests/test_authors_token_level.py` recomputes every number here; its "
        f"table): the authors' protocol gives oracle 1 {number(authors['oracle 1'])} and oracle 2 "
        f"{number(authors['oracle 2'])} on the norms in their response order (that of their per-context lists, "
        f"`tests/data/authors_response_order.json`), the values their `{folder}/GPT2_processing_BPE.py` writes to "
        f"`cal_metrics_bpe.json` (line 356) to every digit ({number(m.mirror[0])} and {number(m.mirror[1])} on the "
        f"data mirror's rebuild of the norms, whose responses are sorted by their summed count, not in the OSF file's "
        f"order); ours {number(ours['oracle 1'])} and {number(ours['oracle 2'])} (the rows above use each model's own "
        f"tokenizer). The paper's values are one split, drawn from a random state every context shares: "
        f"`oracle(data_per_context, seed=0)` and `sample_oracle_without_replacement_disjoint_groups(20)` "
        f"({lines['single_split']}) call `random.seed(0)` (line 103) in every context, so each context with as many "
        f"responses sends the same positions of its response list, most frequent first, to oracle 1, and one split's "
        f"luck does not average out over the contexts. Over {seeds} that one split's ECE is {span(low1, high1)} for "
        f"oracle 1 and {span(low2, high2)} for oracle 2 (mean {number(mean1)} and {number(mean2)}); seeded per context, "
        f"ours is {span(ours_low1, ours_high1)} and {span(ours_low2, ours_high2)}. In seed 0's split oracle 1 names "
        f"the human-majority first token in {shares[0]} of the contexts at a mean confidence of "
        f"{number(m.confidence[0])}, oracle 2 in {shares[1]} at {number(m.confidence[1])}: every bin's accuracy is "
        f"above its confidence, so each ECE is accuracy less confidence. Oracle 1: "
        f"{_moved(found, 'oracle 1', lines)}. Oracle 2: {_moved(found, 'oracle 2', lines)}."
    )
    table = pd.concat([found, extra], ignore_index=True)
    table = table.assign(**{"authors' code": table["switch"].map(lines).fillna("")},
                         switch=table["switch"].map(lambda s: code(s) if s else ""))
    table.attrs[MARKUP] = ["switch", "authors' code"]  # inline code: switch names and file paths
    return {"cause": cause, "table": markdown(table)}


def _not_public(path: str, table: str) -> Callable:
    def cause(entries, measured, config) -> str:
        text = (f"{UNEXPLAINED}: the paper's {table} oracle values are stored scalars of the authors' "
                f"`{path}` (github.com/evgeniael/predict_next_word); the code that wrote them is not public.")
        found = _authors(measured)
        if found is not None and table == "Table 2":
            row = authors_row(found, "authors")
            text += (f" The authors' Table 1 protocol gives the same quantities {number(row['oracle_ece_corpus'])} "
                     f"(corpus word) and {number(row['oracle_ece_human_majority'])} (human majority).")
        return text
    return cause


APPENDIX_B = "`Additional_Experiments/Appendix_B/analysis_predictors.ipynb`"
"""The authors' notebook of Table 3 (github.com/evgeniael/predict_next_word)."""

PRINTED_TVD_ORACLES = 0.1152
"""What that notebook's ``clf.coef_`` (cell 16) prints for TVD between oracles, where Table 3
prints 0.117."""


def _per_sd(row) -> float:
    """A ``regression_codings`` row's coefficient of TVD between oracles per standard deviation of
    the predictor: itself for z-scores, else times the predictor's SD."""
    return row["tvd_oracle2_oracle1"] * (1.0 if row["units"] == "per SD" else row["sd_tvd_oracle2_oracle1"])


def _moves(change: float) -> str:
    return "raises" if change > 0 else "lowers"


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
        f"gives {number(resplits['tvd_oracle2_oracle1'])}: one split shared by target and predictor {_moves(change)} "
        f"the coefficient by {number(abs(change))} at seed 0 and {_moves(mean_change)} it by "
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
            f"differently by coding; the rest is " + _other_models(entries, measured, config))


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


def _production_level(entries, _measured, _config) -> dict | None:
    """The human control's mean W1 per task and probe (one cell each: the control reads the
    references alone, the same for every system), shown as the cause's table."""
    summary = table_of(entries, "production_summary")
    control = summary[summary["available"] & (summary["statistic"] == "w1_control")
                      & ~summary["dataset"].isin(verdicts.NO_CONTROL)].drop_duplicates(["dataset", "probe"])
    if control.empty:
        return None
    level = paper.GIULIANELLI_LEVELS["w1_decoding"]
    above = int((control["ci_low"] > level).sum())
    table = pd.DataFrame({"dataset": control["dataset"], "probe": control["probe"],
                          "human control W1 [95% CI]": [with_interval(r.mean, r.ci_low, r.ci_high)
                                                        for r in control.itertuples(index=False)],
                          f"above {level} with its interval": (control["ci_low"] > level).map(
                              {True: "yes", False: "no"})})
    return {"cause": (f"Measured: the run's human control, two halves of the references, has a mean W1 of "
                      f"{span(control['mean'].min(), control['mean'].max())} ({above} of {len(control)} task x "
                      f"probe cells above {level} with their interval; the table below; dialogue has no control in the "
                      "paper, fn. 11, and ours, five references split 2 + 3, is no human level). Where the model's W1(C, H) "
                      f"is above the control, the rest is {UNEXPLAINED}: the paper's generators are task-trained "
                      "models (OpusMT, Flan-T5, DialoGPT), ours instruct models prompted for every task."),
            "table": markdown(table)}


CAUSES: dict[str, Callable] = {
    "table1_human_ece_corpus": _authors_value("human_ece_corpus", _corpus_word),
    "table1_human_ece_human_majority": _authors_value("human_ece_human_majority"),
    "table1_human_ece_oracle_majority": _authors_value("human_ece_oracle_majority", _gpt2_ece),
    "table1_oracle_ece_corpus": _authors_value("oracle_ece_corpus", _corpus_word),
    "table1_oracle_ece_human_majority": _authors_value("oracle_ece_human_majority"),
    "table1_oracle_ece_oracle_majority": _authors_value("oracle_ece_oracle_majority"),
    "table1_oracle_expected_tvd": _authors_value("oracle_expected_tvd", _oracle_tvd),
    "table1_models": _draws,
    "table1_published": _published_protocol,
    "table2_biased": _biased_support,
    "table2_oracle": _not_public("Additional_Experiments/Appendix_A/uncertainty_results/cal_metrics_oracle.json",
                                 "Table 2"),
    "table3_tvd_oracles": _regression,
    "table3_coefficients": _coefficients,
    "table4_model": _exact_softmax,
    "table4_oracle": _token_oracles,
    "finetune": _finetune_draws,
    "replacement_share": _replacement_cause,
    "liu_rsd": _token_bins,
    "production_w1": _production_level,
}
"""The cause of each group (``GROUPS``), from the run's tables: ``(entries, measured, config)``
-> its text, or ``{cause, table}`` with the table it was measured with, or None where the run
did not measure it (then ``UNEXPLAINED``, as for a group not here)."""


def cause(group: str, entries: list[dict], measured: dict, config: dict) -> dict:
    """The cause of ``group`` as ``{cause, table}``: ``CAUSES``'s, else ``UNEXPLAINED``. A
    cause's text is the page's Markdown (``Markup``): each ``CAUSES`` entry writes a string from
    outside the project into it through ``text`` or ``code``."""
    found = CAUSES[group](entries, measured, config) if group in CAUSES else None
    if found is None:
        return {"cause": UNEXPLAINED, "table": None}
    found = found if isinstance(found, dict) else {"cause": found, "table": None}
    return {**found, "cause": Markup(found["cause"])}


def summary(differing: list[Pair]) -> str:
    """A line for a group's differing pairs: how many, the span of ours and the paper's values."""
    ours = [p.ours for p in differing]
    papers = ", ".join(dict.fromkeys(p.row()["paper"] for p in differing))
    return f"{len(differing)} values, {span(min(ours), max(ours))} (paper: {papers})"


def generated(entries: list[dict], measured: dict, config: dict) -> list[dict]:
    """One Disagreements entry per group with a differing pair (``pairs``, ``Pair.differs``):
    its differing pairs as a table and in a line (``summary``) and its cause, in ``GROUPS``'s
    order."""
    differing = [p for p in pairs(entries, measured, config) if p.differs()]
    unknown = sorted({p.group for p in differing} - set(GROUPS))
    if unknown:
        raise KeyError(f"pairs of groups not in GROUPS (no heading): {', '.join(unknown)}")
    out = []
    for group, heading in GROUPS.items():
        mine = [p for p in differing if p.group == group]
        if mine:
            out.append({"title": heading.title, "paper": heading.paper,
                        "pairs": markdown(pd.DataFrame([p.row() for p in mine])), "summary": summary(mine),
                        **cause(group, entries, measured, config)})
    return out


def disagreements(entries: list[dict], measured: dict, config: dict) -> list[dict]:
    """The Disagreements section: the generated entries (``generated``), then the ones that
    compare no single value (``findings``: failure rates, the production signs and decodings);
    each with the paper, ours, its cause and the table it was measured with."""
    found = [findings.failures(entries, measured), findings.production(entries, measured),
             findings.decodings(entries)]
    return generated(entries, measured, config) + [d for d in found if d is not None]
