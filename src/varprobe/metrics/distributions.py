"""Categorical next-word distributions: estimation, distance, summaries, oracle split.

A distribution is a plain ``dict`` from word to probability; words absent from
the dict have probability 0, so the keys are (a superset of) the support.
"""

import math
from collections.abc import Mapping

import numpy as np

Distribution = dict[str, float]

# Tolerance on sum_w p(w) = 1: MLEs built from float division miss 1 by ~1e-16,
# anything beyond 1e-6 is a caller bug (unnormalised scores, counts, logits).
_SUM_TOLERANCE = 1e-6


def _check_distribution(p: Mapping[str, float], name: str) -> None:
    if len(p) == 0:
        raise ValueError(f"{name} is empty: a distribution needs at least one outcome")
    for word, prob in p.items():
        if not math.isfinite(prob) or prob < 0:
            raise ValueError(f"{name}[{word!r}] = {prob!r}: probabilities must be finite and >= 0")
    total = math.fsum(p.values())
    if abs(total - 1.0) > _SUM_TOLERANCE:
        raise ValueError(f"{name} sums to {total!r}, not 1 (tolerance {_SUM_TOLERANCE})")


def _check_counts(counts: Mapping[str, float], name: str) -> None:
    for word, count in counts.items():
        if not math.isfinite(count) or count < 0:
            raise ValueError(f"{name}[{word!r}] = {count!r}: counts must be finite and >= 0")


def mle(counts: Mapping[str, int | float]) -> Distribution:
    """Maximum-likelihood categorical distribution from response counts.

    Treating the responses to one context as i.i.d. draws from a single categorical (Ilia &
    Aziz 2024, Section 3, "Human distributions"), the MLE is the relative frequency

        p(w) = n(w) / sum_v n(v).

    Parameters
    ----------
    counts : mapping of str to int or float
        n(w) per word, finite and >= 0, not all zero.

    Returns
    -------
    dict of str to float
        p(w) for each word with n(w) > 0: the keys are exactly the support.

    Raises
    ------
    ValueError
        On a negative or non-finite count, and when the counts are empty or all zero (no
        observation, no estimate).

    Examples
    --------
    >>> mle({"the": 3, "a": 1, "an": 0})
    {'the': 0.75, 'a': 0.25}
    """
    _check_counts(counts, "counts")
    total = math.fsum(counts.values())
    if total == 0:
        raise ValueError("counts is empty: an MLE needs at least one observation")
    return {word: float(count / total) for word, count in counts.items() if count > 0}


def tvd(p: Mapping[str, float], q: Mapping[str, float]) -> float:
    """Total variation distance between two categorical distributions.

        TVD_c(p, q) = 1/2 * sum_{w in supp(p) U supp(q)} |p(w|c) - q(w|c)|

    (Ilia & Aziz 2024, Section 4 "Metrics", footnote 8), where a word missing from one dict
    has probability 0 under it. Disjoint supports give 1, identical distributions give 0; the
    result is clipped to [0, 1] to absorb float rounding.

    Parameters
    ----------
    p, q : mapping of str to float
        Non-empty distributions, each summing to 1 within 1e-6.

    Returns
    -------
    float
        The distance, in [0, 1].

    Raises
    ------
    ValueError
        Naming the argument, when one is empty, has a negative or non-finite probability, or
        does not sum to 1.

    Examples
    --------
    >>> tvd({"a": 0.5, "b": 0.5}, {"a": 1.0})
    0.5
    >>> tvd({"a": 1.0}, {"b": 1.0})
    1.0
    """
    _check_distribution(p, "p")
    _check_distribution(q, "q")
    distance = 0.5 * math.fsum(abs(p.get(w, 0.0) - q.get(w, 0.0)) for w in p.keys() | q.keys())
    return min(1.0, max(0.0, distance))


def entropy(p: Mapping[str, float]) -> float:
    """Shannon entropy in nats (Shannon 1948), a variability predictor of Ilia & Aziz 2024
    (Section 5):

        H(p) = -sum_w p(w) log p(w),  with 0 log 0 = 0.

    A point mass has H = 0, the uniform over k words has H = log k.

    Parameters
    ----------
    p : mapping of str to float
        A non-empty distribution summing to 1 within 1e-6.

    Returns
    -------
    float
        H(p) >= 0.

    Raises
    ------
    ValueError
        When ``p`` is not a distribution.

    Examples
    --------
    >>> entropy({"a": 1.0})
    0.0
    >>> round(entropy({"a": 0.5, "b": 0.5}), 6)
    0.693147
    """
    _check_distribution(p, "p")
    h = -math.fsum(prob * math.log(prob) for prob in p.values() if prob > 0)
    # Probabilities within tolerance above 1 would make a point mass slightly negative.
    return max(0.0, h)


def mode(p: Mapping[str, float]) -> tuple[str, float]:
    """Most probable word and its probability,

        w* = argmax_w p(w),  returned as (w*, p(w*)).

    This is the prediction and confidence ECE scores (Ilia & Aziz 2024, footnote 2).
    Tie-breaking is deterministic: among words with exactly equal probability the
    lexicographically smallest wins, so results do not depend on dict order.

    Parameters
    ----------
    p : mapping of str to float
        The word distribution (non-empty, summing to 1 within 1e-6).

    Returns
    -------
    tuple of (str, float)
        The mode and its probability.

    Raises
    ------
    ValueError
        When ``p`` is empty, has a negative probability or does not sum to 1.

    Examples
    --------
    >>> mode({"b": 0.4, "a": 0.4, "c": 0.2})
    ('a', 0.4)
    """
    _check_distribution(p, "p")
    word, prob = min(p.items(), key=lambda item: (-item[1], item[0]))
    return word, prob


def split_counts(
    counts: Mapping[str, int], rng: np.random.Generator
) -> tuple[dict[str, int], dict[str, int]]:
    """Split responses into two disjoint oracle halves (Ilia & Aziz 2024, Section 4).

    The n = sum_w n(w) individual responses are listed in word order (so the result depends
    only on rng, not on dict order), permuted uniformly with rng, and the first floor(n/2) go
    to oracle 1, the remaining ceil(n/2) to oracle 2 (with odd n oracle 2 holds the extra
    response). As multisets the halves are disjoint and

        n1(w) + n2(w) = n(w)  for every w.

    Parameters
    ----------
    counts : mapping of str to int
        n(w) per word: non-negative integers (integral floats are accepted), n >= 2.
    rng : numpy.random.Generator
        The source of the permutation; it is advanced.

    Returns
    -------
    tuple of two dict of str to int
        The counts of oracle 1 and of oracle 2; a word with zero count in a half is left out of
        that half.

    Raises
    ------
    ValueError
        When a count is negative, non-finite or not integral, n < 2, or ``rng`` is not a
        Generator.

    Examples
    --------
    >>> first, second = split_counts({"a": 3, "b": 1}, np.random.default_rng(0))
    >>> sum(first.values()), sum(second.values())
    (2, 2)
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    _check_counts(counts, "counts")
    for word, count in counts.items():
        if count != int(count):
            raise ValueError(f"counts[{word!r}] = {count!r}: oracle splits need integer counts")
    words = sorted(counts)
    sizes = np.array([int(counts[w]) for w in words], dtype=np.int64)
    n = int(sizes.sum())
    if n < 2:
        raise ValueError(f"counts has n = {n} responses: a split needs at least 2")
    responses = rng.permutation(np.repeat(np.arange(len(words)), sizes))
    half = n // 2
    first = np.bincount(responses[:half], minlength=len(words))
    second = np.bincount(responses[half:], minlength=len(words))
    return (
        {w: int(c) for w, c in zip(words, first) if c > 0},
        {w: int(c) for w, c in zip(words, second) if c > 0},
    )


def tvd_interval(
    words: Mapping[str, float], failed: float, unresolved: float, human: Mapping[str, float]
) -> tuple[float, float]:
    """The interval of TVD(human, q) left open by a partially enumerated model distribution.

    Inputs are the outcome masses of an enumeration (``varprobe.sampling.enumeration``): p_w
    resolved to word w (``words``), F resolved to failures (``failed``) and u unresolved, with
    sum_w p_w + F + u = 1. The model's word distribution is q(w) = P(w) / P(word), the draws
    that fail rejected (as by the sampler), where P(w) = p_w + r_w with unknown r_w >= 0 and
    P(word) = W + rho, W = sum_w p_w, rho = sum_w r_w in [0, u] (the rest of u may fail).
    With a_w = p_w / (1 - F) and v = u / (1 - F):

        lower = sum_w max(a_w - h_w, 0),    upper = lower + v.

    Derivation. Fix rho and write s = W + rho, a_w = p_w / s, v = 1 - W / s = rho / s, so that
    q = a + r / s with r / s >= 0 summing to v. Since both q and h sum to 1,
    TVD(h, q) = sum_w max(q_w - h_w, 0). Each term lies between max(a_w - h_w, 0) (as
    q_w >= a_w) and max(a_w - h_w, 0) + r_w / s, so

        L(s) = sum_w max(a_w - h_w, 0)  <=  TVD(h, q)  <=  L(s) + v(s) = 1 - sum_w min(a_w, h_w).

    Both ends are attained: the lower one by spreading r / s over words where h_w > a_w
    (there is room: sum_w max(h_w - a_w, 0) = v + L(s) >= v), the upper one by putting it on
    one word outside supp(h). As s grows, a_w shrinks: L(s) falls and 1 - sum_w min(a_w, h_w)
    rises. Over s in [W, W + u] the interval is therefore widest, and still attained, at
    s = W + u = 1 - F (all unresolved mass spells words).

    The point estimate TVD(h, p / W) (all unresolved mass failing, s = W) is one admissible
    completion and lies in [lower, upper]. With u = 0 the interval is the single value
    TVD(h, p / W).

    Parameters
    ----------
    words : mapping of str to float
        p_w, the mass resolved to each word.
    failed : float
        F, the mass resolved to failures.
    unresolved : float
        u, the mass left unresolved.
    human : mapping of str to float
        h, the human distribution.

    Returns
    -------
    tuple of (float, float)
        (lower, upper), each clipped at 1.

    Raises
    ------
    ValueError
        When a mass is negative or not finite, the masses do not sum to 1 (within 1e-6),
        1 - F = 0 (nothing can be a word) or ``human`` is not a distribution.

    Examples
    --------
    >>> tvd_interval({"a": 0.5}, 0.25, 0.25, {"a": 1.0})
    (0.0, 0.3333333333333333)
    """
    _check_distribution(human, "human")
    _check_counts(words, "words")
    for name, value in (("failed", failed), ("unresolved", unresolved)):
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{name} = {value!r}: masses must be finite and >= 0")
    total = math.fsum([*words.values(), failed, unresolved])
    if abs(total - 1.0) > _SUM_TOLERANCE:
        raise ValueError(f"words, failed and unresolved sum to {total!r}, not 1")
    scale = math.fsum([*words.values(), unresolved])
    if scale == 0:
        raise ValueError("every outcome failed: there is no word distribution to compare")
    lower = math.fsum(max(p / scale - human.get(w, 0.0), 0.0) for w, p in words.items())
    return min(1.0, lower), min(1.0, lower + unresolved / scale)
