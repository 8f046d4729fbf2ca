"""A production system's adequacy on its task: per input, per system, and through the CLI."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from varprobe import tables
from varprobe.analysis.adequacy import STATISTICS, identify_languages, input_adequacy, summarise
from varprobe.cli import main

REFERENCE = "Das Haus ist klein und sehr alt."


def _instances() -> pd.DataFrame:
    return pd.DataFrame({"dataset": "wmt14", "split": "test", "input_id": ["a", "b", "c"],
                         "source": ["The house is small and very old.", "Good morning.", "unused"],
                         "references": [[REFERENCE, "Das Haus ist klein und alt."],
                                        ["Guten Morgen."], ["x"]]})


def _samples() -> pd.DataFrame:
    # input a: the reference, a copy of the source and an empty output; b: one German output;
    # c: no output (an input of another shard), so no row
    return pd.DataFrame({"input_id": ["a", "a", "a", "b"], "sample_index": [0, 1, 2, 0],
                         "text": [REFERENCE, "the house is small and very old.", " ", "Guten Morgen."]})


def test_identify_languages_names_german_and_english_and_none_for_empty():
    assert identify_languages(["Das Haus ist klein und sehr alt.", "The house is small and very old.",
                               "  "]) == ["de", "en", None]


def test_input_adequacy_by_hand():
    table = input_adequacy(_instances(), _samples(), "de").set_index("input_id")
    assert list(table.index) == ["a", "b"]
    a, b = table.loc["a"], table.loc["b"]
    assert a["n_outputs"] == 3 and b["n_outputs"] == 1
    assert a["empty_share"] == pytest.approx(1 / 3) and a["copy_share"] == pytest.approx(1 / 3)
    assert a["language_share"] == pytest.approx(1 / 3)          # German, English, empty
    # one exact output (100) and two that share little with the references
    assert 100 / 3 <= a["chrf"] < 50 and 100 / 3 <= a["bleu"] < 50
    assert b["chrf"] == pytest.approx(100.0) and b["bleu"] == pytest.approx(100.0)
    assert b["language_share"] == 1.0 and b["empty_share"] == b["copy_share"] == 0.0
    assert a["reference_language_share"] == b["reference_language_share"] == 1.0


def test_input_adequacy_names_samples_of_unknown_inputs():
    samples = pd.concat([_samples(), pd.DataFrame({"input_id": ["zz"], "sample_index": [0], "text": ["t"]})])
    with pytest.raises(ValueError, match=r"\['zz'\]"):
        input_adequacy(_instances(), samples, "de")


def test_summary_means_over_inputs_with_intervals_around_them():
    per_input = input_adequacy(_instances(), _samples(), "de")
    summary = summarise(per_input, seed=0, n_resamples=200).set_index("statistic")
    assert list(summary.index) == list(STATISTICS)
    assert (summary["n_inputs"] == 2).all() and (summary["n_outputs"] == 4).all()
    assert summary.loc["language_share", "mean"] == pytest.approx((1 / 3 + 1) / 2)
    assert (summary["ci_low"] <= summary["mean"]).all() and (summary["mean"] <= summary["ci_high"]).all()
    empty = summarise(per_input.iloc[:0], seed=0, n_resamples=10)
    assert empty["mean"].isna().all() and (empty["n_inputs"] == 0).all()


def test_adequacy_subcommands_write_the_declared_tables(tmp_path):
    instances, samples = tmp_path / "instances.parquet", tmp_path / "samples.parquet"
    tables.write(_instances(), instances, "production_instances")
    tables.write(_samples(), samples, "production_samples", {"prompt": "Translate: {source}"})
    paths = []
    for model in ("m1", "m2"):
        out = tmp_path / "wmt14" / model / "ancestral" / "adequacy.parquet"
        out.parent.mkdir(parents=True)
        main(["production-adequacy", "--instances", str(instances), "--samples", str(samples),
              "--language", "de", "--out", str(out)])
        paths.append(str(out))
    meta = tables.read_metadata(paths[0])
    assert meta["language"] == "de" and meta["prompt"] == "Translate: {source}"
    summary_path = tmp_path / "adequacy.parquet"
    main(["production-adequacy-summary", "--adequacy", *paths, "--seed", "0", "--bootstrap", "50",
          "--out", str(summary_path)])
    summary = tables.read(summary_path, "production_adequacy_summary")
    assert set(summary["model"]) == {"m1", "m2"} and set(summary["dataset"]) == {"wmt14"}
    assert (summary["language"] == "de").all() and len(summary) == 2 * len(STATISTICS)
    chrf = summary[summary["statistic"] == "chrf"]["mean"].to_numpy()
    assert np.allclose(chrf, chrf[0])


def test_the_results_page_shows_one_row_per_system_beside_the_production_tables(tmp_path):
    from varprobe.results_page import page

    rows = [{"dataset": "wmt14", "model": m, "decoding": "ancestral", "language": "de",
             "statistic": s, "n_inputs": 10, "n_outputs": 50, "mean": v, "ci_low": v - 1, "ci_high": v + 1}
            for m in ("m1", "m2") for s, v in zip(STATISTICS, (40.0, 12.0, 0.25, 0.0, 0.5, 0.9), strict=True)]
    path = tmp_path / "adequacy.parquet"
    tables.write(pd.DataFrame(rows), path, "production_adequacy_summary")
    assert "production_adequacy" in page.SECTIONS["production"].entries
    [block] = page._blocks([{"name": "production_adequacy", "table": str(path), "title": "Adequacy"}])
    lines = block["body"].splitlines()
    assert len(lines) == 2 + 2                           # header, rule, one row per system
    assert "chrF" in lines[0] and "in the task's language" in lines[0]
    assert "40.000 [39.000, 41.000]" in lines[2] and "| de " in lines[2]
