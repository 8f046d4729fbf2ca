"""A cloze corpus from a config entry (``provo.corpus``): the next-word study's contexts and human
responses read from a user's file, into the tables the Provo loader writes (``data/provo.py``).

The entry names the file (``data/user_files.py``: CSV, TSV, Parquet, JSON lines, or a ``datasets``
source), its ``language`` and its ``columns``: what each role is called in the file. A context
is given in one of two ways:

* ``passage`` and ``position``: the context of position n of a passage is its first n-1 words,
  read off the passage ``text`` (whitespace tokens, as in Provo: Ilia & Aziz 2024, Sec. 4; a
  run of whitespace of any kind, leading and trailing included, delimits as one space does) or
  given whole in ``context`` (its words joined by single spaces as well);
* ``context_id`` and ``context``: each context stands alone (its position is its length + 1).

``response`` holds a participant's response; ``count`` how many gave it (absent: one row per
response). The corpus word (the word the passage goes on with) is the ``word`` column, or, with
``text``, the passage's word at the position; a corpus with neither has none (the analyses that
need it say so and are not run). Responses and corpus words are read by the word rule of model
words (``varprobe.words.read_word``); a response that holds no word is dropped and counted, and
responses that read alike are one row, their counts summed.

An id (a passage's, a context's) is its text as written, surrounding whitespace aside: ``7`` and
``07`` are two ids. ``provo.texts`` selects by number, so each id gets one (``_numbered``): a
whole-number id (ASCII digits) keeps its number; the other ids are numbered after the largest of
those, in order of first appearance (the mix noted on stderr), and the tables' metadata maps each
number to the id where the two are written differently. Two ids that read as one number
(``7``, ``07``) are refused: either would be passage 7.

Checks name the file, the column and the rows: a column the entry names but the file lacks
(with the columns it has), an empty passage, position, context id, context or response, a
whole-number id past ``MAX_ID``, two ids that read as one number, a position or count that is
no whole number from 1 to ``MAX_POSITION`` or ``MAX_RESPONSES`` (the value named: a sign, a
decimal point, an exponent, an empty cell), a context whose counts sum past ``MAX_RESPONSES``,
position 1 of a passage (its context is empty: no word precedes it), a context given two texts
or two words, a ``word`` that is not the passage's word at its position.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping

import pandas as pd

from varprobe.data.user_files import ROW, read_user_table, require_columns, rows_named, text_column
from varprobe.words import read_word

FORMS = {
    "passage": (("passage", "position"), ("text", "context")),
    "context_id": (("context_id", "context"), ()),
}
"""How a context is given: the columns the form needs, and those of which it needs one."""
ROLES = ("passage", "position", "text", "context", "context_id", "response", "count", "word")
"""Every column a corpus entry may name."""
TEXT_ROLES = ("text", "context", "response", "word")
"""The roles that hold text (the others hold ids and numbers): a number there is read as text
with a note."""
_INTEGER = re.compile(r"^[0-9]+$")
MAX_ID = 2**31 - 1
"""The largest whole-number id kept as a passage's number (the tables hold ``text_id`` as int32)."""
MAX_POSITION = 2**31 - 1
"""The largest position (the tables hold ``word_number`` as int32)."""
MAX_RESPONSES = 10**6
"""The most responses one context may hold (a row's count, and a context's counts summed): the
oracle control permutes a context's responses one by one, so a count past any cohort of
participants would exhaust memory rather than be studied."""


def corpus_form(columns: Mapping[str, str]) -> str:
    """The form of a corpus entry's ``columns`` (a key of ``FORMS``); ValueError saying what is
    missing or too much.

    Parameters
    ----------
    columns : mapping of str to str
        The entry's ``columns``: what each column is for -> its name in the file.

    Returns
    -------
    str
        The form's name.

    Raises
    ------
    ValueError
        When the columns fit no form.
    """
    unknown = sorted(set(columns) - set(ROLES))
    if unknown:
        raise ValueError(f"columns: {unknown} are not roles of a cloze corpus (those are: {', '.join(ROLES)})")
    if "response" not in columns:
        raise ValueError("columns: name the `response` column")
    forms = [f for f, (needed, _) in FORMS.items() if all(c in columns for c in needed)]
    if len(forms) != 1:
        raise ValueError("columns: give either `passage` and `position` (with `text` or `context`) or "
                         f"`context_id` and `context`; got {', '.join(sorted(columns))}")
    needed, one_of = FORMS[forms[0]]
    if one_of and sum(c in columns for c in one_of) != 1:
        raise ValueError(f"columns: with `passage` and `position` give exactly one of {' or '.join(one_of)}")
    return forms[0]


def read_corpus(entry: Mapping) -> dict:
    """The corpus of a ``provo.corpus`` entry.

    Parameters
    ----------
    entry : mapping
        The ``provo.corpus`` entry of the config (its file and column names).

    Returns
    -------
    dict
        ``contexts`` and ``responses`` (the schemas ``provo_contexts`` and ``provo_responses``),
        ``dropped`` (responses holding no word per context: ``text_id, word_number, count``) and
        ``metadata`` (the file's provenance, its rows, the contexts and responses kept, the
        passage ids' mapping).
    """
    columns = dict(entry["columns"])
    form = corpus_form(columns)
    frame, origin, name, cells = _cells(entry, columns)
    rows = frame[ROW]
    counts = _whole_numbers(rows, cells["count"], columns["count"], name, MAX_RESPONSES) if "count" in cells \
        else pd.Series(1, index=frame.index)
    text_ids, positions, mapping = _keys(cells, columns, form, rows, name)
    keys = pd.DataFrame({"text_id": text_ids, "word_number": positions, ROW: rows})
    _no_crowded_context(keys.assign(count=counts), columns, name)
    contexts = _contexts(keys, cells, columns, name)
    responses = pd.DataFrame({"text_id": text_ids, "word_number": positions,
                              "response": cells["response"].map(read_word).astype(object), "count": counts})
    kept = responses[responses["response"] != ""]
    kept = kept.groupby(["text_id", "word_number", "response"], sort=True)["count"].sum().reset_index()
    dropped = responses[responses["response"] == ""]
    dropped = dropped.groupby(["text_id", "word_number"], sort=True)["count"].sum().reset_index()
    metadata = {**origin, "corpus": entry["name"], "language": entry["language"], "form": form,
                "rows": len(frame), "contexts": len(contexts), "responses": int(kept["count"].sum()),
                "dropped_responses": int(dropped["count"].sum()),
                **({"passage_ids": mapping} if mapping else {})}
    return {"contexts": contexts,
            "responses": kept.astype({"text_id": "int32", "word_number": "int32", "count": "int64"}),
            "dropped": dropped.astype("int64"), "metadata": metadata}


MIN_RESPONSES = 2
"""The responses a context needs: the oracle control splits them into two non-empty halves
(Ilia & Aziz 2024, Sec. 4)."""


def without_thin_contexts(contexts: pd.DataFrame, responses: pd.DataFrame,
                          name: str) -> tuple[pd.DataFrame, pd.DataFrame, list]:
    """``contexts`` and ``responses`` without the contexts that hold fewer than
    ``MIN_RESPONSES`` responses (after the responses holding no word were dropped), and those
    contexts as ``[text_id, word_number, responses]``; ValueError where no context is left.

    Parameters
    ----------
    contexts : pandas.DataFrame
        A ``provo_contexts`` table.
    responses : pandas.DataFrame
        Its ``provo_responses`` table.
    name : str
        The corpus's file (or name), named in the message.

    Returns
    -------
    contexts : pandas.DataFrame
        The contexts kept.
    responses : pandas.DataFrame
        Their responses.
    dropped : list of [int, int, int]
        ``[text_id, word_number, responses]`` of each context dropped.

    Raises
    ------
    ValueError
        When no context holds ``MIN_RESPONSES`` responses.
    """
    totals = responses.groupby(["text_id", "word_number"])["count"].sum()
    keys = pd.MultiIndex.from_frame(contexts[["text_id", "word_number"]])
    held = totals.reindex(keys, fill_value=0).to_numpy()
    thin = contexts.loc[held < MIN_RESPONSES, ["text_id", "word_number"]].assign(responses=held[held < MIN_RESPONSES])
    if len(thin) == len(contexts):
        raise ValueError(f"{name}: no context holds {MIN_RESPONSES} responses with a word; the oracle control "
                         "splits each context's responses in two halves")
    kept = pd.MultiIndex.from_frame(responses[["text_id", "word_number"]]).isin(
        pd.MultiIndex.from_frame(thin[["text_id", "word_number"]]))
    return (contexts[held >= MIN_RESPONSES].reset_index(drop=True), responses[~kept].reset_index(drop=True),
            thin.astype(int).values.tolist())


def context_names(entry: Mapping) -> dict[str, tuple[int, int]]:
    """The contexts of a corpus entry by the name ``provo.figure_contexts`` gives them, read
    from its file without its responses: ``passage:position`` (the passage's number, as
    ``provo.texts`` has it) in the ``passage`` form, the context id as the file gives it in the
    ``context_id`` form; each name -> ``(text_id, word_number)``.

    Parameters
    ----------
    entry : mapping
        The corpus entry, with its ``file`` and ``columns``.

    Returns
    -------
    dict of str to (int, int)
        ``(text_id, word_number)`` of each context by its name.
    """
    columns = dict(entry["columns"])
    form = corpus_form(columns)
    frame, _, name, cells = _cells(entry, columns)
    text_ids, positions, _ = _keys(cells, columns, form, frame[ROW], name)
    given = (text_ids.astype(str) + ":" + positions.astype(str)) if form == "passage" else cells["context_id"]
    return {n: (int(t), int(k)) for n, t, k in zip(given, text_ids, positions, strict=True)}


def _cells(entry: Mapping, columns: Mapping[str, str]) -> tuple[pd.DataFrame, dict, str, dict[str, pd.Series]]:
    """The entry's table, its provenance, its name in messages and the text of each role's
    column; ValueError naming a missing column or the rows of an empty key or response."""
    frame, origin = read_user_table(entry)
    name = origin.get("file", f"corpus {entry['name']!r}")
    require_columns(frame.columns, {f"columns.{role}": column for role, column in columns.items()}, name)
    cells = {role: text_column(frame, column, name, note=role in TEXT_ROLES) for role, column in columns.items()}
    cells = {role: values.map(_words_joined) if role in ("text", "context") else values.str.strip()
             for role, values in cells.items()}
    for role in ("passage", "position", "context_id", "response"):
        if role in cells:
            _no_empty(frame[ROW], cells[role], f"empty {role} (column {columns[role]!r})", name)
    if "context" in cells:
        _no_empty_context(frame.loc[cells["context"] == "", ROW],
                          f"an empty or blank context (column {columns['context']!r})", name)
    return frame, origin, name, cells


def _keys(cells: dict[str, pd.Series], columns: Mapping[str, str], form: str, rows: pd.Series,
          name: str) -> tuple[pd.Series, pd.Series, dict[str, str]]:
    """Each row's ``text_id`` and ``word_number`` and the ids' mapping (``_numbered``): a
    passage's number and the position, or a context id's number and the context's length + 1;
    ValueError naming the rows of position 1 read off a ``text`` (an empty context)."""
    if form == "passage":
        text_ids, mapping = _numbered(cells["passage"], rows, columns["passage"], name)
        positions = _whole_numbers(rows, cells["position"], columns["position"], name, MAX_POSITION)
        if "text" in cells:
            _no_empty_context(rows[positions == 1], f"position 1 (column {columns['position']!r}), whose "
                              "context, the words of the passage before it, is empty,", name)
        return text_ids, positions, mapping
    text_ids, mapping = _numbered(cells["context_id"], rows, columns["context_id"], name)
    return text_ids, cells["context"].map(lambda c: len(c.split()) + 1), mapping


def _contexts(keys: pd.DataFrame, cells: dict[str, pd.Series], columns: Mapping[str, str],
              name: str) -> pd.DataFrame:
    """One row per context (schema ``provo_contexts``), sorted; ValueError naming the rows of a
    context given two texts or two words, or a word that is not the passage's at its position."""
    given = keys.assign(**{role: cells[role] for role in ("text", "context", "word") if role in cells})
    for role in ("text", "context", "word"):
        if role in given:
            key = ["text_id"] if role == "text" else ["text_id", "word_number"]
            variants = given.groupby(key)[role].nunique()
            if (variants > 1).any():
                clash = given.set_index(key).loc[variants[variants > 1].index[0], ROW]
                raise ValueError(f"{name}: one {'passage' if role == 'text' else 'context'} has two different "
                                 f"{role}s (column {columns[role]!r}) in {rows_named(list(clash))}")
    first = given.drop_duplicates(["text_id", "word_number"]).copy()
    if "text" in first:
        tokens = first["text"].str.split(" ")  # single spaces: _words_joined
        too_far = [r for t, k, r in zip(tokens, first["word_number"], first[ROW], strict=True) if k > len(t)]
        if too_far:
            raise ValueError(f"{name}: position (column {columns['position']!r}) beyond the end of its passage's "
                             f"text (column {columns['text']!r}) in {rows_named(too_far)}")
        first["context"] = [" ".join(t[: k - 1]) for t, k in zip(tokens, first["word_number"], strict=True)]
        at_position = pd.Series([t[k - 1] for t, k in zip(tokens, first["word_number"], strict=True)],
                                index=first.index)
        if "word" in first:
            wrong = first.loc[first["word"] != at_position, ROW]
            if len(wrong):
                raise ValueError(f"{name}: the word (column {columns['word']!r}) is not the passage text's word "
                                 f"at its position in {rows_named(wrong)}")
        first["word"] = at_position
        lengths = first["word_number"] - 1
    else:
        lengths = first["context"].map(lambda c: len(c.split()))
    if "word" not in first:
        first["word"] = ""
    table = pd.DataFrame({
        "text_id": first["text_id"].astype("int32"),
        "word_number": first["word_number"].astype("int32"),
        "context": first["context"],
        "context_length": lengths.astype("int32"),
        "word": first["word"],
        "corpus_word": first["word"].map(read_word),
    })
    return table.sort_values(["text_id", "word_number"], ignore_index=True)


def _words_joined(text: str) -> str:
    """``text``'s words (its runs of non-whitespace: spaces, tabs, no-break spaces, line breaks
    all delimit) joined by single spaces, so that position n is the n-th run however the
    words are spaced."""
    return " ".join(text.split())


def _no_empty(rows: pd.Series, values: pd.Series, what: str, name: str) -> None:
    empty = rows[values == ""]
    if len(empty):
        raise ValueError(f"{name}: {what} in {rows_named(empty)}")


def _no_empty_context(rows: pd.Series, what: str, name: str) -> None:
    """ValueError naming ``rows``, those of an empty context, where there are any."""
    if len(rows):
        raise ValueError(f"{name}: {what} in {rows_named(rows)}: a model would be prompted with nothing; a "
                         "context holds at least one word, as Provo's do (its norms start at a passage's "
                         "second word)")


def _whole_numbers(rows: pd.Series, values: pd.Series, column: str, name: str, largest: int) -> pd.Series:
    """``values`` (text) as integers; ValueError naming the file, the column, the rows and the
    first bad value where one is no whole number from 1 to ``largest`` written in ASCII digits."""
    bad = rows[~values.map(lambda v: bool(_INTEGER.match(v)) and 0 < int(v) <= largest)]
    if len(bad):
        first = values[rows == bad.iloc[0]].iloc[0]
        shown = "an empty or missing value" if first == "" else repr(first)
        raise ValueError(f"{name}: column {column!r} holds {shown}, not a whole number from 1 to {largest:,}, "
                         f"in {rows_named(bad)}")
    return values.map(int).astype("int64")


def _no_crowded_context(keys: pd.DataFrame, columns: Mapping[str, str], name: str) -> None:
    """ValueError naming the rows of a context whose counts sum past ``MAX_RESPONSES``."""
    totals = keys.groupby(["text_id", "word_number"])["count"].sum()
    crowded = totals[totals > MAX_RESPONSES]
    if len(crowded):
        rows = keys.set_index(["text_id", "word_number"]).loc[crowded.index[0], ROW]
        raise ValueError(f"{name}: one context holds {crowded.iloc[0]:,} responses (column "
                         f"{columns['count']!r}, {rows_named(list(rows))}), more than {MAX_RESPONSES:,}")


def _numbered(ids: pd.Series, rows: pd.Series, column: str, name: str) -> tuple[pd.Series, dict[str, str]]:
    """A number per id (the module docstring): a whole-number id's own, the others' after the
    largest of those in order of first appearance; with the mapping (number -> id) of each id
    not written as its number. ValueError naming the file, the column, the ids and their rows
    where two ids read as one number or a whole-number id is past ``MAX_ID``."""
    whole = ids.map(lambda v: bool(_INTEGER.match(v)))
    numbers = ids[whole].map(int)
    too_large = rows[whole][numbers > MAX_ID]
    if len(too_large):
        raise ValueError(f"{name}: column {column!r} holds the id {ids[rows == too_large.iloc[0]].iloc[0]!r}, "
                         f"a whole number past {MAX_ID:,}, in {rows_named(too_large)}; a whole-number id is "
                         "kept as its passage's number, so give it a letter (it is then numbered)")
    spellings = ids[whole].groupby(numbers).unique()
    clash = spellings[spellings.map(len) > 1]
    if len(clash):
        number, spelled = clash.index[0], list(clash.iloc[0])
        raise ValueError(f"{name}: column {column!r} holds the ids {', '.join(map(repr, spelled))} "
                         f"({rows_named(rows[ids.isin(spelled)])}): different ids (an id is its text as "
                         f"written) that read as one number, {number}, and a whole-number id is kept as "
                         "its number (provo.texts selects by it); give them ids that read as different numbers")
    start = int(numbers.max()) if len(numbers) else 0
    others = {value: k for k, value in enumerate(dict.fromkeys(ids[~whole]), start=start + 1)}
    text_ids = pd.Series([int(v) if w else others[v] for v, w in zip(ids, whole, strict=True)],
                         index=ids.index, dtype="int64")
    if others and len(numbers):
        shown = ", ".join(f"{v!r} -> {k}" for v, k in list(others.items())[:5])
        print(f"{name}: column {column!r} mixes whole-number ids (kept as their numbers) with others, "
              f"numbered after the largest ({start}): {shown}{' ...' if len(others) > 5 else ''}",
              file=sys.stderr)
    mapping = {str(k): v for v, k in zip(ids, text_ids, strict=True) if str(k) != v}
    return text_ids, mapping
