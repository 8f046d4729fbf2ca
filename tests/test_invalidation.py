"""What a changed config reruns: only invalidated jobs, never sampling for a metric setting.

One small study (tiny model, 2 shards) is run once with the local profile; every case then
edits one setting of that config and asks a dry run what would be scheduled.
"""

from __future__ import annotations

import re
import shutil

import pytest
import yaml
from test_workflow import scheduled, snakemake, write_config

SHARDS = 2
AGGREGATES = {"provo_summary": 1, "report_table_provo_summary": 1, "provo_figure_tvd": 1, "all": 1}
METRICS = {"provo_divergence": 1, "provo_oracle": 1, **AGGREGATES}
ONE_SYSTEM = {"provo_sample": SHARDS, "provo_merge": 1, "provo_divergence": 1,
              "provo_figure_bars": 1, **AGGREGATES}


@pytest.fixture(scope="module")
def study(tmp_path_factory, data_mirror, tiny_model_dir):
    """A finished run of the base study: its folder and its config."""
    workdir = tmp_path_factory.mktemp("invalidation")
    write_config(workdir, data_mirror, [{"name": "tiny", "pretrained": str(tiny_model_dir)}],
                 shards=SHARDS)
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
    "resplits": (_set("provo", "resplits", 5), METRICS),
    "ece_bins": (_set("provo", "ece_bins", 5), METRICS),
    "bootstrap_resamples": (_set("provo", "bootstrap_resamples", 50), METRICS),
    "figure_contexts": (_set("provo", "figure_contexts", ["1:6"]),
                        {"provo_figure_bars": 1, "all": 1}),
    "n_samples": (_set("provo", "n_samples", 4), ONE_SYSTEM),
    # Settings no rule's params use: how jobs run, never what they compute.
    "batch_size": (_set("provo", "batch_size", 7), {}),
    "resources": (_set("resources", "provo_sample", {"mem_mb": 9000, "runtime": 600}), {}),
    "cpu_fallback (CPU model)": (_set(None, "cpu_fallback", True), {}),
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
    """gpu=1 exactly for the shards of a `device: cuda` model; every other job asks for none.
    Memory and runtime come from config's `resources` (rule entry over `default`)."""
    tiny = {"name": "tiny", "pretrained": str(tiny_model_dir)}
    write_config(tmp_path, data_mirror, [tiny, {**tiny, "name": "big", "device": "cuda"}],
                 shards=SHARDS)
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
        ("provo_sample", f"model={m}, decoding=ancestral, shard={s}"): "1" if m == "big" else "0"
        for m in ("tiny", "big") for s in range(1, SHARDS + 1)
    }
    for (rule, _), resources in jobs.items():
        if rule != "all":
            assert resources["mem_mb"] == ("2100" if rule == "provo_sample" else "700")
            assert resources["runtime"] == "9"
