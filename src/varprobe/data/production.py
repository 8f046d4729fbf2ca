"""The production datasets by name (``varprobe.data.DATASETS``): which raw files a split needs,
and reading them into the canonical instances table (``data/instances.py``)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from varprobe.data import dataset


def raw_files(name: str, split: str) -> list[str]:
    """Names of the raw files (as fetched, see ``data/sources.py``) that ``split`` is read from.

    Parameters
    ----------
    name : str
        The production dataset's name.
    split : str
        The split.

    Returns
    -------
    list of str
    """
    return dataset(name).raw_files(split)


def read_instances(name: str, raw_dir: Path, split: str, verify: bool = True, **options) -> pd.DataFrame:
    """The instances table of dataset ``name``/``split`` from the raw files in ``raw_dir``.

    Parameters
    ----------
    name : str
        The dataset's name (a key of ``varprobe.data.DATASETS``).
    raw_dir : pathlib.Path
        The folder of its raw files.
    split : str
        The split to read.
    verify : bool
        Check the published counts where the loader knows them.
    **options
        The dataset's ``options`` (``Dataset.options``; the rest at their defaults).

    Returns
    -------
    pandas.DataFrame
        The canonical instances table.
    """
    return dataset(name).read_instances(raw_dir, split, verify, **options)
