"""The tables of the results page, built from the run's Parquet tables, with the papers' values
(``paper``) on rows of their own or in columns beside ours.

Numbers are rounded to three decimals for reading (the Parquet files keep full precision); a
paper value is printed as the paper prints it. Every quantity has one name (``GLOSSARY``), the
same in every table, figure caption and the explorer.
"""

from __future__ import annotations

import math

import pandas as pd

from varprobe import tables as stored
from varprobe.results_page import paper, published_systems
from varprobe.results_page.markup import Markup, code, text
from varprobe.results_page.sections import family_glossary

RELATIVE = 0.10
"""Without an interval of ours, a value differs from the paper's when it is farther from it than
this share of it (``varprobe.results_page.disagreements``)."""

MAX_ROWS = 60
"""Tables longer than this are summarised by their view, or named, not printed."""

GLOSSARY = {
    "human distribution H": "the MLE of a context's Provo responses (all of them).",
    "oracle 1, oracle 2 (O1, O2)": "two disjoint halves of a context's responses, drawn at "
    "random; each resplit draws them anew, and every table averages over the run's resplits "
    "(`provo.resplits`).",
    "TVD(M, H)": "total variation distance between a system's next-word distribution and H; its "
    "mean over contexts is the expected TVD, the paper's \"Avg TVD\" of a model.",
    "TVD(M, O1)": "the same against oracle 1, the half a model is compared with in the "
    "regression and beside the oracle control.",
    "TVD(O2, O1)": "between the two halves: how far one human sample of half the size is from "
    "another. The oracle control's expected TVD, the paper's \"Avg TVD\" of Oracle2; our row "
    "`oracle / control` shows it in the TVD(·, O1) column. TVD(O2, H), half against all, is "
    "smaller and is not the paper's oracle number.",
    "human control (production)": "W1 between the pairwise distances within one half of an "
    "input's references and within the other half (Giulianelli et al.'s control group).",
    "H, M, C (production)": "per input, the distances among human references (H), among model "
    "outputs (M) and between model outputs and references (C), under one probe.",
    "W1(M, H), W1(C, H)": "Wasserstein-1 distance between the distribution of M (or C) and of H "
    "over pairs, per input; the tables give its mean over inputs.",
    "ECE": "expected calibration error over {ece_bins} equal-width bins of the mode's probability (the "
    "run's `provo.ece_bins`; the paper states no bin count), with the corpus word, the human majority or "
    "the oracle-1 majority as gold label.",
    "`n_contexts_not_sampled`": "contexts a system was never sampled or enumerated at (a fine-tuned "
    "model's training passages, an exact system's passages outside its `texts`): it has no distribution "
    "there, and the context is left out of its means.",
    "`n_contexts_all_failed`": "contexts where a system was sampled and every draw failed (enumerated: no "
    "word resolved): it has no distribution there, and the context is left out of its means.",
    "failure rate": "the share of a system's draws that gave no complete word (for an exact "
    "system, the resolved failure mass); the draws are rejected, as in the paper.",
}
"""One name and one definition per quantity of the page's studies (an analysis family's are in
its page module, ``varprobe.results_page.sections``); ``{ece_bins}`` is the run's number of ECE
bins (``glossary``)."""

GLOSSARY_SECTION = dict.fromkeys(("human control (production)", "H, M, C (production)", "W1(M, H), W1(C, H)"),
                                 "production")
"""The page section a glossary entry of ``GLOSSARY`` belongs to, where it is not the Provo study's
(``provo``)."""


def glossary(sections: set[str], ece_bins: int | None = None) -> dict[Markup, Markup]:
    """The glossary entries of the page's ``sections`` (their keys in
    ``varprobe.results_page.sections.sections``): ``GLOSSARY``'s, then each family's, the ECE's
    with the run's ``ece_bins`` (``provo.ece_bins``; a run without the Provo study has no ECE
    entry)."""
    entries = {name: (definition, GLOSSARY_SECTION.get(name, "provo")) for name, definition in GLOSSARY.items()}
    entries |= family_glossary()
    return {Markup(name): Markup(definition.format(ece_bins=ece_bins))
            for name, (definition, section) in entries.items() if section in sections}


def number(value) -> str:
    """A cell for reading: three decimals for a float (two significant digits below 0.001, so
    that a small value does not read as zero), ``–`` for a missing number."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, float):
        return f"{value:.1e}" if 0 < abs(value) < 0.0005 else f"{value:.3f}"
    return str(value)


def printed(value: float | None, decimals: int = 3) -> str:
    """A paper value as the paper prints it: ``decimals`` places (Ilia & Aziz's Table 1 has 2,
    their other tables 3), a zero as ``0``, ``–`` where it has none."""
    return "–" if value is None else "0" if value == 0 else f"{value:.{decimals}f}"


def with_interval(mean: float, low: float, high: float) -> str:
    """``mean [low, high]``, or the mean alone without an interval."""
    if any(v is None or math.isnan(v) for v in (low, high)):
        return number(mean)
    return f"{number(mean)} [{number(low)}, {number(high)}]"


MARKUP = "markup"
"""The ``attrs`` key of a page table that names its columns the page wrote as Markdown itself
(inline code, bold): their header and cells reach the page as they are (``markdown``)."""


def markdown(frame: pd.DataFrame) -> Markup:
    """``frame`` as a Markdown (pipe) table of rounded cells (``number``), every header and cell
    as ``text`` but those of the columns ``frame.attrs[MARKUP]`` names, so that no string of a
    table (a data file's cell, a config value) reaches the page as markup."""
    own = set(frame.attrs.get(MARKUP, ()))
    shown = pd.DataFrame({i: frame.iloc[:, i].map(lambda v, c=c: number(v) if c in own else text(number(v)))
                          for i, c in enumerate(frame.columns)}, index=frame.index, dtype=object)
    shown.columns = [str(c) if c in own else text(c) for c in frame.columns]
    return Markup(shown.to_markdown(index=False, disable_numparse=True))


TABLE_ONE_COLUMNS = {
    "tvd_humans": "E TVD(·, H) [95% CI]",
    "tvd_oracle1": "E TVD(·, O1) [95% CI]",
    "ece_corpus": "ECE corpus word",
    "ece_human_majority": "ECE human majority",
    "ece_oracle_majority": "ECE oracle-1 majority",
    "mean_entropy_model": "mean entropy (system)",
    "mean_entropy_human": "mean entropy (H)",
    "failure_rate": "failure rate",
    "n_contexts": "contexts",
    "n_contexts_without_corpus_word": "contexts without corpus word (not in ECE corpus word)",
}


def _system_row(r, intervals: dict) -> dict:
    """One run system of Table 1: the oracle control's expected TVD is TVD(O2, O1), so it goes
    to the oracle-1 column; a model's is TVD(M, H). ``intervals``: bootstrap intervals the page
    computed from the per-context tables, ``{(model, decoding): {column: (low, high)}}``."""
    extra = intervals.get((r.model, r.decoding), {})
    row = {"system": f"{r.model} / {r.decoding}"}
    if r.model == "oracle":
        row["tvd_humans"] = with_interval(*extra.get("tvd_humans", (math.nan,) * 3))
        row["tvd_oracle1"] = with_interval(r.expected_tvd, r.ci_low, r.ci_high)
    else:
        tvd = with_interval(r.expected_tvd, r.ci_low, r.ci_high)
        if not math.isnan(r.expected_tvd_lower):
            tvd += f" (exact in [{number(r.expected_tvd_lower)}, {number(r.expected_tvd_upper)}])"
        row["tvd_humans"] = tvd
        row["tvd_oracle1"] = with_interval(r.expected_tvd_oracle1, *extra.get("tvd_oracle1", (math.nan,) * 2))
    for column in ("ece_corpus", "ece_human_majority"):
        row[column] = with_interval(getattr(r, column), *extra.get(column, (math.nan,) * 2))
    row.update({k: getattr(r, k) for k in ("ece_oracle_majority", "mean_entropy_model",
                                           "mean_entropy_human", "failure_rate", "n_contexts",
                                           "n_contexts_without_corpus_word")})
    return row


def table_one(summary: pd.DataFrame, intervals: dict | None = None) -> pd.DataFrame:
    """Ilia & Aziz 2024, Table 1, transposed (one row per system): the human MLE, the oracle
    control and every model x decoding of the run's Provo summary (schema ``provo_system``),
    then every column of the paper's table (``paper.TABLE_1``) under ``paper:``, its "Avg TVD"
    in the column of the same definition (TVD(O2, O1) for Oracle2, TVD(M, H) for a model). The
    count of contexts without a corpus word, which the ECE against it leaves out, is a column
    where a system has any (a cloze corpus's empty ``word`` cells)."""
    first = {"human": 0, "oracle": 1}
    ordered = summary.assign(_order=summary["model"].map(first).fillna(2)).sort_values(
        ["_order", "model", "decoding"], kind="stable")
    rows = [_system_row(r, intervals or {}) for r in ordered.itertuples(index=False)]
    for system, values in paper.TABLE_1.items():
        shown = dict(zip(paper.TABLE_1_COLUMNS, (printed(v, 2) for v in values), strict=True))
        tvd = shown.pop("avg_tvd")
        rows.append({"system": f"paper: {system}", **shown,
                     ("tvd_oracle1" if system == "Oracle2" else "tvd_humans"): tvd})
    table = pd.DataFrame(rows, columns=["system", *TABLE_ONE_COLUMNS])
    for column in ("n_contexts", "n_contexts_without_corpus_word"):
        table[column] = table[column].map(lambda n: "" if pd.isna(n) else str(int(n)))
    if not (summary["n_contexts_without_corpus_word"] > 0).any():  # Provo: every context has one
        table = table.drop(columns="n_contexts_without_corpus_word")
    return table.rename(columns=TABLE_ONE_COLUMNS)


AUTHORS_CODE = "github.com/evgeniael/predict_next_word, `TVD/Oracle/oracle_processing.ipynb`, cited as cell:line"
"""The authors' code the human and oracle values of Table 1 come from."""

AUTHORS_VALUES = {
    "human_ece_corpus": "Human, ECE corpus word", "human_ece_human_majority": "Human, ECE human majority",
    "human_ece_oracle_majority": "Human, ECE oracle-1 majority", "oracle_ece_corpus": "Oracle2, ECE corpus word",
    "oracle_ece_human_majority": "Oracle2, ECE human majority",
    "oracle_ece_oracle_majority": "Oracle2, ECE oracle-1 majority", "oracle_expected_tvd": "Oracle2, E TVD(O2, O1)",
}
"""Table 1's seven human and oracle values (the columns of schema ``provo_authors``), as the
page names them."""


def authors_row(found: pd.DataFrame, protocol: str, switch: str = "") -> pd.Series:
    """The row of a ``provo_authors`` table for ``protocol`` and ``switch``."""
    row = found[(found["protocol"] == protocol) & (found["switch"] == switch)]
    if row.empty:
        raise KeyError(f"provo_authors: no row protocol={protocol!r} switch={switch!r}")
    return row.iloc[0]


HUMAN_ENTROPY = "Human, mean entropy (H), nats"
"""The row of ``authors_comparison`` that holds Table 1's mean entropy of H beside the authors'
repository's (``paper.AUTHORS_DATA``): the paper prints none."""


def authors_comparison(found: pd.DataFrame, human_entropy: float = float("nan")) -> pd.DataFrame:
    """Table 1's human and oracle values (schema ``provo_authors``): ours, under Ilia & Aziz's
    own protocol, and as the paper prints them, one row per value; then ``human_entropy``, Table
    1's mean entropy of H, beside the authors' repository's (the paper prints none)."""
    ours, authors, printed_row = (authors_row(found, p) for p in ("ours", "authors", "paper"))
    table = pd.DataFrame([{"value (Table 1)": label, "ours": ours[key], "authors' protocol": authors[key],
                           "paper": printed(printed_row[key], 2)} for key, label in AUTHORS_VALUES.items()]
                         + [{"value (Table 1)": HUMAN_ENTROPY, "ours": human_entropy,
                             "authors' protocol": paper.AUTHORS_DATA["human_entropy"][0], "paper": "–"}])
    table.attrs["title"] = "Table 1's human and oracle values: ours, the authors' protocol and the paper"
    averaged = authors_row(found, "authors - switch", "single_split")
    table.attrs["note"] = Markup(
        f"Quote ours: every context's oracles are split with a seed of its own, and each value is the mean "
        f"over the run's resplits, an expectation that no single seed decides. The authors' protocol "
        f"({AUTHORS_CODE}; methods, \"The authors' protocol for Table 1's human and oracle rows\") gives the "
        f"paper's digits but takes the oracle's E TVD and its ECEs against the corpus word and the human "
        f"majority from one split, seed 1 (cell 17:18), drawn from a random state that every context shares "
        f"(cell 4:5): averaged over its 20 splits instead, the same protocol gives E TVD "
        f"{number(averaged['oracle_expected_tvd'])} and ECE against the human majority "
        f"{number(averaged['oracle_ece_human_majority'])}, not {number(authors['oracle_expected_tvd'])} and "
        f"{number(authors['oracle_ece_human_majority'])}. The paper's human ECE against the oracle-1 majority "
        f"({printed(printed_row['human_ece_oracle_majority'], 2)}) is GPT-2's: cell 15:5 averages "
        f"`ece_gpt2_oracle_maj`; the human's own under the authors' protocol is "
        f"{number(authors['human_ece_oracle_majority'])}.")
    return table


def authors_switches(found: pd.DataFrame) -> pd.DataFrame:
    """Each of the authors' definitions switched on alone on ours (``ours + switch``) and off
    alone from theirs (``authors - switch``), the seven values each (schema ``provo_authors``)."""
    shown = found[found["protocol"] != "paper"].copy()
    shown["switch"] = shown["switch"].map(lambda s: code(s) if s else "")
    table = shown.rename(columns=AUTHORS_VALUES)
    table.attrs[MARKUP] = ["switch"]  # each switch's name as inline code
    table.attrs["title"] = "Table 1's human and oracle values with each of the authors' definitions switched"
    table.attrs["note"] = Markup("`ours + switch`: our protocol with one of the authors' definitions; `authors - "
                           "switch`: theirs without it. Each switch, and the line of the authors' code it "
                           "follows, is in the methods' table of the authors' protocol.")
    return table.reset_index(drop=True)


PUBLISHED_LABELS = {"ece_corpus": TABLE_ONE_COLUMNS["ece_corpus"],
                    "ece_human_majority": TABLE_ONE_COLUMNS["ece_human_majority"],
                    "ece_oracle_majority": TABLE_ONE_COLUMNS["ece_oracle_majority"],
                    "expected_tvd": TABLE_ONE_COLUMNS["tvd_humans"].removesuffix(" [95% CI]")}
"""Table 1's four values of a model column (``published_systems.VALUES``), as Table 1 names them."""


MOVES = 0.005
"""A switch that moves a value by more than this is named (in a cause, in a table's column)."""

MODEL_SWITCH_LABELS = {
    "authors_words": "their words, lowercased", "raw_responses": "the responses as they read them",
    "raw_corpus_word": "the corpus word as printed", "authors_contexts": "the records in published order, the last out",
    "authors_split": "their splitter", "shared_seed": "a seed every context shares",
    "carried_removal": "split 1's removal carried", "first_max_ties": "the first most probable word",
    "authors_bins": "a confidence of 1 in no bin",
}
"""The authors' definition each switch of ``varprobe.analysis.published_samples.MODEL_SWITCHES``
stands for, as a published system's table names it."""


def most_moved(table: pd.DataFrame, value: str, protocol: str, base: str) -> str:
    """The switch whose rows ``protocol`` (``ours + switch`` or ``authors - switch``) of a
    ``provo_published`` table move ``value`` farthest from the row ``base`` (``ours`` or
    ``authors``), with the value it gives; "none by more than ``MOVES``" where none moves it that
    far.

    Parameters
    ----------
    table : pandas.DataFrame
        A ``provo_published`` table.
    value : str
        One of ``published_systems.VALUES``.
    protocol, base : str
        The switched rows and the row they are switched from.

    Returns
    -------
    str
        Markdown (the switch as inline code).
    """
    start = float(published_systems.protocol_row(table, base)[value])
    rows = table[table["protocol"] == protocol]
    distance = (rows[value].astype(float) - start).abs()
    if rows.empty or not (distance > MOVES).any():
        return f"none by more than {MOVES}"
    row = rows.loc[distance.idxmax()]
    return f"{code(row['switch'])} ({text(MODEL_SWITCH_LABELS[row['switch']])}): {number(float(row[value]))}"


def published_comparison(summary: pd.DataFrame, found: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Table 1's four values of each of the paper's own systems (``found``: a published model's
    ``provo_published`` table, by model name): ours (the model's row ``MODEL / given`` of the Provo
    ``summary``, schema ``provo_system``; "–" where it has none), under the authors' protocol on the
    same samples, and as the paper prints them, one row per system and value, with the contexts
    each protocol averages and the definition of theirs that moves each value most, turned on alone
    in ours and off alone in theirs (``most_moved``)."""
    rows = []
    for model, table in found.items():
        ours = summary[(summary["model"] == model) & (summary["decoding"] == published_systems.DECODING)]
        authors, printed_row = (published_systems.protocol_row(table, p) for p in ("authors", "paper"))
        contexts = f"{int(ours['n_contexts'].iloc[0]) if len(ours) else '–'} / {int(authors['n_contexts'])}"
        rows += [{"system": f"{model} / {published_systems.DECODING}", "paper's column": authors["column"],
                  "value (Table 1)": label, "ours": float(ours[key].iloc[0]) if len(ours) else math.nan,
                  "authors' protocol": float(authors[key]),
                  "paper": printed(printed_row[key], published_systems.DIGITS),
                  "contexts (ours / authors')": contexts,
                  "moves ours most (on alone)": most_moved(table, key, "ours + switch", "ours"),
                  "moves theirs most (off alone)": most_moved(table, key, "authors - switch", "authors")}
                 for key, label in PUBLISHED_LABELS.items()]
    table = pd.DataFrame(rows, columns=["system", "paper's column", "value (Table 1)", "ours", "authors' protocol",
                                        "paper", "contexts (ours / authors')", "moves ours most (on alone)",
                                        "moves theirs most (off alone)"])
    table.attrs["title"] = "The paper's own systems under our protocol and the authors'"
    table.attrs[MARKUP] = ("moves ours most (on alone)", "moves theirs most (off alone)")
    table.attrs["note"] = Markup(
        "Ours: the run's protocol on the samples the authors published for each system (Table 1's rows "
        "`MODEL / given`: each draw's first word read by our rule, each record on the Provo context of its text, "
        "every context once). The authors' protocol: their notebooks' reading of the same files "
        "(`varprobe.analysis.published_samples`, each system's `authors.parquet`): the records in published order, "
        "the last left out and repeats kept; their words lowercased; the responses as they read them; the corpus "
        "word the passage token as printed; the first most probable word as a mode; the oracle-1 majority over "
        "their splits of a seed every context shares; ECE in their bins, where a confidence of 1 lies in no bin. "
        "Where the authors' protocol gives the paper's digits, the samples are the paper's, and what moves ours "
        "off them is the protocol. The last two columns switch one of the authors' definitions at a time on the "
        "same samples (the switch rows of each system's `authors.parquet`): the one that moves the value "
        "farthest when turned on alone in ours, and when turned off alone in theirs, with the value it gives.")
    return table


PRODUCTION_STATISTICS = {
    "mean_H": "mean H", "mean_M": "mean M", "mean_C": "mean C",
    "w1_M_H": "W1(M, H)", "w1_C_H": "W1(C, H)", "w1_control": "W1 human control",
}


NOT_TESTED = "not testable: does not beat copying"
"""The paper's cell beside a system that does not beat copying the source on its task: its
variability is not read against the paper's (``verdicts.adequate_systems``)."""


def production_w1(summary: pd.DataFrame, tested: set | None = None) -> pd.DataFrame:
    """Per dataset, model, decoding and available probe: the bootstrap means over inputs of the
    distances among human outputs (H), model outputs (M) and between them (C), and the W1 of M
    and C against H beside the human control's (schema ``production_summary``), with the bound
    the paper states for W1(C, H) (``paper.GIULIANELLI_LEVELS``) on its probes
    (``paper.GIULIANELLI_PROBES``) for the systems ``tested`` ((dataset, model, decoding) that
    beat copying the source; None: every system), ``NOT_TESTED`` for the others, "–" on the
    probes the paper states none for."""
    available = summary[summary["available"] & summary["statistic"].isin(PRODUCTION_STATISTICS)]
    keys = ["dataset", "model", "decoding", "probe"]
    rows = []
    for key, group in available.groupby(keys, sort=False):
        row = dict(zip(keys, key, strict=True))
        row["inputs"] = str(int(group["n_inputs"].max()))
        for stat in group.itertuples(index=False):
            row[PRODUCTION_STATISTICS[stat.statistic]] = with_interval(stat.mean, stat.ci_low, stat.ci_high)
        row["paper: W1(C, H)"] = (NOT_TESTED if tested is not None and key[:3] not in tested else
                                  f"< {paper.GIULIANELLI_LEVELS['w1_decoding']}" if key[3] in paper.GIULIANELLI_PROBES
                                  else "–")
        rows.append(row)
    return pd.DataFrame(rows, columns=[*keys, "inputs", *PRODUCTION_STATISTICS.values(), "paper: W1(C, H)"])


ADEQUACY_STATISTICS = {
    "chrf": "chrF", "bleu": "BLEU", "sari": "SARI", "language_share": "in the task's language",
    "empty_share": "empty", "copy_share": "copies the input",
    "reference_language_share": "references in the task's language",
}


def production_adequacy(summary: pd.DataFrame) -> pd.DataFrame:
    """Per dataset, its copy baseline (``analysis.adequacy.COPY_BASELINE``) first, then each
    model and decoding: its task's language, its inputs and outputs, and the bootstrap mean over
    inputs of each adequacy statistic with its interval (schema ``production_adequacy_summary``),
    one column per statistic the summary has ("–" where a task does not score it: SARI outside
    simplification)."""
    from varprobe.analysis.adequacy import COPY_BASELINE

    keys = ["dataset", "model", "decoding"]
    shown = {s: label for s, label in ADEQUACY_STATISTICS.items() if s in set(summary["statistic"])}
    rows = []
    for _, by_dataset in summary.groupby("dataset", sort=False):
        ordered = pd.concat([by_dataset[by_dataset["model"] == COPY_BASELINE],
                             by_dataset[by_dataset["model"] != COPY_BASELINE]])
        for key, group in ordered.groupby(keys, sort=False):
            row = {**dict(zip(keys, key, strict=True)), "language": group["language"].iloc[0],
                   "inputs": str(int(group["n_inputs"].max())), "outputs": str(int(group["n_outputs"].max()))}
            for stat in group.itertuples(index=False):
                row[shown[stat.statistic]] = with_interval(stat.mean, stat.ci_low, stat.ci_high)
            rows.append(row)
    return pd.DataFrame(rows, columns=[*keys, "language", "inputs", "outputs", *shown.values()]).fillna("–")


def production_beats_copy(found: pd.DataFrame) -> pd.DataFrame:
    """Per system: the statistic it must beat copying the source on (chrF; SARI on
    simplification), its mean with its interval, the copy baseline's mean, and whether the
    interval's lower bound is above it (schema ``production_beats_copy``)."""
    return pd.DataFrame({
        "dataset": found["dataset"], "model": found["model"], "decoding": found["decoding"],
        "criterion": found["statistic"].map(ADEQUACY_STATISTICS),
        "mean [95% CI]": [with_interval(r.mean, r.ci_low, r.ci_high) for r in found.itertuples(index=False)],
        "copying the source": found["copy"].map(number),
        "beats copying": found["beats_copy"].map({True: "yes", False: "no"})})


def production_shown_probes(summary: pd.DataFrame) -> list[str]:
    """The probes whose rows the page's production table shows: the paper's main probes
    (``paper.GIULIANELLI_PROBES``) that the run has available, in that order (every available
    probe where it has none of them); the appendix's table shows every probe."""
    available = list(dict.fromkeys(summary.loc[summary["available"], "probe"]))
    return [p for p in paper.GIULIANELLI_PROBES if p in available] or available


def production_by_decoding(summary: pd.DataFrame, probes: list[str]) -> pd.DataFrame:
    """Giulianelli et al. 2023, Fig. 5 as a table: per dataset, the human control's mean W1,
    every model x decoding's mean W1(C, H) over inputs with their 95% intervals, one column per
    probe of ``probes`` (the figure's), and the level the paper states for most decodings
    (``paper.GIULIANELLI_LEVELS``); in each column of a dataset the lowest system's cell is in
    bold. The view of a summary too long to print whole (many decodings)."""
    part = summary[summary["available"] & summary["probe"].isin(probes)]
    rows = []
    for dataset, by_dataset in part.groupby("dataset", sort=False):
        w1 = by_dataset[by_dataset["statistic"] == "w1_C_H"]
        control = by_dataset[by_dataset["statistic"] == "w1_control"].drop_duplicates("probe")
        lowest = w1.loc[w1.groupby("probe")["mean"].idxmin()].set_index("probe")[["model", "decoding"]]
        systems = [("human control", None, control)] + [
            (f"{m} / {d}", (m, d), w1[(w1["model"] == m) & (w1["decoding"] == d)])
            for m, d in dict.fromkeys(zip(w1["model"], w1["decoding"], strict=True))]
        for name, key, values in systems:
            row = {"dataset": dataset, "system": name, "inputs": str(int(values["n_inputs"].max()))}
            for r in values.itertuples(index=False):
                cell = with_interval(r.mean, r.ci_low, r.ci_high)
                best = key is not None and tuple(lowest.loc[r.probe]) == key
                row[r.probe] = f"**{cell}**" if best else cell
            rows.append(row)
        rows.append({"dataset": dataset, "system": "paper: most decodings", "inputs": "",
                     **{p: f"< {paper.GIULIANELLI_LEVELS['w1_decoding']}" for p in set(w1["probe"])}})
    shown = [p for p in probes if p in set(part["probe"])]
    table = pd.DataFrame(rows, columns=["dataset", "system", "inputs", *shown]).fillna("–")
    table.columns = ["dataset", "system", "inputs", *map(text, shown)]
    table.attrs[MARKUP] = [text(p) for p in shown]  # numbers of ours, the lowest in bold
    return table


def production_signs(summary: pd.DataFrame) -> pd.DataFrame:
    """Giulianelli et al. 2023, Sec. 6.1 (Fig. 3) beside ours: per dataset, model and probe, the
    mean over inputs of mu_M(x) - mu_H(x) (ancestral draws) and its sign against the paper's."""
    part = summary[summary["available"] & (summary["statistic"] == "mean_M_minus_H")
                   & (summary["decoding"] == "ancestral")]
    rows = []
    for r in part.itertuples(index=False):
        sign, model, words = paper.GIULIANELLI_MEAN_DIFFERENCE_SIGN.get(r.dataset, ("–", "–", "–"))
        ours = "+" if r.mean > 0 else "-"
        rows.append({"dataset": r.dataset, "model": r.model, "probe": r.probe,
                     "mean M - H [95% CI]": with_interval(r.mean, r.ci_low, r.ci_high), "sign": ours,
                     "paper sign": sign, "paper model": model, "agrees": "yes" if ours == sign else "no"})
    return pd.DataFrame(rows, columns=["dataset", "model", "probe", "mean M - H [95% CI]", "sign",
                                       "paper sign", "paper model", "agrees"])


def finetune_comparison(summary: pd.DataFrame) -> pd.DataFrame:
    """App. F beside Table 1: per fine-tuned model and decoding, the expected TVD(·, H) of its base
    and of itself on the contexts both have words for, the mean paired difference d = TVD(fine-tuned,
    H) - TVD(base, H) with its 95% interval, the shares of contexts it is closer and farther, and
    the oracle control's TVD(O2, O1) there (schema ``finetune_comparison``); then the paper's GPT-2
    and fine-tuned GPT-2 values of Table 1 on one row (their d is the difference of the two printed
    values, not a paired mean)."""
    rows = [{"system": f"{r.model} / {r.decoding}", "base": r.base, "contexts": str(r.n_contexts),
             "E TVD(base, H)": r.expected_tvd_pretrained, "E TVD(fine-tuned, H)": r.expected_tvd_finetuned,
             "mean d [95% CI]": with_interval(r.mean_difference, r.difference_ci_low, r.difference_ci_high),
             "share closer": r.share_finetuned_closer, "share farther": r.share_finetuned_farther,
             "E TVD(O2, O1)": r.expected_tvd_oracle}
            for r in summary.itertuples(index=False)]
    base, tuned, oracle = (paper.TABLE_1[s][-1] for s in ("GPT2", "GPT2 fine-tuned", "Oracle2"))
    rows.append({"system": "paper: GPT2 fine-tuned", "base": "GPT2", "E TVD(base, H)": printed(base, 2),
                 "E TVD(fine-tuned, H)": printed(tuned, 2), "mean d [95% CI]": printed(tuned - base, 2),
                 "E TVD(O2, O1)": printed(oracle, 2)})
    return pd.DataFrame(rows, columns=list(rows[0]))


def finetune_losses(losses: pd.DataFrame) -> pd.DataFrame:
    """App. F (Fig. 18): per model, fold and split, the loss before training (epoch 0, validation
    only), after the first and after the last epoch."""
    rows = []
    for (model, fold, split), group in losses.groupby(["model", "fold", "split"], dropna=False, sort=True):
        by_epoch = group.set_index("epoch")["loss"]
        rows.append({"model": model, "fold": "–" if pd.isna(fold) else str(int(fold)), "split": split,
                     "epoch 0": by_epoch.get(0, math.nan), "epoch 1": by_epoch.get(1, math.nan),
                     "last epoch": by_epoch.iloc[-1], "epochs": str(int(by_epoch.index.max()))})
    return pd.DataFrame(rows)


def miscalibrated(table: pd.DataFrame, top: int = 3) -> pd.DataFrame:
    """Giulianelli et al. 2023, Sec. 7: the inputs whose W1 exceeds the paper's threshold the
    most, with their source and the first reference and model output (shortened)."""
    def short(text) -> str:
        text = " ".join(str(text).split())
        return text if len(text) <= 90 else text[:87] + "..."

    shown = table.sort_values("excess", ascending=False).groupby("statistic", sort=False).head(top)
    return pd.DataFrame({
        "dataset": shown["dataset"], "decoding": shown["decoding"],
        "statistic": shown["statistic"].map(lambda s: PRODUCTION_STATISTICS.get(s, s)),
        "input": shown["input_id"], "W1 above threshold": shown["excess"],
        "source": shown["source"].map(short),
        "a reference": shown["references"].map(lambda r: short(r[0]) if len(r) else "–"),
        "a model output": shown["samples"].map(lambda s: short(s[0]) if len(s) else "–"),
    })


def intervals(found: pd.DataFrame) -> dict:
    """Table 1's intervals (schema ``provo_intervals``) as ``table_one`` takes them:
    ``{(model, decoding): {quantity: (low, high)}}``, ``(mean, low, high)`` for the oracle's
    ``tvd_humans`` (the summary has no mean of it)."""
    out: dict = {}
    for r in found.itertuples(index=False):
        shown = (r.mean, r.ci_low, r.ci_high) if r.quantity == "tvd_humans" else (r.ci_low, r.ci_high)
        out.setdefault((r.model, r.decoding), {})[r.quantity] = shown
    return out


def production_example(instances: pd.DataFrame, samples: pd.DataFrame, n: int = 3) -> dict:
    """One input of a production task (its first): the source, ``n`` human references and ``n``
    model outputs, for reading what the distances compare."""
    first = instances.iloc[0]
    outputs = samples[samples["input_id"] == first["input_id"]].sort_values("sample_index")["text"]
    return {"input_id": first["input_id"], "source": first["source"],
            "references": list(first["references"])[:n], "outputs": list(outputs)[:n]}


def _entry(entries: list[dict], prefix: str) -> list[dict]:
    return [e for e in entries if e["name"].startswith(prefix)]


def table_of(entries: list[dict], prefix: str) -> pd.DataFrame | None:
    """The registered tables whose name starts with ``prefix``, as one frame (None without any)."""
    found = _entry(entries, prefix)
    return pd.concat([stored.read_frame(e["table"]) for e in found], ignore_index=True) if found else None


def span(low: float, high: float, show=number) -> str:
    """``low-high`` (``low to high`` where one is negative), or one value when they are equal as
    shown."""
    if show(low) == show(high):
        return show(low)
    return f"{show(low)} to {show(high)}" if min(low, high) < 0 else f"{show(low)}-{show(high)}"


def decoding_ranks(summary: pd.DataFrame) -> pd.DataFrame:
    """Per dataset, model and available probe of a run with several decodings: the decoding with
    the lowest mean W1(C, H) over inputs, ancestral sampling's mean and interval, and whether the
    lowest decoding's interval overlaps ancestral's (the order is then not resolved by the run's
    inputs). Empty when the run has fewer than three decodings or no ancestral one."""
    w1 = summary[summary["available"] & (summary["statistic"] == "w1_C_H")]
    if w1["decoding"].nunique() < 3 or "ancestral" not in set(w1["decoding"]):
        return pd.DataFrame()
    rows = []
    for (dataset, model, probe), cell in w1.groupby(["dataset", "model", "probe"], sort=False):
        best, ancestral = cell.loc[cell["mean"].idxmin()], cell[cell["decoding"] == "ancestral"]
        if ancestral.empty:
            continue
        a = ancestral.iloc[0]
        rows.append({"dataset": dataset, "model": model, "probe": probe, "lowest": best["decoding"],
                     "lowest W1(C, H)": best["mean"], "ancestral W1(C, H)": a["mean"],
                     "overlaps ancestral": best["ci_low"] <= a["ci_high"] and a["ci_low"] <= best["ci_high"]})
    return pd.DataFrame(rows)
