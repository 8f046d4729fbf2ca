"""Words in continuations, human responses and corpus text: one reading for all three.

A continuation is the text a model produces after a context. The context is encoded as its
words joined by single spaces with no trailing space, so a continuation that starts a new word
starts with whitespace (for byte-level BPE: a ``Ġ`` token). Its first complete word is read off
the text as follows (``first_word``):

1. *Glue.* Text before the first whitespace attaches to the last context word. Punctuation there
   (``"The cat, and"``) leaves that word intact and is skipped; a letter or digit there
   (``"The cat" + "s are"``) rewrites the context's last word, so the sample is rejected as
   ``extends_context_word``: it is no continuation of the context as given. A combining mark
   there (``"The cafe"`` + U+0301 + ``" is"``) accents the context's last letter and rewrites
   it too.
2. *Word.* After the glue, the first whitespace-delimited run that contains a letter or digit.
   Only whitespace delimits: punctuation inside or around a run belongs to it and is removed by
   normalisation, so ``3.5`` reads ``35``, ``1,000`` reads ``1000``, ``U.S.`` reads ``us``,
   ``and/or`` reads ``andor``, ``tight-lipped`` reads ``tightlipped`` and ``dog.`` reads
   ``dog``; a dash or ellipsis between words without spaces joins them too
   (``touchscreen—just`` reads ``touchscreenjust``), as in the paper's extraction. A run
   without a letter or digit (``--``, ``...``) is no word and is skipped; the next run is the
   word.
3. *Complete.* The run is complete when whitespace follows it, or when the text has ended
   (end-of-sequence or another special token, or a finished external text) after it. A run
   still open when the token budget is spent is no word: the sample fails as
   ``token_budget``, never as a truncated word.

The word is normalised (``normalise_word``): first to Unicode NFKC, so that a letter spelled
with a combining accent (``cafe`` + U+0301, NFD) is the precomposed letter (``café``), and a
compatibility form is its plain letter or digit (full-width ``ｍａｔ`` is ``mat``, the ligature
``ﬁ`` is ``fi``, a superscript ``²`` is ``2``): one word in two Unicode forms is one word, as
the adequacy copy test folds its texts (``varprobe.metrics.adequacy``). Then lowercase, every
character that is no letter or digit removed (a combining mark that NFKC cannot compose onto
its letter among them). Whether a run or a glue holds a letter or digit is asked of its NFKC
form too (``has_word_char``), so ``™`` (NFKC ``TM``) is a word as ``TM`` is. This is
the extraction of Ilia & Aziz's own code (``GPT2_sampling.py`` in
evgeniael/predict_next_word: delete non-word, non-space characters, split on whitespace), and
it is how Provo's responses were recorded (lowercase, punctuation removed). Human responses and
corpus words are read by the same rule (``read_word``: a finished text's first word), so a
model word, a response and a corpus word spelled alike are one word, and a response or corpus
token of punctuation only is no word.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# U+02BC (ʼ, modifier letter apostrophe) is a letter to Unicode (category Lm, matched by \w) but
# an apostrophe here: like the other apostrophes it is no letter and is removed by normalisation.
_WORD_CHAR = re.compile(r"[^\W_ʼ]")
_NON_WORD = re.compile(r"[\W_ʼ]+")
_RUN = re.compile(r"\S+")

COMPLETE = "complete"
INCOMPLETE = "incomplete"
FAILURES = ("extends_context_word", "ended_before_word", "token_budget", "undecodable")


def normalise_word(text: str) -> str:
    """NFKC, then lowercase and remove punctuation: ``"Don't" -> "dont"``, ``"space," -> "space"``,
    ``"cafe"`` + U+0301 -> ``"café"``, ``"ｍａｔ" -> "mat"``.

    Every letter is kept, ``Õ`` among them (Provo's file spells its apostrophes so, and its
    reader, ``varprobe.data.provo``, repairs them there). Text with no letter or digit
    normalises to ``""``.

    Parameters
    ----------
    text : str
        A word or response.

    Returns
    -------
    str
    """
    return _NON_WORD.sub("", unicodedata.normalize("NFKC", text)).lower()


def has_word_char(text: str) -> bool:
    """Whether ``text`` holds a letter or digit (underscore excluded) in its NFKC form, the form
    ``normalise_word`` reads: whether it normalises to a word.

    Parameters
    ----------
    text : str

    Returns
    -------
    bool
    """
    return _WORD_CHAR.search(unicodedata.normalize("NFKC", text)) is not None


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


def rewrites_word(glue: str) -> bool:
    """Whether ``glue`` (text before a continuation's first whitespace) changes the context's
    last word: it holds a letter or digit, or a combining mark (Unicode category M), which
    accents that word's last letter.

    Parameters
    ----------
    glue : str
        The text before a continuation's first whitespace.

    Returns
    -------
    bool
    """
    return has_word_char(glue) or any(unicodedata.category(c).startswith("M") for c in glue)


def is_delimiter(char: str) -> bool:
    """Whether ``char`` ends a word run: whitespace.

    Parameters
    ----------
    char : str
        One character.

    Returns
    -------
    bool
    """
    return char.isspace()


def first_word(continuation: str, ended: bool) -> Extraction:
    """Extract the first complete word of ``continuation`` (rules in the module docstring).

    ``ended`` says the text ends here (end-of-sequence, or an external sample that is whole).

    Parameters
    ----------
    continuation : str
        The text generated after the context.
    ended : bool
        Whether the text ends here.

    Returns
    -------
    Extraction
        ``COMPLETE`` with the normalised word, ``INCOMPLETE`` (more text is needed), or a
        failure reason.
    """
    split = re.search(r"\s", continuation)
    glue = continuation if split is None else continuation[: split.start()]
    if rewrites_word(glue):
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


def read_word(text: str) -> str:
    """The word a finished ``text`` gives as a continuation that starts a new word
    (``first_word`` of it after one space, ended), ``""`` when it holds none.

    This reads a human response or a corpus token as the sampler reads a model's words:
    ``"Tight-lipped" -> "tightlipped"``, ``"3.5" -> "35"``, ``"-----" -> ""``.

    Parameters
    ----------
    text : str
        A finished text (a response or a corpus token).

    Returns
    -------
    str
        The normalised word, or ``""``.
    """
    return first_word(" " + text.lstrip(), ended=True).word
