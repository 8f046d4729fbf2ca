"""The memory a job takes to parse the data files it reads (a cloze corpus, a production task,
a dataset's raw files), from their sizes and rows: the ``mem_mb`` that the workflow asks for such
a job grows with the file (``workflow/rules/common.smk``, ``job_resources``).

Peaks measured with ``/usr/bin/time -v`` (maximum resident set) of ``varprobe provo-data`` on
generated cloze corpora of 10-70 MB (Provo's norms tiled, the text on every row; one row per
response by context id; three-word contexts) and of ``varprobe production-data`` on generated
tasks of 20-40 MB (JSON lines, CSV long form) fit

    peak = 156 MB + 5.1 MB per MB of text + 0.39 MB per 1,000 rows

within 25 MB; JSON lines cost up to an eighth more. A Parquet file holds its text compressed
(Provo's layout in 0.3 MB), so there its rows alone count, at the cost of the longest rows
measured (2 MB per 1,000 rows of Provo's layout). The estimates (``BASE_MB``, ``PER_MB``,
``PER_THOUSAND_ROWS``, ``PARQUET_PER_THOUSAND_ROWS``) take half as much again.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path

BASE_MB = 200
"""The interpreter, pandas and pyarrow, before any row."""
PER_MB = 8
"""Megabytes of memory per megabyte of a text file (CSV, TSV, JSON, or a raw text file)."""
PER_THOUSAND_ROWS = 0.6
"""Megabytes per 1,000 rows (lines; objects of a JSON file) of a text file."""
PARQUET_PER_THOUSAND_ROWS = 3
"""Megabytes per 1,000 rows of a Parquet file, whose size does not tell its text's."""

_CHUNK = 1 << 24


def file_rows(path: Path) -> int:
    """The rows of a data file without parsing it: a Parquet file's from its footer, a JSON
    file's objects (its ``{`` bytes, an upper bound), any other file's lines.

    Parameters
    ----------
    path : Path
        The file.

    Returns
    -------
    int
    """
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return pq.ParquetFile(path).metadata.num_rows
    mark = b"{" if path.suffix == ".json" else b"\n"
    rows = 0
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            rows += chunk.count(mark)
    return rows + 1


def parse_mem_mb(paths: Iterable[str | Path]) -> int:
    """The megabytes a job needs to parse the files ``paths`` (module docstring): ``BASE_MB``
    plus, per file, ``PER_MB`` per megabyte and ``PER_THOUSAND_ROWS`` per 1,000 rows
    (``file_rows``), or ``PARQUET_PER_THOUSAND_ROWS`` per 1,000 rows of a Parquet file. A path
    that is not a file (not yet fetched, or a folder) counts nothing.

    Parameters
    ----------
    paths : iterable of str or Path
        The files the job reads.

    Returns
    -------
    int

    Examples
    --------
    >>> parse_mem_mb([])
    200
    """
    need = BASE_MB
    for path in map(Path, paths):
        if not path.is_file():
            continue
        rows = file_rows(path) / 1000
        if path.suffix == ".parquet":
            need += PARQUET_PER_THOUSAND_ROWS * rows
        else:
            need += PER_MB * path.stat().st_size / 2**20 + PER_THOUSAND_ROWS * rows
    return math.ceil(need)
