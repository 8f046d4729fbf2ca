"""The workflow on a live SLURM cluster, through ``--profile profiles/slurm``.

``scripts/slurm/start.sh`` installs Debian's slurm-wlm and munge and starts a one-node cluster
on loopback with partitions ``main`` and ``gpu`` (one fake GPU: a gres the scheduler allocates,
no CUDA behind it). The study's one model says ``device: cuda``, so its sampling shards must
request a GPU and land on ``gpu``; ``cpu_fallback`` lets them compute on CPU. What ran where is
read from the scheduler's own records: ``scontrol show job`` (finished jobs stay listed for
MinJobAge, 600 s) and slurmctld's job completion log. The daemons are stopped afterwards unless
they were already running.

CI (``CI=true``) must run this: a cluster that cannot start fails the test. Elsewhere it is
skipped without root or without slurm-wlm/apt-get.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from helpers import REPO, SNAKEMAKE, write_config

from varprobe import tables

pytestmark = pytest.mark.slow  # Snakemake runs on a SLURM cluster

START, STOP = REPO / "scripts/slurm/start.sh", REPO / "scripts/slurm/stop.sh"
JOBCOMP = Path("/var/log/slurm/jobcomp.log")
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
# CI's cluster runs no accounting database: status from squeue (the controller keeps finished
# jobs for MinJobAge, far above the first check's delay), and a short first delay.
SLURM_RUN = [
    *SNAKEMAKE, "--profile", str(REPO / "profiles/slurm"), "--slurm-status-command", "squeue",
    "--slurm-init-seconds-before-status-checks", "5",
]
# fetch, provo_data, 2 sampling shards, divergence, oracle, bars, summary, tvd figure, the
# authors' protocol table, and the page's measures (intervals, failures, the two oracle measures)
# (provo_merge is a local rule: it runs on the submitting host, not as a SLURM job).
EXPECTED_SLURM_JOBS = 14


def _cannot_run() -> str | None:
    if os.geteuid() != 0:
        return "starting a SLURM cluster needs root"
    if not shutil.which("slurmctld") and not shutil.which("apt-get"):
        return "neither slurm-wlm nor apt-get (to install it) is available"
    return None


def _slurm_running() -> bool:
    pid = Path("/run/slurmctld.pid")
    try:
        os.kill(int(pid.read_text()), 0)
    except (OSError, ValueError):
        return False
    return True


def _start(fake_gpus: int) -> None:
    env = {**os.environ, "FAKE_GPUS": str(fake_gpus)}
    run = subprocess.run(["timeout", "-k", "10", "600", "bash", str(START)], env=env,
                         capture_output=True, text=True)
    if run.returncode != 0:
        pytest.fail(f"scripts/slurm/start.sh failed ({run.returncode}):\n{run.stdout}\n{run.stderr}")


@pytest.fixture(scope="session")
def cluster():
    """A running one-node cluster with one fake GPU, stopped when the test process ends (if it
    was not running before). Not at the end of this module: once SLURM is installed, every
    Snakemake start runs ``scontrol show config`` (the SLURM executor plugin's import), which
    waits for a controller that is down, so other tests' runs are quicker with it up."""
    reason = _cannot_run()
    if reason:
        if IN_CI:
            pytest.fail(f"CI must run the SLURM tests, but {reason}")
        pytest.skip(reason)
    was_running = _slurm_running()
    _start(fake_gpus=1)
    try:
        yield
    finally:
        if not was_running:
            subprocess.run(["timeout", "-k", "10", "120", "bash", str(STOP)], capture_output=True)


def slurm(workdir: Path, *args: str, limit: int = 420) -> subprocess.CompletedProcess:
    """``snakemake --profile profiles/slurm`` in ``workdir``, bounded by ``timeout``."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(["timeout", "-k", "30", str(limit), *SLURM_RUN, *args], cwd=workdir,
                          capture_output=True, text=True, env=env)


def submitted(run: subprocess.CompletedProcess) -> list[int]:
    """SLURM job ids of the jobs a run submitted."""
    return [int(i) for i in re.findall(r"submitted with SLURM jobid (\d+)", run.stdout + run.stderr)]


def scheduler_record(job_id: int) -> dict[str, str]:
    """The controller's record of a (finished) job, from ``scontrol show job``."""
    out = subprocess.run(["scontrol", "show", "job", "-o", str(job_id)], capture_output=True,
                         text=True, check=True).stdout
    return dict(item.split("=", 1) for item in out.split() if "=" in item)


def completion_log(job_id: int) -> dict[str, str]:
    """slurmctld's job completion record of a job (``JobCompType=jobcomp/filetxt``)."""
    for line in JOBCOMP.read_text().splitlines():
        if line.startswith(f"JobId={job_id} "):
            return dict(item.split("=", 1) for item in line.split() if "=" in item)
    raise AssertionError(f"job {job_id} is not in {JOBCOMP}")


@pytest.fixture(scope="module")
def slurm_study(cluster, tmp_path_factory, data_mirror, tiny_model_dir):
    """The small study run once through the SLURM profile: workdir, finished run, wall time."""
    workdir = tmp_path_factory.mktemp("slurm")
    write_config(workdir, data_mirror, [{"name": "tiny-gpu", "pretrained": str(tiny_model_dir),
                                         "device": "cuda"}], shards=2, texts=[1, 2])
    config = yaml.safe_load((workdir / "config.yaml").read_text())
    config["cpu_fallback"] = True
    config["resources"] = {"default": {"mem_mb": 500, "runtime": 10, "cpus_per_task": 1},
                           "provo_sample": {"mem_mb": 1500, "runtime": 12}}
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    start = time.monotonic()
    run = slurm(workdir)
    wall = time.monotonic() - start
    assert run.returncode == 0, run.stderr[-5000:]
    return workdir, run, wall


def test_every_job_ran_under_slurm_and_gpu_jobs_on_the_gpu_partition(slurm_study, capsys):
    workdir, run, wall = slurm_study
    jobs = submitted(run)
    with capsys.disabled():
        print(f"\n[slurm] {len(jobs)} SLURM jobs, wall time {wall:.0f} s", file=sys.stderr)
    assert len(jobs) == EXPECTED_SLURM_JOBS
    records = {j: scheduler_record(j) for j in jobs}
    rules = {j: re.match(r"rule_([a-z_]+?)(_wildcards_|$)", r["Comment"]).group(1)
             for j, r in records.items()}
    assert sorted(rules.values()) == sorted([
        "fetch_dataset", "provo_data", "provo_sample", "provo_sample", "provo_divergence",
        "provo_oracle", "provo_authors", "provo_figure_bars", "provo_summary", "provo_figure_tvd",
        "provo_intervals", "provo_failures", "provo_oracle_measure", "provo_oracle_measure",
    ])
    for job, record in records.items():
        assert record["JobState"] == "COMPLETED", record
        assert completion_log(job)["JobState"] == "COMPLETED"
        assert completion_log(job)["Partition"] == record["Partition"]
        if rules[job] == "provo_sample":
            assert record["Partition"] == "gpu" and record["TresPerJob"] == "gres:gpu:1", record
            # resources from config: provo_sample's runtime and memory, default cpus
            assert record["TimeLimit"] == "00:12:00" and record["MinMemoryNode"] == "1500M"
        else:
            assert record["Partition"] == "main" and "gpu" not in record.get("TresPerJob", ""), record
            assert record["TimeLimit"] == "00:10:00" and record["MinMemoryNode"] == "500M"
    # The job-step output of a GPU job shows the allocation SLURM made.
    system = workdir / "results/provo/tiny-gpu/ancestral"
    log = (workdir / "results/logs/provo_sample/tiny-gpu/ancestral/1.log").read_text()
    assert "model 'tiny-gpu' configured for 'cuda' runs on 'cpu'" in log
    assert tables.read_metadata(system / "samples.parquet")["device"] == "cpu"
    contexts = tables.read(workdir / "results/provo/contexts.parquet", "provo_contexts")
    assert len(tables.read(system / "samples.parquet", "provo_samples")) == 8 * len(contexts)
    assert (workdir / "results/provo/summary.parquet").is_file()


def test_an_unchanged_rerun_submits_nothing(slurm_study):
    workdir, _, _ = slurm_study
    run = slurm(workdir, limit=120)
    assert run.returncode == 0, run.stderr[-3000:]
    assert submitted(run) == []
    assert "Nothing to be done" in run.stdout + run.stderr


def test_a_gpu_job_on_a_cluster_without_gpus_names_the_profile_setting(slurm_study):
    workdir, _, _ = slurm_study
    config = yaml.safe_load((workdir / "config.yaml").read_text())
    config["models"].append({**config["models"][0], "name": "tiny2"})
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    _start(fake_gpus=0)
    try:
        run = slurm(workdir, limit=180)
        assert run.returncode != 0
        assert "SLURM refused to schedule a GPU job (Invalid generic resource" in run.stderr
        assert ("set `gpu: 0` for those rules under `set-resources` in the\n    profile "
                "(profiles/slurm/config.yaml)") in run.stderr
        assert not (workdir / "results/provo/tiny2/ancestral/shards/1.parquet").exists()
        # The profile's `retries: 1` resubmitted it with twice provo_sample's memory and runtime.
        assert "--attempt 2" in run.stderr and "-t 24 --mem 3000" in run.stderr
        # The advice works: without a GPU request the shard runs on `main`, the model on CPU.
        fixed = slurm(workdir, "--set-resources", "provo_sample:gpu=0", "--",
                      "results/provo/tiny2/ancestral/shards/1.parquet", limit=180)
        assert fixed.returncode == 0, fixed.stderr[-3000:]
        (job,) = submitted(fixed)
        record = scheduler_record(job)
        assert record["Partition"] == "main" and "TresPerJob" not in record, record
        log = (workdir / "results/logs/provo_sample/tiny2/ancestral/1.log").read_text()
        assert "model 'tiny2' configured for 'cuda' runs on 'cpu'" in log
    finally:
        _start(fake_gpus=1)
