"""The one equal-width binning rule of every ECE of the package: ``ece`` and ``reliability_table``
(``metrics/calibration.py``) and the top-label ECE, cw-ECE, Full-ECE and weighted Full-ECE of
``CalibrationAccumulator`` (``metrics/token_calibration.py``).

[0, 1] is cut into M bins with edges e_m = m / M, m = 0..M; bin m is the half-open interval
[e_m, e_{m+1}), and the last bin is closed, [e_{M-1}, 1]. A probability exactly at an edge e_m
(0 < m < M) goes to bin m, the bin *above* the edge; p = 0 is in bin 0 and p = 1 in bin M - 1.

On doubles, each edge is the double nearest to m / M (``m / M`` correctly rounded, which is what
``numpy.arange(M + 1) / M`` gives), and p is compared with those doubles:

    bin_M(p) = max{m in 0..M-1 : p >= fl(m / M)}.

So a probability written or computed as a quotient j / n (correctly rounded, as ``j / n`` is in
Python and NumPy) goes to the bin of the rational number j / n whenever |j / n - m / M| >= 2**-52
for every edge (always, for n M < 2**52): 12 / 40 and 0.3 are both the double nearest to 3 / 10
and go to bin 3 of 10, although that double lies just below 3 / 10. Flooring p * M instead gets
such edges wrong in both directions (fl(p * M) can round onto an integer from below, as
15 / 22 * 22 does not), and the exact floor of the double (``floor(p * M)`` in real arithmetic)
puts 0.3 in bin 2.

Whose convention this is
    Ilia & Aziz 2024 state no rule; their code (github.com/evgeniael/predict_next_word,
    ``calculate_ECE`` in ``TVD/GPT2/gpt2_processing.ipynb`` and every other processing script,
    e.g. ``Additional_Experiments/Appendix_D/GPT2_processing_BPE.py`` lines 219-234) takes bin i
    as ``conf >= i`` and ``conf < i + 1/bins`` for ``i`` in ``np.arange(0, 1, 1/bins)``: bins
    closed below and open above, so an edge value goes to the bin above it, as here. Their edges
    are accumulated in floating point (``np.arange`` gives 3 * 0.1 = 0.30000000000000004 and
    0.5 + 0.1 = 0.6), so at 10 bins their code puts 0.3 and 0.7 in the bin below, and 0.6 and 1.0
    in no bin at all (counted in N, in no bin); this rule keeps their intervals without that
    artefact and closes the last bin. ``varprobe.analysis.authors_protocol.authors_ece`` keeps
    their code as it is, for their protocol.
    Liu et al. 2024 (Sec. 2) write bin m as the open interval ((m - 1) / M, m / M) and assign
    no edge; their cw-ECE and Full-ECE (Sec. 3) bin as ECE does. This rule assigns the edges as
    Ilia & Aziz's code does.

The rule nests: for M dividing L, bin_M(p) = bin_L(p) // (L / M) for every double p in [0, 1]
(the edges of M are edges of L, fl is monotone and the fl(j / L) increase strictly in j), which
lets ``CalibrationAccumulator`` bin once at L and sum fine bins into coarse ones exactly.
"""

import numpy as np

MAX_BINS = 2**26
"""The largest number of bins ``bin_index`` takes: the edges m / M then lie at least 2**-26 apart,
far above the rounding of a double, so they increase strictly."""


def check_bins(n_bins) -> int:
    """``n_bins`` as an int, or a ValueError naming it: an integer M with 1 <= M <= ``MAX_BINS``.

    Parameters
    ----------
    n_bins : int
        The number of equal-width bins.

    Returns
    -------
    int
        ``n_bins``.

    Raises
    ------
    ValueError
        When ``n_bins`` is not an integer in [1, ``MAX_BINS``] (a bool is not an integer here).

    Examples
    --------
    >>> check_bins(10)
    10
    """
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or not 1 <= n_bins <= MAX_BINS:
        raise ValueError(f"n_bins must be an integer in [1, {MAX_BINS}], got {n_bins!r}")
    return int(n_bins)


def bin_edges(n_bins: int) -> np.ndarray:
    """The M + 1 edges e_m = fl(m / M), m = 0..M, of ``bin_index`` (module docstring).

    Parameters
    ----------
    n_bins : int
        M, the number of bins (``check_bins``).

    Returns
    -------
    numpy.ndarray
        float64, from 0.0 to 1.0; bin m is [e_m, e_{m+1}), the last one closed.

    Examples
    --------
    >>> bin_edges(4).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    n_bins = check_bins(n_bins)
    return np.arange(n_bins + 1) / n_bins


def bin_index(p, n_bins: int) -> np.ndarray:
    """The equal-width bin of each probability (the module docstring states the rule):

        bin_M(p) = max{m in 0..M-1 : p >= fl(m / M)},

    bins closed below and open above, the last one closed: a probability at an edge goes to the
    bin above it, 0 to the first bin and 1 to the last.

    ``floor(p * M)`` (rounded product) is within one of the bin; one comparison with each
    neighbouring edge corrects it.

    Parameters
    ----------
    p : array_like
        Probabilities in [0, 1] (not checked here: the metrics validate their inputs).
    n_bins : int
        M, the number of bins (``check_bins``).

    Returns
    -------
    numpy.ndarray
        The bin indices (int64) in 0..M-1, the shape of ``p``.

    Examples
    --------
    >>> bin_index([0.0, 0.29, 0.3, 12 / 40, 0.5, 1.0], 10).tolist()
    [0, 2, 3, 3, 5, 9]
    >>> bin_index([0.29, 15 / 22], 100).tolist(), bin_index([15 / 22], 22).tolist()
    ([29, 68], [15])
    """
    n_bins = check_bins(n_bins)
    p = np.asarray(p, dtype=np.float64)
    index = np.clip(np.floor(p * n_bins), 0, n_bins)
    index -= p < index / n_bins
    index += p >= (index + 1) / n_bins
    return np.minimum(index.astype(np.int64), n_bins - 1)
