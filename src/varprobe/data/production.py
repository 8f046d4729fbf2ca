"""The production datasets by name: which raw files a split needs, and reading them into the
canonical instances table (``data/instances.py``)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from varprobe.data.asset import N_REFERENCES, read_asset
from varprobe.data.dailydialog import read_dailydialog
from varprobe.data.wmt14 import read_wmt14
from varprobe.data.writingprompts import read_writingprompts

DATASETS = ("wmt14", "asset", "dailydialog", "writingprompts")


def raw_files(dataset: str, split: str) -> list[str]:
    """Names of the raw files (as fetched, see ``data/sources.py``) that ``split`` is read from."""
    files = {
        "wmt14": ["wmt14-en-de.extra_refs.gz"],
        "asset": [f"asset.{split}.orig", *(f"asset.{split}.simp.{k}" for k in range(N_REFERENCES))],
        "dailydialog": [f"{split}.jsonl"],
        "writingprompts": [f"{split}.wp_source", f"{split}.wp_target"],
    }
    if dataset not in files:
        raise ValueError(f"unknown production dataset {dataset!r}; known: {', '.join(DATASETS)}")
    return files[dataset]


def read_instances(dataset: str, raw_dir: Path, split: str, references: str = "extra",
                   min_stories: int = 5, turn_separator: str = "\n",
                   verify: bool = True) -> pd.DataFrame:
    """The instances table of ``dataset``/``split`` from the raw files in ``raw_dir``.

    ``references`` applies to wmt14 (which translations are the human sample), ``min_stories``
    to writingprompts, ``turn_separator`` to dailydialog; ``verify`` checks the published
    counts where the loader knows them.
    """
    raw_dir = Path(raw_dir)
    missing = [f for f in raw_files(dataset, split) if not (raw_dir / f).is_file()]
    if missing:
        raise FileNotFoundError(f"dataset {dataset!r} {split}: raw files {missing} not in {raw_dir}")
    if dataset == "wmt14":
        return read_wmt14(raw_dir / "wmt14-en-de.extra_refs.gz", references, verify)
    if dataset == "asset":
        return read_asset(raw_dir, split, verify)
    if dataset == "dailydialog":
        return read_dailydialog(raw_dir / f"{split}.jsonl", split, turn_separator, verify)
    return read_writingprompts(raw_dir / f"{split}.wp_source", raw_dir / f"{split}.wp_target",
                               split, min_stories)
