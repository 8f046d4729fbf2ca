"""A generator's adequacy on a task: is what it produces a response to the task at all?

Before reading a production model's variability, check that its outputs do the task: how close
they come to the references (chrF, BLEU), how many are in the task's output language, how many
are empty and how many repeat the input. Every function takes one input's outputs (and its
references, source or identified languages) and returns one number; the analysis step
(``varprobe.analysis.adequacy``) identifies the languages and aggregates over inputs.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

import sacrebleu


def _check_outputs(outputs: Sequence[str]) -> None:
    if isinstance(outputs, str):
        raise ValueError("outputs must be a sequence of strings, got one string")
    if len(outputs) == 0:
        raise ValueError("outputs is empty: an input needs at least one output")


def _check_references(references: Sequence[str]) -> None:
    if isinstance(references, str):
        raise ValueError("references must be a sequence of strings, got one string")
    if len(references) == 0:
        raise ValueError("references is empty: an input needs at least one reference")


def mean_chrf(outputs: Sequence[str], references: Sequence[str]) -> float:
    """Mean sentence chrF of an input's outputs against its references (Popović 2015).

    For outputs y_1..y_n and references R,

        mean_chrF = (1/n) sum_i chrF(y_i, R),

    chrF(y, R) being sacrebleu's sentence chrF (character 6-grams, beta = 2, no word n-grams;
    with several references, that of the best-matching one), on a 0-100 scale. An empty output
    scores 0.

    Parameters
    ----------
    outputs : sequence of str
        The input's outputs, at least one.
    references : sequence of str
        The input's references, at least one.

    Returns
    -------
    float
        In [0, 100].

    Raises
    ------
    ValueError
        When ``outputs`` or ``references`` is empty or a single string.

    Examples
    --------
    >>> mean_chrf(["Das Haus ist klein."], ["Das Haus ist klein."])
    100.0
    >>> mean_chrf(["Das Haus ist klein.", ""], ["Das Haus ist klein."])
    50.0
    """
    _check_outputs(outputs)
    _check_references(references)
    refs = list(references)
    return sum(sacrebleu.sentence_chrf(y, refs).score for y in outputs) / len(outputs)


def mean_bleu(outputs: Sequence[str], references: Sequence[str]) -> float:
    """Mean sentence BLEU of an input's outputs against its references (Papineni et al. 2002).

    For outputs y_1..y_n and references R,

        mean_BLEU = (1/n) sum_i BLEU(y_i, R),

    BLEU(y, R) being sacrebleu's sentence BLEU (13a tokenisation, up to 4-grams clipped by
    their most frequent count in any reference, the reference length closest to y's for the
    brevity penalty, exponential smoothing and effective order for the n-gram orders y
    lacks), on a 0-100 scale. An empty output scores 0.

    Parameters
    ----------
    outputs : sequence of str
        The input's outputs, at least one.
    references : sequence of str
        The input's references, at least one.

    Returns
    -------
    float
        In [0, 100].

    Raises
    ------
    ValueError
        When ``outputs`` or ``references`` is empty or a single string.

    Examples
    --------
    >>> round(mean_bleu(["the cat sat on the mat"], ["the cat sat on the mat"]), 6)
    100.0
    >>> mean_bleu(["", "dog"], ["the cat sat on the mat"])
    0.0
    """
    _check_outputs(outputs)
    _check_references(references)
    refs = list(references)
    return sum(sacrebleu.sentence_bleu(y, refs).score for y in outputs) / len(outputs)


def is_empty(text: str) -> bool:
    """Whether an output is empty: nothing but whitespace (Unicode ``str.isspace``) or nothing.

    Parameters
    ----------
    text : str
        An output.

    Returns
    -------
    bool

    Examples
    --------
    >>> is_empty(" \\n\\t"), is_empty("a")
    (True, False)
    """
    return not text.strip()


def normalise(text: str) -> str:
    """A text as the copy test compares it: NFKC, case-folded, runs of whitespace made one
    space, stripped.

    Parameters
    ----------
    text : str

    Returns
    -------
    str

    Examples
    --------
    >>> normalise("  The  CAT\\n sat. ")
    'the cat sat.'
    """
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def copies_source(output: str, source: str) -> bool:
    """Whether an output copies its source.

    It does when its normalised text (``normalise``) is not empty and equals the normalised
    source or the normalised text of one of the source's lines (a dialogue context's turn, a
    prompt's line): a copy up to case, spacing and Unicode compatibility forms.

    Parameters
    ----------
    output : str
        An output.
    source : str
        Its input.

    Returns
    -------
    bool

    Examples
    --------
    >>> copies_source("The cat  sat.", "the cat sat.")
    True
    >>> copies_source("How are you?", "Hello!\\nHow are you?")
    True
    >>> copies_source("Die Katze sass.", "The cat sat.")
    False
    >>> copies_source("", "")
    False
    """
    copy = normalise(output)
    if not copy:
        return False
    return copy == normalise(source) or any(copy == normalise(line) for line in source.splitlines())


def empty_share(outputs: Sequence[str]) -> float:
    """The share of an input's outputs that are empty (``is_empty``).

    Parameters
    ----------
    outputs : sequence of str
        The input's outputs, at least one.

    Returns
    -------
    float
        In [0, 1].

    Raises
    ------
    ValueError
        When ``outputs`` is empty or a single string.

    Examples
    --------
    >>> empty_share(["a", " ", "", "b"])
    0.5
    """
    _check_outputs(outputs)
    return sum(map(is_empty, outputs)) / len(outputs)


def copy_share(outputs: Sequence[str], source: str) -> float:
    """The share of an input's outputs that copy its source (``copies_source``).

    Parameters
    ----------
    outputs : sequence of str
        The input's outputs, at least one.
    source : str
        The input.

    Returns
    -------
    float
        In [0, 1].

    Raises
    ------
    ValueError
        When ``outputs`` is empty or a single string.

    Examples
    --------
    >>> copy_share(["The cat sat.", "Die Katze sass.", "", "the CAT sat."], "The cat sat.")
    0.5
    """
    _check_outputs(outputs)
    return sum(copies_source(y, source) for y in outputs) / len(outputs)


def language_share(languages: Sequence[str | None], target: str) -> float:
    """The share of an input's outputs identified as in the target language.

    ``languages`` holds one identified language per output (ISO 639-1 codes), None for an
    output that has none (an empty one): such an output counts as not in the target language,
    so the share is over all outputs.

    Parameters
    ----------
    languages : sequence of str or None
        The identified language of each output, at least one.
    target : str
        The task's output language, an ISO 639-1 code such as ``"de"``.

    Returns
    -------
    float
        In [0, 1].

    Raises
    ------
    ValueError
        When ``languages`` is empty or a single string, or ``target`` is empty.

    Examples
    --------
    >>> language_share(["de", "en", None, "de"], "de")
    0.5
    """
    if isinstance(languages, str) or len(languages) == 0:
        raise ValueError(f"languages must be a non-empty sequence of codes, got {languages!r}")
    if not target:
        raise ValueError("target must be a language code, got an empty string")
    return sum(language == target for language in languages) / len(languages)

