"""What a changed config reruns: only invalidated jobs, never sampling for a metric setting.

One small study (tiny model, 2 shards) is run once with the local profile; every case then
edits one setting of that config and asks a dry run what would be scheduled.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest
import yaml
from helpers import scheduled, snakemake, write_config

from varprobe import tables

pytestmark = pytest.mark.slow  # Snakemake runs

SHARDS = 2
PAGE = {"results_page": 1, "run_record": 1, "all": 1}
"""A config edit rerenders the page, whose settings are the validated config's, and so rewrites the run record."""
AGGREGATES = {"provo_summary": 1, "report_table_provo_summary": 1, "provo_figure_tvd": 1,
              "provo_intervals": 1, "explorer": 1, **PAGE}
METRICS = {"provo_divergence": 1, "provo_oracle": 1, "provo_oracle_measure": 2, **AGGREGATES}
AUTHORS = {"provo_authors": 1}  # the authors' protocol table: the splits and bins, no bootstrap
ONE_SYSTEM = {"provo_sample": SHARDS, "provo_merge": 1, "provo_divergence": 1,
              "provo_figure_bars": 1, "provo_failures": 1, **AGGREGATES}


@pytest.fixture(scope="module")
def study(tmp_path_factory, data_mirror, tiny_model_dir):
    """A finished run of the base study: its folder and its config."""
    workdir = tmp_path_factory.mktemp("invalidation")
    write_config(workdir, data_mirror, [{"name": "tiny", "pretrained": str(tiny_model_dir)}],
                 shards=SHARDS, texts=[1, 2])
    run = snakemake(workdir)
    assert run.returncode == 0, run.stderr
    return workdir, yaml.safe_load((workdir / "config.yaml").read_text())


def edited(study, edit) -> dict[str, int]:
    """The jobs a dry run schedules after ``edit(config)``; the base config is restored."""
    workdir, base = study
    config = yaml.safe_load(yaml.safe_dump(base))
    edit(config)
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    try:
        return scheduled(workdir)
    finally:
        (workdir / "config.yaml").write_text(yaml.safe_dump(base))


def _set(section, key, value):
    def edit(config):
        (config.setdefault(section, {}) if section else config)[key] = value
    return edit


def _add_model(config):
    config["models"].append({**config["models"][0], "name": "tiny2"})


def _add_decoding(config):
    config["provo"]["decodings"].append({"name": "cold", "temperature": 0.5})


CASES = {
    "unchanged": (lambda config: None, {}),
    "a model added": (_add_model, ONE_SYSTEM),
    "a decoding added": (_add_decoding, ONE_SYSTEM),
    "resplits": (_set("provo", "resplits", 5), {**METRICS, **AUTHORS}),
    "ece_bins": (_set("provo", "ece_bins", 5), {**METRICS, **AUTHORS}),
    "bootstrap_resamples": (_set("provo", "bootstrap_resamples", 50), METRICS),
    "figure_contexts": (_set("provo", "figure_contexts", ["1:6"]), {"provo_figure_bars": 1, **PAGE}),
    "n_samples": (_set("provo", "n_samples", 4), ONE_SYSTEM),
    # Settings no computing rule's params use: how jobs run, never what they compute; the page
    # (seconds: it reads tables) shows the config it was rendered with.
    "batch_size": (_set("provo", "batch_size", 7), PAGE),
    "resources": (_set("resources", "provo_sample", {"mem_mb": 9000, "runtime": 600}), PAGE),
    "cpu_fallback (CPU model)": (_set(None, "cpu_fallback", True), PAGE),
}


@pytest.mark.parametrize("case", CASES)
def test_a_config_edit_schedules_exactly_the_invalidated_jobs(study, case):
    edit, expected = CASES[case]
    assert edited(study, edit) == expected


def test_a_failed_shard_reruns_alone(study, tmp_path):
    """After shard 2 failed (so its merge and everything downstream never ran), the rerun
    schedules that shard alone, not shard 1, then the merge and downstream."""
    workdir = tmp_path / "copy"
    shutil.copytree(study[0], workdir)
    provo = workdir / "results/provo"
    system = provo / "tiny/ancestral"
    keep = system / "shards/1.parquet"
    for path in [*system.rglob("*.parquet"), *system.glob("*.png"), provo / "summary.parquet",
                 *(provo / "figures").iterdir()]:
        if path != keep:
            path.unlink()
    assert scheduled(workdir) == {**ONE_SYSTEM, "provo_sample": 1}


def test_only_sampling_jobs_of_cuda_models_request_a_gpu(tmp_path, data_mirror, tiny_model_dir):
    """gpu=1 exactly for the shards of a `device: cuda` model, its `gpus` for a model spread by
    a device map; every other job asks for none.
    Memory and runtime come from config's `resources` (rule entry over `default`)."""
    tiny = {"name": "tiny", "pretrained": str(tiny_model_dir)}
    huge = {**tiny, "name": "huge", "device": "cuda", "dtype": "bfloat16", "device_map": "auto", "gpus": 4}
    write_config(tmp_path, data_mirror, [tiny, {**tiny, "name": "big", "device": "cuda"}, huge],
                 shards=SHARDS, texts=[1, 2])
    config = yaml.safe_load((tmp_path / "config.yaml").read_text())
    config["resources"] = {"default": {"mem_mb": 700, "runtime": 9, "cpus_per_task": 1},
                           "provo_sample": {"mem_mb": 2100}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    run = snakemake(tmp_path, "-n")
    assert run.returncode == 0, run.stderr
    jobs = {}
    for block in run.stdout.split("\nrule ")[1:] + run.stdout.split("\nlocalrule ")[1:]:
        rule = block.split(":", 1)[0]
        wildcards = re.search(r"wildcards: (.*)", block)
        resources = dict(kv.split("=", 1) for kv in
                         re.search(r"resources: (.*)", block).group(1).split(", "))
        jobs[(rule, wildcards.group(1) if wildcards else "")] = resources
    gpu = {job: r.get("gpu") for job, r in jobs.items() if "gpu" in r}
    assert gpu == {
        ("provo_sample", f"model={m}, decoding=ancestral, shard={s}"): n
        for m, n in (("tiny", "0"), ("big", "1"), ("huge", "4")) for s in range(1, SHARDS + 1)
    }
    for (rule, _), resources in jobs.items():
        if rule != "all":
            assert resources["mem_mb"] == ("2100" if rule == "provo_sample" else "700")
            assert resources["runtime"] == "9"


FT_SETTINGS = {"train_passages": {"first": 1, "last": 4}, "validation_passages": {"first": 41, "last": 41},
               "epochs": 1, "warmup_steps": 0}
FT_SYSTEM = {"finetune_provo": 2, "provo_sample": 2, "provo_merge": 1, "provo_divergence": 1,
             "provo_figure_bars": 1, "finetune_figure": 1, "finetune_comparison": 1,
             "report_table_finetune_losses_tiny-ft": 1, "report_table_finetune_comparison_tiny-ft": 1,
             "provo_failures": 1, **AGGREGATES}


@pytest.fixture(scope="module")
def finetuned_study(tmp_path_factory, data_mirror, tiny_model_dir):
    """A finished run of the tiny model and a fine-tuned copy (Provo protocol, one passage per
    fold, passages 1 and 2 held out by folds 1 and 2)."""
    workdir = tmp_path_factory.mktemp("finetuned")
    tiny = {"name": "tiny", "pretrained": str(tiny_model_dir)}
    tuned = {"name": "tiny-ft", "finetune": {"base": "tiny", "dataset": "provo", **FT_SETTINGS}}
    write_config(workdir, data_mirror, [tiny, tuned], texts=[1, 2])
    run = snakemake(workdir)
    assert run.returncode == 0, run.stderr
    return workdir, yaml.safe_load((workdir / "config.yaml").read_text())


def _tune(key, value):
    def edit(config):
        config["models"][1]["finetune"][key] = value
    return edit


FT_CASES = {
    "unchanged": (lambda config: None, {}),
    "a training setting": (_tune("epochs", 2), FT_SYSTEM),
    "a default spelled out": (_tune("learning_rate", 5e-4), {}),
    "the base model's draws": (_set("provo", "n_samples", 4),
                               {"provo_sample": 3, "provo_merge": 2, "provo_divergence": 2,
                                "provo_figure_bars": 2, "finetune_comparison": 1, "provo_failures": 1,
                                "report_table_finetune_comparison_tiny-ft": 1, **AGGREGATES}),
}


@pytest.mark.parametrize("case", FT_CASES)
def test_a_fine_tuning_edit_reruns_the_fine_tuned_model_and_what_depends_on_it(finetuned_study, case):
    """Checkpoints are outputs: a training setting reruns both folds' training, their sampling
    and everything downstream of the fine-tuned model, never the base model's jobs."""
    edit, expected = FT_CASES[case]
    assert edited(finetuned_study, edit) == expected


def test_the_fine_tuned_model_samples_each_held_out_passage_with_its_own_fold(finetuned_study):
    results = finetuned_study[0] / "results"
    samples = tables.read(results / "provo/tiny-ft/ancestral/samples.parquet", "provo_samples")
    contexts = tables.read(results / "provo/contexts.parquet", "provo_contexts")
    assert samples.groupby(["text_id", "word_number"]).ngroups == len(contexts)
    metadata = tables.read_metadata(results / "provo/tiny-ft/ancestral/samples.parquet")
    assert metadata["texts"] == [[1], [2]]
    assert metadata["checkpoints"] == [f"results/finetune/tiny-ft/fold{k}/checkpoint" for k in (1, 2)]
    for fold, held_out in ((1, 1), (2, 2)):
        manifest = json.loads((results / f"finetune/tiny-ft/fold{fold}/checkpoint/manifest.json").read_text())
        assert held_out not in manifest["data"]["train_passages"]
        assert sorted(manifest["data"]["train_passages"]) == [p for p in (1, 2, 3, 4) if p != held_out]
