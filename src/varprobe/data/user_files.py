"""Reading a data file a user brings (a cloze corpus, a multi-reference task) from a config entry.

The entry names a local ``file`` (CSV, TSV, Parquet or JSON lines, told apart by its suffix) or a
Hugging Face ``datasets`` source (``{path, name, split}``; it needs the ``datasets`` package and
internet, and is read as the hub serves it). Every check here names the file and what is wrong:
a missing file, an optional ``sha256`` that does not match (``data/sources.py`` checks the
built-in files the same way), an encoding other than UTF-8 (``data/raw_text.py``), a line of JSON
that does not parse, a row that repeats the header (files joined end to end), and columns that
the entry names but the file lacks, listed with the columns it has (``require_columns``). A CSV
or TSV row must have as many fields as the header: a row with fewer or more (a tab typed as
spaces, a comma in an unquoted text) is an error naming its row, its line and the fields found
and expected, never a row whose values sit under the wrong columns. Rows are numbered from 1,
the first data row (a CSV's header is row 0, a JSON lines file's row n is its line n, a JSON
array's row n its n-th object); every message about a row uses that number. Every cell is kept
as the file holds it (a CSV cell as its text, a JSON or Parquet number as that number, an
integer beside a missing value included). ``provenance`` is what a
result table records of the file: its path, digest and size; ``record_digest`` keeps the same
digest in a small file that the workflow's jobs take as their input, so that an edit which keeps
the file's time (``cp -p``, ``rsync -a``) still reruns them.
"""

from __future__ import annotations

import csv
import io
import json
import numbers
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from varprobe.data.headers import header_rows
from varprobe.data.raw_text import decode, read_text
from varprobe.data.sources import Digest

SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".jsonl": "jsonl", ".json": "json"}
"""The formats a user file may have, by its suffix: a ``.json`` file holds JSON lines or one
JSON array of objects."""

ROW = "row"
"""The column ``read_user_table`` adds: each row's number (1 = the first data row)."""


def file_format(path: str | Path) -> str:
    """The format of the file at ``path`` from its suffix; ValueError listing the known ones.

    Parameters
    ----------
    path : str or Path
        The file.

    Returns
    -------
    str
        The format's name.

    Raises
    ------
    ValueError
        For an unknown suffix.
    """
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise ValueError(f"{path}: unknown file type {suffix or '(no suffix)'!r}; a data file is one "
                         f"of {', '.join(SUFFIXES)}")
    return SUFFIXES[suffix]


def check_sha256(path: Path, sha256: str | None) -> Digest:
    """The digest of the file at ``path``; ValueError naming both digests where ``sha256`` (the
    entry's, optional) is given and differs.

    Parameters
    ----------
    path : Path
        The file.
    sha256 : str or None
        The entry's pinned SHA-256 (hex), if any.

    Returns
    -------
    Digest

    Raises
    ------
    ValueError
        See above.
    """
    digest = Digest.of(path)
    if sha256 is not None and digest.sha256 != sha256.lower():
        raise ValueError(f"{path} is not the file the entry pins: sha256: {sha256}, the file has "
                         f"{digest}; fix the file or the entry's sha256")
    return digest


def provenance(path: Path, digest: Digest) -> dict:
    """What a result table records of a user file: its path, SHA-256 and size.

    Parameters
    ----------
    path : Path
        The file.
    digest : Digest
        Its digest.

    Returns
    -------
    dict
        ``path`` (str), ``sha256`` (hex) and ``size`` (bytes).
    """
    return {"file": str(path), "sha256": digest.sha256, "bytes": digest.size}


def record_digest(path: Path, record: Path) -> bool:
    """Write the digest of the file at ``path`` (``sha256 <hex> (<n> bytes)``) to ``record`` unless
    it holds that already; whether it was written.

    ``record`` stands for the data file as the input of the jobs that read it: Snakemake compares
    times, and an edit that keeps the file's time (``cp -p``, ``rsync -a``) would rerun nothing.
    A changed digest makes ``record`` newer than every output, so they are made again. A new
    ``record`` takes the file's time, so that creating it reruns no more than the file itself
    does.

    Parameters
    ----------
    path : Path
        The data file.
    record : Path
        The file its digest is recorded in.

    Returns
    -------
    bool
    """
    text = f"{Digest.of(path)}\n"
    if record.is_file() and record.read_text() == text:
        return False
    new = not record.is_file()
    record.parent.mkdir(parents=True, exist_ok=True)
    partial = record.with_name(f".{record.name}.{os.getpid()}")
    partial.write_text(text)
    if new:
        os.utime(partial, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns))
    os.replace(partial, record)
    return True


def read_user_table(entry: Mapping) -> tuple[pd.DataFrame, dict]:
    """The table of the entry's ``file`` (every CSV/TSV/JSON value as read, CSV cells as strings,
    nothing read as missing) or ``datasets`` source, with the column ``ROW``.

    Parameters
    ----------
    entry : mapping
        A config entry naming a ``file`` or a ``datasets`` source.

    Returns
    -------
    pandas.DataFrame
        The table, its rows numbered in ``ROW``.
    dict
        Its provenance (file, digest, size; for a ``datasets`` source, the source).
    """
    if "datasets" in entry:
        frame = read_datasets_source(entry["datasets"])
        _no_header_rows(frame, f"dataset {entry['datasets'].get('path')!r}")
        return frame.assign(**{ROW: range(1, len(frame) + 1)}), {"datasets": dict(entry["datasets"])}
    path = Path(entry["file"])
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found (the `file:` of entry {entry.get('name')!r}; a relative "
                                "path is read from the working directory)")
    digest = check_sha256(path, entry.get("sha256"))
    frame = _parse(path, file_format(path))
    if ROW in frame.columns:
        raise ValueError(f"{path}: a column may not be named {ROW!r} (the rows' numbers in messages)")
    _no_header_rows(frame, path)
    rows = frame.attrs.pop(ROW, range(1, len(frame) + 1))
    return frame.assign(**{ROW: rows}), provenance(path, digest)


def _no_header_rows(frame: pd.DataFrame, path: Path | str) -> None:
    """ValueError naming the file and the rows that repeat its header (``header_rows``)."""
    repeated = header_rows(frame, frame.columns)
    if repeated:
        raise ValueError(f"{path}: {rows_named([k + 1 for k in repeated])} "
                         f"{'repeats' if len(repeated) == 1 else 'repeat'} the header "
                         f"({', '.join(map(str, frame.columns))}), as files joined end to end do; "
                         "remove the repeated header")


def file_problem(entry: Mapping, wanted: Mapping[str, str]) -> str | None:
    """What is wrong with the entry's ``file`` before a job reads it, or None: the file is
    missing, not of a known type, not the pinned one (``sha256``), or lacks a column of
    ``wanted`` (from its header alone). A ``datasets`` source is checked when it is read.

    Parameters
    ----------
    entry : mapping
        The dataset's config entry.
    wanted : mapping of str to str
        What each column is for -> its name (``wanted_columns``).

    Returns
    -------
    str or None
        The problem, or None.
    """
    if "file" not in entry:
        return None
    path = Path(entry["file"])
    try:
        if not path.is_file():
            raise FileNotFoundError(f"{path} not found (a relative path is read from the working directory)")
        kind = file_format(path)
        check_sha256(path, entry.get("sha256"))
        require_columns(_header(path, kind), wanted, str(path))
    except (OSError, ValueError) as err:
        return str(err)
    return None


def _header(path: Path, kind: str) -> list[str]:
    """The columns of the file at ``path``: a Parquet file's schema, a CSV/TSV file's first
    line, the keys of a JSON lines file's first object."""
    if kind == "parquet":
        import pyarrow.parquet as pq

        return list(pq.read_schema(path).names)
    if kind == "json" and _is_array(read_text(path)):
        return list(_parse(path, kind).columns)
    with open(path, "rb") as stream:
        first = stream.readline()
    if not first.strip():
        raise ValueError(f"{path}: its first line is empty (a header, or a first JSON object, is expected)")
    return list(_parse_text(decode(first, "utf-8", str(path)), kind, path).columns)


def _parse(path: Path, kind: str) -> pd.DataFrame:
    """The file at ``path`` read as ``kind``; ValueError naming the file and, for JSON lines or
    CSV, the line. A Parquet file's cells are its values as Python objects (``_objects``)."""
    if kind == "parquet":
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(path)
        except Exception as err:  # noqa: BLE001 (pyarrow raises several kinds)
            raise ValueError(f"{path} is not a readable Parquet file: {err}") from err
        return _objects(table.to_pylist(), table.column_names)
    return _parse_text(read_text(path), kind, path)


def _objects(rows: list[dict], columns: list[str] | None = None) -> pd.DataFrame:
    """A table of ``rows`` (one dict per row) whose cells are the values as they are: an integer
    stays an integer where another row of its column is missing (pandas would make the column
    float, and ``3`` would read ``3.0``); a null is None, a key a row lacks NaN (both missing)."""
    return pd.DataFrame(rows, columns=columns, dtype=object)


def _parse_text(text: str, kind: str, path: Path) -> pd.DataFrame:
    """``text``, the content of the file at ``path``, read as ``kind`` (CSV, TSV, JSON lines, a
    ``.json`` file's JSON array or JSON lines)."""
    if kind == "json" and _is_array(text):
        return _json_array(text, path)
    if kind in ("json", "jsonl"):
        hint = ("; the file holds a JSON array, and a .jsonl file is read as JSON lines (one object per "
                "line): write one object per line, or name the file .json") if _is_array(text) else ""
        rows, lines = [], []
        # Split on line feeds only, as the DailyDialog++ reader does: a JSON string may hold
        # U+2028 or other characters str.splitlines() would also break the line at.
        for number, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as err:
                raise ValueError(f"{path}, line {number}: not JSON ({err.msg}){hint}") from err
            if not isinstance(row, dict):
                raise ValueError(f"{path}, line {number}: a JSON object is expected, got "
                                 f"{type(row).__name__}{hint}")
            rows.append(row)
            lines.append(number)
        frame = _objects(rows)
        frame.attrs[ROW] = lines
        return frame
    return delimited_table(text, kind, str(path))


def delimited_table(text: str, kind: str, name: str) -> pd.DataFrame:
    """``text``, a CSV or TSV file's content, as a table of strings: every cell as written,
    nothing read as missing, blank lines skipped, quotes as in RFC 4180.

    Parameters
    ----------
    text : str
        The file's content.
    kind : str
        ``"csv"`` or ``"tsv"``.
    name : str
        The file, named in messages.

    Returns
    -------
    pandas.DataFrame
        One row per record under the header, object columns of str.

    Raises
    ------
    ValueError
        Naming the file, the row and its line, for a row whose fields are not as many as the
        header's (the fields found and due); naming the line of a quote left open; naming a
        column the header gives twice; for a file of blank lines.
    """
    delimiter = "\t" if kind == "tsv" else ","
    csv.field_size_limit(max(csv.field_size_limit(), len(text)))
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    header, records = None, []
    while True:
        line = reader.line_num + 1
        try:
            record = next(reader, None)
        except csv.Error as err:
            raise ValueError(f"{name}, line {line}: not a readable {kind.upper()} row ({err}); a text "
                             "holding a quote, a delimiter or a line break is quoted whole, its quotes "
                             "doubled") from err
        if record is None:
            break
        if not record or (len(record) == 1 and not record[0].strip()):
            continue
        if header is None:
            header = _header_names(record, name)
            continue
        if len(record) != len(header):
            raise ValueError(_field_count_problem(name, kind, len(records) + 1, line, len(record), header))
        records.append(record)
    if header is None:
        raise ValueError(f"{name}: no header line (every line is blank)")
    return pd.DataFrame(records, columns=header, dtype=object)


def _header_names(record: list[str], path: str) -> list[str]:
    """A CSV or TSV header's column names; ValueError naming a name given twice (which of the
    two columns a role reads would be a guess)."""
    seen: dict[str, int] = {}
    for position, column in enumerate(record, start=1):
        if column in seen:
            raise ValueError(f"{path}: the header names column {column!r} twice (fields {seen[column]} "
                             f"and {position}); give each column its own name")
        seen[column] = position
    return record


def _field_count_problem(path: str, kind: str, row: int, line: int, found: int, header: list[str]) -> str:
    """The message for a CSV or TSV row of ``found`` fields under ``header``."""
    delimiter = "tab" if kind == "tsv" else "comma"
    cause = (f"a {delimiter} missing{' (typed as spaces?)' if kind == 'tsv' else ''}" if found < len(header)
             else f"a {delimiter} inside a text that is not quoted")
    return (f"{path}, row {row} (line {line}): {found} fields, the header has {len(header)} "
            f"({', '.join(header)}); {cause}? Every row has one field per column, an empty one included")


def _is_array(text: str) -> bool:
    """Whether a ``.json`` file's ``text`` is one JSON array (it opens with ``[``), not JSON lines."""
    return text.lstrip().startswith("[")


def _json_array(text: str, path: Path) -> pd.DataFrame:
    """A JSON array of objects as a table, its n-th object row n; ValueError naming the file and
    the line, or the element, of what is wrong."""
    try:
        rows = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}, line {err.lineno}: not JSON ({err.msg}); a .json file holds one JSON "
                         "array of objects or JSON lines (one object per line)") from err
    if not isinstance(rows, list):
        raise ValueError(f"{path}: a JSON array of objects is expected, got {type(rows).__name__}")
    for number, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            raise ValueError(f"{path}, element {number} of the array: a JSON object is expected, got "
                             f"{type(row).__name__}")
    return _objects(rows)


def read_datasets_source(source: Mapping) -> pd.DataFrame:
    """A Hugging Face ``datasets`` split as a table.

    Parameters
    ----------
    source : mapping
        The entry's ``datasets`` source: ``path``, ``name`` (or none) and ``split``.

    Returns
    -------
    pandas.DataFrame
        The split's rows.

    Raises
    ------
    ImportError
        Saying what to install where the ``datasets`` package is absent.
    """
    try:
        import datasets
    except ImportError as err:
        raise ImportError("a `datasets:` source needs the `datasets` package (pip install datasets) "
                          "and internet; without them export the split to a local file and give "
                          "`file:` instead") from err
    split = datasets.load_dataset(source["path"], source.get("name"), split=source["split"])
    return split.to_pandas()


def require_columns(columns: Iterable[str], wanted: Mapping[str, str], name: str) -> None:
    """ValueError unless every column of ``wanted`` (what it is for -> the column's name) is among
    ``columns``: each missing one is named with what it is for, then the columns there are.

    Parameters
    ----------
    columns : iterable of str
        The columns there are.
    wanted : mapping of str to str
        What each needed column is for -> its name.
    name : str
        The file, named in the message.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        See above.
    """
    columns = [c for c in columns if c != ROW]
    missing = [f"{column!r} ({role})" for role, column in wanted.items() if column not in columns]
    if missing:
        raise ValueError(f"{name}: no column {', '.join(missing)}; its columns: {', '.join(map(repr, columns))}")


def is_number(value: object) -> bool:
    """Whether ``value`` is a number that is not missing (NaN) and not a boolean.

    Parameters
    ----------
    value : object
        A cell.

    Returns
    -------
    bool
    """
    return (isinstance(value, numbers.Number) and not isinstance(value, (bool, np.bool_))
            and not (isinstance(value, (float, np.floating)) and value != value))


def text_cell(value: object, row: int, column: str, name: str) -> str:
    """A cell as text: ``""`` for a missing value (None, NaN), a string as it is, a number as
    ``str`` of it (``text_column`` notes it). ValueError naming the file ``name``, the row and
    the column for anything else (a JSON object, a list, a boolean): read as text it would be
    its Python repr, in the references and inside the prompt.

    Parameters
    ----------
    value : object
        The cell.
    row : int
        Its row, named in the message.
    column : str
        Its column.
    name : str
        The file.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        See above.
    """
    if value is None or (isinstance(value, (float, np.floating)) and value != value):
        return ""
    if isinstance(value, str):
        return value
    if is_number(value):
        return str(value)
    raise ValueError(f"{name}: row {row}: column {column!r} holds {type(value).__name__} "
                     f"{str(value)[:60]!r}, not text; give a string")


def text_column(frame: pd.DataFrame, column: str, name: str, note: bool = True) -> pd.Series:
    """The cells of ``column`` as text (``text_cell``); where some are numbers and ``note`` is
    set (a column of texts, not of ids or counts), one line on stderr names the column and
    their rows.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table as read.
    column : str
        The column.
    name : str
        The file, named in messages.
    note : bool, optional
        Whether to note numbers read as text.

    Returns
    -------
    pandas.Series
        str values, the index of ``frame``.
    """
    values = frame[column]
    texts = [text_cell(v, row, column, name) for v, row in zip(values, frame[ROW], strict=True)]
    if note:
        note_numbers([row for v, row in zip(values, frame[ROW], strict=True) if is_number(v)], column, name)
    return pd.Series(texts, index=frame.index, dtype=object)


def note_numbers(rows: list[int], column: str, name: str) -> None:
    """One line on stderr where ``rows`` of ``column`` hold numbers that are read as text.

    Parameters
    ----------
    rows : list of int
        The rows holding numbers.
    column : str
        The column.
    name : str
        The file.

    Returns
    -------
    None
    """
    if rows:
        print(f"{name}: column {column!r} holds numbers in {rows_named(rows)}, read as text",
              file=sys.stderr)


def rows_named(rows: Iterable[int], limit: int = 5) -> str:
    """``row 3`` / ``rows 3, 7, 9 and 2 more``: rows in a message.

    Parameters
    ----------
    rows : iterable of int
        The rows.
    limit : int, optional
        The most rows named.

    Returns
    -------
    str
    """
    rows = list(rows)
    shown = ", ".join(map(str, rows[:limit]))
    more = f" and {len(rows) - limit} more" if len(rows) > limit else ""
    return f"{'row' if len(rows) == 1 else 'rows'} {shown}{more}"
