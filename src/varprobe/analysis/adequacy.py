"""A production system's adequacy on its task, per input and per task: chrF and BLEU against
the references (and SARI on a simplification task), the share of outputs in the task's output
language, the shares of empty outputs and of outputs that copy the input
(``varprobe.metrics.adequacy`` defines each); the same of copying the source, each input's
source its one output, the baseline a system must beat (``beats_copy``).

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
    mean_sari,
)

STATISTICS = ("chrf", "bleu", "language_share", "empty_share", "copy_share",
              "reference_language_share", "sari")
"""The per-input adequacy statistics, as columns of the per-input table and rows of the summary;
``sari`` is scored on a simplification task alone (``Dataset.simplification``; NaN elsewhere,
and no summary row); ``reference_language_share`` is ``language_share`` of the input's
references, what the identifier makes of human outputs of the task (its ceiling on short
texts)."""

COPY_BASELINE = "copying the source"
"""The ``model`` of the copy baseline's rows in the summary (``decoding`` empty): each input's
source as its one output. No configured model has this name (model names have no spaces)."""

CRITERIA = {False: "chrf", True: "sari"}
"""The statistic a system must beat copying on, by whether its task is simplification
(``beats_copy``)."""

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


def copy_samples(instances: pd.DataFrame) -> pd.DataFrame:
    """The copy baseline's samples: each input's source as its one output (``sample_index`` 0),
    in the order of ``instances``; the whole source, for a dialogue its whole context.

    Parameters
    ----------
    instances : pandas.DataFrame
        An instances table (``input_id``, ``source``).

    Returns
    -------
    pandas.DataFrame
        ``input_id``, ``sample_index``, ``text``, as ``input_adequacy`` reads samples.
    """
    return pd.DataFrame({"input_id": instances["input_id"].to_numpy(), "sample_index": 0,
                         "text": instances["source"].to_numpy()})


def input_adequacy(instances: pd.DataFrame, samples: pd.DataFrame, language: str, *,
                   simplification: bool = False,
                   identify: Callable[[Sequence[str]], list[str | None]] = identify_languages
                   ) -> pd.DataFrame:
    """One row per input of ``instances`` that has samples: ``input_id``, ``n_outputs`` and each
    of ``STATISTICS`` over its outputs (the ``production_samples`` rows of that input), against
    its references and source; the language share against ``language``; ``sari`` for a
    ``simplification`` task, else NaN.

    Parameters
    ----------
    instances : pandas.DataFrame
        An instances table (``input_id``, ``source``, ``references``).
    samples : pandas.DataFrame
        A ``production_samples`` table.
    language : str
        The task's target language, an ISO 639-1 code.
    simplification : bool, optional
        Whether the task is simplification (``Dataset.simplification``): SARI is scored.
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
                     "sari": mean_sari(outputs, source, list(references)) if simplification else math.nan,
                     "language_share": language_share(identify(outputs), language),
                     "empty_share": empty_share(outputs), "copy_share": copy_share(outputs, source),
                     "reference_language_share": language_share(identify(list(references)), language)})
    return pd.DataFrame(rows, columns=["input_id", "n_outputs", *STATISTICS])


def summarise(per_input: pd.DataFrame, seed: int, n_resamples: int) -> pd.DataFrame:
    """Per statistic of ``STATISTICS``: the mean over inputs with a 95% percentile-bootstrap
    interval over inputs (``metrics.bootstrap_mean_ci``, generator seeded by ``[seed, s]`` for
    the s-th statistic; ``sari`` last, so that the others keep their seeds), ``n_inputs`` and
    ``n_outputs``; NaN where there is no input. A
    statistic the task does not score (NaN for every input: ``sari`` outside simplification)
    has no row.

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
        if len(values) and np.isnan(values).all():
            continue
        mean, low, high = (bootstrap_mean_ci(values, np.random.default_rng([seed, s]), n_resamples)
                           if len(values) else (math.nan,) * 3)
        rows.append({"statistic": statistic, "n_inputs": len(values),
                     "n_outputs": int(per_input["n_outputs"].sum()), "mean": mean,
                     "ci_low": low, "ci_high": high})
    return pd.DataFrame(rows)


def beats_copy(summary: pd.DataFrame) -> pd.DataFrame:
    """Per system of ``summary``: whether it does its task better than copying the source.

    A system beats copying on a task when the lower bound of the 95% bootstrap interval of its
    mean criterion statistic over inputs is above the copy baseline's mean of that statistic
    (the rows whose ``model`` is ``COPY_BASELINE``): the whole interval above the baseline's
    point value, not the mean alone. The criterion (``CRITERIA``) is chrF, and on a
    simplification task (one whose summary has ``sari`` rows) SARI alone, since chrF rewards
    copying there: ASSET's references stay so close to their sources that copying scores above
    a held-out annotator (``docs/methods.md``, adequacy). A system whose criterion is NaN (no
    input) does not beat copying.

    Parameters
    ----------
    summary : pandas.DataFrame
        A ``production_adequacy_summary`` table with a copy baseline per dataset.

    Returns
    -------
    pandas.DataFrame
        ``production_beats_copy``: ``dataset``, ``model``, ``decoding``, ``statistic`` (the
        criterion), the system's ``mean``, ``ci_low`` and ``ci_high``, the baseline's ``copy``,
        and ``beats_copy``; one row per system, in the summary's order.

    Raises
    ------
    ValueError
        Naming the dataset, when it has systems but no copy baseline's row of its criterion.
    """
    columns = ["dataset", "model", "decoding", "statistic", "mean", "ci_low", "ci_high", "copy",
               "beats_copy"]
    rows = []
    for dataset, by_dataset in summary.groupby("dataset", sort=False):
        criterion = CRITERIA["sari" in set(by_dataset["statistic"])]
        scored = by_dataset[by_dataset["statistic"] == criterion]
        baseline = scored[scored["model"] == COPY_BASELINE]
        if len(baseline) != 1:
            raise ValueError(f"dataset {dataset!r}: the adequacy summary has {len(baseline)} rows of "
                             f"{COPY_BASELINE!r} for {criterion!r}, needs one")
        copy = float(baseline["mean"].iloc[0])
        for r in scored[scored["model"] != COPY_BASELINE].itertuples(index=False):
            rows.append({"dataset": dataset, "model": r.model, "decoding": r.decoding,
                         "statistic": criterion, "mean": r.mean, "ci_low": r.ci_low,
                         "ci_high": r.ci_high, "copy": copy, "beats_copy": bool(r.ci_low > copy)})
    return pd.DataFrame(rows, columns=columns)
