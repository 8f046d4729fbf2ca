"""The page's Disagreements section, generated from the tables it shows.

Every value of ours that the page prints beside a paper's is a ``Pair`` (``pairs``: one builder
per table, reading the same tables as the table's view). A pair *differs* (``Pair.differs``)
when the paper's value, widened by half its last printed digit, lies outside our interval, or,
without an interval, farther from ours than ``RELATIVE`` of itself. Each pair belongs to a
group (``groups``: a heading and the paper it quotes, the studies' here and each analysis
family's in its page module, ``varprobe.families.<name>.page``); every group with a differing
pair is one entry of the section, in page order: the differing pairs in a table and the group's
cause (``causes``: text
formatted from the run's tables, naming its measurement: a number, a switch, a file and line of
the authors' code), or ``UNEXPLAINED`` where the group has no cause or the run did not measure
it. So every differing pair is under Disagreements by construction; the entries that compare no
single value (failure rates, signs, decoding ranks) come from ``findings``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass

import pandas as pd

from varprobe import tables
from varprobe.run_plan import RunPlan
from varprobe.results_page import findings, paper, published_systems, sections, verdicts
from varprobe.results_page.findings import span, table_of
from varprobe.results_page.markup import Markup, code, text
from varprobe.results_page.tables import (
    AUTHORS_CODE, AUTHORS_VALUES, MOVES, PUBLISHED_LABELS, RELATIVE, TABLE_ONE_COLUMNS, authors_row, intervals, markdown,
    number, printed, published_comparison, with_interval)

UNEXPLAINED = "unexplained"
"""The cause of a group with none (``causes``), or whose measuring table the run lacks."""


@dataclass(frozen=True)
class Pair:
    """One value of ours shown beside a paper value: its group (``groups``), where it is (the
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
    """A heading of the Disagreements section and the paper values its pairs quote;
    ``appendix_table``: what of its cause's measured table the appendix holds, where the
    appendix holds it (the page points there); ``appendix_pairs``: the appendix holds its list
    of differing values (one per task, system and probe), a line sums it up on the page."""

    title: str
    paper: str
    _: KW_ONLY
    appendix_table: str = ""
    appendix_pairs: bool = False


STUDY_GROUPS = {
    "provo": {
        **{f"table1_{key}": Group(f"Table 1: {label}", "Ilia & Aziz 2024, Table 1",
                                  appendix_table="the oracle control's E TVD in each resplit"
                                  if key == "oracle_expected_tvd" else "")
           for key, label in AUTHORS_VALUES.items()},
        "table1_models": Group("Table 1: the models' rows", "Ilia & Aziz 2024, Table 1, the GPT-2 columns"),
        "table1_published": Group("Table 1: the paper's own systems, from their published samples",
                                  "Ilia & Aziz 2024, Table 1, each system's own column"),
    },
    "finetune": {
        "finetune": Group("Fine-tuning: the expected TVDs", "Ilia & Aziz 2024, Table 1, GPT2 and GPT2 fine-tuned"),
    },
    "production": {
        "production_w1": Group("Production: the level of W1(C, H)",
                               "Giulianelli et al. 2023, Sec. 6.2: \"always lower than 0.1\"", appendix_pairs=True),
    },
}
"""The studies' own groups of pairs by section (``sections.STUDY_SECTIONS``), each by the key
its pairs and its cause use; an analysis family's are its page module's ``GROUPS``."""


def groups() -> dict[str, Group]:
    """Every group of pairs by key, in page order: the studies' (``STUDY_GROUPS``) and each
    family's (its page module's ``GROUPS``).

    Raises
    ------
    ValueError
        Naming a key two sections' groups both use.
    """
    merged: dict[str, Group] = {}
    for part in sections.by_section(STUDY_GROUPS, "GROUPS"):
        clash = sorted(set(part) & set(merged))
        if clash:
            raise ValueError(f"disagreement groups {', '.join(clash)} are declared twice")
        merged |= part
    return merged


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


def _finetune(entries: list[dict], _measured: dict, _config: dict) -> list[Pair]:
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


def _production(entries: list[dict], _measured: dict, _config: dict) -> list[Pair]:
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


STUDY_PAIRS = {"provo": _table_one, "finetune": _finetune, "production": _production}
"""The studies' pair builders by section: ``(entries, measured, config)`` -> its pairs; an
analysis family's is its page module's ``PAIRS``."""


def pairs(entries: list[dict], measured: dict, config: dict) -> list[Pair]:
    """Every value of ours the page shows beside a paper value, from the tables the page shows
    (``entries``: the registered tables; ``measured``: the page's measured tables), section by
    section (``STUDY_PAIRS``, each family's ``PAIRS``)."""
    return [pair for build in sections.by_section(STUDY_PAIRS, "PAIRS") for pair in build(entries, measured, config)]


# ---- the causes, by group: each formats its measurement from the run's tables ----

SWITCH_CODE = {
    "raw_responses": "cell 5:9-10", "raw_corpus_word": "`TVD/GPT2/GPT2_sampling.py` lines 37 and 307",
    "authors_contexts": "cells 12:9, 17:14", "authors_split": "cell 4", "shared_seed": "cell 4:5",
    "carried_removal": "cell 4:11", "single_split": "cell 17:18", "first_max_ties": "cell 6:6-8",
    "authors_bins": "cell 10:11-13",
}
"""The line of the authors' code each switch of ``varprobe.analysis.authors_protocol`` follows."""

def authors_table(measured: dict) -> pd.DataFrame | None:
    path = measured.get("provo_authors")
    return tables.read(path, "provo_authors") if path else None


def moved(found: pd.DataFrame, value: str, lines: dict[str, str]) -> str:
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
            f"{number(authors)} ({AUTHORS_CODE}); {moved(found, value, SWITCH_CODE)}.")


def _authors_value(value: str, extra: Callable[[pd.DataFrame, dict], tuple[str, pd.DataFrame | None]] | None = None):
    """The cause of a human or oracle value of Table 1: what the authors' protocol gives and the
    switches that move it (``_switches``), then ``extra``'s text, with the table it measured
    (None: none)."""

    def cause(entries, measured, _config):
        found = authors_table(measured)
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


def other_models(entries, measured, config) -> str:
    """What remains of a model's value against GPT-2's once the run has measured what it can:
    the models themselves, unexplained."""
    return f"{UNEXPLAINED}: the run's models ({_run_models(config)}) against the paper's GPT-2."


def _draws(entries, measured, config) -> str:
    """Table 1's model rows against GPT-2's: the draws, isolated where the run samples a model
    both at its own count and at the paper's 1,000 (two plain decodings, one with ``n_samples:
    1000``), each one's E TVD(M, H) at both; the paper's T = 0.5 column drawn 40 times per
    context, as the run's; what remains (``other_models``)."""
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
                         f"{many:,} ({moves(at[many] - at[few])} it by {number(abs(at[many] - at[few]))})")
    drawn = text(findings.draws_per_context(provo)) if provo else "the run's"
    if lines:
        head = (f"Measured, the draws alone: E TVD(M, H) of {'; '.join(lines)}; the paper's GPT-2 "
                f"{printed(paper.TABLE_1['GPT2'][3])} at {findings.PAPER_DRAWS:,}. ")
    else:
        head = (f"The run samples {drawn} times per context against GPT-2's {findings.PAPER_DRAWS:,} and no model at "
                "both, so it does not measure the draws alone (`configs/paper-scale.yaml`'s `ancestral-1000` does). ")
    return head + ("The paper's GPT2 T=0.5 column was drawn 40 times per context (Sec. 4), as the run's rows "
                   "beside it, so the draws are no cause there. What remains is " + other_models(entries, measured,
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
             "last ECE bin (theirs: a confidence of 1 lies in no bin and adds nothing). Switched one at a time on "
             "the same samples, the definition that moves each value most is the table's last two columns' "
             "(each system's switch rows).")
    if rest:
        cause += (f" What remains between the authors' protocol and the paper ({'; '.join(rest)}) is "
                  f"{UNEXPLAINED}: the run has of these systems their published samples alone, over the contexts "
                  "named.")
    return {"cause": cause, "table": markdown(published_comparison(table_of(entries, "provo_summary"), found))}


def _finetune_draws(entries, measured, config) -> str:
    """The fine-tuning rows against GPT-2's: the run's draws per context beside the paper's
    1,000 for GPT2 and GPT2 fine-tuned, then what remains (``other_models``)."""
    provo = config.get("provo") or {}
    drawn = text(findings.draws_per_context(provo)) if provo else "the run's"
    return (f"The run samples {drawn} times per context, the paper's GPT2 and GPT2 fine-tuned rows "
            f"{findings.PAPER_DRAWS:,}, and the run fine-tunes no model at both counts. What remains is "
            + other_models(entries, measured, config))


def not_public(path: str, table: str) -> Callable:
    def cause(entries, measured, config) -> str:
        text = (f"{UNEXPLAINED}: the paper's {table} oracle values are stored scalars of the authors' "
                f"`{path}` (github.com/evgeniael/predict_next_word); the code that wrote them is not public.")
        found = authors_table(measured)
        if found is not None and table == "Table 2":
            row = authors_row(found, "authors")
            text += (f" The authors' Table 1 protocol gives the same quantities {number(row['oracle_ece_corpus'])} "
                     f"(corpus word) and {number(row['oracle_ece_human_majority'])} (human majority).")
        return text
    return cause


def moves(change: float) -> str:
    return "raises" if change > 0 else "lowers"


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


STUDY_CAUSES: dict[str, Callable] = {
    "table1_human_ece_corpus": _authors_value("human_ece_corpus", _corpus_word),
    "table1_human_ece_human_majority": _authors_value("human_ece_human_majority"),
    "table1_human_ece_oracle_majority": _authors_value("human_ece_oracle_majority", _gpt2_ece),
    "table1_oracle_ece_corpus": _authors_value("oracle_ece_corpus", _corpus_word),
    "table1_oracle_ece_human_majority": _authors_value("oracle_ece_human_majority"),
    "table1_oracle_ece_oracle_majority": _authors_value("oracle_ece_oracle_majority"),
    "table1_oracle_expected_tvd": _authors_value("oracle_expected_tvd", _oracle_tvd),
    "table1_models": _draws,
    "table1_published": _published_protocol,
    "finetune": _finetune_draws,
    "production_w1": _production_level,
}
"""The cause of each of the studies' groups (``STUDY_GROUPS``), from the run's tables: ``(entries,
measured, config)`` -> its text, or ``{cause, table}`` with the table it was measured with, or
None where the run did not measure it (then ``UNEXPLAINED``, as for a group without one); an
analysis family's are its page module's ``CAUSES``."""


def causes() -> dict[str, Callable]:
    """The cause of every group that has one, by key: ``STUDY_CAUSES`` and each family's ``CAUSES``."""
    return {**STUDY_CAUSES, **{key: found for part in sections.by_section({}, "CAUSES") for key, found in part.items()}}


def cause(group: str, entries: list[dict], measured: dict, config: dict) -> dict:
    """The cause of ``group`` as ``{cause, table}``: its cause's (``causes``), else ``UNEXPLAINED``.
    A cause's text is the page's Markdown (``Markup``): each cause writes a string from outside
    the project into it through ``text`` or ``code``."""
    known = causes()
    found = known[group](entries, measured, config) if group in known else None
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
    its differing pairs as a table and in a line (``summary``) and its cause, in ``groups``'
    order."""
    differing = [p for p in pairs(entries, measured, config) if p.differs()]
    headings = groups()
    unknown = sorted({p.group for p in differing} - set(headings))
    if unknown:
        raise KeyError(f"pairs of groups no section declares (no heading): {', '.join(unknown)}")
    out = []
    for group, heading in headings.items():
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
