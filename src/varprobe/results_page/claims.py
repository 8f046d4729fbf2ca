"""The numbers a results page's prose cites, checked against the numbers its tables show: every
decimal of the prose (outside tables, code blocks and the sections after ``until``) must be
printed in one of the page's tables, so that no sentence reads a value the page does not show."""

from __future__ import annotations

import re

DECIMAL = re.compile(r"(?<![\w.])(\d+\.\d+)(?!\.?\d)")
"""A decimal number as the page prints it (``0.583``, ``-0.055`` read without its sign); a
version (``3.11.7``) or a name (``w1.png``) is none."""
CITATION = re.compile(r"\b(?:Secs?|Sections?|Apps?|Appendix)\.? [A-Z]?\d+(?:\.\d+)*(?:-\d+(?:\.\d+)*)?")
"""A paper's section or appendix cited by number (``Sec. 6.2``, ``App. C.1``): no value."""


def _parts(page: str, until: str) -> tuple[list[str], list[str]]:
    """(prose lines, table lines) of ``page`` before the heading ``until``, code blocks left out."""
    prose, rows, code = [], [], False
    for line in page[:page.index(until)].splitlines() if until in page else page.splitlines():
        if line.startswith("```"):
            code = not code
        elif not code:
            (rows if line.lstrip().startswith("|") else prose).append(line)
    return prose, rows


def unlisted_numbers(page: str, until: str = "## The papers' tables and figures on this page") -> list[str]:
    """The decimals of the prose of ``page`` before the heading ``until`` that none of its tables
    prints, each with its line (empty when every number the prose cites is in a table)."""
    prose, rows = _parts(page, until)
    shown = {n for row in rows for n in DECIMAL.findall(row)}
    return [f"{n}: {line.strip()}" for line in prose for n in DECIMAL.findall(CITATION.sub("", line))
            if n not in shown]
