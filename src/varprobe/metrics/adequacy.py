"""A generator's adequacy on a task: is what it produces a response to the task at all?

Before reading a production model's variability, check that its outputs do the task: how close
they come to the references (chrF, BLEU; SARI on a simplification task, which unlike them does
not reward repeating the input), how many are in the task's output language, how many are empty
and how many repeat the input. Every function takes one input's outputs (and its references,
source or identified languages) and returns one number; the analysis step
(``varprobe.analysis.adequacy``) identifies the languages and aggregates over inputs.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Sequence

import sacrebleu
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

SARI_ORDER = 4
"""The longest n-gram SARI counts (Xu et al. 2016: 1- to 4-grams)."""

_TOKENIZE_13A = Tokenizer13a()


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


def sari_tokens(text: str) -> list[str]:
    """A text as SARI counts its n-grams: lowercased, tokenised by sacrebleu's ``13a`` tokenizer
    (BLEU's: punctuation split off), split at whitespace; as HF evaluate's ``sari`` normalises
    (after EASSE, the ASSET authors' package).

    Parameters
    ----------
    text : str

    Returns
    -------
    list of str
        Its tokens; none for an empty text.

    Examples
    --------
    >>> sari_tokens("About 95 species, currently.")
    ['about', '95', 'species', ',', 'currently', '.']
    """
    return _TOKENIZE_13A(text.lower()).split()


def _ngrams(tokens: Sequence[str], n: int, weight: int = 1) -> Counter:
    """The n-grams of ``tokens`` with their counts, each times ``weight``."""
    counts = Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))
    return Counter({gram: count * weight for gram, count in counts.items()})


def _share(numerator: float, denominator: float, empty: float) -> float:
    """numerator / denominator, ``empty`` where the denominator is 0."""
    return numerator / denominator if denominator else empty


def _f1(precision: float, recall: float) -> float:
    """The harmonic mean of precision and recall, 0 where both are 0."""
    return _share(2 * precision * recall, precision + recall, 0.0)


def _sari_order(source: Sequence[str], output: Sequence[str], references: Sequence[Sequence[str]],
                n: int) -> tuple[float, float, float]:
    """SARI's keep F1, deletion precision and addition F1 on the n-grams (``sari``'s equations):
    a precision of an operation the output does not perform is 1 where the references do not
    perform it either, else 0; a recall of one the references do not perform is 1."""
    m = len(references)
    s, c = _ngrams(source, n, m), _ngrams(output, n, m)
    r = sum((_ngrams(ref, n) for ref in references), Counter())
    kept, kept_by_refs = s & c, s & r
    kept_good = kept & r
    keep = _f1(_share(sum(kept_good[g] / kept[g] for g in kept_good), len(kept), float(not kept_by_refs)),
               _share(sum(kept_good.values()), sum(kept_by_refs.values()), 1.0))
    deleted, deleted_by_refs = s - c, s - r
    deleted_good = deleted - r
    deletion = _share(sum(deleted_good[g] / deleted[g] for g in deleted_good), len(deleted),
                      float(not deleted_by_refs))
    added, added_by_refs = set(c) - set(s), set(r) - set(s)
    good = len(added & set(r))
    addition = _f1(_share(good, len(added), float(not added_by_refs)), _share(good, len(added_by_refs), 1.0))
    return keep, deletion, addition


def sari(output: str, source: str, references: Sequence[str]) -> float:
    """Sentence SARI of an output of a simplification task (Xu et al. 2016, Sec. 4.1), 0-100.

    The output y rewrites its source x for references R = (r_1..r_m), each text as its tokens
    (``sari_tokens``). For n = 1..4, with S, Y, R_j the n-gram counts of x, y, r_j (a count of 0
    is no n-gram), scaled to the references' sum ``S' = m S``, ``Y' = m Y``, ``R = sum_j R_j``,
    with ``&`` the minimum, ``-`` the difference floored at 0, and |A| the number of n-grams
    A counts::

        keep:      K = S' & Y',  P_keep = (1/|K|) sum_g (K & R)(g) / K(g),
                   R_keep = sum_g (K & R)(g) / sum_g (S' & R)(g),
        deletion:  D = S' - Y',  P_del = (1/|D|) sum_g (D - R)(g) / D(g),
        addition:  A = set(Y) - set(S),  P_add = |A & set(R)| / |A|,
                   R_add = |A & set(R)| / |set(R) - set(S)|,

    F_keep and F_add the harmonic means of their precision and recall, and

        SARI = 100 * (mean_n F_keep + mean_n P_del + mean_n F_add) / 3,

    a ratio 0/0 defined below. These are the counts of HF evaluate's ``sari`` (after
    tensor2tensor's ``sari_hook.py``: the keep recall over the references' kept counts, fixing
    Xu et al.'s code's, and the deletion precision alone, as the paper scores). Its 0/0 is 1
    everywhere, which would reward copying: an output that deletes or adds nothing earns full
    deletion and addition precision whatever the references do (on ASSET's test split copying the
    source would score 53.8 on average, above a held-out annotator's simplification against the
    other nine, 43.5). Here 0/0 is 1 in a recall (the references perform no such operation: none
    to miss) and in a precision only where the references do not perform the operation either
    (the output agrees with them); a precision of an operation the references perform and the
    output does not (it keeps, deletes or adds nothing where they do) is 0, as in Xu et al.'s
    code and EASSE. Copying ASSET's test sources then scores 20.4 against the annotator's 43.2
    (``docs/methods.md``, adequacy). Wherever no ratio is 0/0, and wherever output, source and
    references all agree, the two definitions are equal: the published examples (the doctests,
    the tests) are reproduced. An empty output deletes every source n-gram.

    Parameters
    ----------
    output : str
        The output.
    source : str
        Its input, the text to simplify.
    references : sequence of str
        The input's references, at least one.

    Returns
    -------
    float
        In [0, 100].

    Raises
    ------
    ValueError
        When ``references`` is empty or a single string.

    Examples
    --------
    Xu et al.'s example, with the value HF evaluate documents:

    >>> refs = ["About 95 species are currently known.", "About 95 species are now accepted.",
    ...         "95 species are now accepted."]
    >>> round(sari("About 95 you now get in.", "About 95 species are currently accepted.", refs), 6)
    26.953602
    >>> round(sari("About 95 species are currently accepted.",
    ...            "About 95 species are currently accepted.", refs), 2)   # a copy
    21.87
    >>> sari("About 95 species are currently accepted.", "About 95 species are currently accepted.",
    ...      ["About 95 species are currently accepted."])     # evaluate's perfect match
    100.0
    """
    _check_references(references)
    x, y = sari_tokens(source), sari_tokens(output)
    refs = [sari_tokens(ref) for ref in references]
    keep, deletion, addition = zip(*(_sari_order(x, y, refs, n) for n in range(1, SARI_ORDER + 1)),
                                   strict=True)
    return 100 * (sum(keep) + sum(deletion) + sum(addition)) / (3 * SARI_ORDER)


def mean_sari(outputs: Sequence[str], source: str, references: Sequence[str]) -> float:
    """Mean sentence SARI (``sari``) of an input's outputs, against its source and references.

    For outputs y_1..y_n of source x,

        mean_SARI = (1/n) sum_i SARI(y_i, x, R),

    the mean of sentence scores, as HF evaluate's ``sari`` averages a corpus (not EASSE's corpus
    SARI of pooled counts), so that each input has one value.

    Parameters
    ----------
    outputs : sequence of str
        The input's outputs, at least one.
    source : str
        The input.
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
    Xu et al.'s first and second examples, 26.95 and 61.71 each (``sari``):

    >>> refs = ["About 95 species are currently known.", "About 95 species are now accepted.",
    ...         "95 species are now accepted."]
    >>> round(mean_sari(["About 95 you now get in.", "About 95 species are now agreed."],
    ...                 "About 95 species are currently accepted.", refs), 4)
    44.3316
    """
    _check_outputs(outputs)
    _check_references(references)
    return sum(sari(y, source, references) for y in outputs) / len(outputs)


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

