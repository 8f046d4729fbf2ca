"""The project's Snakemake execution profiles (``profiles/``), installed where Snakemake looks up
a bare ``--profile NAME``: its user configuration directory (``$XDG_CONFIG_HOME/snakemake``,
default ``~/.config/snakemake`` on Linux; Snakemake searches the working directory first, then
that directory, then the site-wide one). ``profiles/default`` is not installed: it is the
workflow profile, which Snakemake finds beside the Snakefile for every run.
"""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

from varprobe.workflow_files import root

PROFILES = root() / "profiles"
WORKFLOW_PROFILE = "default"


def installable() -> list[str]:
    """The names of the profiles a user can install (every folder of ``profiles/`` but the
    workflow profile)."""
    return sorted(p.name for p in PROFILES.iterdir() if p.is_dir() and p.name != WORKFLOW_PROFILE)


def user_profile_dir(name: str) -> Path:
    """Where Snakemake's lookup of a bare ``--profile name`` finds a user's profile."""
    from snakemake.common import get_appdirs

    return Path(get_appdirs().user_config_dir) / name


def same_tree(left: Path, right: Path) -> bool:
    """Whether two folders hold the same files with the same bytes (recursively)."""
    cmp = filecmp.dircmp(left, right, ignore=[])
    if cmp.left_only or cmp.right_only or cmp.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(left, right, cmp.common_files, shallow=False)
    return not mismatch and not errors and all(
        same_tree(left / sub, right / sub) for sub in cmp.common_dirs)


def install(name: str) -> tuple[Path, bool]:
    """Copy ``profiles/name`` into Snakemake's user profile directory: (its path, whether it was
    copied now). An identical copy already there is kept; a different one is never overwritten
    (ValueError naming both folders)."""
    if name not in installable():
        raise ValueError(f"no profile {name!r} to install; the project's are: {', '.join(installable())}")
    source, target = PROFILES / name, user_profile_dir(name)
    if target.exists():
        if target.is_dir() and same_tree(source, target):
            return target, False
        raise ValueError(f"{target} exists and differs from {source}; compare them (diff -r) and "
                         f"remove {target} to install this project's profile")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source, target)
    return target, True
