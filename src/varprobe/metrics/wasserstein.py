"""Wasserstein-1 distances between empirical distributions of distances, and the human control
of the production study (Giulianelli et al. 2023, Sec. 5)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def w1(u: Sequence[float], v: Sequence[float]) -> float:
    r"""Wasserstein-1 distance between two empirical distributions.

    .. math::

        W_1(u, v) = \int_{-\infty}^{\infty} |F_u(x) - F_v(x)| \, dx,

    with :math:`F_u`, :math:`F_v` the empirical CDFs of the values (each value of weight
    1 / len); Giulianelli et al. 2023 (Sec. 5) compare the distributions of probe distances
    among model outputs and among human outputs with it. Computed by
    ``scipy.stats.wasserstein_distance``.

    Parameters
    ----------
    u, v : sequence of float
        The values of each distribution (any lengths).

    Returns
    -------
    float
        :math:`W_1(u, v) \ge 0`; NaN when ``u`` or ``v`` is empty.

    Examples
    --------
    >>> w1([0.0, 1.0], [0.5])
    0.5
    >>> w1([], [0.1])
    nan
    """
    from scipy.stats import wasserstein_distance  # here: scipy.stats takes a second to import

    u, v = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
    return float(wasserstein_distance(u, v)) if len(u) and len(v) else math.nan


def control_split(n_refs: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Two disjoint halves of the reference indices 0..n_refs-1, of sizes floor/ceil(n/2).

    The indices are permuted uniformly with ``rng``; the first floor(n/2) form half A and the
    rest half B (Giulianelli et al. 2023, Sec. 5, human control; the paper's reference code
    lets the halves overlap, here no index is in both).

    Parameters
    ----------
    n_refs : int
        The number of references, n >= 0.
    rng : numpy.random.Generator
        The source of the permutation; it is advanced.

    Returns
    -------
    tuple of numpy.ndarray
        The sorted indices of half A (floor(n/2) of them) and of half B (ceil(n/2)).

    Examples
    --------
    >>> first, second = control_split(5, np.random.default_rng(0))
    >>> len(first), len(second), sorted([*first, *second]) == [0, 1, 2, 3, 4]
    (2, 3, True)
    """
    order = rng.permutation(n_refs)
    return np.sort(order[: n_refs // 2]), np.sort(order[n_refs // 2:])


def control_w1(a: np.ndarray, b: np.ndarray, distance: np.ndarray, *, n_refs: int,
               rng: np.random.Generator) -> float:
    r"""The human control :math:`W_1(H_A, H_B)` of one input and probe.

    The references are split into disjoint halves A and B (``control_split``);
    :math:`H_A = \{k(y_i, y_j) : i < j,\ i, j \in A\}` and likewise :math:`H_B`, and the
    control is :math:`W_1(H_A, H_B)` (``w1``), a plausible divergence between two human
    populations (Giulianelli et al. 2023, Sec. 5). Undefined (NaN) distances are left out.

    Parameters
    ----------
    a, b : numpy.ndarray
        The reference indices of each human pair (H) of the input.
    distance : numpy.ndarray
        The probe distance of each pair, NaN where the probe leaves it undefined.
    n_refs : int
        The number of references of the input.
    rng : numpy.random.Generator
        The source of the split; it is advanced.

    Returns
    -------
    float
        :math:`W_1(H_A, H_B)`; NaN when a half has fewer than 2 references (n_refs < 4).

    Examples
    --------
    >>> pairs = [(i, j) for i in range(4) for j in range(i + 1, 4)]
    >>> a, b = np.array(pairs).T
    >>> control_w1(a, b, np.full(len(pairs), 0.3), n_refs=4, rng=np.random.default_rng(0))
    0.0
    >>> control_w1(a, b, np.full(len(pairs), 0.3), n_refs=3, rng=np.random.default_rng(0))
    nan
    """
    first, second = control_split(n_refs, rng)
    if len(first) < 2 or len(second) < 2:
        return math.nan
    def within(half):
        inside = np.isin(a, half) & np.isin(b, half) & ~np.isnan(distance)
        return distance[inside]
    return w1(within(first), within(second))
