"""The Provo Corpus cloze norms (Luke & Christianson 2018) as canonical tables.

Each context is a prefix of a passage: the context of position n is the first n-1 whitespace
tokens of the passage (Ilia & Aziz 2024, Sec. 4), and ~40 participants each gave one word to
continue it. The human next-word distribution is the MLE of those responses.

The loader reads the original OSF file ``Provo_Corpus-Predictability_Norms.csv`` (Latin-1,
comma-separated, one row per position and distinct response, the passage repeated in ``Text``).
Quirks of that file, each handled here on purpose:

* Responses are mostly normalised already (lowercase, punctuation removed), but not all: some
  keep hyphens or dots (``tight-lipped``, ``mr.``, ``and/or``), 75 are punctuation only
  (``-----``, ``?``, ``.``). Every response is read by the rule that reads model words
  (``varprobe.words.read_word``), so ``tight-lipped`` is the word ``tightlipped`` a model
  writing "tight-lipped" gets; a response that holds no word is dropped and counted
  (``dropped_responses``), and the human distribution is the MLE of the remaining responses.
  Strings such as ``<NA>`` (read ``na``) or ``NA`` are words a participant typed,
  never missing values.
* ``TRUE`` / ``FALSE`` are a spreadsheet's conversion of the typed words true/false: the word
  rule lowercases them.
* Three target words carry a MacRoman apostrophe read as Latin-1 (``doesnÕt``): repaired to ``'``.
* Position (18, 3) mixes the responses for "the" with those for the passage's last word, which
  the norms mislabelled as word 3; the mixture is no human distribution, so it is dropped
  (``AMBIGUOUS_POSITIONS``).
* Position (55, 3) is absent from the norms (``MISSING_POSITIONS``).

The loader checks what it knows of the published file (``check_complete``): 55 passages and
2,687 positions in all, and every selected passage with a position for each word of its text
from the second on, so a file cut short (at a row boundary or not) is never read as a smaller
corpus.
"""

from __future__ import annotations

import io
import warnings
from pathlib import Path

import pandas as pd

from varprobe.data.headers import match_columns
from varprobe.data.raw_text import read_text
from varprobe.data.sources import OPT_OUT, Digest, Source
from varprobe.words import read_word

# The OSF original could not be fetched here: the mirror's file is a rebuild in its layout
# (provo_cloze/PROVENANCE.md), pinned as such; a download is checked by the loader alone.
SOURCES = (
    Source(
        url="https://osf.io/download/e4a2m/",
        mirror_path="provo_cloze/Provo_Corpus-Predictability_Norms.csv",
        mirror_digest=Digest("d1f10dcad7395cbdc81651d65333819538b00920f3579d4d3275d5c049ef0368", 13166182),
    ),
)
"""The Provo norms' raw file (``data/sources.py``)."""

NORMS_COLUMNS = ("Text_ID", "Text", "Word_Number", "Word", "Response", "Response_Count")
AMBIGUOUS_POSITIONS = frozenset({(18, 3)})
MISSING_POSITIONS = frozenset({(55, 3)})
N_PASSAGES = 55
N_POSITIONS = 2687
MOST_RESPONSES = 43
"""The most human responses of one Provo context (counted in the norms, ``AMBIGUOUS_POSITIONS``
aside): two disjoint oracles of more than half as many fit in none."""


def read_norms(path: Path) -> pd.DataFrame:
    """Read the OSF norms file, keeping every response string as typed (no NA inference).

    The published file has more columns than ``NORMS_COLUMNS``, which are ignored; a column that
    differs from one of ``NORMS_COLUMNS`` only in case or surrounding whitespace is read as it,
    with a warning (``varprobe.data.headers``).

    Parameters
    ----------
    path : pathlib.Path
        The norms CSV.

    Returns
    -------
    pandas.DataFrame
        The ``NORMS_COLUMNS`` of every row.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"Provo norms file not found: {path}")
    text = read_text(path, "latin-1")
    try:
        raw = pd.read_csv(io.StringIO(text), keep_default_na=False, na_values=[], dtype=str)
    except pd.errors.ParserError as err:
        raise ValueError(f"Provo norms file {path} is not a readable CSV: {err}") from err
    renames, notes = match_columns(raw.columns, NORMS_COLUMNS, name=f"Provo norms file {path}",
                                   others=True)
    for note in notes:
        warnings.warn(note, stacklevel=2)
    raw = raw.rename(columns=renames)
    missing = [c for c in NORMS_COLUMNS if c not in raw.columns]
    if missing:
        raise ValueError(f"Provo norms file {path} lacks columns {missing}")
    norms = raw.loc[:, list(NORMS_COLUMNS)].copy()
    for column in ("Text_ID", "Word_Number", "Response_Count"):
        values = norms[column].str.strip()
        bad = (~values.str.fullmatch(r"[0-9]{1,9}")).to_numpy().nonzero()[0]
        if len(bad):
            raise ValueError(
                f"Provo norms file {path}: column {column} holds {norms[column].iloc[bad[0]]!r}, not a whole "
                f"number of at most 9 digits, in row {bad[0] + 1} (row 1 is the first under the header; "
                f"{len(bad)} such rows)"
            )
        norms[column] = values.astype("int64")
    norms["Word"] = norms["Word"].str.replace("Õ", "'")
    norms["Text"] = norms["Text"].str.replace("Õ", "'")
    return norms


def check_complete(norms: pd.DataFrame, texts: list[int] | None = None) -> None:
    """Raise ValueError unless the norms hold what the published file holds: each passage of
    ``texts`` (all when None) a position for every word of its text from word 2 on (but
    ``MISSING_POSITIONS``), and for all passages 55 passages and 2,687 positions.

    Parameters
    ----------
    norms : pandas.DataFrame
        The Provo norms as read (``read_norms``).
    texts : list of int, optional
        The passages to check (1-based text ids); None: all.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        Naming the passages or positions missing.
    """
    selected = _select_texts(norms, texts)
    positions = selected.drop_duplicates(["Text_ID", "Word_Number"])
    incomplete = []
    for text_id, rows in positions.groupby("Text_ID"):
        words = len(rows["Text"].iloc[0].split(" "))
        expected = {k for k in range(2, words + 1) if (text_id, k) not in MISSING_POSITIONS}
        if set(rows["Word_Number"]) != expected:
            incomplete.append(f"{text_id} ({len(rows)} of its {len(expected)} positions)")
    if incomplete:
        raise ValueError(f"Provo norms: passages {', '.join(incomplete[:5])} lack positions "
                         f"(a truncated or different file); {OPT_OUT}")
    counts = (selected["Text_ID"].nunique(), len(positions))
    if texts is None and counts != (N_PASSAGES, N_POSITIONS):
        raise ValueError(f"Provo norms: {counts[0]} passages and {counts[1]} positions, the "
                         f"published norms have {N_PASSAGES} and {N_POSITIONS}; {OPT_OUT}")


def contexts_table(norms: pd.DataFrame, texts: list[int] | None = None,
                   verify: bool = True) -> pd.DataFrame:
    """One row per context: ``text_id, word_number, context, context_length, word, corpus_word``.

    ``word`` is the passage token as printed; ``corpus_word`` is the word it reads as
    (``varprobe.words.read_word``, the rule for responses and model words).

    Parameters
    ----------
    norms : pandas.DataFrame
        The norms (``read_norms``).
    texts : list of int, optional
        The passages to keep (all when None); an id absent from the norms is an error.
    verify : bool
        Check first that the selected passages are complete (``check_complete``).

    Returns
    -------
    pandas.DataFrame
        The contexts table (schema ``provo_contexts``).
    """
    if verify:
        check_complete(norms, texts)
    norms = _select_texts(norms, texts)
    positions = norms.drop_duplicates(["Text_ID", "Word_Number"]).copy()
    tokens = positions["Text"].str.split(" ")
    n = positions["Word_Number"].to_numpy()
    positions["context"] = [" ".join(t[: k - 1]) for t, k in zip(tokens, n, strict=True)]
    mismatch = [
        (i, k) for i, k, t, w in zip(positions["Text_ID"], n, tokens, positions["Word"], strict=True)
        if k - 1 >= len(t) or t[k - 1] != w
    ]
    mismatch = [p for p in mismatch if p not in AMBIGUOUS_POSITIONS]
    if mismatch:
        raise ValueError(
            f"Provo norms: Word does not match token Word_Number of Text at {mismatch[:5]}"
        )
    table = pd.DataFrame(
        {
            "text_id": positions["Text_ID"].astype("int32"),
            "word_number": positions["Word_Number"].astype("int32"),
            "context": positions["context"],
            "context_length": (positions["Word_Number"] - 1).astype("int32"),
            "word": positions["Word"],
            "corpus_word": positions["Word"].map(read_word),
        }
    )
    return _drop_ambiguous(table).sort_values(["text_id", "word_number"], ignore_index=True)


def passages_table(norms: pd.DataFrame, texts: list[int] | None = None) -> pd.DataFrame:
    """One row per passage: ``text_id, text``, the norms' ``Text`` as ``read_norms`` cleaned it.

    Parameters
    ----------
    norms : pandas.DataFrame
        The norms (``read_norms``).
    texts : list of int, optional
        The passages to keep (all when None).

    Returns
    -------
    pandas.DataFrame
        One row per passage.

    Raises
    ------
    ValueError
        For an id absent from the norms, and a passage whose rows disagree on its text.
    """
    norms = _select_texts(norms, texts)
    variants = norms.groupby("Text_ID")["Text"].nunique()
    if (variants > 1).any():
        raise ValueError(
            f"Provo norms: passages {variants[variants > 1].index.tolist()} have more than one Text"
        )
    passages = norms.drop_duplicates("Text_ID").sort_values("Text_ID")
    return pd.DataFrame(
        {"text_id": passages["Text_ID"].astype("int32"), "text": passages["Text"]}
    ).reset_index(drop=True)


def responses_table(norms: pd.DataFrame, texts: list[int] | None = None) -> pd.DataFrame:
    """Long table of human responses: ``text_id, word_number, response, count`` (count > 0).

    ``response`` is the word a response reads as (``varprobe.words.read_word``); responses that
    read alike are one row, their counts summed. Responses that hold no word are left out (see
    ``dropped_responses``).

    Parameters
    ----------
    norms : pandas.DataFrame
        The norms (``read_norms``).
    texts : list of int, optional
        The passages to keep (all when None).

    Returns
    -------
    pandas.DataFrame
        The responses table (schema ``provo_responses``).
    """
    table = _read_responses(_select_texts(norms, texts))
    table = table[table["response"] != ""]
    table = table.groupby(["text_id", "word_number", "response"], sort=True)["count"].sum().reset_index()
    table = table.astype({"text_id": "int32", "word_number": "int32", "count": "int64"})
    return _drop_ambiguous(table).reset_index(drop=True)


def dropped_responses(norms: pd.DataFrame, texts: list[int] | None = None) -> pd.DataFrame:
    """The responses that hold no word (punctuation only), per context that has any:
    ``text_id, word_number, count``.

    Parameters
    ----------
    norms : pandas.DataFrame
        The Provo norms as read.
    texts : list of int, optional
        The passages read; None: all.

    Returns
    -------
    pandas.DataFrame
        ``text_id``, ``word_number`` and ``count`` (int) of the dropped responses.
    """
    table = _read_responses(_select_texts(norms, texts))
    table = table[table["response"] == ""]
    table = table.groupby(["text_id", "word_number"], sort=True)["count"].sum().reset_index()
    return _drop_ambiguous(table).reset_index(drop=True)


def _read_responses(norms: pd.DataFrame) -> pd.DataFrame:
    """``text_id, word_number, response, count`` per norms row with a positive count, the
    response read as a word (``""`` when it holds none)."""
    rows = norms[norms["Response_Count"] > 0]
    return pd.DataFrame(
        {
            "text_id": rows["Text_ID"],
            "word_number": rows["Word_Number"],
            "response": rows["Response"].map(read_word).astype(object),
            "count": rows["Response_Count"],
        }
    )


def _select_texts(norms: pd.DataFrame, texts: list[int] | None) -> pd.DataFrame:
    if texts is None:
        return norms
    unknown = sorted(set(texts) - set(norms["Text_ID"]))
    if unknown:
        raise ValueError(f"provo.texts names passages {unknown} that the norms file does not hold")
    return norms[norms["Text_ID"].isin(texts)]


def _drop_ambiguous(table: pd.DataFrame) -> pd.DataFrame:
    keys = list(zip(table["text_id"], table["word_number"], strict=True))
    return table[[k not in AMBIGUOUS_POSITIONS for k in keys]]
