"""The record of a production dataset (Giulianelli et al. 2023, Sec. 4): where its raw files live,
its default split and output language, its options, and how a split is read into the canonical
instances table (``data/instances.py``). Each dataset's module defines one (``DATASET``) and
``varprobe.data.DATASETS`` lists them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path

import pandas as pd

from varprobe.data.sources import Source


@dataclass(frozen=True)
class Dataset:
    """A production dataset.

    ``sources``: its raw files with their pinned digests (``data/sources.py`` fetches them);
    ``raw_files(split)``: the names of the files (as fetched) that ``split`` is read from;
    ``read(raw_dir, split, verify, **options)``: the instances table of ``split`` from those
    files, ``verify`` checking the published counts where the loader knows them; ``options``:
    the dataset's own options (CLI ``production-data`` flags, config keys of its entry) with their
    defaults; ``max_references``: the default cap on references per input (None: all);
    ``splits``: the splits it has, each with its number of inputs where that is fixed (None where
    an option decides it), which the config checks hold ``split``, ``few_shot_split`` and
    ``few_shot`` to (empty: a task's own data, whose split its source names); ``simplification``:
    whether the task rewrites its source more simply in the same language (ASSET), the tasks whose
    adequacy SARI scores and whose copy baseline SARI decides (``analysis.adequacy``).
    """

    name: str
    _: KW_ONLY
    sources: tuple[Source, ...]
    default_split: str
    output_language: str
    raw_files: Callable[[str], list[str]]
    read: Callable[..., pd.DataFrame]
    options: Mapping[str, object] = field(default_factory=dict)
    max_references: int | None = None
    splits: Mapping[str, int | None] = field(default_factory=dict)
    simplification: bool = False

    def read_instances(self, raw_dir: Path, split: str, verify: bool = True,
                       **options) -> pd.DataFrame:
        """The instances table of ``split`` from the raw files in ``raw_dir``; ``options`` (of
        ``self.options``, the rest at their defaults). FileNotFoundError naming the missing
        files, ValueError naming an option the dataset does not have.

        Parameters
        ----------
        raw_dir : Path
            The folder the raw files were fetched to.
        split : str
            The split to read.
        verify : bool, optional
            Whether to check the reader's counts against the published ones.
        **options
            The dataset's reader options (``self.options``).

        Returns
        -------
        pandas.DataFrame
            An instances table (``instances_table``).

        Raises
        ------
        FileNotFoundError
            When a raw file of ``split`` is missing.
        ValueError
            When an option is not one of the dataset's.
        """
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            raise ValueError(f"dataset {self.name!r} has no option {unknown}; its options: "
                             f"{', '.join(self.options) or 'none'}")
        raw_dir = Path(raw_dir)
        missing = [f for f in self.raw_files(split) if not (raw_dir / f).is_file()]
        if missing:
            raise FileNotFoundError(f"dataset {self.name!r} {split}: raw files {missing} not in {raw_dir}")
        return self.read(raw_dir, split, verify, **{**self.options, **options})
