"""Distributions over word classes and the rules that pick a number of clusters.

Ilia & Aziz 2024 (Sec. 5 "Beyond exact word matching", App. G) compare next-word distributions
after mapping each word to a class: its universal POS tag (TVD_syn) or its k-means cluster of
word embeddings (TVD_sem). The class distribution is the pushforward of the word distribution,
``coarsen``; the number of clusters is chosen on the within-cluster sum of squared distances
(SSE) curve by ``elbow`` (ours), or by the authors' ``first_small_change`` on their criterion,
the sum of unsquared distances (``K_RULES``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

# Points of the SSE curve closer to the chord than this share of the curve's SSE range count as
# on the chord: float noise in k-means SSE never decides the elbow.
_ON_CHORD = 1e-9

K_RULES = ("elbow", "authors")
"""How k is chosen: ``elbow`` of the SSE (inertia) curve, ours; ``authors``, the first k whose
summed distance to the centroids changes by less than ``AUTHORS_CHANGE`` to the next candidate
(``first_small_change``)."""

AUTHORS_CHANGE = 0.05
"""The authors' ``rel_change`` of ``choose_k``."""


def coarsen(p: Mapping[str, float], word_class: Mapping[str, str]) -> dict[str, float]:
    """The distribution over classes induced by the word distribution ``p``:

        P(C) = sum_{w : class(w) = C} p(w)

    (Ilia & Aziz 2024, Sec. 5: "the probability of a word cluster is the sum of probabilities
    of the words in it").

    Parameters
    ----------
    p : mapping of str to float
        A distribution over words.
    word_class : mapping of str to str
        The class of each word of ``p``.

    Returns
    -------
    dict of str to float
        P(C) for each class of a word of ``p``.

    Raises
    ------
    KeyError
        Naming the first word of ``p`` that has no class.

    Examples
    --------
    >>> coarsen({"the": 0.5, "a": 0.25, "dog": 0.25}, {"the": "DET", "a": "DET", "dog": "NOUN"})
    {'DET': 0.75, 'NOUN': 0.25}
    """
    classes: dict[str, float] = {}
    for word, prob in p.items():
        if word not in word_class:
            raise KeyError(f"word {word!r} has no class")
        name = word_class[word]
        classes[name] = classes.get(name, 0.0) + prob
    return classes


def elbow(ks: Sequence[int], sse: Sequence[float]) -> int:
    """The elbow of an SSE curve: the candidate k farthest below the chord of the curve.

    The chord is the straight line through the first and last points (k_1, SSE_1) and
    (k_m, SSE_m); the elbow is

        k* = argmax_{k_i} chord(k_i) - SSE_i

    (the "kneedle" rule of Satopaa et al. 2011 for a decreasing convex curve; the choice is the
    same whether or not the axes are rescaled to [0, 1]). Defined edge cases: one candidate is
    the elbow; when no point lies below the chord by more than 1e-9 of the SSE range (two
    candidates, a straight or concave curve, a flat curve) the smallest k is the elbow, the
    fewest clusters the curve gives no reason to exceed; ties go to the smaller k.

    Parameters
    ----------
    ks : sequence of int
        The candidate numbers of clusters, strictly increasing.
    sse : sequence of float
        The within-cluster sum of squares of each, finite, of the same non-zero length.

    Returns
    -------
    int
        The chosen k.

    Raises
    ------
    ValueError
        When the lengths differ or are zero, ``ks`` is not increasing or ``sse`` not finite.

    Examples
    --------
    >>> elbow([1, 2, 3, 4], [100.0, 20.0, 15.0, 12.0])
    2
    """
    if len(ks) != len(sse) or not ks:
        raise ValueError(f"ks and sse must be non-empty and of one length, got {len(ks)} and {len(sse)}")
    if any(b <= a for a, b in zip(ks, ks[1:])):
        raise ValueError(f"ks must be strictly increasing, got {list(ks)}")
    if not all(math.isfinite(s) for s in sse):
        raise ValueError(f"sse must be finite, got {list(sse)}")
    if len(ks) == 1:
        return int(ks[0])
    (k0, s0), (k1, s1) = (ks[0], sse[0]), (ks[-1], sse[-1])
    slope = (s1 - s0) / (k1 - k0)
    below = [s0 + slope * (k - k0) - s for k, s in zip(ks, sse)]
    tolerance = _ON_CHORD * (max(sse) - min(sse))
    best = max(range(len(ks)), key=lambda i: (below[i], -i))
    return int(ks[best]) if below[best] > tolerance else int(ks[0])


def first_small_change(ks: Sequence[int], criterion: Sequence[float], rel_change: float = AUTHORS_CHANGE) -> int:
    """The authors' choice of k (``choose_k``, ``TVD_semantic/GPT2/semantic_TVD.py`` lines 170-229,
    github.com/evgeniael/predict_next_word at 027ffaa): over the candidates in order, the first
    k_{i-1} whose criterion changes to the next candidate's by less than ``rel_change`` of it,

        |S_i - S_{i-1}| / S_{i-1} < rel_change,

    and where none does, the k of the least criterion (the first of equal ones); the one
    candidate where there is one. A criterion of 0 changes by no ratio (their division gives
    inf or nan, which no comparison passes).

    Parameters
    ----------
    ks : sequence of int
        The candidates, ascending.
    criterion : sequence of float
        Each candidate's criterion (theirs: the sum of the points' unsquared distances to their
        centroids, ``sse_score``).
    rel_change : float, optional
        The relative change below which the previous k is kept.

    Returns
    -------
    int
        The chosen k.

    Raises
    ------
    ValueError
        When ``ks`` is empty or ``criterion`` is of another length.

    Examples
    --------
    >>> first_small_change([2, 5, 8], [10.0, 6.0, 5.8])
    5
    >>> first_small_change([2, 5, 8], [10.0, 6.0, 3.0])
    8
    """
    if len(ks) != len(criterion) or not ks:
        raise ValueError(f"ks and criterion must be non-empty and of one length, got {len(ks)} and {len(criterion)}")
    for i in range(1, len(ks)):
        if criterion[i - 1] != 0 and abs((criterion[i] - criterion[i - 1]) / criterion[i - 1]) < rel_change:
            return int(ks[i - 1])
    return int(ks[list(criterion).index(min(criterion))])
