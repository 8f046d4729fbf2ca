"""External samples: words drawn elsewhere (an API model, published samples) as a samples table.

The file is a CSV with columns ``text_id, word_number, sample[, count]``: one row per sampled
continuation, ``count`` (default 1) times. Any other column is an error naming it (a misspelled
``count`` would otherwise leave every row one draw); a column spelled with other case or
surrounding whitespace (`` count``, ``Count``) is read as its column, with a warning
(``varprobe.data.headers``). A sample is read as text that starts a new word after
the context, i.e. with an implied leading space, and goes through the same first-word extraction
and normalisation as the model's own draws (``varprobe.words.first_word`` with ``ended=True``).

A file may cover more than the run: rows for corpus contexts outside the configured ones (other
passages, or a position the loader drops by design such as Provo (18, 3)) are skipped and
counted (``Coverage``); rows naming a context the corpus does not have are an error.
"""

from __future__ import annotations

import io
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from varprobe.data.headers import header_rows, match_columns
from varprobe.data.raw_text import decode, read_text
from varprobe.data.user_files import delimited_table
from varprobe.words import first_word

REQUIRED = ("text_id", "word_number", "sample")
_WHOLE = r"[0-9]{1,9}"
"""An id or count: ASCII digits, no sign, no decimal point, within int32."""
OPTIONAL = ("count",)


@dataclass(frozen=True)
class Coverage:
    """How a samples file's rows met the configured contexts: rows (and draws, their counts)
    skipped for corpus contexts outside the configuration, how many such contexts, and how many
    configured contexts have no row at all."""

    skipped_rows: int
    skipped_draws: int
    skipped_contexts: int
    configured_without_rows: int

    def as_metadata(self) -> dict:
        """The counts as a JSON-ready dict.

        Returns
        -------
        dict
            Each count by its field name (int values).
        """
        return asdict(self)

    def describe(self, path: str | Path) -> str:
        """One log line naming the file and the counts.

        Parameters
        ----------
        path : str or Path
            The samples file the counts are of.

        Returns
        -------
        str
            The log line.
        """
        return (f"samples file {path}: skipped {self.skipped_rows} rows ({self.skipped_draws} draws) "
                f"for {self.skipped_contexts} corpus contexts outside the configured ones; "
                f"{self.configured_without_rows} configured contexts have no row")


def check_header(path: str | Path, columns: list[str]) -> tuple[dict[str, str], list[str]]:
    """The renames of the samples file's header ``columns`` to the known ones and a warning per
    rename (``varprobe.data.headers.match_columns``); ValueError naming the file and the column
    for an unknown or missing column.

    Parameters
    ----------
    path : str or Path
        The samples file, named in messages.
    columns : list of str
        Its header's column names.

    Returns
    -------
    renames : dict of str to str
        The known column name of each renamed header column.
    warnings : list of str
        One message per rename.

    Raises
    ------
    ValueError
        For an unknown or a missing column.
    """
    renames, warnings = match_columns(columns, REQUIRED, OPTIONAL, name=f"samples file {path}")
    missing = [c for c in REQUIRED if c not in {renames.get(c, c) for c in columns}]
    if missing:
        raise ValueError(f"samples file {path}: missing column(s) {missing}; need {list(REQUIRED)}[, count]")
    return renames, warnings


def header_warnings(path: str | Path) -> list[str]:
    """``check_header`` of the file's first line alone (the parse-time check of a config's
    samples file): its warnings, or ValueError.

    Parameters
    ----------
    path : str or Path
        The samples CSV file.

    Returns
    -------
    list of str
        The warnings of ``check_header``.

    Raises
    ------
    ValueError
        When the file has no header line, is no readable CSV, or its header does not pass
        ``check_header``.
    """
    with Path(path).open("rb") as stream:
        head = decode(stream.readline(), "utf-8", str(path))
    if not head.strip():
        raise ValueError(f"samples file {path} has no header on its first line (an empty file?); "
                         f"need {', '.join(REQUIRED)}[, count]")
    try:
        columns = list(pd.read_csv(io.StringIO(head), dtype=str, nrows=0).columns)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise ValueError(f"samples file {path} is not a readable CSV: {err}") from err
    return check_header(path, columns)[1]


def read_external_samples(path: str | Path, contexts: pd.DataFrame,
                          corpus: set[tuple[int, int]]) -> tuple[pd.DataFrame, Coverage, list[str]]:
    """Validate the CSV at ``path`` against the configured ``contexts`` and the ``corpus``'s
    contexts (``(text_id, word_number)`` keys, those the loader drops included); build a samples
    table of the configured contexts' rows, count what was skipped, and return the header's
    warnings (``check_header``).

    Errors name the file, the column or row, and the bad value: an empty or header-only file, a
    row that repeats the header, a file in another encoding than UTF-8, a missing or unknown
    column, a non-integer id or count, a count below 1, or contexts that the corpus does not have.

    Parameters
    ----------
    path : str or Path
        The samples CSV file (UTF-8): columns ``text_id``, ``word_number``, ``response`` and,
        optionally, ``count``.
    contexts : pandas.DataFrame
        The configured contexts, a ``provo_contexts`` table.
    corpus : set of (int, int)
        The corpus's ``(text_id, word_number)`` keys.

    Returns
    -------
    samples : pandas.DataFrame
        A ``provo_samples`` table of the configured contexts' rows.
    coverage : Coverage
        The counts of rows kept and skipped.
    warnings : list of str
        The header's warnings.

    Raises
    ------
    ValueError
        For any of the bad files listed above, naming the file, column or row and value.
    """
    raw = _read_csv(Path(path))
    renames, warnings = check_header(path, list(raw.columns))
    raw = raw.rename(columns=renames)
    if "count" not in raw.columns:
        raw["count"] = "1"
    for column in ("text_id", "word_number", "count"):
        values = raw[column].str.strip()
        bad = raw.index[~values.str.fullmatch(_WHOLE)]
        if len(bad):
            row = bad[0]
            raise ValueError(
                f"samples file {path}, row {row + 2}: column {column} must be a whole number of at most 9 "
                f"digits, got {raw.at[row, column]!r}"
            )
        raw[column] = values.astype("int64")
    if (raw["count"] < 1).any():
        row = raw.index[raw["count"] < 1][0]
        raise ValueError(f"samples file {path}, row {row + 2}: count must be >= 1, got {raw.at[row, 'count']}")
    raw, coverage = _configured_rows(path, raw, contexts, corpus)
    extractions = [first_word(" " + s.lstrip(), ended=True) for s in raw["sample"]]
    words = [e.word for e in extractions]
    samples = pd.DataFrame(
        {
            "text_id": raw["text_id"],
            "word_number": raw["word_number"],
            "text": raw["sample"],
            "word": words,
            "failed": [not w for w in words],
            "failure": [("" if e.word else e.status) for e in extractions],
            "n_tokens": pd.array([pd.NA] * len(raw), dtype="Int32"),
            "count": raw["count"],
        }
    )
    samples["sample_index"] = samples.groupby(["text_id", "word_number"]).cumcount()
    samples = samples.sort_values(["text_id", "word_number", "sample_index"], ignore_index=True)
    return samples, coverage, warnings


def _read_csv(path: Path) -> pd.DataFrame:
    """The CSV's cells as strings; ValueError naming the file when it is empty, not UTF-8, not
    parseable (a row of more or fewer fields than the header among them: ``delimited_table``) or
    without rows."""
    raw = delimited_table(read_text(path), "csv", f"samples file {path}")
    if raw.empty:
        raise ValueError(f"samples file {path} has a header but no rows (no draws)")
    repeated = header_rows(raw, raw.columns)
    if repeated:
        raise ValueError(f"samples file {path}, row {repeated[0] + 2}: the header repeated ({len(repeated)} "
                         "such rows), as files joined end to end leave it; remove it")
    return raw


def _configured_rows(path: Path, raw: pd.DataFrame, contexts: pd.DataFrame,
                     corpus: set[tuple[int, int]]) -> tuple[pd.DataFrame, Coverage]:
    """The rows of configured contexts, and the coverage; ValueError naming the rows whose
    context the corpus does not have."""
    configured = set(zip(contexts["text_id"], contexts["word_number"], strict=True))
    keys = pd.Series(list(zip(raw["text_id"], raw["word_number"], strict=True)), index=raw.index)
    unknown = keys[~keys.isin(corpus)]
    if len(unknown):
        named = ", ".join(f"row {i + 2} ({t}, {w})" for i, (t, w) in unknown.head(5).items())
        raise ValueError(
            f"samples file {path}: {len(unknown)} rows name (text_id, word_number) contexts that "
            f"the Provo corpus does not have: {named}"
        )
    kept = keys.isin(configured)
    if not kept.any():
        raise ValueError(f"samples file {path}: none of its {len(raw)} rows is for a configured "
                         f"context (configured passages: {sorted(set(map(int, contexts['text_id'])))})")
    coverage = Coverage(
        skipped_rows=int((~kept).sum()),
        skipped_draws=int(raw.loc[~kept, "count"].sum()),
        skipped_contexts=keys[~kept].nunique(),
        configured_without_rows=len(configured - set(keys[kept])),
    )
    return raw[kept].reset_index(drop=True), coverage
