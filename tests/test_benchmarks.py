"""The benchmark scripts stay runnable: each runs end to end on a tiny input and prints its
summary line (their timings are read by people, never asserted)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from varprobe.resume import RESUMING

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
NORMS = "provo_cloze/Provo_Corpus-Predictability_Norms.csv"


@pytest.fixture(autouse=True)
def record_file(tmp_path, monkeypatch):
    """Each run's record line goes to a temporary file, never into the committed record."""
    path = tmp_path / "records.jsonl"
    monkeypatch.setenv("VARPROBE_BENCHMARK_RECORD", str(path))
    return path


def run(script: str, *args: str) -> str:
    """stdout of ``benchmarks/script`` run with ``args``; fails the test on a non-zero exit.
    One torch thread, as in the test process (tests/conftest.py): tiny inputs, busy cores."""
    done = subprocess.run([sys.executable, script, *args], cwd=BENCHMARKS, capture_output=True,
                          text=True, timeout=600, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_sampler_speed_runs(tiny_model_dir, data_mirror, tmp_path, record_file):
    out = run("sampler_speed.py", "--pretrained", str(tiny_model_dir), "--norms", str(data_mirror / NORMS),
              "--max-contexts", "2", "--n-samples", "5", "--out", str(tmp_path / "speed"))
    assert "speedup (words/s, sampler vs reference):" in out
    assert "ceiling (the sampler's forward passes alone, nothing outside them):" in out
    assert "sampler, unpacked weights (as before varprobe.models.packing):" in out
    frame = pd.read_csv(tmp_path / "speed.csv")
    assert list(frame["method"]) == ["reference", "sampler", "sampler, unpacked weights"]
    # The run appended its line to the record: this machine, the options and the printed speedup.
    [line] = [json.loads(text) for text in record_file.read_text().splitlines()]
    assert line["benchmark"] == "sampler_speed" and line["machine"]["cores"] == os.cpu_count()
    assert line["options"]["max_contexts"] == "2"
    assert f"speedup (words/s, sampler vs reference): {line['figures']['speedup']:.2f}x" in out


def test_scoring_speed_runs(tiny_model_dir, data_mirror, tmp_path):
    out = run("scoring_speed.py", "--pretrained", str(tiny_model_dir), "--norms", str(data_mirror / NORMS),
              "--max-contexts", "4", "--threads", "1", "--out", str(tmp_path / "scoring"))
    assert out.splitlines()[-1].startswith("speedup (support words, chains vs per context):")
    frame = pd.read_csv(tmp_path / "scoring.csv").set_index(["stage", "method"])
    # A passage's contexts share one encoding: fewer positions run, the same numbers.
    for stage in ("next-token", "words"):
        assert frame.loc[(stage, "chains"), "forward_tokens"] < frame.loc[(stage, "per context"), "forward_tokens"]
        assert frame.loc[(stage, "per context"), "max_abs_difference"] < 1e-4
    # The normaliser as it was: the same passes, the same log-probabilities to float64 rounding.
    before = frame.loc[("words", "chains, two logsumexp")]
    assert before["forward_tokens"] == frame.loc[("words", "chains"), "forward_tokens"]
    assert before["max_abs_difference"] < 1e-9
    assert "speedup (support words, one exp block vs two logsumexp):" in out


def test_exact_vs_sampling_runs(tiny_model_dir, data_mirror, tmp_path):
    out = run("exact_vs_sampling.py", "--pretrained", str(tiny_model_dir), "--norms",
              str(data_mirror / NORMS), "--contexts", "2", "--n-samples", "20",
              "--reference-samples", "40", "--max-forward-tokens", "300",
              "--out", str(tmp_path / "exact"))
    assert "forward tokens, enumeration / 20 independent draws:" in out
    assert "as run (forward hook): enumeration" in out
    frame = pd.read_csv(tmp_path / "exact.csv")
    assert len(frame) == 2 and (frame["enum_forward_tokens"] <= 300).all()
    assert (frame["independent_forward_tokens"] < frame["generate_forward_tokens"]).all()


@pytest.mark.slow
def test_probe_speed_runs(data_mirror):
    out = run("probe_speed.py", "--max-inputs", "3", "--mirror", str(data_mirror))
    # 3 inputs x 7 probes x (45 H + 45 M + 100 C) pairs.
    assert "inputs: 3 " in out and "distances: 3990" in out and "total wall" in out


def test_generation_speed_runs(tiny_model_dir, data_mirror, tmp_path, record_file):
    out = run("generation_speed.py", "--pretrained", str(tiny_model_dir), "--mirror", str(data_mirror),
              "--datasets", "asset", "wmt14", "--inputs", "2", "--samples", "3", "--max-new-tokens", "6",
              "--batch-size", "16", "--no-chat", "--top-p", "0.9", "--bfloat16", "--variants",
              "--out", str(tmp_path / "generation"))
    assert "same distribution" in out
    assert "ceiling at one position per returned token:" in out and "CPU vector capability:" in out
    assert "speedup (tokens/s, engine vs generate per input):" in out.splitlines()[-1]
    frame = pd.read_csv(tmp_path / "generation.csv")
    assert list(frame["method"]) == ["generate per input", "engine", "engine, unpacked weights",
                                     "engine, every column", "engine, nucleus by sorting", "engine bfloat16"]
    assert "engine over every column: the same productions as over its spans" in out
    assert re.search(r"nucleus: engine \d+\.\d\dx the engine with each nucleus found by sorting; "
                     r"the same productions: \d+ of 12\n", out)            # 4 inputs x 3 samples
    assert "positions per returned token" in out and "of the ceiling's rows/s" in out
    # The ceiling runs exactly --batch-size rows (not 18: 6 inputs x 3 samples, in 32-row passes),
    # every row through all --max-new-tokens steps but the first (drawn from the prompt), timed
    # three times (first, between the engine's runs, last) over --ceiling-repeats (3) runs each.
    assert "full-width passes (16 rows): 720 positions" in out
    assert "engine time (both timed runs): prefill" in out and "sampling" in out
    assert (frame["share_of_ceiling"] > 0).all() and (frame["positions_per_token"] >= 1).all()
    # The engine encodes each prompt once; generate encodes it once per sample.
    assert frame.loc[1, "forward_positions"] < frame.loc[0, "forward_positions"]
    # The record is committed: paths inside the checkout (the default configs) are relative to it,
    # so another clone writes the same line; a path elsewhere stays as given.
    [line] = [json.loads(text) for text in record_file.read_text().splitlines()]
    assert line["options"]["top_p"] == "0.9" and line["figures"]["sorted_nucleus_ratio"] > 0
    assert line["options"]["config"] == "config.yaml"
    assert line["options"]["paper_config"] == "configs/paper-scale.yaml"
    assert line["options"]["out"] == str(tmp_path / "generation")


def test_production_floor_runs(tiny_model_dir, data_mirror, tmp_path, record_file):
    shard = tmp_path / "results" / "production" / "asset" / "m" / "ancestral" / "shards" / "1.parquet"
    shard.parent.mkdir(parents=True)
    pd.DataFrame({"input_id": ["a", "a"], "sample_index": [0, 1], "text": ["a short answer", "another"]}).to_parquet(shard)
    out = run("production_floor.py", "--run", str(tmp_path / "results"), "--pretrained", str(tiny_model_dir),
              "--mirror", str(data_mirror), "--repeats", "1", "--batch-size", "16", "--max-new-tokens", "4", "--no-chat")
    assert "2 one-thread processes side by side, 16-row passes:" in out
    figures = json.loads(record_file.read_text().splitlines()[-1])["figures"]
    # The one shard finished, scaled to the paper config's 8 shards x 2 decodings.
    assert "asset: 1 shards finished" in out and figures["asset_task_tokens"] % 16 == 0
    assert figures["asset_floor_min"] == round(figures["asset_task_tokens"] / figures["rows_per_s"] / 60, 1)


def _generation_job(results: Path, dataset: str, shard: int, cpu_s: float, texts: list[str]) -> None:
    """One finished generation job of a run: its benchmark row and its shard's productions."""
    bench = results / "benchmarks" / "production_sample" / dataset / "m" / "ancestral" / f"{shard}.tsv"
    bench.parent.mkdir(parents=True, exist_ok=True)
    bench.write_text("s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
                     f"{cpu_s + 1}\t0:00:01\t1\t1\t1\t1\t0\t0\t99\t{cpu_s}\n")
    shard_file = results / "production" / dataset / "m" / "ancestral" / "shards" / f"{shard}.parquet"
    shard_file.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"input_id": ["a"] * len(texts), "sample_index": range(len(texts)), "text": texts}).to_parquet(shard_file)


def test_production_tasks_runs(tmp_path, record_file):
    before, after = tmp_path / "before", tmp_path / "after"
    _generation_job(before, "asset", 0, 120.0, ["x", "y"])
    _generation_job(before, "asset", 3, 240.0, ["z"])
    _generation_job(before, "wmt14", 0, 90.0, ["u"])
    _generation_job(after, "asset", 0, 60.0, ["x", "y"])
    _generation_job(after, "asset", 3, 120.0, ["z"])
    _generation_job(after, "asset", 5, 150.0, ["w"])      # after only: in the task, not compared
    _generation_job(after, "wmt14", 0, 60.0, ["v"])
    (after / "benchmarks" / "production_sample" / "asset" / "m" / "ancestral" / "7.tsv").write_text(
        "s\tcpu_time\n9\t9\n")                         # no shard beside it: not finished
    _generation_job(after, "asset", 6, 10.0, ["r"])       # resumed: the rest of its work only
    log = after / "logs" / "production_sample" / "asset" / "m" / "ancestral" / "6.log"
    log.parent.mkdir(parents=True)
    log.write_text(f"Loading weights\n{RESUMING} 9 of 10 inputs were finished by a run that was cut off\n")
    (log.parent / "5.log").write_text("Loading weights\n")
    out = run("production_tasks.py", "--run", str(after), "--before", str(before))
    figures = json.loads(record_file.read_text().splitlines()[-1])["figures"]
    # A task is the paper config's 8 shards x 2 decodings, on 2 cores: mean CPU s x 16 / 2.
    assert "asset: 3 of 16 jobs, CPU 330 s, wall 333 s; task 14.7 min on 2 cores" in out
    assert figures["asset_task_min"] == round(330 / 3 * 16 / 2 / 60, 1)
    # Only the jobs both runs finished are compared: (120 + 240) / (60 + 120).
    assert figures["asset_speedup"] == 2.0 and figures["asset_before_task_min"] == round(180 * 16 / 2 / 60, 1)
    assert figures["asset_same_productions"] == "yes" and figures["wmt14_same_productions"] == "no"
    assert figures["wmt14_speedup"] == 1.5
    stray = after / "benchmarks" / "production_sample" / "asset" / "m" / "7.tsv"
    stray.write_text("s\tcpu_time\n9\t9\n")
    done = subprocess.run([sys.executable, "production_tasks.py", "--run", str(after)], cwd=BENCHMARKS,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode != 0 and f"{stray}: not a generation job's benchmark file" in done.stderr


def test_enumeration_rounds_runs(tiny_model_dir, data_mirror, tmp_path):
    out = run("enumeration_rounds.py", "--pretrained", str(tiny_model_dir), "--norms", str(data_mirror / NORMS),
              "--max-contexts", "4", "--max-forward-tokens", "40", "--wide", "128", "--narrow", "32",
              "--out", str(tmp_path / "rounds"))
    assert out.splitlines()[-1].startswith("speedup (narrow vs wide rounds):")
    frame = pd.read_csv(tmp_path / "rounds.csv").set_index("rows_per_round")
    # The round size changes what is computed ahead, never an enumeration.
    assert frame["same_enumerations"].all() and frame.loc[32, "search_tokens"] == frame.loc[128, "search_tokens"]
    assert frame.loc[32, "positions_run"] <= frame.loc[128, "positions_run"]
