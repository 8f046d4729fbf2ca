"""Datasets: where each one lives, how to fetch it, and loaders into canonical tables.

``DATASETS`` is the one list of production datasets: each module defines its record
(``dataset.Dataset``: sources and digests, default split, output language, options, reader), and
the CLI, the workflow and the config checks read it. A new dataset is one module and one entry
here; a config entry that brings its own file is a record too (``record_of``). ``SOURCES``
adds Provo's raw file and the published samples of Ilia & Aziz's systems
(``data/published_generations.py``) to theirs, for fetching (``data/sources.py``).
"""

from collections.abc import Mapping

from varprobe.data import provo, published_generations
from varprobe.data.asset import DATASET as ASSET
from varprobe.data.dailydialog import DATASET as DAILYDIALOG
from varprobe.data.dataset import Dataset
from varprobe.data.user_task import is_user_task, task_record
from varprobe.data.wmt14 import DATASET as WMT14
from varprobe.data.writingprompts import DATASET as WRITINGPROMPTS

DATASETS: dict[str, Dataset] = {d.name: d for d in (WMT14, ASSET, DAILYDIALOG, WRITINGPROMPTS)}
"""Every production dataset by name."""

SOURCES = {"provo": provo.SOURCES, published_generations.DATASET: published_generations.SOURCES,
           **{name: d.sources for name, d in DATASETS.items()}}
"""Every dataset's raw files by dataset name, Provo's and the published samples' included."""


def record_of(entry: Mapping) -> Dataset:
    """The record of a ``production.datasets`` entry: built from the entry where it brings its
    own data (``file:`` or ``datasets:``, ``data/user_task.py``), else the registered one.

    Parameters
    ----------
    entry : mapping
        The ``production.datasets`` entry, with its ``name``.

    Returns
    -------
    Dataset
    """
    return task_record(entry) if is_user_task(entry) else dataset(entry["name"])


def dataset(name: str) -> Dataset:
    """The production dataset ``name``; ValueError listing the known ones otherwise.

    Parameters
    ----------
    name : str
        A registered dataset's name.

    Returns
    -------
    Dataset

    Raises
    ------
    ValueError
        When no dataset is registered as ``name``.
    """
    if name not in DATASETS:
        raise ValueError(f"unknown production dataset {name!r}; known: {', '.join(DATASETS)}")
    return DATASETS[name]


__all__ = ["DATASETS", "SOURCES", "Dataset", "dataset", "record_of"]
