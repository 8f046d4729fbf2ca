"""Reading a list of words out of a chat model's reply (Provo list mode, Ilia & Aziz 2024 App. C.2).

A reply is read as follows (``parse_word_list``):

1. *Preamble.* Unless the first line starts like an item (an enumeration or a bullet): text up
   to its first colon ("Sure, here are 40 words:") is dropped when it holds a letter; so is a
   first line that reads as a sentence (more than three words, fewer commas and semicolons than
   half as many) followed by more lines ("Here are some plausible continuations.").
2. *Items.* The rest splits at newlines, commas, semicolons and enumerations ("1.", "2)",
   "3:", "4 -", also inline: "1. cat 2. dog", but not "3.5"); leading bullets ("-", "*", "•") go. Items with no
   visible character are formatting, not items. Words separated by spaces only are one item
   ("cat dog bird" is a multi-word item: a model that answers in sentences is not read as
   listing their words).
3. *Words.* An item's word is its first complete word, read and normalised like any
   continuation (``varprobe.words.first_word`` with an implied leading space), so quotes and
   trailing punctuation go. An item holding more than one word is *multi-word* (its first word
   is taken); an item with no word is *invalid*. When the token budget cut the reply, its last
   item is read as unfinished: a word still open at the cut is invalid (``token_budget``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from varprobe.words import INCOMPLETE, Extraction, first_word, has_word_char

_ENUMERATION = r"(?:(?<=\s)|^)\d{1,3}(?:\s*[.):](?!\d)|\s+[-–—](?=\s))"
_SEPARATOR = re.compile(rf"[\n,;]|{_ENUMERATION}")
_BULLET = re.compile(r"^\s*(?:[-*•·–—+>]+\s*)+")
_ITEM_START = re.compile(rf"\s*(?:{_ENUMERATION}|[-*•·–—+>])")


@dataclass(frozen=True)
class ListItem:
    """One item of a list reply: its text (bullets and numbering removed), its extraction and
    how many whitespace-separated words it holds."""

    text: str
    extraction: Extraction
    n_words: int

    @property
    def word(self) -> str:
        """The item's normalised first word, ``""`` when invalid."""
        return self.extraction.word


@dataclass(frozen=True)
class WordList:
    """A parsed list reply: the dropped preamble and the items in reply order."""

    preamble: str
    items: tuple[ListItem, ...]

    @property
    def invalid(self) -> int:
        """Items with no complete word."""
        return sum(not item.word for item in self.items)

    @property
    def multiword(self) -> int:
        """Items holding more than one word."""
        return sum(item.n_words > 1 for item in self.items)


def split_preamble(reply: str) -> tuple[str, str]:
    """``(preamble, rest)`` of ``reply`` (rule 1 of the module docstring).

    Parameters
    ----------
    reply : str
        The reply's text.

    Returns
    -------
    preamble : str
    rest : str
    """
    reply = reply.lstrip()
    first_line, _, later = reply.partition("\n")
    if _ITEM_START.match(first_line):
        return "", reply
    head, colon, _ = first_line.partition(":")
    if colon and has_word_char(head):
        start = len(head) + 1
        return reply[:start].strip(), reply[start:]
    words = first_line.split()
    if later.strip() and len(words) > 3 and len(re.findall(r"[,;]", first_line)) < len(words) / 2:
        return first_line.strip(), later
    return "", reply


def parse_word_list(reply: str, truncated: bool) -> WordList:
    """Items and words of a list ``reply`` (module docstring); ``truncated`` says the token
    budget ended it.

    Parameters
    ----------
    reply : str
        The reply's text.
    truncated : bool
        Whether the reply ran out of tokens.

    Returns
    -------
    WordList
    """
    preamble, rest = split_preamble(reply)
    pieces = [_BULLET.sub("", p) for p in _SEPARATOR.split(rest)]
    unfinished = [False] * (len(pieces) - 1) + [truncated]
    items = tuple(_item(p, u) for p, u in zip(pieces, unfinished, strict=True) if p.strip())
    return WordList(preamble, items)


def _item(piece: str, unfinished: bool) -> ListItem:
    """The item of ``piece``; when ``unfinished``, a word still open at its end is no word (a
    trailing space or punctuation closes it)."""
    extraction = first_word(" " + piece, ended=not unfinished)
    if extraction.status == INCOMPLETE:
        extraction = Extraction("token_budget")
    n_words = sum(has_word_char(token) for token in piece.split())
    return ListItem(piece.strip(), extraction, n_words)
