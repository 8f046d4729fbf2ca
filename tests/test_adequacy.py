"""A production system's adequacy on its task: per input, per system, against copying the source,
and through the CLI."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import yaml

from helpers import output, snakemake
from varprobe import tables
from varprobe.analysis.adequacy import (
    COPY_BASELINE,
    STATISTICS,
    beats_copy,
    copy_samples,
    identify_languages,
    input_adequacy,
    summarise,
)
from varprobe.cli import main
from varprobe.metrics.adequacy import mean_sari, sari, sari_tokens

SCORED = [s for s in STATISTICS if s != "sari"]
"""The statistics of a task that is not simplification."""

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
    assert table["sari"].isna().all()                           # translation: no SARI


def test_input_adequacy_names_samples_of_unknown_inputs():
    samples = pd.concat([_samples(), pd.DataFrame({"input_id": ["zz"], "sample_index": [0], "text": ["t"]})])
    with pytest.raises(ValueError, match=r"\['zz'\]"):
        input_adequacy(_instances(), samples, "de")


def test_summary_means_over_inputs_with_intervals_around_them():
    per_input = input_adequacy(_instances(), _samples(), "de")
    summary = summarise(per_input, seed=0, n_resamples=200).set_index("statistic")
    assert list(summary.index) == SCORED                         # no SARI row outside simplification
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
    assert (summary["language"] == "de").all() and len(summary) == 2 * len(SCORED)
    chrf = summary[summary["statistic"] == "chrf"]["mean"].to_numpy()
    assert np.allclose(chrf, chrf[0])


def test_the_results_page_shows_one_row_per_system_beside_the_production_tables(tmp_path):
    from varprobe.results_page import page, sections

    rows = [{"dataset": "wmt14", "model": m, "decoding": "ancestral", "language": "de",
             "statistic": s, "n_inputs": 10, "n_outputs": 50, "mean": v, "ci_low": v - 1, "ci_high": v + 1}
            for m in ("m1", "m2") for s, v in zip(SCORED, (40.0, 12.0, 0.25, 0.0, 0.5, 0.9), strict=True)]
    path = tmp_path / "adequacy.parquet"
    tables.write(pd.DataFrame(rows), path, "production_adequacy_summary")
    assert "production_adequacy" in sections.STUDY_SECTIONS["production"].entries
    [block] = page._blocks([{"name": "production_adequacy", "table": str(path), "title": "Adequacy"}])
    lines = block["body"].splitlines()
    assert len(lines) == 2 + 2                           # header, rule, one row per system
    assert "chrF" in lines[0] and "in the task's language" in lines[0]
    assert "40.000 [39.000, 41.000]" in lines[2] and "| de " in lines[2]


# SARI: Xu et al. 2016's example (Sec. 4.1, Table 2), as HF evaluate and tensor2tensor test it.
XU_SOURCE = "About 95 species are currently accepted ."
XU_REFERENCES = ["About 95 species are currently known .", "About 95 species are now accepted .",
                 "95 species are now accepted ."]


@pytest.mark.parametrize(("output", "published"), [
    ("About 95 you now get in .", 26.953601953601954),        # evaluate's metric card
    ("About 95 species are now agreed .", 61.70966),          # tensor2tensor sari_hook_test, case 2
    ("About 95 species are currently agreed .", 50.88682),    # case 3
])
def test_sari_reproduces_the_published_values(output, published):
    assert sari(output, XU_SOURCE, XU_REFERENCES) == pytest.approx(published, abs=1e-5)


def test_sari_of_a_perfect_match_is_100_as_evaluate_documents():
    assert sari(XU_SOURCE, XU_SOURCE, [XU_SOURCE]) == pytest.approx(100.0)
    rewritten = "About 95 species are known ."
    assert sari(rewritten, XU_SOURCE, [rewritten]) == pytest.approx(100.0)


def test_sari_reads_texts_lowercased_and_13a_tokenised():
    assert sari_tokens("About 95 species, (currently) ACCEPTED.") == [
        "about", "95", "species", ",", "(", "currently", ")", "accepted", "."]
    assert sari("about 95 YOU now get in.", "About 95 species are currently accepted.",
                [r.replace(" .", ".") for r in XU_REFERENCES]) == pytest.approx(26.953601953601954)


def test_copying_the_source_scores_below_every_simplification_of_the_example():
    copy = sari(XU_SOURCE, XU_SOURCE, XU_REFERENCES)
    # deletes and adds nothing where the references do: keep F1 alone, a third of the score
    assert copy == pytest.approx(21.873217526575058)
    assert copy < min(sari(y, XU_SOURCE, XU_REFERENCES) for y in (
        "About 95 you now get in .", "About 95 species are now agreed .",
        "About 95 species are currently agreed ."))


def test_on_an_asset_like_sentence_a_simplification_beats_copying_by_far():
    source = ("The municipality, which is located in the northern part of the province, has a "
              "population of approximately 12,000 inhabitants.")
    references = ["The town is in the north of the province. About 12,000 people live there.",
                  "The municipality is in the northern part of the province and has about 12,000 people.",
                  "About 12,000 people live in this town in the north of the province.",
                  "The municipality, located in the northern part of the province, has about 12,000 inhabitants."]
    simplified = "The municipality is in the north of the province and has about 12,000 people."
    copy = mean_sari([source], source, references)
    assert copy < 20 < 50 < mean_sari([simplified], source, references)
    # a mean over outputs: half copies score half way
    assert mean_sari([source, simplified], source, references) == pytest.approx(
        (copy + mean_sari([simplified], source, references)) / 2)


def test_sari_of_an_empty_output_is_its_deletion_credit_alone():
    # deleting every source n-gram: deletion precision is the share the references delete too
    score = sari("", XU_SOURCE, XU_REFERENCES)
    assert 0 < score < 100 / 3


def test_sari_names_bad_references():
    with pytest.raises(ValueError, match="references is empty"):
        sari("a", "b", [])
    with pytest.raises(ValueError, match="one string"):
        mean_sari(["a"], "b", "c")


def _asset_instances() -> pd.DataFrame:
    return pd.DataFrame({"dataset": "asset", "split": "valid", "input_id": ["0", "1"],
                         "source": [XU_SOURCE, "The cat , which was old , sat on the mat ."],
                         "references": [XU_REFERENCES, ["The old cat sat on the mat ."]]})


def test_sari_is_scored_on_a_simplification_task_only():
    instances = _asset_instances()
    samples = pd.DataFrame({"input_id": ["0", "0", "1"], "sample_index": [0, 1, 0],
                            "text": ["About 95 you now get in .", "About 95 species are now agreed .",
                                     "The old cat sat on the mat ."]})
    table = input_adequacy(instances, samples, "en", simplification=True,
                           identify=lambda texts: ["en"] * len(texts)).set_index("input_id")
    assert table.loc["0", "sari"] == pytest.approx((26.953601953601954 + 61.70966) / 2, abs=1e-5)
    assert table.loc["1", "sari"] == pytest.approx(100.0)
    assert list(summarise(table.reset_index(), 0, 20)["statistic"]) == [*SCORED, "sari"]
    plain = input_adequacy(instances, samples, "en", identify=lambda texts: ["en"] * len(texts))
    assert plain["sari"].isna().all() and "sari" not in set(summarise(plain, 0, 20)["statistic"])


def test_adding_sari_keeps_the_other_statistics_bootstrap_seeds():
    per_input = input_adequacy(_instances(), _samples(), "de")
    with_sari = per_input.assign(sari=[10.0, 20.0])
    kept = summarise(per_input, 0, 50).set_index("statistic")
    both = summarise(with_sari, 0, 50).set_index("statistic")
    assert kept.equals(both.loc[SCORED])


def test_the_copy_baseline_outputs_each_source_once():
    instances = _instances()
    samples = copy_samples(instances)
    assert list(samples["input_id"]) == ["a", "b", "c"] and (samples["sample_index"] == 0).all()
    assert list(samples["text"]) == list(instances["source"])
    table = input_adequacy(instances, samples, "de")
    assert (table["copy_share"] == 1.0).all() and (table["n_outputs"] == 1).all()
    assert (table["language_share"] == 0.0).all()              # English sources of a German task


def _summary_rows(dataset, model, decoding, values):
    return [{"dataset": dataset, "model": model, "decoding": decoding, "language": "en",
             "statistic": s, "n_inputs": 10, "n_outputs": 50, "mean": mean, "ci_low": low, "ci_high": high}
            for s, (mean, low, high) in values.items()]


def _beats_summary() -> pd.DataFrame:
    rows = [
        *_summary_rows("wmt14", COPY_BASELINE, "", {"chrf": (30.0, 28.0, 32.0)}),
        *_summary_rows("wmt14", "good", "ancestral", {"chrf": (40.0, 31.0, 49.0)}),
        # its mean above the copy's, its interval not
        *_summary_rows("wmt14", "close", "ancestral", {"chrf": (31.0, 29.0, 33.0)}),
        *_summary_rows("wmt14", "none", "ancestral", {"chrf": (math.nan,) * 3}),
        # simplification: chrF rewards copying; SARI decides
        *_summary_rows("asset", COPY_BASELINE, "", {"chrf": (90.0, 89.0, 91.0), "sari": (20.0, 19.0, 21.0)}),
        *_summary_rows("asset", "good", "ancestral", {"chrf": (60.0, 58.0, 62.0), "sari": (35.0, 33.0, 37.0)}),
    ]
    return pd.DataFrame(rows)


def test_a_system_beats_copying_when_its_whole_interval_is_above_the_copy():
    table = beats_copy(_beats_summary()).set_index(["dataset", "model"])
    assert table["beats_copy"].to_dict() == {("wmt14", "good"): True, ("wmt14", "close"): False,
                                             ("wmt14", "none"): False, ("asset", "good"): True}
    assert table.loc[("wmt14", "good"), "statistic"] == "chrf" and table.loc[("wmt14", "good"), "copy"] == 30.0
    assert table.loc[("asset", "good"), "statistic"] == "sari" and table.loc[("asset", "good"), "copy"] == 20.0
    tables.conform(table.reset_index(), "production_beats_copy")


def test_beats_copy_names_a_dataset_without_its_copy_baseline():
    summary = _beats_summary()
    with pytest.raises(ValueError, match="dataset 'asset'.*'sari'"):
        beats_copy(summary[~((summary["dataset"] == "asset") & (summary["model"] == COPY_BASELINE))])


def test_the_copy_baseline_reaches_the_summary_and_the_beats_copy_table(tmp_path):
    instances = tmp_path / "instances.parquet"
    tables.write(_instances(), instances, "production_instances")
    samples = tmp_path / "samples.parquet"
    tables.write(_samples(), samples, "production_samples", {"prompt": "Translate: {source}"})
    copy = tmp_path / "wmt14" / "copy_source" / "adequacy.parquet"
    system = tmp_path / "wmt14" / "m1" / "ancestral" / "adequacy.parquet"
    for out, outputs in ((copy, ["--copy-source"]), (system, ["--samples", str(samples)])):
        out.parent.mkdir(parents=True)
        main(["production-adequacy", "--instances", str(instances), *outputs, "--language", "de",
              "--out", str(out)])
    assert tables.read_metadata(copy)["copy_source"] is True
    summary_path, beats_path = tmp_path / "adequacy.parquet", tmp_path / "beats_copy.parquet"
    main(["production-adequacy-summary", "--adequacy", str(system), "--copy-adequacy", str(copy),
          "--seed", "0", "--bootstrap", "50", "--out", str(summary_path)])
    summary = tables.read(summary_path, "production_adequacy_summary")
    baseline = summary[summary["model"] == COPY_BASELINE].set_index("statistic")
    assert set(baseline["dataset"]) == {"wmt14"} and set(baseline["decoding"]) == {""}
    assert baseline.loc["copy_share", "mean"] == 1.0 and baseline.loc["copy_share", "n_outputs"] == 3
    main(["production-beats-copy", "--summary", str(summary_path), "--out", str(beats_path)])
    [row] = tables.read(beats_path, "production_beats_copy").itertuples(index=False)
    assert (row.model, row.statistic) == ("m1", "chrf")
    assert row.copy == baseline.loc["chrf", "mean"] and row.beats_copy == (row.ci_low > row.copy)


def test_a_copy_table_off_its_folder_is_named(tmp_path, capsys):
    elsewhere = tmp_path / "wmt14" / "adequacy.parquet"
    with pytest.raises(SystemExit):
        main(["production-adequacy-summary", "--adequacy", str(elsewhere), "--copy-adequacy",
              str(elsewhere), "--seed", "0", "--bootstrap", "5", "--out", str(tmp_path / "s.parquet")])
    assert "copy_source" in capsys.readouterr().err


def test_the_results_page_shows_the_copy_baseline_above_each_tasks_systems_and_who_beats_it(tmp_path):
    from varprobe.results_page import page, sections

    summary = _beats_summary()
    path, beats = tmp_path / "adequacy.parquet", tmp_path / "beats_copy.parquet"
    tables.write(summary, path, "production_adequacy_summary")
    tables.write(beats_copy(summary), beats, "production_beats_copy")
    assert "production_beats_copy" in sections.STUDY_SECTIONS["production"].entries
    adequacy, beaten = page._blocks([
        {"name": "production_adequacy", "table": str(path), "title": "Adequacy"},
        {"name": "production_beats_copy", "table": str(beats), "title": "Beats copying"}])
    lines = adequacy["body"].splitlines()
    assert "SARI" in lines[0]
    rows = [line.split("|")[2].strip() for line in lines[2:]]
    assert rows == [COPY_BASELINE, "good", "close", "none", COPY_BASELINE, "good"]
    wmt14_copy = lines[2]
    assert "30.000 [28.000, 32.000]" in wmt14_copy and "–" in wmt14_copy   # no SARI on wmt14
    body = beaten["body"]
    assert "beats copying" in body.splitlines()[0]
    good = [line for line in body.splitlines()[2:] if "| good" in line]
    assert len(good) == 2 and all("| yes" in line for line in good)
    assert "SARI" in next(line for line in good if "asset" in line)


def test_the_workflow_scores_sari_on_simplification_tasks_and_copies_every_dataset(tmp_path):
    """``simplification`` comes from the dataset's record (ASSET) or its entry (your own task),
    and every production dataset has a copy baseline in the summary."""
    task = tmp_path / "mine.jsonl"
    task.write_text(json.dumps({"id": "a", "source": "The old cat sat.", "references": ["A cat sat."]}) + "\n")
    config = {
        "models": [{"name": "m", "pretrained": "example/model"}],  # a hub id: not reached by a dry run
        "production": {"datasets": [
            {"name": "asset", "prompt": "{source}"}, {"name": "dailydialog", "prompt": "{source}"},
            {"name": "mine", "file": str(task), "language": "en", "prompt": "{source}", "simplification": True},
        ], "decodings": [{"name": "ancestral"}]},
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    run = snakemake(tmp_path, "-n", "-p", "results/production/beats_copy.parquet")
    assert run.returncode == 0, output(run)
    commands = [line for line in run.stdout.splitlines() if "varprobe production-adequacy " in line]
    simplified = {d: f"results/production/{d}/" in " ".join(c for c in commands if "--simplification" in c)
                  for d in ("asset", "dailydialog", "mine")}
    assert simplified == {"asset": True, "dailydialog": False, "mine": True}
    assert sum("--copy-source" in c for c in commands) == 3
    [summary] = [line for line in run.stdout.splitlines() if "production-adequacy-summary" in line]
    assert all(f"results/production/{d}/copy_source/adequacy.parquet" in summary
               for d in ("asset", "dailydialog", "mine"))
