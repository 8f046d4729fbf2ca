"""The production section's readings per task as Giulianelli et al. 2023 read them, rendered from
the run's reading tables (``varprobe.analysis.production_readings``, rule ``production_reading``):
the sign of mean M - H on the paper's main probes beside the paper's, W1(M, H) against the
thresholds of the paper's footnotes, and every task's miscalibrated inputs under its own rule."""

from __future__ import annotations

import pandas as pd

from varprobe import tables
from varprobe.results_page import paper
from varprobe.results_page.markup import Markup, text
from varprobe.results_page.tables import NOT_TESTED, markdown, number, with_interval


def signs(found: pd.DataFrame, tested: set | None = None) -> pd.DataFrame:
    """Per task, model, decoding and main probe: our mean M - H with its interval and sign, the
    paper's sign for the task, its model, and whether the two agree (``production_signs``);
    ``NOT_TESTED`` for a system not in ``tested`` (the (dataset, model, decoding) that beat
    copying the source; None: every system)."""
    rows = []
    for r in found.itertuples(index=False):
        theirs, model, _ = paper.GIULIANELLI_MEAN_DIFFERENCE_SIGN.get(r.dataset, ("–", "–", ""))
        agrees = ("–" if theirs == "–" else NOT_TESTED if tested is not None and (r.dataset, r.model, r.decoding)
                  not in tested else "yes" if r.sign == theirs else "no")
        rows.append({"dataset": r.dataset, "model": r.model, "decoding": r.decoding, "probe": r.probe,
                     "inputs": str(r.n_inputs), "mean M - H [95% CI]": with_interval(r.mean, r.ci_low, r.ci_high),
                     "sign": r.sign, "paper sign": theirs, "paper model": model, "agrees": agrees})
    return pd.DataFrame(rows)


def model_human_w1(found: pd.DataFrame) -> pd.DataFrame:
    """Per task whose paper rule reads W1(M, H), model, decoding and probe: the mean W1(M, H) with
    its interval, the footnote's threshold and the inputs above it (``production_model_human_w1``)."""
    return pd.DataFrame({
        "dataset": found["dataset"], "model": found["model"], "decoding": found["decoding"],
        "probe": found["probe"], "inputs": found["n_inputs"].astype(str),
        "mean W1(M, H) [95% CI]": [with_interval(r.mean, r.ci_low, r.ci_high) for r in found.itertuples(index=False)],
        "paper's threshold": found["threshold"].map(lambda t: f"> {t:g}"),
        "inputs above it": found["n_above"].astype(str),
        "paper footnote": found["footnote"]})


def paper_miscalibrated(found: pd.DataFrame) -> pd.DataFrame:
    """Per system of a task the paper has a rule for: the rule's statistic and rule, the probes
    it lacks, the inputs read and selected, and the most miscalibrated input with its mean excess
    over the thresholds (``production_paper_miscalibrated``)."""
    return pd.DataFrame({
        "dataset": found["dataset"], "model": found["model"], "decoding": found["decoding"],
        "the paper's rule": found["rule"], "paper footnote": found["footnote"],
        "probes not computed": found["missing_probes"].replace("", "–"),
        "inputs": found["n_inputs"].astype(str), "selected": found["n_selected"].astype(str),
        "most miscalibrated input": found["top_input"].replace("", "–"),
        "its excess": found["top_excess"].map(number)})


def _rules(found: pd.DataFrame) -> str:
    """Each task's rule once, as a sentence (its numbers are the table's rule column)."""
    rules = found.drop_duplicates("dataset")
    return "; ".join(f"{text(r.dataset)}: {text(r.rule)} (fn. {text(r.footnote)})"
                     for r in rules.itertuples(index=False))


SIGNS_NOTE = Markup("The paper reads mu_M(x) - mu_H(x) of its generators' unbiased samples on its three main probes, "
              "unigram, POS-bigram and semantic distance (Sec. 6.1, Fig. 3): ours are `lexical-1`, `syntactic-2` and "
              "`semantic`, of the decoding each row names (`production.figures.decoding`, the one Fig. 3 draws). A "
              "probe the run could not compute for a task's output language has no row.")
W1_NOTE = ("The paper shows W1(M, H) as figures only (App. D, Figs. 9-11) and prints no mean of it: it reads the "
           "per-input W1(M, H), self-variability against human variability, to select the translation and "
           "simplification inputs it discusses, above the threshold of each row (its footnotes 12 and 13). Each "
           "row: the mean over inputs with its interval, and how many inputs are above the threshold.")


def _signs_block(found: pd.DataFrame, tested: set | None = None) -> dict:
    decodings = ", ".join(dict.fromkeys(found["decoding"]))
    return {"title": f"The sign of mean M - H per task on the paper's main probes ({decodings} outputs)",
            "body": markdown(signs(found, tested)), "note": SIGNS_NOTE}


def _model_human_w1_block(found: pd.DataFrame) -> dict:
    return {"title": "W1(M, H) where the paper reads it: translation and simplification (Sec. 7)",
            "body": markdown(model_human_w1(found)), "note": W1_NOTE}


def _miscalibrated_block(found: pd.DataFrame) -> dict:
    return {"title": "The miscalibrated inputs of every task under the paper's rule for it (Sec. 7)",
            "body": markdown(paper_miscalibrated(found)),
            "note": Markup("Selection rule: an input is selected when the paper's statistic for its task is above the "
                     f"rule's threshold on every probe of the rule, per task: {_rules(found)}. A probe the run "
                     "could not compute for the task's output language is left out of its rule (\"probes not "
                     "computed\"), which then selects more loosely than the paper's; \"inputs\" counts the inputs "
                     "the rule could read, \"its excess\" is the mean amount by which the most miscalibrated input "
                     "exceeds the thresholds.")}


BLOCKS = {"production_signs": _signs_block, "production_model_human_w1": _model_human_w1_block,
          "production_paper_miscalibrated": _miscalibrated_block}
"""Each reading table (by schema name) and the page block made of its rows, in page order."""


def blocks(measured: dict, tested: set | None = None) -> list[dict]:
    """The readings' page blocks, each a table with its caption, for those of the run's reading
    tables (``measured``: by schema name) that hold rows; none for a run without them. The signs
    are read against the paper's only for the systems ``tested`` (those that beat copying the
    source; None: every system)."""
    out = []
    for schema, block in BLOCKS.items():
        found = tables.read(measured[schema], schema) if measured.get(schema) else None
        if found is not None and len(found):
            out.append({"prefix": schema, **(block(found, tested) if schema == "production_signs" else block(found))})
    return out
