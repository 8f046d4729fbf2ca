"""Words in continuations: normalisation and extraction of the first complete word.

A continuation is the text a model produces after a context. The context is encoded as its
words joined by single spaces with no trailing space, so a continuation that starts a new word
starts with whitespace (for byte-level BPE: a ``Ġ`` token). Its first complete word is read off
the text as follows (``first_word``):

1. *Glue.* Text before the first whitespace attaches to the last context word. Punctuation there
   (``"The cat, and"``) leaves that word intact and is skipped; a letter or digit there
   (``"The cat" + "s are"``) rewrites the context's last word, so the sample is rejected as
   ``extends_context_word``: it is no continuation of the context as given.
2. *Word.* After the glue, the first run of characters that contains a letter or digit and is
   delimited by whitespace or by *breaking* punctuation. Apostrophes and hyphens join
   (``don't``, ``well-known``); every other punctuation mark breaks (``dog.`` ends at ``.``).
3. *Complete.* The run is complete when a delimiter follows it, or when the text has ended
   (end-of-sequence) after it. A run still open when the token budget is spent is no word:
   the sample fails as ``token_budget``, never as a truncated word.

The word is normalised as the Provo responses are: lowercase, punctuation removed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

JOINERS = "'’ʼ-"
# U+02BC (ʼ, modifier letter apostrophe) is a letter to Unicode (category Lm, matched by \w) but
# an apostrophe here: like the other joiners it is no letter and is removed by normalisation.
_WORD_CHAR = re.compile(r"[^\W_ʼ]")
_NON_WORD = re.compile(r"[\W_ʼ]+")
_MOJIBAKE = str.maketrans({"Õ": "'"})
# A delimiter is whitespace or a character that is neither a word character nor a joiner.
_RUN = re.compile(rf"[\w{re.escape(JOINERS)}]+")

COMPLETE = "complete"
INCOMPLETE = "incomplete"
FAILURES = ("extends_context_word", "ended_before_word", "token_budget", "undecodable")


def normalise_word(text: str) -> str:
    """Lowercase and remove punctuation: ``"Don't" -> "dont"``, ``"space," -> "space"``.

    Provo's MacRoman apostrophe (``Õ`` read as Latin-1) is an apostrophe. Text with no letter
    or digit normalises to ``""``.
    """
    return _NON_WORD.sub("", text.translate(_MOJIBAKE)).lower()


def has_word_char(text: str) -> bool:
    """Whether ``text`` holds a letter or digit (underscore excluded)."""
    return _WORD_CHAR.search(text) is not None


@dataclass(frozen=True)
class Extraction:
    """The outcome of reading a continuation: ``status`` is ``COMPLETE``, ``INCOMPLETE`` or a
    failure reason from ``FAILURES``; ``word`` is the normalised word when complete, else ``""``."""

    status: str
    word: str = ""

    @property
    def done(self) -> bool:
        """Whether more text could change the outcome (False only while incomplete)."""
        return self.status != INCOMPLETE


def is_delimiter(char: str) -> bool:
    """Whether ``char`` ends a word run: whitespace, or neither a word character nor a joiner."""
    return _RUN.fullmatch(char) is None


def first_word(continuation: str, ended: bool) -> Extraction:
    """Extract the first complete word of ``continuation`` (rules in the module docstring).

    ``ended`` says the text ends here (end-of-sequence, or an external sample that is whole).
    """
    split = re.search(r"\s", continuation)
    glue = continuation if split is None else continuation[: split.start()]
    if has_word_char(glue):
        return Extraction("extends_context_word")
    if split is None:
        return Extraction("ended_before_word") if ended else Extraction(INCOMPLETE)
    rest = continuation[split.start() :]
    for run in _RUN.finditer(rest):
        if not has_word_char(run.group()):
            continue
        if run.end() < len(rest) or ended:
            return Extraction(COMPLETE, normalise_word(run.group()))
        return Extraction(INCOMPLETE)
    return Extraction("ended_before_word") if ended else Extraction(INCOMPLETE)
