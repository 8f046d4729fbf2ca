"""Token-level calibration of full next-token distributions (Liu et al. 2024): ECE, classwise ECE and
Full-ECE, streamed through per-bin accumulators so that memory never grows with the corpus.

Notation (Liu et al. 2024, Sec. 2-3): N positions i, each with a predicted distribution p_i over K
classes (the vocabulary) and a label y_i (the token that follows). [0, 1] is cut into M equal
bins; probability p goes to bin bin_M(p) of ``metrics/binning.py``, the one rule of every ECE of
the package (``metrics/calibration.py`` uses it too): bin m is [m / M, (m + 1) / M), a probability
at an edge goes to the bin above it, p = 0 to the first bin and p = 1 to the last (the paper
writes the bins as open intervals and leaves the edges unassigned; the convention is that of
Ilia & Aziz's code, see ``binning``).

One pass, every M: the accumulator bins at a fine resolution L = lcm of the requested Ms (1000 for
the paper's {5, 10, 20, 50, 100, 200, 500}) and sums fine bins into coarse ones. For M dividing L,
bin_M(p) = bin_L(p) // (L / M) for every double p in [0, 1] (``binning``: the edges of M are edges
of L), so the coarse sums are *exactly* those of a direct computation at M.

Edge cases: an empty bin contributes 0 to every metric (each term is written as
|sum of outcomes - sum of probabilities| / N, which is 0 for an empty bin; A_m and C_m themselves
are undefined there). A probability exactly 0 sits in bin 0; in the printed Full-ECE and in cw-ECE
it adds 0 to the probability sums but its (position, class) pair still counts in |B_m,k| and, if it
is the label, adds 1 to the outcome sum; in the probability-weighted Full-ECE it has weight 0 and
contributes nothing. A probability exactly 1 sits in the last bin. Ties in the top-label ECE go to
the lowest class index (``numpy.argmax``).
"""

from __future__ import annotations

import math
from dataclasses import KW_ONLY, dataclass, field

import numpy as np

from varprobe.metrics.binning import MAX_BINS, bin_index

PAPER_BINS = (5, 10, 20, 50, 100, 200, 500)
"""The numbers of bins of Liu et al. 2024, Table 1."""

MAX_RESOLUTION = MAX_BINS
"""The bound on the least common multiple of the numbers of bins: the accumulator's fine bins
(one per multiple), below ``binning.MAX_BINS``."""

METRICS = ("ece", "classwise_ece", "full_ece", "full_ece_weighted")
"""The metrics an accumulator returns, in report order."""


def relative_std(values, ddof: int = 1) -> float:
    """Relative standard deviation (Liu et al. 2024, Table 1):

        RSD = std(values, ddof) / mean(values).

    The paper does not state ddof; the default ddof = 1 is the sample standard deviation.

    Parameters
    ----------
    values : array_like
        1-D.
    ddof : int, default 1
        Delta degrees of freedom of the standard deviation.

    Returns
    -------
    float
        The RSD; NaN when the mean is 0 or there are fewer than ddof + 1 values.

    Raises
    ------
    ValueError
        When ``values`` is not 1-D.

    Examples
    --------
    >>> relative_std([1.0, 3.0])
    0.7071067811865476
    """
    values = np.asarray(values, dtype=float)
    if values.ndim != 1:
        raise ValueError(f"values must be 1-D, got shape {values.shape}")
    if values.size <= ddof:
        return float("nan")
    mean = values.mean()
    return float(values.std(ddof=ddof) / mean) if mean != 0 else float("nan")


def _check_bins(bins) -> tuple[int, ...]:
    bins = tuple(bins)
    bad = [m for m in bins if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1]
    if not bins or bad:
        raise ValueError(f"bins must be a non-empty list of integers >= 1, got {list(bins)!r}")
    return tuple(sorted({int(m) for m in bins}))


@dataclass
class CalibrationAccumulator:
    """Streaming sums behind ECE, cw-ECE, Full-ECE and probability-weighted Full-ECE.

    ``update(probs, labels)`` takes a batch of T positions (``probs``: (T, K) rows summing to 1,
    ``labels``: (T,) class ids) and adds it to per-bin sums at the fine resolution
    L = lcm(``bins``); ``metric(name, M)`` for any M in ``bins`` is then exact (see the module
    docstring). Results do not depend on how the positions are split into batches (up to the
    order of floating-point additions).

    Memory is O(L + K) for ECE and Full-ECE, and O(K + S) for cw-ECE, where S <= K (L - 1) is the
    number of distinct (class, fine bin) pairs above fine bin 0 ever seen: the pairs in fine bin
    0 (p < 1 / L: nearly the whole vocabulary at every position) are summed in dense length-K
    arrays, the rest in sorted sparse arrays (a position has at most L classes with p >= 1 / L, as
    its probabilities sum to 1). ``nbytes`` is the current size, ``peak_nbytes`` the largest seen
    (the temporaries of one ``update``, a few (T, K) arrays, come on top). With SmolLM2-135M
    (K = 49,152, L = 1000) all 55 Provo passages leave 66,685 sparse pairs, a few MiB, where dense
    float64 (class, fine bin) sums would take K L 8 bytes, 0.4 GB per array.

    Parameters
    ----------
    n_classes : int
        K, the number of classes (the vocabulary size), >= 1.
    bins : sequence of int, default ``PAPER_BINS``
        The numbers of bins M the metrics can be asked for.
    atol : float, default 1e-6
        Tolerance of the row sums.
    merge_every : int, default 1,000,000
        Sparse pairs buffered before they are merged.

    Examples
    --------
    >>> acc = CalibrationAccumulator(n_classes=2, bins=(2,))
    >>> acc.update(np.array([[0.9, 0.1], [0.9, 0.1]]), np.array([0, 1]))
    >>> round(acc.metric("ece", 2), 6)
    0.4
    """

    n_classes: int
    _: KW_ONLY
    bins: tuple[int, ...] = PAPER_BINS
    atol: float = 1e-6
    merge_every: int = 1_000_000
    resolution: int = field(init=False)
    n_positions: int = field(init=False, default=0)
    peak_nbytes: int = field(init=False, default=0)

    def __post_init__(self):
        if isinstance(self.n_classes, bool) or not isinstance(self.n_classes, (int, np.integer)) \
                or self.n_classes < 1:
            raise ValueError(f"n_classes must be an integer >= 1, got {self.n_classes!r}")
        self.bins = _check_bins(self.bins)
        self.resolution = math.lcm(*self.bins)
        if self.resolution >= MAX_RESOLUTION:
            raise ValueError(f"bins {list(self.bins)} have lcm {self.resolution}, above {MAX_RESOLUTION}")
        L, K = self.resolution, self.n_classes
        # Top-label (eq. 3): per fine bin, count, correct and confidence sums.
        self._top = np.zeros((3, L))
        # Full-ECE (eqs. 11-13 and the weighted form): per fine bin, count of (i, k) pairs, sum of
        # 1(y_i = k), sum of p_ik, sum of p_ik 1(y_i = k), sum of p_ik^2.
        self._full = np.zeros((5, L))
        # cw-ECE (eq. 7): dense fine bin 0 per class (count, outcomes, probabilities) ...
        self._zero = np.zeros((3, K))
        # ... and sparse pairs above it, keyed class * L + fine bin, merged from a buffer.
        self._keys = np.zeros(0, dtype=np.int64)
        self._sums = np.zeros((3, 0))
        self._pending: list[tuple[np.ndarray, np.ndarray]] = []
        self._pending_size = 0
        self._track_memory()

    # -- input ---------------------------------------------------------------------------------

    def _validate(self, probs, labels) -> tuple[np.ndarray, np.ndarray]:
        probs = np.asarray(probs, dtype=np.float64)
        labels = np.asarray(labels)
        if probs.ndim != 2 or probs.shape[1] != self.n_classes:
            raise ValueError(
                f"probs must have shape (T, {self.n_classes}) (T positions x n_classes), "
                f"got {probs.shape}"
            )
        if labels.shape != (probs.shape[0],):
            raise ValueError(f"labels must have shape ({probs.shape[0]},), got {labels.shape}")
        if labels.size and not np.issubdtype(labels.dtype, np.integer):
            raise ValueError(f"labels must be integer class ids, got dtype {labels.dtype}")
        outside = ~((probs >= 0.0) & (probs <= 1.0))  # also NaN
        if outside.any():
            t, k = np.argwhere(outside)[0]
            raise ValueError(f"probs must lie in [0, 1], got probs[{t}, {k}] = {probs[t, k]!r}")
        sums = probs.sum(axis=1)
        off = np.abs(sums - 1.0) > self.atol
        if off.any():
            t = int(np.flatnonzero(off)[0])
            raise ValueError(f"probs rows must sum to 1 (atol {self.atol}), row {t} sums to {sums[t]!r}")
        wrong = (labels < 0) | (labels >= self.n_classes)
        if wrong.any():
            raise ValueError(
                f"labels must lie in [0, {self.n_classes}), got {labels[wrong][0].item()!r}"
            )
        return probs, labels.astype(np.int64)

    def update(self, probs, labels) -> None:
        """Add T positions: ``probs`` (T, K) predicted distributions, ``labels`` (T,) true ids.

        Parameters
        ----------
        probs : array_like
            Predicted distributions, shape (T, K), rows summing to 1.
        labels : array_like
            The true class id of each position, shape (T,).

        Returns
        -------
        None
            The sums are updated in place.
        """
        probs, labels = self._validate(probs, labels)
        T, K = probs.shape
        if T == 0:
            return
        L = self.resolution
        rows = np.arange(T)
        fine = bin_index(probs, L)  # (T, K)
        label_p = probs[rows, labels]
        label_bin = fine[rows, labels]

        top = probs.argmax(axis=1)
        confidence = probs[rows, top]
        top_bin = bin_index(confidence, L)
        self._top += [
            np.bincount(top_bin, minlength=L),
            np.bincount(top_bin, weights=(top == labels).astype(float), minlength=L),
            np.bincount(top_bin, weights=confidence, minlength=L),
        ]

        flat_bin, flat_p = fine.ravel(), probs.ravel()
        self._full += [
            np.bincount(flat_bin, minlength=L),
            np.bincount(label_bin, minlength=L),
            np.bincount(flat_bin, weights=flat_p, minlength=L),
            np.bincount(label_bin, weights=label_p, minlength=L),
            np.bincount(flat_bin, weights=flat_p * flat_p, minlength=L),
        ]

        in_zero = fine == 0
        self._zero[0] += in_zero.sum(axis=0)
        self._zero[2] += np.where(in_zero, probs, 0.0).sum(axis=0)
        zero_labels = labels[label_bin == 0]
        self._zero[1] += np.bincount(zero_labels, minlength=K)

        t, k = np.nonzero(~in_zero)
        pair_keys = k * L + fine[t, k]
        lifted = label_bin > 0
        label_keys = labels[lifted] * L + label_bin[lifted]
        keys = np.concatenate([pair_keys, label_keys])
        sums = np.zeros((3, keys.size))
        sums[0, : pair_keys.size] = 1.0
        sums[1, pair_keys.size :] = 1.0
        sums[2, : pair_keys.size] = probs[t, k]
        self._pending.append((keys, sums))
        self._pending_size += keys.size
        self.n_positions += T
        self._track_memory()
        if self._pending_size >= self.merge_every:
            self._merge()

    def _merge(self) -> None:
        if not self._pending:
            return
        keys = np.concatenate([self._keys, *(k for k, _ in self._pending)])
        sums = np.concatenate([self._sums, *(s for _, s in self._pending)], axis=1)
        self._keys, inverse = np.unique(keys, return_inverse=True)
        self._sums = np.stack([np.bincount(inverse, weights=row, minlength=self._keys.size) for row in sums])
        self._pending, self._pending_size = [], 0
        self._track_memory()

    # -- memory --------------------------------------------------------------------------------

    @property
    def nbytes(self) -> int:
        """Bytes held by the accumulator's arrays now (sums, sparse pairs and merge buffer)."""
        pending = sum(k.nbytes + s.nbytes for k, s in self._pending)
        return int(self._top.nbytes + self._full.nbytes + self._zero.nbytes + self._keys.nbytes
                   + self._sums.nbytes + pending)

    def _track_memory(self) -> None:
        self.peak_nbytes = max(self.peak_nbytes, self.nbytes)

    @property
    def n_sparse_pairs(self) -> int:
        """Distinct (class, fine bin > 0) pairs held for cw-ECE."""
        self._merge()
        return int(self._keys.size)

    # -- metrics -------------------------------------------------------------------------------

    def _coarse(self, fine_sums: np.ndarray, n_bins: int) -> np.ndarray:
        if n_bins not in self.bins:
            raise ValueError(f"n_bins {n_bins!r} is not one of the accumulated bins {list(self.bins)}")
        if self.n_positions == 0:
            raise ValueError("no positions accumulated: call update() first")
        return fine_sums.reshape(fine_sums.shape[0], n_bins, self.resolution // n_bins).sum(axis=2)

    def ece(self, n_bins: int) -> float:
        """Top-label ECE (Liu et al. 2024, eq. 3; Guo et al. 2017).

        Confidence p_hat_i = max_k p_ik, correct iff argmax_k p_ik = y_i; with B_m the positions
        whose confidence is in bin m, ECE = sum_m (|B_m| / N) |A_m - C_m|
        = sum_m |sum_{i in B_m} 1(y_hat_i = y_i) - sum_{i in B_m} p_hat_i| / N.
        Bin weights |B_m| / N sum to 1.

        Parameters
        ----------
        n_bins : int
            M, the number of equal-width bins (one of the accumulator's ``bins``).

        Returns
        -------
        float
            The metric over every position added so far.
        """
        count, correct, confidence = self._coarse(self._top, n_bins)
        return float(np.abs(correct - confidence).sum() / self.n_positions)

    def full_ece(self, n_bins: int) -> float:
        """Full-ECE exactly as printed (Liu et al. 2024, eqs. 11-13).

        B_m,k: positions whose probability of class k is in bin m; |B*_m| = sum_k |B_m,k| counts
        (position, class) pairs, A*_m = sum_k sum_{i in B_m,k} 1(y_i = k) / |B*_m| and
        C*_m = sum_k sum_{i in B_m,k} p_ik / |B*_m|, and::

            Full-ECE = sum_m (|B*_m| / N) |A*_m - C*_m|
                     = sum_m |sum_{(i,k) in B*_m} 1(y_i = k) - sum_{(i,k) in B*_m} p_ik| / N.

        Note: the bin weights |B*_m| / N sum to K, the vocabulary size, not to 1 (every position
        puts all K of its classes in some bin), so this is not an expectation over p* as eq. (9)
        reads; ``full_ece_weighted`` is. Each bin's term is still at most its |B*_m| / N.

        Parameters
        ----------
        n_bins : int
            M, the number of equal-width bins (one of the accumulator's ``bins``).

        Returns
        -------
        float
            The metric over every position added so far.
        """
        _, outcomes, probability, _, _ = self._coarse(self._full, n_bins)
        return float(np.abs(outcomes - probability).sum() / self.n_positions)

    def full_ece_weighted(self, n_bins: int) -> float:
        """Probability-weighted Full-ECE: the discretisation of eq. (9) of Liu et al. 2024.

        Eq. (9) takes the output y* ~ p_i sampled and its probability p* as the confidence, so
        the pair (i, k) is drawn with probability p_ik / N. Binning p* then gives
        P(bin m) = sum_{(i,k) in B*_m} p_ik / N, P(y* = y | bin m) = sum p_ik 1(y_i = k) / sum p_ik
        and E[p* | bin m] = sum p_ik^2 / sum p_ik, so
        Full-ECE_pw = sum_m |sum_{(i,k) in B*_m} p_ik 1(y_i = k) - sum_{(i,k) in B*_m} p_ik^2| / N,
        with bin weights sum_m P(bin m) = 1. Pairs with p_ik = 0 carry no weight.

        Parameters
        ----------
        n_bins : int
            M, the number of equal-width bins (one of the accumulator's ``bins``).

        Returns
        -------
        float
            The metric over every position added so far.
        """
        _, _, _, hit_probability, squares = self._coarse(self._full, n_bins)
        return float(np.abs(hit_probability - squares).sum() / self.n_positions)

    def classwise_ece(self, n_bins: int) -> float:
        """Classwise ECE (Liu et al. 2024, eq. 7; Kull et al. 2019) over all K classes.

        ::

            cw-ECE = sum_k sum_m |B_m,k| / (N K) |A_m,k - C_m,k|
                   = sum_k sum_m |sum_{i in B_m,k} 1(y_i = k) - sum_{i in B_m,k} p_ik| / (N K)

        is the mean over the K classes of class-k-ECE, classes that never occur included (their
        class-k-ECE is their mean probability).

        Parameters
        ----------
        n_bins : int
            M, the number of equal-width bins (one of the accumulator's ``bins``).

        Returns
        -------
        float
            The metric over every position added so far.
        """
        self._coarse(self._top, n_bins)  # validates n_bins
        self._merge()
        width = self.resolution // n_bins
        coarse_keys = (self._keys // self.resolution) * n_bins + (self._keys % self.resolution) // width
        zero_keys = np.arange(self.n_classes, dtype=np.int64) * n_bins
        keys = np.concatenate([zero_keys, coarse_keys])
        difference = np.concatenate([self._zero[1] - self._zero[2], self._sums[1] - self._sums[2]])
        _, inverse = np.unique(keys, return_inverse=True)
        per_bin = np.bincount(inverse, weights=difference)
        return float(np.abs(per_bin).sum() / (self.n_positions * self.n_classes))

    def bin_weight_sum(self, name: str, n_bins: int) -> float:
        """The sum over bins of a metric's bin weights: 1 for ece, classwise_ece and
        full_ece_weighted, K for full_ece (eq. 11's |B*_m| / N).

        Parameters
        ----------
        name : str
            The metric, one of ``METRICS``.
        n_bins : int
            M, the number of bins.

        Returns
        -------
        float
            The sum of its bin weights.

        Raises
        ------
        ValueError
            For an unknown metric.
        """
        if name == "ece":
            return float(self._coarse(self._top, n_bins)[0].sum() / self.n_positions)
        if name == "full_ece":
            return float(self._coarse(self._full, n_bins)[0].sum() / self.n_positions)
        if name == "full_ece_weighted":
            return float(self._coarse(self._full, n_bins)[2].sum() / self.n_positions)
        if name == "classwise_ece":
            return float(self._coarse(self._full, n_bins)[0].sum() / (self.n_positions * self.n_classes))
        raise ValueError(f"unknown metric {name!r}; expected one of {list(METRICS)}")

    def metric(self, name: str, n_bins: int) -> float:
        """The metric ``name`` (one of ``METRICS``) at ``n_bins`` bins.

        Parameters
        ----------
        name : str
            The metric, one of ``METRICS``.
        n_bins : int
            M, the number of bins.

        Returns
        -------
        float
            Its value over every position added so far.

        Raises
        ------
        ValueError
            For an unknown metric.
        """
        if name not in METRICS:
            raise ValueError(f"unknown metric {name!r}; expected one of {list(METRICS)}")
        return getattr(self, name)(n_bins)

    def results(self) -> list[dict]:
        """One record per (metric, M): metric, bins, value, bin_weight_sum.

        Returns
        -------
        list of dict
            Every metric of ``METRICS`` at every M of ``bins``.
        """
        return [
            {"metric": name, "bins": m, "value": self.metric(name, m),
             "bin_weight_sum": self.bin_weight_sum(name, m)}
            for name in METRICS for m in self.bins
        ]
