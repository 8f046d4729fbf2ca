"""Percentile-bootstrap confidence intervals for means over items."""

import numpy as np

# Cap on index-matrix entries per chunk (~32 MiB of int64), so memory stays
# bounded however many items and resamples are asked for.
_MAX_CHUNK_ENTRIES = 1 << 22


def stream_rng(seed: int, stream: int) -> np.random.Generator:
    """The generator of bootstrap stream ``stream`` under the run's ``seed``: one
    ``SeedSequence([seed, 39, stream])`` per quantity the results page's measures resample, so
    that each interval depends on the seed and its own stream only, not on what else was
    resampled before it.

    Parameters
    ----------
    seed : int
        The run's seed.
    stream : int
        The quantity's stream.

    Returns
    -------
    numpy.random.Generator

    Examples
    --------
    >>> stream_rng(0, 5).random() == stream_rng(0, 5).random() != stream_rng(0, 6).random()
    True
    """
    return np.random.default_rng(np.random.SeedSequence([seed, 39, stream]))


def bootstrap_mean_ci(
    values, rng: np.random.Generator, n_resamples: int = 1000, level: float = 0.95
) -> tuple[float, float, float]:
    """Mean over items with a percentile-bootstrap interval (Efron & Tibshirani 1993, Ch. 13).

    For items x_1..x_N, draw R = n_resamples resamples of N items with replacement, with means
    m_1..m_R, and return

        (mean(x), Q_{(1-level)/2}(m), Q_{1-(1-level)/2}(m)),

    Q being numpy's linearly interpolated quantile. Used for expected TVD, the per-context
    average of Ilia & Aziz 2024 (Section 4 "Metrics"). A single item gives (x_1, x_1, x_1).

    Parameters
    ----------
    values : array_like
        Non-empty, finite, 1-D.
    rng : numpy.random.Generator
        The source of the resamples; it is advanced, and the result depends only on the inputs
        and its state.
    n_resamples : int, default 1000
        R >= 1.
    level : float, default 0.95
        The interval's coverage, in (0, 1).

    Returns
    -------
    tuple of (float, float, float)
        The mean, the lower and the upper end of the interval.

    Raises
    ------
    ValueError
        Naming the argument, when one is outside the ranges above.

    Examples
    --------
    >>> bootstrap_mean_ci([0.25, 0.25, 0.25], np.random.default_rng(0))
    (0.25, 0.25, 0.25)
    >>> mean, low, high = bootstrap_mean_ci([0.0, 1.0], np.random.default_rng(0), n_resamples=100)
    >>> mean, 0.0 <= low <= mean <= high <= 1.0
    (0.5, True)
    """
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"values must be a non-empty 1-D array, got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError(f"values must be finite, got {x[~np.isfinite(x)][0].item()!r}")
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    integral = isinstance(n_resamples, (int, np.integer)) and not isinstance(n_resamples, bool)
    if not integral or n_resamples < 1:
        raise ValueError(f"n_resamples must be an integer >= 1, got {n_resamples!r}")
    if not (isinstance(level, (int, float, np.floating)) and 0.0 < level < 1.0):
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    n = x.size
    rows_per_chunk = max(1, _MAX_CHUNK_ENTRIES // n)
    means = np.empty(n_resamples)
    for start in range(0, n_resamples, rows_per_chunk):
        stop = min(start + rows_per_chunk, n_resamples)
        means[start:stop] = x[rng.integers(0, n, size=(stop - start, n))].mean(axis=1)
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return float(x.mean()), float(low), float(high)
