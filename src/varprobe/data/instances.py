"""The canonical instances table every production dataset is read into.

One row per input: ``dataset``, ``split``, ``input_id`` (a string unique within the split),
``source`` (the input text a generator conditions on) and ``references`` (the list of human
productions for that input, in the dataset's own order).
"""

from __future__ import annotations

import zlib

import numpy as np
import pandas as pd


def instances_table(dataset: str, split: str, rows: list[tuple[str, str, list[str]]]) -> pd.DataFrame:
    """The canonical table of ``(input_id, source, references)`` rows of one dataset split.

    Raises ValueError naming the dataset when ids repeat or an input has an empty reference.

    Parameters
    ----------
    dataset : str
        The dataset's name, named in messages.
    split : str
        The split.
    rows : list of (str, str, list of str)
        ``(input_id, source, references)`` per input.

    Returns
    -------
    pandas.DataFrame
        An instances table: ``input_id``, ``source``, ``references``.

    Raises
    ------
    ValueError
        See above.
    """
    frame = pd.DataFrame(rows, columns=["input_id", "source", "references"])
    frame.insert(0, "split", split)
    frame.insert(0, "dataset", dataset)
    duplicated = frame["input_id"][frame["input_id"].duplicated()]
    if len(duplicated):
        raise ValueError(f"dataset {dataset!r} {split}: input id {duplicated.iloc[0]!r} repeats")
    for input_id, references in zip(frame["input_id"], frame["references"], strict=True):
        if not references or any(not r.strip() for r in references):
            raise ValueError(f"dataset {dataset!r} {split}: input {input_id!r} has an empty reference")
    return frame


def first_inputs(instances: pd.DataFrame, max_inputs: int | None) -> pd.DataFrame:
    """The first ``max_inputs`` rows (all rows for ``None``): the small default runs.

    Parameters
    ----------
    instances : pandas.DataFrame
        An instances table.
    max_inputs : int or None
        The most rows kept.

    Returns
    -------
    pandas.DataFrame
    """
    return instances if max_inputs is None else instances.head(max_inputs).reset_index(drop=True)


INPUT_CHOICE_STREAM = 0x1A9
"""The stream of ``seeded_inputs``' generator beside the run's seed (the reference cap draws per
input, from the input's id)."""


def seeded_inputs(instances: pd.DataFrame, max_inputs: int | None, seed: int) -> pd.DataFrame:
    """A uniform choice of ``max_inputs`` rows without replacement (all rows for ``None`` or
    fewer rows), kept in the dataset's order, drawn by ``numpy.random.default_rng([seed,
    INPUT_CHOICE_STREAM])``: a subset spread over the whole split, the same for a seed.

    Parameters
    ----------
    instances : pandas.DataFrame
        An instances table.
    max_inputs : int or None
        The most rows kept.
    seed : int
        The seed of the choice.

    Returns
    -------
    pandas.DataFrame
    """
    if max_inputs is None or max_inputs >= len(instances):
        return instances
    rows = np.sort(np.random.default_rng([seed, INPUT_CHOICE_STREAM]).choice(len(instances), max_inputs,
                                                                             replace=False))
    return instances.iloc[rows].reset_index(drop=True)


INPUT_CHOICES = {
    "first": lambda instances, max_inputs, seed: first_inputs(instances, max_inputs),
    "seeded": seeded_inputs,
}
"""``production.input_choice``: how a run picks its ``max_inputs`` inputs, called with
(instances, max_inputs, seed)."""


def cap_references(instances: pd.DataFrame, max_references: int | None, seed: int) -> pd.DataFrame:
    """Each input with at most ``max_references`` references (all for ``None``).

    An input with more keeps a uniform choice of ``max_references`` of them without replacement,
    in the dataset's order, drawn by ``numpy.random.default_rng([seed, crc32(input_id)])``: the
    choice depends on the seed and the input alone, never on which other inputs a run reads.

    Parameters
    ----------
    instances : pandas.DataFrame
        An instances table.
    max_references : int or None
        The most references kept per input.
    seed : int
        The seed of the choice.

    Returns
    -------
    pandas.DataFrame
        The instances with their references capped.

    Raises
    ------
    ValueError
        When ``max_references`` is below 1.
    """
    if max_references is None:
        return instances
    if max_references < 1:
        raise ValueError(f"max_references must be >= 1 or None, got {max_references}")
    def chosen(input_id: str, references) -> list[str]:
        if len(references) <= max_references:
            return list(references)
        rng = np.random.default_rng([seed, zlib.crc32(input_id.encode())])
        keep = np.sort(rng.choice(len(references), size=max_references, replace=False))
        return [references[k] for k in keep]
    capped = [chosen(i, r) for i, r in zip(instances["input_id"], instances["references"], strict=True)]
    return instances.assign(references=capped)
