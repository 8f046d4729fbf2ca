"""Expected calibration error and its reliability table, on equal-width bins (``metrics/binning.py``)."""

import numpy as np
import pandas as pd

from varprobe.metrics.binning import bin_edges, bin_index, check_bins


def _validate(confidences, correct, n_bins) -> tuple[np.ndarray, np.ndarray]:
    check_bins(n_bins)
    conf = np.asarray(confidences, dtype=float)
    corr = np.asarray(correct)
    if conf.ndim != 1 or conf.size == 0:
        raise ValueError(f"confidences must be a non-empty 1-D array, got shape {conf.shape}")
    if corr.shape != conf.shape:
        raise ValueError(
            f"correct has shape {corr.shape}, confidences has shape {conf.shape}: "
            "lengths must match"
        )
    outside = ~((conf >= 0.0) & (conf <= 1.0))  # also catches NaN
    if outside.any():
        raise ValueError(f"confidences must lie in [0, 1], got {conf[outside][0].item()!r}")
    not_binary = ~np.isin(corr, (0, 1))
    if not_binary.any():
        raise ValueError(f"correct must be boolean or 0/1, got {corr[not_binary][0].item()!r}")
    return conf, corr.astype(float)


def _bin_sums(conf: np.ndarray, corr: np.ndarray, n_bins: int):
    index = bin_index(conf, n_bins)
    count = np.bincount(index, minlength=n_bins)
    conf_sum = np.bincount(index, weights=conf, minlength=n_bins)
    correct_sum = np.bincount(index, weights=corr, minlength=n_bins)
    return count, conf_sum, correct_sum


def ece(confidences, correct, n_bins: int) -> float:
    """Expected calibration error (Guo et al. 2017), as reported by Ilia & Aziz 2024 (Table 1).

    With N items, item i with confidence c_i in [0, 1] goes to bin b(i) = ``bin_index(c_i, n_bins)``
    of ``metrics/binning.py``: bin b is [b / n_bins, (b + 1) / n_bins), a confidence at an edge
    goes to the bin above it (as in the authors' code), c = 0.0 to the first bin and c = 1.0 to
    the last. Then

        ECE = sum_b (|B_b| / N) * |acc(B_b) - conf(B_b)|,

    with acc(B_b) the fraction correct and conf(B_b) the mean confidence in bin b; empty bins
    contribute 0. In Ilia & Aziz 2024 (footnote 2) confidence is the mode probability and
    correctness is mode == target word; they show ECE is unreliable under data uncertainty, so
    report it next to TVD, not alone.

    Parameters
    ----------
    confidences : array_like
        1-D, length N >= 1, values in [0, 1].
    correct : array_like
        Same shape, boolean or 0/1.
    n_bins : int
        The number of equal-width bins, >= 1 (the run's ``provo.ece_bins``, whose default the
        config schema holds).

    Returns
    -------
    float
        The ECE, in [0, 1].

    Raises
    ------
    ValueError
        Naming the argument and its value, when it is outside the ranges above.

    Examples
    --------
    >>> ece([0.9, 0.9], [True, False], n_bins=10)
    0.4
    """
    conf, corr = _validate(confidences, correct, n_bins)
    _, conf_sum, correct_sum = _bin_sums(conf, corr, n_bins)
    # (|B|/N) |acc - conf| = |sum correct - sum conf| / N, which is 0 for empty bins.
    return float(np.abs(correct_sum - conf_sum).sum() / conf.size)


def reliability_table(confidences, correct, n_bins: int) -> pd.DataFrame:
    """Per-bin reliability table behind ``ece`` (Guo et al. 2017; Ilia & Aziz 2024).

    One row per bin b = 0..n_bins-1, binned as in ``ece``, with

        count = |B_b|,  mean_confidence = (1/|B_b|) sum_{i in B_b} c_i,
        accuracy = (1/|B_b|) sum_{i in B_b} correct_i,

    so ece = sum_b (count_b / N) |accuracy_b - mean_confidence_b| over non-empty bins.

    Parameters
    ----------
    confidences, correct, n_bins
        As in ``ece`` (and validated as there).

    Returns
    -------
    pandas.DataFrame
        Columns ``bin, lower, upper, count, mean_confidence, accuracy`` with lower = b/n_bins,
        upper = (b+1)/n_bins (``binning.bin_edges``); an empty bin has count 0 and NaN mean_confidence and accuracy.

    Examples
    --------
    >>> reliability_table([0.9, 0.9], [True, False], n_bins=2)["count"].tolist()
    [0, 2]
    """
    conf, corr = _validate(confidences, correct, n_bins)
    count, conf_sum, correct_sum = _bin_sums(conf, corr, n_bins)
    edges = bin_edges(n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        # 0/0 in empty bins is exactly the NaN the table documents.
        mean_confidence = conf_sum / count
        accuracy = correct_sum / count
    return pd.DataFrame(
        {
            "bin": np.arange(n_bins),
            "lower": edges[:-1],
            "upper": edges[1:],
            "count": count,
            "mean_confidence": mean_confidence,
            "accuracy": accuracy,
        }
    )
