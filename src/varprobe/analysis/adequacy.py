"""A production system's adequacy on its task, per input and per task: chrF and BLEU against
the references, the share of outputs in the task's output language, the shares of empty
outputs and of outputs that copy the input (``varprobe.metrics.adequacy`` defines each).

A variability comparison is read only where the generator does the task: a model that answers
a German translation prompt in English, or repeats its input, varies in ways the references
cannot (``docs/methods.md``, adequacy).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from varprobe.metrics import bootstrap_mean_ci
from varprobe.metrics.adequacy import (
    copy_share,
    empty_share,
    is_empty,
    language_share,
    mean_bleu,
    mean_chrf,
)

STATISTICS = ("chrf", "bleu", "language_share", "empty_share", "copy_share",
              "reference_language_share")
"""The per-input adequacy statistics, as columns of the per-input table and rows of the summary;
``reference_language_share`` is ``language_share`` of the input's references, what the
identifier makes of human outputs of the task (its ceiling on short texts)."""

IDENTIFIER = "py3langid"
"""The language identifier: py3langid (Lui & Baldwin 2012's langid.py, its 97 languages and
the model that ships in its PyPI package), as named in the tables' metadata."""


def identify_languages(texts: Sequence[str]) -> list[str | None]:
    """Each text's most probable language by ``IDENTIFIER`` (an ISO 639-1 code), None for an
    empty text (``metrics.adequacy.is_empty``).

    Parameters
    ----------
    texts : sequence of str
        The texts.

    Returns
    -------
    list of str or None
        One code per text, in order.
    """
    import py3langid

    return [None if is_empty(text) else py3langid.classify(text)[0] for text in texts]


def input_adequacy(instances: pd.DataFrame, samples: pd.DataFrame, language: str,
                   identify: Callable[[Sequence[str]], list[str | None]] = identify_languages
                   ) -> pd.DataFrame:
    """One row per input of ``instances`` that has samples: ``input_id``, ``n_outputs`` and each
    of ``STATISTICS`` over its outputs (the ``production_samples`` rows of that input), against
    its references and source; the language share against ``language``.

    Parameters
    ----------
    instances : pandas.DataFrame
        An instances table (``input_id``, ``source``, ``references``).
    samples : pandas.DataFrame
        A ``production_samples`` table.
    language : str
        The task's target language, an ISO 639-1 code.
    identify : callable, optional
        Maps texts to their language codes (``identify_languages``).

    Returns
    -------
    pandas.DataFrame
        One row per input, in the order of ``instances``.

    Raises
    ------
    ValueError
        Naming the inputs, when ``samples`` holds outputs of inputs that ``instances`` lacks.
    """
    by_input = samples.sort_values(["input_id", "sample_index"]).groupby("input_id")["text"].apply(list)
    unknown = sorted(set(by_input.index) - set(instances["input_id"]))
    if unknown:
        raise ValueError(f"samples hold outputs of inputs {unknown[:5]} that the instances table lacks")
    rows = []
    for input_id, source, references in zip(instances["input_id"], instances["source"],
                                            instances["references"], strict=True):
        outputs = by_input.get(input_id)
        if outputs is None:
            continue
        rows.append({"input_id": input_id, "n_outputs": len(outputs),
                     "chrf": mean_chrf(outputs, list(references)),
                     "bleu": mean_bleu(outputs, list(references)),
                     "language_share": language_share(identify(outputs), language),
                     "empty_share": empty_share(outputs), "copy_share": copy_share(outputs, source),
                     "reference_language_share": language_share(identify(list(references)), language)})
    return pd.DataFrame(rows, columns=["input_id", "n_outputs", *STATISTICS])


def summarise(per_input: pd.DataFrame, seed: int, n_resamples: int) -> pd.DataFrame:
    """Per statistic of ``STATISTICS``: the mean over inputs with a 95% percentile-bootstrap
    interval over inputs (``metrics.bootstrap_mean_ci``, generator seeded by ``[seed, s]`` for
    the s-th statistic), ``n_inputs`` and ``n_outputs``; NaN where there is no input.

    Parameters
    ----------
    per_input : pandas.DataFrame
        ``input_adequacy``'s table.
    seed : int
        The bootstrap's seed.
    n_resamples : int
        Bootstrap resamples.

    Returns
    -------
    pandas.DataFrame
        One row per statistic: its mean, interval, ``n_inputs`` and ``n_outputs``.
    """
    rows = []
    for s, statistic in enumerate(STATISTICS):
        values = per_input[statistic].to_numpy(dtype=float)
        mean, low, high = (bootstrap_mean_ci(values, np.random.default_rng([seed, s]), n_resamples)
                           if len(values) else (math.nan,) * 3)
        rows.append({"statistic": statistic, "n_inputs": len(values),
                     "n_outputs": int(per_input["n_outputs"].sum()), "mean": mean,
                     "ci_low": low, "ci_high": high})
    return pd.DataFrame(rows)
