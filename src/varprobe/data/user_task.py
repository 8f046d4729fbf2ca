"""A multi-reference production task from a config entry: the ``Dataset`` record of a user's file.

An entry of ``production.datasets`` with a ``file:`` (or a ``datasets:`` source, see
``data/user_files.py``) is a task of its own: ``task_record`` builds its record, which the CLI and
the workflow use like a registered dataset's. ``fields`` names the columns (defaults ``id``,
``source``, ``references``), in one of three layouts, told apart by the data:

* a list per input: ``references`` names one column (a JSON lines field, a Parquet list column)
  whose value in each row is a list of texts; one row per input;
* long: ``references`` names one column of text, one row per reference; the rows of an input
  share its id and its source;
* wide: ``references`` is a list of columns, one reference per column; one row per input, and an
  empty cell is a reference that input lacks.

Checks, each naming the file, the rows and the value: columns the entry names but the file lacks
(with the columns it has), an empty id or source, an id given twice (one row per input) or with
two sources (long), an empty reference (a list's or a long row's; a wide layout's empty cell is
no reference), an id, source or reference that is no text (a JSON object, a list where text is
due, a boolean; a number is read as text, its rows noted on stderr). An input with fewer than ``min_references`` references is dropped and counted
(stderr, and the ``provenance`` the instances table records: file digest, rows, inputs kept and
dropped).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

import numpy as np
import pandas as pd

from varprobe.data.dataset import Dataset
from varprobe.data.instances import instances_table
from varprobe.data.user_files import (ROW, is_number, note_numbers, read_user_table, require_columns, rows_named,
                                      text_cell, text_column)

FIELDS = {"id": "id", "source": "source", "references": "references"}
"""The columns of a task file when ``fields`` does not name them."""
READ_KEYS = ("file", "datasets", "fields", "language", "min_references", "sha256")
"""The keys of a task entry that its reader reads (a change to another key, the prompt say,
leaves its instances table as it is)."""
FILE_SPLIT = "file"
"""The split of a task read from a file (a ``datasets`` source has the split it names)."""


def is_user_task(entry: Mapping) -> bool:
    """Whether a ``production.datasets`` entry brings its own data (``file:`` or ``datasets:``).

    Parameters
    ----------
    entry : mapping
        The dataset's entry.

    Returns
    -------
    bool
    """
    return "file" in entry or "datasets" in entry


def reader_entry(entry: Mapping) -> dict:
    """The keys of a task entry that its reader reads (``READ_KEYS``).

    Parameters
    ----------
    entry : mapping
        The task entry.

    Returns
    -------
    dict
    """
    return {key: entry[key] for key in READ_KEYS if key in entry}


def wanted_columns(entry: Mapping) -> dict[str, str]:
    """The columns a task entry reads, by the ``fields`` key that names each.

    Parameters
    ----------
    entry : mapping
        The task entry.

    Returns
    -------
    dict of str to str
        What each column is for -> its name in the file.
    """
    fields = {**FIELDS, **entry.get("fields", {})}
    references = fields["references"]
    named = ({f"fields.references[{k}]": c for k, c in enumerate(references)}
             if isinstance(references, list) else {"fields.references": references})
    return {"fields.id": fields["id"], "fields.source": fields["source"], **named}


def task_record(entry: Mapping) -> Dataset:
    """The ``Dataset`` of a task entry: no raw files to fetch (its file is read where it is),
    its split, its ``language``, and a reader of its file (``read_task``).

    Parameters
    ----------
    entry : mapping
        The task entry.

    Returns
    -------
    Dataset
    """
    entry = dict(entry)
    return Dataset(
        name=entry["name"],
        sources=(),
        default_split=entry["datasets"]["split"] if "datasets" in entry else FILE_SPLIT,
        output_language=entry["language"],
        raw_files=lambda split: [],
        read=lambda raw_dir, split, verify: read_task(entry, split),
    )


def read_task(entry: Mapping, split: str) -> pd.DataFrame:
    """The canonical instances table of a task entry's data (in the file's order of first
    appearance).

    Parameters
    ----------
    entry : mapping
        The task's entry in ``production.datasets``.
    split : str
        The split the table is labelled with (the file is read whole).

    Returns
    -------
    pandas.DataFrame
        The instances table, with ``attrs["provenance"]``: the file's digest, its rows, the
        inputs kept and those dropped for having fewer than ``min_references`` references.
    """
    frame, origin = read_user_table(entry)
    name = origin.get("file", f"dataset {entry['name']!r}")
    fields = {**FIELDS, **entry.get("fields", {})}
    references = fields["references"]
    wide = isinstance(references, list)
    require_columns(frame.columns, wanted_columns(entry), name)
    ids = text_column(frame, fields["id"], name, note=False).str.strip().rename(fields["id"])
    sources = text_column(frame, fields["source"], name).rename(fields["source"])
    _no_empty(frame, ids, f"empty id (column {fields['id']!r})", name)
    _no_empty(frame, sources.str.strip(), f"empty source (column {fields['source']!r})", name)
    if wide:
        cells = [text_column(frame, c, name) for c in references]
        lists = [[t for t in row if t.strip()] for row in zip(*cells, strict=True)]
        rows = _one_row_per_input(frame, ids, sources, lists, name)
    elif _texts_not_lists(frame[references]):
        rows = _long_rows(frame, ids, sources, text_column(frame, references, name).rename(references), name)
    else:
        lists = [_reference_list(v, r, references, name) for v, r in zip(frame[references], frame[ROW], strict=True)]
        note_numbers([r for v, r in zip(frame[references], frame[ROW], strict=True)
                      if isinstance(v, (list, np.ndarray)) and any(map(is_number, v))], references, name)
        rows = _one_row_per_input(frame, ids, sources, lists, name)
    minimum = entry.get("min_references", 1)
    kept = [row for row in rows if len(row[2]) >= minimum]
    dropped = [row[0] for row in rows if len(row[2]) < minimum]
    if dropped:
        print(f"{entry['name']}: {len(dropped)} of {len(rows)} inputs have fewer than {minimum} references "
              f"(min_references) and are dropped: {', '.join(dropped[:10])}"
              f"{' ...' if len(dropped) > 10 else ''}", file=sys.stderr)
    if not kept:
        raise ValueError(f"{name}: no input has {minimum} references (min_references); nothing to run")
    table = instances_table(entry["name"], split, kept)
    table.attrs["provenance"] = {**origin, "rows": len(frame), "inputs": len(kept),
                                 "min_references": minimum, "dropped_inputs": dropped}
    return table


def _no_empty(frame: pd.DataFrame, values: pd.Series, what: str, name: str) -> None:
    empty = frame.loc[values == "", ROW]
    if len(empty):
        raise ValueError(f"{name}: {what} in {rows_named(empty)}")


def _texts_not_lists(values: pd.Series) -> bool:
    """Whether a single references column is the long layout's: it holds texts and no lists (a
    number or an object among the texts is ``text_cell``'s to read or refuse)."""
    return bool(values.map(lambda v: isinstance(v, str)).any()
                and not values.map(lambda v: isinstance(v, (list, tuple, np.ndarray))).any())


def _reference_list(value: object, row: int, column: str, name: str) -> list[str]:
    """One row's list of references; ValueError naming the row where it is no list of texts or
    holds an empty one."""
    if not hasattr(value, "__len__") or isinstance(value, (str, dict)):
        raise ValueError(f"{name}: row {row}: column {column!r} holds {type(value).__name__} "
                         f"{str(value)[:40]!r}, not a list of references")
    texts = [text_cell(v, row, f"{column}[{k}]", name) for k, v in enumerate(value)]
    if any(not t.strip() for t in texts):
        raise ValueError(f"{name}: row {row}: an empty reference in column {column!r}")
    return texts


def _one_row_per_input(frame: pd.DataFrame, ids: pd.Series, sources: pd.Series,
                       lists: list[list[str]], name: str) -> list[tuple[str, str, list[str]]]:
    """``(id, source, references)`` per row; ValueError naming the rows of an id given twice."""
    repeated = frame.loc[ids.duplicated(keep=False), ROW].groupby(ids[ids.duplicated(keep=False)]).apply(list)
    if len(repeated):
        input_id, rows = next(iter(repeated.items()))
        raise ValueError(f"{name}: id {input_id!r} (column {ids.name!r}) is given in {rows_named(rows)} (one "
                         f"row per input in this layout; {len(repeated)} ids repeat)")
    return list(zip(ids, sources, lists, strict=True))


def _long_rows(frame: pd.DataFrame, ids: pd.Series, sources: pd.Series, references: pd.Series,
               name: str) -> list[tuple[str, str, list[str]]]:
    """``(id, source, references)`` per id of a long table (one row per reference), in order of
    first appearance; ValueError naming the rows of an empty reference or of an id with two
    sources."""
    empty = frame.loc[references.str.strip() == "", ROW]
    if len(empty):
        raise ValueError(f"{name}: empty reference (column {references.name!r}) in {rows_named(empty)}")
    inputs: dict[str, tuple[str, list[str], list[int]]] = {}
    for input_id, source, reference, row in zip(ids, sources, references, frame[ROW], strict=True):
        first = inputs.setdefault(input_id, (source, [], []))
        if source != first[0]:
            raise ValueError(f"{name}: id {input_id!r} (column {ids.name!r}) has two sources (column "
                             f"{sources.name!r}): row {first[2][0]} and row {row} differ (long layout: every "
                             "row of an input repeats its source)")
        first[1].append(reference)
        first[2].append(row)
    return [(input_id, source, refs) for input_id, (source, refs, _) in inputs.items()]

