"""How the main job is started: ``scripts/launch.sh``, the command line that ``run.sh`` and
``background.sh`` run, the settings Snakemake takes from the profiles, and what every job's
``varprobe`` command loads before it starts its stage. ``profiles/default``
is also the Snakefile's workflow profile: Snakemake loads it for every run, from any directory,
and under ``--profile profiles/slurm`` it overrides that profile key by key."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml
from helpers import REPO


def command_line(*args: str) -> list[str]:
    shown = subprocess.run(["bash", "-c", 'source scripts/launch.sh "$@"; printf "%s\\n" "${snakemake[@]}"',
                            "launch", *args], cwd=REPO, capture_output=True, text=True, timeout=600, check=True)
    return shown.stdout.splitlines()


def settings(*args: str):
    """The arguments Snakemake runs this Snakefile with, its profiles applied. (Imported here, not
    at collection: importing ``snakemake.cli`` imports the SLURM executor plugin, which runs
    ``scontrol show config``, which waits in every test process where SLURM is installed but down.)"""
    from snakemake.cli import parse_args

    return parse_args(["-s", str(REPO / "Snakefile"), *args])[1]


def test_the_scripts_run_this_checkouts_snakefile_with_the_arguments_given():
    given = ["--profile", "profiles/slurm", "--configfile", "configs/paper-scale.yaml"]
    assert command_line(*given) == ["snakemake", "-s", str(REPO / "Snakefile"), *given]


def test_the_local_profile_comes_with_a_run_from_any_directory(tmp_path, monkeypatch):
    from snakemake.utils import available_cpu_count

    monkeypatch.chdir(tmp_path)
    local = settings()
    assert local.cores == available_cpu_count()  # `cores: all`: the CPUs this process may use
    assert local.rerun_incomplete and local.printshellcmds and local.show_failed_logs


@pytest.mark.parametrize("where", ["checkout", "elsewhere"])
def test_a_cluster_run_gets_every_setting_of_the_cluster_profile(where, tmp_path, monkeypatch):
    """The workflow profile must not contradict ``profiles/slurm``: it did with ``keep-going:
    false``, and a cluster run submitted nothing more after its first failed job."""
    monkeypatch.chdir(REPO if where == "checkout" else tmp_path)
    cluster = yaml.safe_load((REPO / "profiles/slurm/config.yaml").read_text())
    run = settings("--profile", str(REPO / "profiles/slurm"))
    scalars = {key: value for key, value in cluster.items() if isinstance(value, (bool, int, str))}
    assert {"executor", "jobs", "keep-going", "rerun-incomplete"} <= scalars.keys()
    for key, value in scalars.items():
        got = getattr(run, key.replace("-", "_"))
        assert (got == REPO / "profiles/slurm" / value if key == "slurm-partition-config" else got == value), key


# Packages that take a second or more to import: a stage that needs one imports it itself.
HEAVY = ("torch", "transformers", "scipy", "sklearn", "matplotlib", "pymc", "spacy", "sentence_transformers")


def test_the_command_line_loads_no_heavy_package_before_its_stage():
    """Every workflow job starts ``varprobe``: its parser (every study's and family's
    subcommands) imports none of ``HEAVY`` (scipy.stats alone was most of its start-up), so a job
    that does not need them does not pay for them."""
    code = "import sys; from varprobe.cli import build_parser; build_parser(); print(*sorted(sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            check=True).stdout.split()
    assert "varprobe.families.regression.analysis" in loaded   # every family's module was registered
    assert not [m for m in loaded if m.split(".")[0] in HEAVY]
