"""``scripts/background.sh``: the main job detached with its log, refused while it runs, and a run
cut off as a machine that goes away cuts it (every process killed, the lock left behind) goes on
with only its unfinished jobs when started again."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
from helpers import REPO, write_config

pytestmark = pytest.mark.slow  # Snakemake runs of the tiny model

SHARDS = 4
SYSTEM = "results/provo/tiny/ancestral"


def background(workdir: Path, *args: str, nice: int = 0) -> subprocess.CompletedProcess:
    return subprocess.run(["nice", "-n", str(nice), "bash", str(REPO / "scripts/background.sh"), *args],
                          cwd=workdir, capture_output=True, text=True, timeout=120)


def wait_for(condition, what: str, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"waited {timeout} s for {what}")
        time.sleep(0.2)


def done_shards(log: str) -> set[str]:
    """The sampling shards that a Snakemake log records as finished."""
    shard_of = {jobid: shard for shard, jobid in
                re.findall(r"output: \S+/shards/(\d+)\.parquet\n(?:.*\n)*?\s+jobid: (\d+)", log)}
    return {shard_of[j] for j in re.findall(r"Finished jobid: (\d+) \(Rule: provo_sample\)", log)}


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_background_run_cut_off_goes_on_with_its_unfinished_jobs(tmp_path, data_mirror, tiny_model_dir):
    write_config(tmp_path, data_mirror, [{"name": "tiny", "pretrained": str(tiny_model_dir)}], shards=SHARDS, texts=[1, 2, 3, 4])
    run = ["--cores=1", f"{SYSTEM}/samples.parquet"]   # one job at a time: the cut falls between shards
    started = background(tmp_path, *run)
    assert started.returncode == 0, started.stderr
    pgid = int(re.search(r"started: process group (\d+)", started.stdout).group(1))
    log = tmp_path / "logs/background.log"
    again = background(tmp_path, *run)
    assert again.returncode == 1
    assert f"a run is going here (process group {pgid}, log logs/background.log)" in again.stderr
    assert f"running: process group {pgid}" in background(tmp_path, "--status").stdout

    # Cut off as a machine that goes away: every process of the run at once, once Snakemake has
    # recorded a shard as done (a shard written but not yet recorded is redone, rerun-incomplete).
    wait_for(lambda: log.exists() and done_shards(log.read_text()), "a first shard")
    os.killpg(pgid, signal.SIGKILL)
    wait_for(lambda: not group_alive(pgid), "the run to die", timeout=30)
    shards = tmp_path / SYSTEM / "shards"
    done = done_shards(log.read_text())
    assert len(done) < SHARDS, "the run ended before it could be cut off"
    finished = {shard: (shards / f"{shard}.parquet").stat().st_mtime_ns for shard in done}
    assert any((tmp_path / ".snakemake/locks").iterdir()), "the killed run left no lock"
    status = background(tmp_path, "--status").stdout
    assert "not running" in status
    done_jobs, planned = map(int, re.search(r"since the last start: (\d+) of (\d+) steps", status).groups())
    assert 1 <= done_jobs < planned

    resumed = background(tmp_path, *run)
    assert resumed.returncode == 0, resumed.stderr
    new_pgid = int(re.search(r"started: process group (\d+), log", resumed.stdout).group(1))
    assert new_pgid != pgid
    wait_for(lambda: "=== end rc=" in log.read_text(), "the resumed run to end")
    text = log.read_text()
    assert f"=== cut off: run {pgid} is gone; unlocking" in text
    assert "=== end rc=0" in text, text[-3000:]
    # The second run drew only the shards the first had not finished, and kept the others.
    second = text.split("=== cut off")[1]
    counts = dict(re.findall(r"^(provo_sample)\s+(\d+)$", second, re.M))
    assert int(counts["provo_sample"]) == SHARDS - len(finished)
    assert {shard: (shards / f"{shard}.parquet").stat().st_mtime_ns for shard in done} == finished
    assert (tmp_path / SYSTEM / "samples.parquet").exists()
    assert not (tmp_path / ".snakemake/background.pid").exists()
    planned = int(re.search(r"^total\s+(\d+)$", second, re.M).group(1))
    assert f"since the last start: {planned} of {planned} steps (100%) done" in background(tmp_path, "--status").stdout


def test_a_run_stopped_by_stop_is_logged_as_stopped_when_started_again(tmp_path, data_mirror,
                                                                        tiny_model_dir):
    """A niced start runs niced, its autogroup too where the kernel has autogroups (else the
    scheduler would share the CPUs with other sessions as if it were not niced)."""
    write_config(tmp_path, data_mirror, [{"name": "tiny", "pretrained": str(tiny_model_dir)}], shards=SHARDS, texts=[1, 2, 3, 4])
    niceness = min(os.nice(0) + 5, 19)
    started = background(tmp_path, "--cores=1", f"{SYSTEM}/samples.parquet", nice=5)
    assert started.returncode == 0, started.stderr
    pgid = int(re.search(r"started: process group (\d+)", started.stdout).group(1))
    assert os.getpriority(os.PRIO_PROCESS, pgid) == niceness
    if Path("/proc/self/autogroup").exists():
        assert Path(f"/proc/{pgid}/autogroup").read_text().split()[-2:] == ["nice", str(niceness)]
    stopped = background(tmp_path, "--stop")
    assert stopped.returncode == 0, stopped.stderr
    wait_for(lambda: not group_alive(pgid), "the stopped run to die", timeout=60)
    assert "not running" in background(tmp_path, "--status").stdout
    assert background(tmp_path, "--stop").returncode == 1   # nothing left to stop

    # Targets after `--`: the unlock ahead of the restart must not read its flag as a target.
    again = background(tmp_path, "--cores=1", "--dry-run", "--", f"{SYSTEM}/samples.parquet")
    assert again.returncode == 0, again.stderr
    log = tmp_path / "logs/background.log"
    wait_for(lambda: "=== end rc=" in log.read_text(), "the dry run to end", timeout=120)
    text = log.read_text()
    assert f"=== stopped: run {pgid} is gone; unlocking" in text
    assert "=== cut off" not in text
    assert "=== end rc=0" in text, text[-3000:]
