"""A production job that is cut off resumes with the inputs it had not finished, and its table is
the one an uninterrupted run writes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

from varprobe import cli, resume, tables

# The first source is long enough that its prompt alone sets the job's cache capacity (over 64
# tokens): a resumed job without it must still size its cache for it to keep the bits.
SOURCES = ["The committee, which had met every week since the spring, " * 6,
           "It rained.", "A man walked his dog in the park.", "Prices rose again in May.",
           "She wrote to him twice.", "The train was late."]


@pytest.fixture
def instances(tmp_path):
    path = tmp_path / "instances.parquet"
    frame = pd.DataFrame({"dataset": "toy", "split": "test", "input_id": [f"i{k}" for k in range(len(SOURCES))],
                          "source": SOURCES, "references": [["a reference"]] * len(SOURCES)})
    tables.write(frame, path, "production_instances")
    return path


def _arguments(model_dir, instances, out, max_new_tokens=6) -> list[str]:
    return ["production-sample", "--model", json.dumps({"name": "tiny", "pretrained": str(model_dir)}),
            "--decoding", '{"name": "ancestral"}', "--instances", str(instances),
            "--prompt", "Simplify: {source}", "--no-chat", "--n-samples", "3",
            "--max-new-tokens", str(max_new_tokens), "--seed", "0", "--batch-size", "4", "--gpus", "0",
            "--out", str(out)]


def _produce(model_dir, instances, out):
    cli.main(_arguments(model_dir, instances, out))
    return tables.read(out, "production_samples")


def test_a_resumed_job_takes_the_finished_inputs_from_its_partial_table_and_draws_the_rest(
        tmp_path, instances, tiny_model_dir, capsys):
    whole = _produce(tiny_model_dir, instances, tmp_path / "whole.parquet")
    out = tmp_path / "resumed.parquet"
    # What a run cut off after two inputs left, marked so that a redraw would show.
    finished = whole[whole["input_id"].isin(["i0", "i1"])].assign(text="left by the cut-off run")
    resume.keep(finished, out, "production_samples", tables.read_metadata(tmp_path / "whole.parquet"))
    capsys.readouterr()
    got = _produce(tiny_model_dir, instances, out)
    assert "resuming: 2 of 6 inputs" in capsys.readouterr().err
    assert (got["text"] == "left by the cut-off run").sum() == 6
    rest = got["input_id"].isin(["i0", "i1"])
    assert got[~rest].reset_index(drop=True).equals(whole[~rest].reset_index(drop=True))
    assert got["input_id"].tolist() == whole["input_id"].tolist()
    assert tables.read_metadata(out) == tables.read_metadata(tmp_path / "whole.parquet")
    assert not resume.partial_path(out).exists()


@pytest.mark.parametrize("partial", ["other settings", "corrupt"])
def test_a_partial_table_that_is_not_this_jobs_is_named_and_ignored(tmp_path, instances, tiny_model_dir,
                                                                    capsys, partial):
    whole = _produce(tiny_model_dir, instances, tmp_path / "whole.parquet")
    out = tmp_path / "resumed.parquet"
    path = resume.partial_path(out)
    if partial == "corrupt":
        path.write_bytes(b"PAR1 cut off mid-write")
    else:
        settings = {**tables.read_metadata(tmp_path / "whole.parquet"), "seed": 1}
        resume.keep(whole.assign(text="another seed"), out, "production_samples", settings)
    capsys.readouterr()
    got = _produce(tiny_model_dir, instances, out)
    err = capsys.readouterr().err
    assert f"resume: ignoring {path}" in err and "resuming" not in err
    assert got.equals(whole)
    assert not path.exists()


@pytest.mark.slow
def test_a_job_killed_midway_resumes_and_writes_the_uninterrupted_table(tmp_path, data_mirror, tiny_model_dir):
    """A real cut: the job is killed (SIGKILL) once it has finished some of 60 ASSET inputs, and
    run again; it draws only the rest, and its table equals an uninterrupted run's to the bit."""
    from varprobe.data.asset import read_asset

    path = tmp_path / "instances.parquet"
    tables.write(read_asset(data_mirror / "asset", "valid").head(60), path, "production_instances")
    out = tmp_path / "killed.parquet"
    arguments = _arguments(tiny_model_dir, path, out, max_new_tokens=40)
    command = [sys.executable, "-c", "import sys; from varprobe import cli; sys.exit(cli.main(sys.argv[1:]))"]
    environment = {**os.environ, "OMP_NUM_THREADS": "1"}
    job = subprocess.Popen([*command, *arguments], stderr=subprocess.DEVNULL, env=environment)
    partial = resume.partial_path(out)
    while job.poll() is None and not partial.exists():
        time.sleep(0.02)
    job.send_signal(signal.SIGKILL)
    job.wait()
    assert not out.exists(), "the job ended before it could be cut off"
    left = tables.read(partial, "production_samples")["input_id"].nunique()
    assert 0 < left < 60
    run = subprocess.run([*command, *arguments], capture_output=True, text=True, env=environment)
    assert run.returncode == 0, run.stderr
    assert f"resuming: {left} of 60 inputs" in run.stderr
    whole = tmp_path / "whole.parquet"
    cli.main([*arguments[:-1], str(whole)])
    assert tables.read(out, "production_samples").equals(tables.read(whole, "production_samples"))
    assert not partial.exists()
