"""What of the results page is Markdown and what is text.

A string that did not come from the project itself (a data file's cell, a config value, a model's
or an endpoint's output, a path) reaches the page as text: ``text`` escapes every character that
would start Markdown or HTML there, as MyST (the documentation's parser) and GitHub read it. The
page's own Markdown (its tables, its prose with inline code, bold or links) is a ``Markup``, and
the two places every page string passes through let only a ``Markup`` through as it is: the
table helper (``varprobe.results_page.tables.markdown``) for each cell and header, and the
template's ``finalize`` (``finalize``) for each ``{{ }}``. A builder that writes Markup with a
string from outside in it puts that string through ``text`` or ``code`` first.
"""

from __future__ import annotations

import html
import re

__all__ = ["Markup", "anchor", "code", "fenced", "finalize", "html_text", "text", "url"]


class Markup(str):
    """A string the page wrote as Markdown, passed through to the page as it is."""


INLINE = re.compile(r"[\\`*|~$]|<(?=\S)|\[(?=\^)|\](?=[(\[])|&(?=[#A-Za-z0-9])")
"""What starts Markdown or HTML anywhere in a line: a backslash, inline code, emphasis, a table
cell's end, strikethrough, math (MyST's ``dollarmath``); a ``<`` before a tag, a comment or an
autolink; the ``[`` of a footnote reference and the ``]`` of a link or image (``](`` or ``][``;
the page defines no reference, so ``[x]`` alone links nowhere); an ``&`` before an entity
reference. A ``<`` before a space, brackets around an interval and a lone ``&`` stay as they are."""

LINE_START = re.compile(r"^(?:[#>%:(\[]|[-+](?=[\s+])|\d{1,9}(?=[.)](?:\s|$)))")
"""What starts a block at the start of a line: a heading, a block quote, a MyST comment, colon
fence or target, a reference definition, a list item or block break, an ordered list item (the
digits before its ``.`` or ``)``)."""


def _underscores(match: re.Match) -> str:
    """A run of underscores escaped unless it stands between two letters or digits, where
    CommonMark reads no emphasis (``n_contexts`` stays as it is)."""
    whole, start, end = match.string, match.start(), match.end()
    inside = start > 0 and end < len(whole) and whole[start - 1].isalnum() and whole[end].isalnum()
    return match.group() if inside else "\\_" * len(match.group())


def text(value, line_start: bool = False) -> Markup:
    """``value`` (``str`` of it) as Markdown that reads as that text on one line: its whitespace
    runs collapsed to one space (a newline would end a table row or start a block), and every
    character that would start Markdown or HTML escaped with a backslash (``INLINE``, underscores
    at a word's edge), and with ``line_start`` (where it may stand at the start of a line or of
    a list item) what would start a block there (``LINE_START``). A ``Markup`` is returned as it
    is."""
    if isinstance(value, Markup):
        return value
    one_line = " ".join(str(value).split())
    escaped = re.sub(r"_+", _underscores, INLINE.sub(lambda m: "\\" + m.group(), one_line))
    start = LINE_START.match(escaped) if line_start else None
    if start:
        head = start.group()
        escaped = (head + "\\" + escaped[len(head):]) if head[0].isdigit() else "\\" + escaped
    return Markup(escaped)


def code(value) -> Markup:
    """``value`` as inline code outside a table: fenced by one backtick more than its longest run
    of backticks, padded with a space where it starts or ends with one, its whitespace runs
    collapsed (a blank line would end the paragraph). Code is shown literally, so nothing in it is
    markup."""
    one_line = " ".join(str(value).split())
    fence = "`" * (max(map(len, re.findall(r"`+", one_line)), default=0) + 1)
    pad = " " if one_line.startswith("`") or one_line.endswith("`") else ""
    return Markup(f"{fence}{pad}{one_line}{pad}{fence}")


def fenced(value, info: str = "") -> Markup:
    """``value`` as a fenced code block with the info string ``info`` (a language): fenced by at
    least three backticks and more than its longest run of them, so no line of it closes the
    block."""
    body = str(value)
    fence = "`" * max(3, max(map(len, re.findall(r"`+", body)), default=0) + 1)
    return Markup(f"{fence}{info}\n{body}\n{fence}")


def html_text(value) -> Markup:
    """``value`` as text inside the page's raw HTML (where Markdown's escapes do not apply): HTML
    escaped, its newlines as character references (a blank line would end the HTML block)."""
    return Markup(html.escape(str(value)).replace("\n", "&#10;").replace("\r", "&#13;"))


def url(value) -> Markup:
    """``value``, a relative path, as a link destination: every character but letters, digits
    and ``/_.-~`` percent-encoded (a space, a parenthesis or a ``<`` would end or break it)."""
    from urllib.parse import quote

    return Markup(quote(str(value), safe="/"))


def anchor(heading: str) -> str:
    """The anchor MyST (``myst_heading_anchors`` of ``docs/conf.py``) and GitHub give a heading
    whose Markdown is ``heading``: lowercased, each space a hyphen, every character but a word
    character, a hyphen or a CJK ideograph dropped (so the backslashes and backticks of the
    heading's markup too)."""
    return re.sub(r"[^\w\u4e00-\u9fff\- ]", "", heading.lower().replace(" ", "-"))


def finalize(value) -> Markup:
    """The template's ``finalize``: each ``{{ }}`` value as the page prints it, a ``Markup`` as
    it is and anything else as ``text`` that may start a line."""
    return text(value, line_start=True)
