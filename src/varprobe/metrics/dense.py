"""Distributions over a whole vocabulary held as dense arrays: TVD against a sparse distribution,
entropy, and renormalisation of log-probabilities over a support."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def dense_tvd(p: np.ndarray, q: Mapping[int, float]) -> float:
    r"""Total variation distance between a dense and a sparse distribution over a vocabulary.

    .. math::

        \mathrm{TVD}(p, q) = \frac{1}{2} \sum_{t \in V} |p(t) - q(t)|

    (Ilia & Aziz 2024, App. D: the model's exact next-token distribution against the humans'
    first tokens). Exact: every token of V enters the sum; clipped at 1 to absorb rounding.

    Parameters
    ----------
    p : numpy.ndarray
        Shape ``(V,)``, summing to 1 within 1e-6.
    q : mapping of int to float
        Token id -> probability; absent ids have probability 0.

    Returns
    -------
    float
        TVD(p, q), in [0, 1].

    Raises
    ------
    ValueError
        When ``p`` is not 1-D, does not sum to 1 within 1e-6, or ``q`` names an id outside
        [0, V).

    Examples
    --------
    >>> dense_tvd(np.array([0.5, 0.3, 0.2]), {1: 1.0})
    0.7
    """
    p = np.asarray(p, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"p must be a 1-D distribution over the vocabulary, got shape {p.shape}")
    if abs(p.sum() - 1.0) > 1e-6:
        raise ValueError(f"p sums to {p.sum()!r}, not 1")
    ids = np.fromiter(q.keys(), dtype=np.int64, count=len(q))
    if ids.size and (ids.min() < 0 or ids.max() >= p.size):
        raise ValueError(f"q names token ids outside [0, {p.size}): {sorted(q)}")
    diff = p.copy()
    np.subtract.at(diff, ids, np.fromiter(q.values(), dtype=np.float64, count=len(q)))
    return float(min(1.0, 0.5 * np.abs(diff).sum()))


def dense_entropy(p: np.ndarray) -> float:
    r"""Shannon entropy in nats of a dense distribution over a vocabulary.

    .. math::

        H(p) = -\sum_{t \in V} p(t) \log p(t), \quad 0 \log 0 = 0

    (Shannon 1948; the model entropy of Ilia & Aziz 2024, App. D). Clipped below at 0.

    Parameters
    ----------
    p : numpy.ndarray
        Probabilities, shape ``(V,)``.

    Returns
    -------
    float
        The entropy, >= 0.

    Examples
    --------
    >>> round(dense_entropy(np.array([0.5, 0.5, 0.0])), 6)
    0.693147
    """
    p = np.asarray(p, dtype=np.float64)
    positive = p[p > 0]
    return float(max(0.0, -(positive * np.log(positive)).sum()))


def renormalise(log_probs: np.ndarray) -> np.ndarray:
    r"""Probabilities renormalised over a support from their log-probabilities.

    .. math::

        q(w) = \exp\Big(\log P(w) - \log \sum_{k \in S} P(k)\Big), \quad w \in S

    (Ilia & Aziz 2024, App. A, eq. 1: the biased model estimate), with the log-sum-exp taken
    stably (``scipy.special.logsumexp``).

    Parameters
    ----------
    log_probs : array_like
        :math:`\log P(w)` for each word of the support; finite or -inf.

    Returns
    -------
    numpy.ndarray
        :math:`q`, summing to 1; a word with log P = -inf gets 0.

    Raises
    ------
    ValueError
        When the array is empty, holds NaN or +inf, or every word has probability 0.

    Examples
    --------
    >>> renormalise(np.log([0.1, 0.3])).round(6).tolist()
    [0.25, 0.75]
    """
    from scipy.special import logsumexp  # here: not every command that imports metrics needs scipy

    log_probs = np.asarray(log_probs, dtype=float)
    if log_probs.size == 0 or np.isnan(log_probs).any() or np.isposinf(log_probs).any():
        raise ValueError(f"log probabilities must be a non-empty array of finite values or -inf, got {log_probs}")
    total = logsumexp(log_probs)
    if not np.isfinite(total):
        raise ValueError("every word of the support has probability 0: nothing to renormalise")
    return np.exp(log_probs - total)
