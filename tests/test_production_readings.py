"""varprobe.analysis.production_readings and its subcommands: Giulianelli et al. 2023 read per
task, the sign of mean M - H on the main probes, W1(M, H) against the footnotes' thresholds, and
each task's miscalibrated inputs under the paper's own statistic and rule (Sec. 7, fns. 12-15)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from varprobe import tables
from varprobe.analysis.production_readings import (
    PAPER_SELECTION, mean_difference_signs, model_human_w1, paper_miscalibrated)
from varprobe.cli import main

PROBES = ("lexical-1", "lexical-2", "syntactic-2", "semantic")


def _divergences(values: dict[str, dict[str, tuple[float, float]]]) -> pd.DataFrame:
    """A ``production_divergences`` table: ``values[input_id][probe] = (w1_M_H, w1_C_H)``."""
    rows = [{"input_id": i, "probe": p, "n_H": 1, "n_M": 1, "n_C": 1, "mean_H": 0.1, "mean_M": 0.1,
             "mean_C": 0.1, "mean_M_minus_H": 0.0, "mean_C_minus_H": 0.0, "w1_M_H": m, "w1_C_H": c,
             "w1_control": 0.05}
            for i, by_probe in values.items() for p, (m, c) in by_probe.items()]
    return tables.conform(pd.DataFrame(rows), "production_divergences")


def _summary(rows: list[tuple]) -> pd.DataFrame:
    """A ``production_summary`` table of (dataset, decoding, probe, available, statistic, mean)."""
    return pd.DataFrame([{"dataset": d, "model": "m", "decoding": dec, "probe": p, "available": a,
                          "statistic": s, "n_inputs": 3, "mean": v, "ci_low": v - 0.01, "ci_high": v + 0.01}
                         for d, dec, p, a, s, v in rows])


def test_the_signs_are_the_named_decodings_on_the_main_probes_in_the_papers_order():
    summary = _summary([(d, dec, p, not (d == "wmt14" and p == "semantic"), s, v)
                        for d, v in (("wmt14", 0.2), ("dailydialog", -0.1))
                        for dec in ("ancestral", "top-k-30") for p in reversed(PROBES)
                        for s in ("mean_M_minus_H", "w1_C_H")])
    summary.loc[(summary["decoding"] == "top-k-30") & (summary["statistic"] == "mean_M_minus_H"), "mean"] *= -1
    found = mean_difference_signs(summary, "ancestral")
    assert list(zip(found["dataset"], found["probe"], found["sign"], strict=True)) == [
        ("wmt14", "lexical-1", "+"), ("wmt14", "syntactic-2", "+"),
        ("dailydialog", "lexical-1", "-"), ("dailydialog", "syntactic-2", "-"), ("dailydialog", "semantic", "-")]
    assert set(found["decoding"]) == {"ancestral"} and set(mean_difference_signs(summary, "top-k-30")["sign"]) == {"-", "+"}
    tables.conform(found, "production_signs")


def test_model_human_w1_is_read_on_translation_and_simplification_against_their_footnotes():
    """Translation: every main probe against fn. 12's thresholds; simplification: POS bigrams
    against 0.2 (fn. 13); dialogue's rule reads W1(C, H), so it has no row."""
    values = {"a": {p: (0.25, 0.9) for p in PROBES}, "b": {p: (0.35, 0.0) for p in PROBES},
              "c": {p: (0.2, 0.9) for p in PROBES}}
    summary = _summary([(d, "ancestral", p, True, "w1_M_H", 0.27) for d in ("wmt14", "asset", "dailydialog")
                        for p in PROBES])
    systems = [(d, "m", "ancestral", _divergences(values)) for d in ("wmt14", "asset", "dailydialog")]
    found = model_human_w1(summary, systems)
    assert list(zip(found["dataset"], found["probe"], found["threshold"], found["n_above"], found["footnote"],
                    strict=True)) == [
        ("wmt14", "lexical-1", 0.3, 1, "12"), ("wmt14", "syntactic-2", 0.2, 2, "12"),
        ("wmt14", "semantic", 0.2, 2, "12"), ("asset", "syntactic-2", 0.2, 2, "13")]
    assert (found["mean"] == 0.27).all() and (found["n_inputs"] == 3).all()
    tables.conform(found, "production_model_human_w1")


def test_each_task_selects_by_its_own_statistic_and_rule():
    """Input ``x`` is high on W1(M, H) everywhere and low on W1(C, H); ``y`` the opposite; ``z``
    exceeds on syntactic-2 alone. Translation and simplification select by W1(M, H) (all three
    probes, then POS bigrams alone), dialogue by W1(C, H) on all three."""
    values = {"x": {p: (0.5, 0.1) for p in PROBES}, "y": {p: (0.1, 0.6) for p in PROBES},
              "z": {"lexical-1": (0.1, 0.1), "lexical-2": (0.1, 0.1), "syntactic-2": (0.9, 0.1),
                    "semantic": (0.1, 0.1)}}
    systems = [(d, "m", "ancestral", _divergences(values)) for d in ("wmt14", "asset", "dailydialog", "mytask")]
    found = paper_miscalibrated(systems, {}).set_index("dataset")
    assert list(found.index) == ["wmt14", "asset", "dailydialog"]  # no paper rule for a task of one's own
    assert found.loc["wmt14", "statistic"] == "W1(M, H)" and found.loc["dailydialog", "statistic"] == "W1(C, H)"
    assert found.loc["wmt14", "rule"] == ("W1(M, H) > 0.3 on lexical-1 and W1(M, H) > 0.2 on syntactic-2 and "
                                          "W1(M, H) > 0.2 on semantic")
    assert found.loc["wmt14", "n_selected"] == 1 and found.loc["wmt14", "top_input"] == "x"
    assert found.loc["asset", "n_selected"] == 2 and found.loc["asset", "top_input"] == "z"
    assert np.isclose(found.loc["asset", "top_excess"], 0.7)
    assert found.loc["dailydialog", "n_selected"] == 1 and found.loc["dailydialog", "top_input"] == "y"
    assert np.isclose(found.loc["dailydialog", "top_excess"], 0.4)
    assert (found["n_inputs"] == 3).all() and (found["footnote"] == ["12", "13", "14"]).all()


def test_a_probe_the_run_could_not_compute_is_left_out_of_the_rule_and_named():
    """German outputs without a tagger or encoder: translation's rule reads unigrams alone; an
    input without a defined distance on a rule's probe is not read."""
    values = {"x": {"lexical-1": (0.5, 0.0)}, "y": {"lexical-1": (0.2, 0.0)}, "w": {"lexical-1": (np.nan, 0.0)}}
    found = paper_miscalibrated([("wmt14", "m", "ancestral", _divergences(values))],
                                {"wmt14": ["syntactic-2", "semantic"]})
    row = found.iloc[0]
    assert row["missing_probes"] == "syntactic-2, semantic" and row["n_inputs"] == 2 and row["n_selected"] == 1
    assert row["top_input"] == "x" and np.isclose(row["top_excess"], 0.2)
    assert PAPER_SELECTION["writingprompts"].text() == "W1(C, H) > 0.3 on semantic"


def test_the_subcommands_write_the_declared_tables(tmp_path):
    values = {"x": {p: (0.5, 0.1) for p in PROBES}}
    paths = []
    for dataset in ("wmt14", "asset"):
        path = tmp_path / f"production/{dataset}/m/ancestral/divergences.parquet"
        path.parent.mkdir(parents=True)
        tables.write(_divergences(values), path, "production_divergences",
                     {"unavailable": {"semantic": "no encoder"}} if dataset == "wmt14" else {})
        paths.append(str(path))
    summary = tmp_path / "production/summary.parquet"
    tables.write(_summary([(d, "ancestral", p, not (d == "wmt14" and p == "semantic"), s, 0.3)
                           for d in ("wmt14", "asset") for p in PROBES for s in ("mean_M_minus_H", "w1_M_H")]),
                 summary, "production_summary")
    out = {}
    for reading, schema in (("signs", "production_signs"), ("model-human-w1", "production_model_human_w1"),
                            ("paper-miscalibrated", "production_paper_miscalibrated")):
        out[schema] = tmp_path / f"{reading}.parquet"
        main([f"production-{reading}", "--summary", str(summary), "--divergences", *paths,
              "--decoding", "ancestral", "--out", str(out[schema])])
    assert len(tables.read(out["production_signs"], "production_signs")) == 5
    assert list(tables.read(out["production_model_human_w1"], "production_model_human_w1")["probe"]) == [
        "lexical-1", "syntactic-2", "syntactic-2"]
    found = tables.read(out["production_paper_miscalibrated"], "production_paper_miscalibrated")
    assert list(found["missing_probes"]) == ["semantic", ""] and list(found["n_selected"]) == [1, 1]
