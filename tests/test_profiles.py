"""`varprobe install-profile` puts the project's SLURM profile where Snakemake's own lookup of a
bare ``--profile slurm`` finds it (``snakemake.cli.get_profile_dir``), and never over a different
one. Snakemake's user configuration directory is pointed at a temporary folder."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from varprobe import profiles
from varprobe.cli import main


@pytest.fixture
def config_home(tmp_path, monkeypatch):
    """An empty user configuration directory and an empty working directory (Snakemake looks for
    a profile in the working directory first)."""
    home = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return home


def test_snakemake_finds_the_installed_profile(config_home, capsys):
    from snakemake.cli import get_profile_dir

    assert get_profile_dir("slurm") is None   # the error users see today
    main(["install-profile"])
    assert "snakemake --profile slurm" in capsys.readouterr().out
    found = get_profile_dir("slurm")
    assert found is not None
    folder, config_file = found
    assert folder == config_home / "snakemake" / "slurm" == profiles.user_profile_dir("slurm")
    assert config_file.read_text() == (profiles.PROFILES / "slurm" / "config.yaml").read_text()
    assert (folder / "partitions.yaml").is_file()   # the file its config names, resolved beside it


def test_an_identical_profile_is_kept_and_a_different_one_never_overwritten(config_home):
    target, copied = profiles.install("slurm")
    assert copied
    assert profiles.install("slurm") == (target, False)
    (target / "config.yaml").write_text("executor: slurm\njobs: 3\n")
    with pytest.raises(ValueError, match=f"{target} exists and differs"):
        profiles.install("slurm")
    assert (target / "config.yaml").read_text() == "executor: slurm\njobs: 3\n"
    (target / "config.yaml").write_text((profiles.PROFILES / "slurm" / "config.yaml").read_text())
    (target / "extra.yaml").write_text("")
    with pytest.raises(ValueError, match="differs"):
        profiles.install("slurm")


def test_only_the_projects_cluster_profiles_install(config_home):
    assert "slurm" in profiles.installable() and "default" not in profiles.installable()
    with pytest.raises(ValueError, match="no profile 'default' to install"):
        profiles.install("default")
    assert not (config_home / "snakemake").exists()


@pytest.mark.slow
def test_snakemake_profile_slurm_dry_run_after_install(config_home, tmp_path):
    """The command users type on a cluster, from the repository root: fails before, works after."""
    repo = profiles.PROFILES.parent
    env = {**os.environ, "XDG_CONFIG_HOME": str(config_home), "HOME": str(tmp_path / "home")}
    command = [sys.executable, "-m", "snakemake", "--profile", "slurm", "-n", "--quiet", "rules"]

    def dry_run():
        return subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, timeout=600)

    before = dry_run()
    assert before.returncode != 0
    assert "profile directory given (slurm), but no profile.yaml (or config.yaml) found" in before.stderr
    main(["install-profile", "slurm"])
    after = dry_run()
    assert after.returncode == 0, after.stdout + after.stderr
