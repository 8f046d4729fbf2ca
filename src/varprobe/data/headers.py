"""The header of a table a user supplies, matched against the columns its reader knows.

A misspelled column would otherwise be read as absent: an optional one (`` count``, ``Count``)
silently takes its default, the values under it are lost, and the run ends with exit 0. So a
column the reader does not know is an error naming it and the columns expected, and a column
that differs from a known one only in surrounding whitespace or in case is read as that column,
with a warning that says so.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd


def match_columns(header: Iterable[str], required: Iterable[str], optional: Iterable[str] = (), *,
                  name: str = "table", others: bool = False) -> tuple[dict[str, str], list[str]]:
    """The renames that make ``header`` spell the known columns (``required`` and ``optional``)
    as the reader does, and one warning per rename.

    A header cell equal to a known column after stripping whitespace and casefolding is that
    column. ``others`` allows columns the reader does not know (a published file with more
    columns than it reads); without it such a column is an error. Raises ValueError naming
    ``name`` and the culprit for an unknown column or two cells that read as one column, listing
    the columns expected (a missing required column is the reader's to name).

    Parameters
    ----------
    header : iterable of str
        The file's header cells.
    required : iterable of str
        The columns the reader needs.
    optional : iterable of str, optional
        The columns the reader reads where present.
    name : str, optional
        The file, named in messages.
    others : bool, optional
        Whether unknown columns are allowed.

    Returns
    -------
    renames : dict of str to str
        The known column of each header cell spelled otherwise.
    warnings : list of str
        One message per rename.

    Raises
    ------
    ValueError
        See above.
    """
    required, optional = list(required), list(optional)
    known = {c.strip().casefold(): c for c in (*required, *optional)}
    expected = ", ".join(required) + (f" and optionally {', '.join(optional)}" if optional else "")
    renames, unknown, found = {}, [], {}
    for cell in header:
        column = cell if cell in known.values() else known.get(str(cell).strip().casefold())
        if column is None:
            unknown.append(cell)
            continue
        found.setdefault(column, []).append(cell)
        if cell != column:
            renames[cell] = column
    twice = {c: cells for c, cells in found.items() if len(cells) > 1}
    if twice:
        column, cells = next(iter(twice.items()))
        raise ValueError(f"{name}: columns {', '.join(map(repr, cells))} both read as column "
                         f"{column!r}; keep one (expected columns: {expected})")
    if unknown and not others:
        raise ValueError(f"{name}: unknown column(s) {unknown}; expected "
                         f"columns: {expected} (a misspelled column would be read as absent)")
    warnings = [f"{name}: column {cell!r} read as {column!r} (whitespace or case differs)"
                for cell, column in renames.items()]
    return renames, warnings


def header_rows(frame: pd.DataFrame, columns: Iterable[str]) -> list[int]:
    """The positions (0 = the first data row) of the rows of ``frame`` that repeat its header: the
    cells of ``columns``, as text without surrounding whitespace, are those columns' names (in
    any order). Files joined end to end leave such a row; read as data it would be a context
    named after a column with the column's name as its response.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table as read.
    columns : iterable of str
        The columns compared with their names.

    Returns
    -------
    list of int
        The positions of the repeated-header rows, ascending.
    """
    columns = list(columns)
    names = sorted(str(c).strip() for c in columns)
    return [k for k, row in enumerate(frame[columns].itertuples(index=False))
            if all(isinstance(v, str) for v in row) and sorted(v.strip() for v in row) == names]
