"""n-gram distance between two sequences: the lexical probe on word tokens, and the syntactic
probe on part-of-speech tags (Giulianelli et al. 2023, Sec. 3.2)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from varprobe.probes.probe import Prepared, Probe


def ngram_counts(items: Sequence[str], n: int) -> Counter:
    """The multiset of contiguous n-grams (tuples) of ``items``; empty if ``len(items) < n``.

    Parameters
    ----------
    items : sequence of str
        The units of one text (word tokens or POS tags).
    n : int
        The n-gram order, >= 1.

    Returns
    -------
    collections.Counter
        Each n-gram (a tuple of ``n`` items) with its number of occurrences.

    Raises
    ------
    ValueError
        When ``n < 1``.
    """
    if n < 1:
        raise ValueError(f"n-gram order must be >= 1, got {n}")
    return Counter(tuple(items[i:i + n]) for i in range(len(items) - n + 1))


def ngram_distance(a: Counter, b: Counter) -> float:
    """Fraction of n-gram occurrences of the two strings that have no match in the other string.

    With A and B the n-gram occurrences of the two strings, an occurrence of A *matches* when its
    n-gram occurs anywhere in B (and vice versa), and

        d(A, B) = 1 - (#matching occurrences of A + #matching occurrences of B) / (|A| + |B|),

    in [0, 1]: 0 when both use the same n-grams, 1 when they share none. This is the paper's
    "number of non-matching n-gram occurrences divided by the total number of n-grams in both
    strings", with matching by membership as in its reference code (``a a`` vs ``a`` at n=1:
    all 3 occurrences match, distance 0). It is NaN when neither string has an n-gram
    (both shorter than n): no occurrence to count, so no distance is defined.

    Parameters
    ----------
    a, b : collections.Counter
        The n-gram counts of the two strings (``ngram_counts``).

    Returns
    -------
    float
        d(A, B) in [0, 1], or NaN when both are empty.
    """
    total = sum(a.values()) + sum(b.values())
    if total == 0:
        return math.nan
    matched = sum(c for g, c in a.items() if g in b) + sum(c for g, c in b.items() if g in a)
    return 1.0 - matched / total


def word_tokens(tokens: Sequence[str]) -> list[str]:
    """The lexical probe's units: tokens lowercased (so sentence-initial words match).

    Parameters
    ----------
    tokens : sequence of str
        A text's tokens, as the tokenizer split them.

    Returns
    -------
    list of str
        Each token lowercased, in order.
    """
    return [t.lower() for t in tokens]


def ngram_distances(counts: Sequence[Counter], left: Sequence[int], right: Sequence[int]) -> list[float]:
    """``ngram_distance`` of each pair of texts ``left[i], right[i]`` (indices into ``counts``).

    Parameters
    ----------
    counts : sequence of collections.Counter
        The n-gram counts of every text.
    left, right : sequence of int
        The pairs' indices into ``counts``, of equal length.

    Returns
    -------
    list of float
        One distance per pair, in order (NaN where neither text has an n-gram).
    """
    return [ngram_distance(counts[i], counts[j]) for i, j in zip(left, right, strict=True)]


def _word_ngrams(prepared: Prepared, n: int) -> list[Counter]:
    return [ngram_counts(word_tokens(p.tokens), n) for p in prepared.parsed]


LEXICAL = Probe("lexical", needs="tokenizer", featurise=_word_ngrams, distance=ngram_distances,
                ordered=True)
"""The lexical probe: n-gram distance over lowercased word tokens."""
