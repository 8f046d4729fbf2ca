"""The production study end to end on tiny random causal, T5 and Marian models."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from helpers import PROBES, job_logs, output, scheduled, snakemake, write_production_config
from varprobe import tables
from varprobe.analysis.adequacy import COPY_BASELINE

pytestmark = pytest.mark.slow  # Snakemake runs

@pytest.fixture(scope="module")
def production_run(tmp_path_factory, data_mirror, tiny_model_dir, tiny_seq2seq_dirs,
                   writingprompts_mirror):
    workdir = tmp_path_factory.mktemp("production")
    models = [
        {"name": "tiny-gpt2", "pretrained": str(tiny_model_dir)},
        {"name": "tiny-t5", "pretrained": str(tiny_seq2seq_dirs["t5"])},
        {"name": "tiny-marian", "pretrained": str(tiny_seq2seq_dirs["marian"])},
    ]
    datasets = [
        {"name": "wmt14", "prompt": "{source}", "models": ["tiny-marian"]},
        {"name": "asset", "prompt": "Simplify: {source}", "models": ["tiny-t5", "tiny-gpt2"]},
        {"name": "dailydialog", "prompt": "{source}\n", "models": ["tiny-gpt2"], "max_inputs": 1,
         "few_shot": 2, "few_shot_split": "test"},
        {"name": "writingprompts", "prompt": "{source}\n", "models": ["tiny-gpt2"],
         "min_stories": 4, "data_mirror": str(writingprompts_mirror)},
    ]
    write_production_config(workdir, data_mirror, models, datasets)
    run = snakemake(workdir)
    assert run.returncode == 0, run.stderr + job_logs(workdir)
    return workdir


def test_every_table_and_figure_is_written(production_run):
    out = production_run / "results" / "production"
    for name in ("human_variability", "mean_differences", "w1_densities", "mean_w1"):
        assert (out / "figures" / f"{name}.png").stat().st_size > 10_000
    summary = tables.read(out / "summary.parquet", "production_summary")
    systems = summary[["dataset", "model", "decoding"]].drop_duplicates()
    assert len(systems) == 5
    adequacy = tables.read(out / "adequacy.parquet", "production_adequacy_summary")
    copies = adequacy["model"] == COPY_BASELINE
    assert len(adequacy.loc[~copies, ["dataset", "model", "decoding"]].drop_duplicates()) == 5
    assert sorted(adequacy.loc[copies, "dataset"].unique()) == ["asset", "dailydialog", "wmt14", "writingprompts"]
    assert set(adequacy.loc[adequacy["statistic"] == "sari", "dataset"]) == {"asset"}
    beats = tables.read(out / "beats_copy.parquet", "production_beats_copy")
    assert len(beats) == 5 and set(beats.loc[beats["dataset"] == "asset", "statistic"]) == {"sari"}
    assert set(adequacy.groupby("dataset")["language"].first().items()) == {
        ("wmt14", "de"), ("asset", "en"), ("dailydialog", "en"), ("writingprompts", "en")}
    assert scheduled(production_run) == {}


def test_a_new_decoding_schedules_only_its_jobs_and_the_aggregates(production_run, data_mirror):
    config = yaml.safe_load((production_run / "config.yaml").read_text())
    config["production"]["decodings"].append({"name": "typical-0.2", "typical_p": 0.2})
    (production_run / "config.yaml").write_text(yaml.safe_dump(config))
    try:
        jobs = scheduled(production_run)
    finally:
        config["production"]["decodings"].pop()
        (production_run / "config.yaml").write_text(yaml.safe_dump(config))
    per_system = ("production_sample", "production_distances", "production_divergence",
                  "production_miscalibrated", "production_adequacy")
    assert jobs == {**dict.fromkeys(per_system, 5), "production_merge": 5, "production_summary": 1,
                    "report_table_production_summary": 1, "production_adequacy_summary": 1,
                    "report_table_production_adequacy": 1, "production_beats_copy": 1,
                    "report_table_production_beats_copy": 1,
                    "production_figures": 1, "production_reading": 3, "explorer": 1, "results_page": 1,
                    "run_record": 1, "all": 1}


def test_samples_pairs_and_divergences_have_the_configured_sizes(production_run):
    system = production_run / "results/production/asset/tiny-t5/top-k-30"
    samples = tables.read(system / "samples.parquet", "production_samples")
    assert len(samples) == 2 * 3
    meta = tables.read_metadata(system / "samples.parquet")
    assert meta["generation"]["top_k"] == 30 and meta["generation"]["max_new_tokens"] == 8
    assert meta["generation"]["temperature"] == 1.0 and meta["generation"]["top_p"] == 1.0
    assert meta["prompt"] == "Simplify: {source}" and meta["chat_template"] is False
    distances = tables.read(system / "distances.parquet", "production_distances")
    per_probe = distances.groupby(["input_id", "probe", "kind"]).size().unstack("kind")
    assert (per_probe["H"] == 45).all() and (per_probe["M"] == 3).all() and (per_probe["C"] == 30).all()
    assert set(distances["probe"]) == {"lexical-1", "lexical-2", "syntactic-1", "syntactic-2", "semantic"}
    divergences = tables.read(system / "divergences.parquet", "production_divergences")
    assert len(divergences) == 2 * 5 and divergences["w1_control"].notna().all()
    gpt2 = tables.read_metadata(production_run / "results/production/asset/tiny-gpt2/top-k-30/samples.parquet")
    assert gpt2["prompt"] == "Simplify: {source}" and gpt2["chat_template"] is False


def test_a_few_shot_dataset_prompts_with_examples_of_its_other_split(production_run):
    system = production_run / "results/production/dailydialog/tiny-gpt2/top-k-30"
    meta = tables.read_metadata(system / "samples.parquet")
    examples = tables.read(production_run / "results/production/dailydialog/examples.parquet",
                           "production_instances")
    assert meta["few_shot"]["k"] == 2 and meta["few_shot"]["split"] == "test"
    assert set(meta["few_shot"]["input_ids"]) <= set(examples["input_id"]) and len(examples) > 2
    assert meta["prompt"].endswith("\n\n{source}\n") and meta["few_shot"]["template"] == "{source}\n"
    asset = tables.read_metadata(production_run / "results/production/asset/tiny-t5/top-k-30/samples.parquet")
    assert "few_shot" not in asset


def test_control_is_identical_across_systems_of_a_dataset(production_run):
    base = production_run / "results/production/asset"
    one = tables.read(base / "tiny-t5/top-k-30/divergences.parquet", "production_divergences")
    two = tables.read(base / "tiny-gpt2/top-k-30/divergences.parquet", "production_divergences")
    assert np.allclose(one["w1_control"], two["w1_control"])
    assert np.allclose(one["mean_H"], two["mean_H"])


def test_german_probes_without_resources_are_reported_unavailable(production_run):
    summary = tables.read(production_run / "results/production/summary.parquet", "production_summary")
    wmt = summary[(summary["dataset"] == "wmt14") & (summary["statistic"] == "w1_C_H")]
    wmt = wmt.set_index("probe")
    assert not wmt.loc["syntactic-2", "available"] and not wmt.loc["semantic", "available"]
    assert np.isnan(wmt.loc["syntactic-2", "mean"]) and np.isnan(wmt.loc["semantic", "mean"])
    assert wmt.loc["lexical-1", "available"] and np.isfinite(wmt.loc["lexical-1", "mean"])
    distances = tables.read(production_run / "results/production/wmt14/tiny-marian/top-k-30/distances.parquet",
                            "production_distances")
    assert set(distances["probe"]) == {"lexical-1", "lexical-2"}


def test_miscalibrated_inputs_carry_their_outputs(production_run):
    path = production_run / "results/production/dailydialog/tiny-gpt2/top-k-30/miscalibrated.parquet"
    table = tables.read(path, "production_miscalibrated")
    assert len(table) == 1
    row = table.iloc[0]
    assert len(row["references"]) == 5 and len(row["samples"]) == 3
    assert set(json.loads(row["values"])) == {"lexical-1", "semantic"}
    assert row["model"] == "tiny-gpt2" and row["dataset"] == "dailydialog"


def test_writingprompts_is_read_from_its_own_mirror(production_run):
    instances = tables.read(production_run / "results/production/writingprompts/instances.parquet",
                            "production_instances")
    assert instances["input_id"].tolist() == ["0"] and len(instances.loc[0, "references"]) == 4
    samples = tables.read(production_run / "results/production/writingprompts/tiny-gpt2/top-k-30/samples.parquet",
                          "production_samples")
    assert len(samples) == 3


def test_a_language_without_a_truncation_tokenizer_fails_at_parse_time(tmp_path, data_mirror,
                                                                       tiny_model_dir):
    """German has no sentence encoder here, so nothing counts its tokens: the dry run stops,
    naming the key that fixes it; probing whole texts (max_response_tokens: null) runs. (Its
    only dataset computes no semantic probe, so a semantic threshold would be refused first.)"""
    models = [{"name": "tiny-gpt2", "pretrained": str(tiny_model_dir)}]
    datasets = [{"name": "wmt14", "prompt": "{source}"}]
    no_tokenizer = {**PROBES, "truncation_tokenizers": {}}
    lexical = {"thresholds": {"lexical-1": 0.0}, "limit": 1}
    write_production_config(tmp_path, data_mirror, models, datasets, probes=no_tokenizer,
                            miscalibration=lexical)
    run = snakemake(tmp_path, "-n")
    assert run.returncode != 0 and "production.probes.truncation_tokenizers.de" in output(run)
    write_production_config(tmp_path, data_mirror, models, datasets, miscalibration=lexical,
                            probes={**no_tokenizer, "max_response_tokens": None})
    assert scheduled(tmp_path)["production_distances"] == 1


def test_a_production_only_study_with_a_fine_tuned_model_parses(tmp_path, data_mirror, tiny_model_dir):
    """Without a `provo:` section, a model fine-tuned on a production dataset is scheduled (its
    rules once read Provo's settings at parse time)."""
    tiny = {"name": "tiny-gpt2", "pretrained": str(tiny_model_dir)}
    tuned = {"name": "tiny-asset", "finetune": {"base": "tiny-gpt2", "dataset": "asset", "split": "test"}}
    write_production_config(tmp_path, data_mirror, [tiny, tuned], [{"name": "asset", "prompt": "{source}"}])
    jobs = scheduled(tmp_path)
    assert jobs["finetune_production"] == 1 and jobs["production_sample"] == 2
