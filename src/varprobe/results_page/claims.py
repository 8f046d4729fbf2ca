"""The numbers a results page's prose cites, checked against the numbers its tables show: every
decimal, percentage and quantity in words (``2.7 million``) of the prose (outside tables, code
blocks, inline code and the spans ``SKIPPED``) must be printed in one of the page's tables or its
appendix's (``render`` writes both, ``split`` parts them), so that no sentence reads a value the
page and its appendix do not show."""

from __future__ import annotations

import re

QUANTITY = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?) (thousand|million|billion)\b")
"""A number in words as the page prints it (``2.7 million``): one value, read with its word."""
PERCENT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?:%?-(\d+(?:\.\d+)?))?%")
"""A percentage (``5.00%``), or a range of them (``41-45%``, ``40.93%-44.90%``): each end a value."""
DECIMAL = re.compile(r"(?<![\w.])(\d+\.\d+)(?!\.?\d)")
"""A decimal number as the page prints it (``0.583``, ``-0.055`` read without its sign); a
version (``3.11.7``) or a name (``w1.png``) is none."""
NOT_VALUES = re.compile(
    r"`[^`]*`"  # inline code: a file, a key, a setting
    r"|\b(?:Secs?|Sections?|Apps?|Appendix|Figs?|Tables?|eqs?)\.? [A-Z]?\d+(?:\.\d+)*(?:-\d+(?:\.\d+)*)?"
    r"|\b[A-Za-z][\w.]*-\d+(?:\.\d+)*\b"  # a name ending in its setting: top-p-0.9, temperature-0.5
    r"|\b95% (?=(?:percentile|CI|HDI|intervals?|confidence)\b)")  # the level of an interval
"""What reads as a number and is none of the page's values: inline code, a paper's section,
appendix, figure, table or equation cited by number (``Sec. 6.2``), a name with its setting
(``top-p-0.9``) and the level of an interval (``95% CI``)."""


def numbers(text: str) -> list[str]:
    """The values ``text`` prints, each as printed: quantities in words, then percentages (each
    end of a range with its ``%``), then decimals; ``NOT_VALUES`` left out."""
    text = NOT_VALUES.sub(" ", text)
    found = [f"{n} {word}" for n, word in QUANTITY.findall(text)]
    text = QUANTITY.sub(" ", text)
    found += [f"{n}%" for pair in PERCENT.findall(text) for n in pair if n]
    return found + DECIMAL.findall(PERCENT.sub(" ", text))


SKIPPED = (("## The papers' tables and figures on this page", "<!-- appendix -->"), ("## Configuration", None))
"""The spans of a rendered page, each from a line to a line (None: to the end), that cite no value
of the run: the index of the papers' tables and figures (their numbers are names) and the
appendix's config files and stage times (the run's settings and costs). The appendix's tables
before them are the run's, as the page's are (``varprobe.results_page.page.APPENDIX``)."""


def _checked(page: str, skipped: tuple[tuple[str, str | None], ...]) -> str:
    """``page`` without each span of ``skipped`` that it holds (from its first line to the next
    line that ends it, or to the end of the page)."""
    for start, end in skipped:
        if start in page:
            head, rest = page.split(start, 1)
            page = head + (rest.split(end, 1)[1] if end is not None and end in rest else "")
    return page


def _parts(page: str, skipped: tuple[tuple[str, str | None], ...]) -> tuple[list[str], list[str]]:
    """(prose lines, table lines) of ``page`` without the spans ``skipped``, code blocks left out."""
    prose, rows, code = [], [], False
    for line in _checked(page, skipped).splitlines():
        if line.startswith("```"):
            code = not code
        elif not code:
            (rows if line.lstrip().startswith("|") else prose).append(line)
    return prose, rows


def unlisted_numbers(page: str, skipped: tuple[tuple[str, str | None], ...] = SKIPPED) -> list[str]:
    """The values (``numbers``) of the prose of ``page`` (a rendered page: the page and its
    appendix) outside the spans ``skipped`` that none of its tables there prints, each with its
    line (empty when every number the prose cites is in a table)."""
    prose, rows = _parts(page, skipped)
    shown = {n for row in rows for n in numbers(row)}
    return [f"{n}: {line.strip()}" for line in prose for n in numbers(line) if n not in shown]
