"""Pure math on distributions and arrays: no models, no I/O.

Every public metric is importable from here (``from varprobe.metrics import tvd``) and
documented with its definition, the paper it follows, its parameters and an example. The
modules are named for what they hold:

``adequacy``
    whether a generator does a task: ``mean_chrf``, ``mean_bleu``, ``mean_sari`` (``sari``),
    ``language_share``, ``empty_share``, ``copy_share`` (with ``is_empty``, ``copies_source``,
    ``normalise``)
``distributions``
    categorical next-word distributions as dicts: ``mle``, ``tvd``, ``entropy``, ``mode``,
    ``split_counts``, ``tvd_interval``
``dense``
    distributions over a vocabulary as arrays: ``dense_tvd``, ``dense_entropy``,
    ``renormalise``
``wasserstein``
    ``w1`` and the production study's human control ``control_split``, ``control_w1``
``binning``
    the one equal-width binning rule of every ECE: ``bin_index``, ``bin_edges``
``calibration``
    ``ece``, ``reliability_table``
``token_calibration``
    ECE, classwise ECE and Full-ECE of full next-token distributions:
    ``CalibrationAccumulator``, ``relative_std``
``bootstrap``
    ``bootstrap_mean_ci``
``histogram``
    ``histogram_rows``, ``histogram_overlap``
``word_classes``
    ``coarsen``, ``elbow``
"""

from varprobe.metrics.adequacy import (
    copies_source, copy_share, empty_share, is_empty, language_share, mean_bleu, mean_chrf,
    mean_sari, normalise, sari,
)
from varprobe.metrics.binning import bin_edges, bin_index
from varprobe.metrics.bootstrap import bootstrap_mean_ci
from varprobe.metrics.calibration import ece, reliability_table
from varprobe.metrics.dense import dense_entropy, dense_tvd, renormalise
from varprobe.metrics.distributions import entropy, mle, mode, split_counts, tvd, tvd_interval
from varprobe.metrics.histogram import histogram_overlap, histogram_rows
from varprobe.metrics.token_calibration import (
    METRICS, PAPER_BINS, CalibrationAccumulator, relative_std,
)
from varprobe.metrics.wasserstein import control_split, control_w1, w1
from varprobe.metrics.word_classes import coarsen, elbow

__all__ = [
    "METRICS", "PAPER_BINS", "CalibrationAccumulator", "bin_edges", "bin_index", "bootstrap_mean_ci",
    "coarsen", "control_split", "control_w1", "copies_source", "copy_share", "dense_entropy",
    "dense_tvd", "ece", "elbow", "empty_share", "entropy", "histogram_overlap", "histogram_rows",
    "is_empty", "language_share", "mean_bleu", "mean_chrf", "mean_sari", "mle", "mode", "normalise",
    "relative_std", "reliability_table", "renormalise", "sari", "split_counts", "tvd", "tvd_interval",
    "w1",
]
