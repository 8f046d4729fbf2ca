"""Ilia & Aziz (2024) App. B's ARD regression (Table 3) under the authors' own protocol: the
target and the predictor TVD between oracles from one split of the responses, the predictors in
their own units.

The authors' code (github.com/evgeniael/predict_next_word, commit 027ffaa,
``Additional_Experiments/Appendix_B/analysis_predictors.ipynb``, cited as cell:line) fits
``sklearn.linear_model.ARDRegression()`` with its defaults (cells 11 and 15: alpha_1 = alpha_2 =
lambda_1 = lambda_2 = 1e-6, threshold_lambda = 1e4, tol = 1e-3, an intercept) to one row per
context of their GPT-2 sample files (cell 3), the predictors as computed (cells 12-13, none
standardised):

* target: TVD(M, O1) (cell 2:53; ``tvd_unbiased``, which at ``n = 0`` is it, cell 2:115), M the
  MLE of the draws, lowercased, the failed ones dropped (cell 1:5-22);
* human entropy, in nats, of all responses (cell 2:60) and model entropy of M (cell 2:61);
* TVD(O2, O1) of the same split (cell 2:51);
* context length ``len(context.split(' '))`` (cell 2:31), in words;
* the universal tag of the context's last token (``nltk.pos_tag(nltk.word_tokenize(context),
  tagset='universal')[-1]``, cell 2:27), one 0/1 column for every tag of the data (cell 9:
  ``pd.get_dummies``, none dropped, beside the intercept).

Their split (cell 1:46-68) is ``random.seed(0)`` in every context (``self.seed = 0``, cell
1:44), one response drawn at random removed from an odd number, ``len(words) // 2`` drawn without
replacement for oracle 1 and the rest oracle 2: ``varprobe.analysis.authors_protocol.
authors_split`` with ``half = len(words) // 2`` (Table 1's draws a fixed 20), from the responses
in the norms' order (``authors_order``). One split gives both the target and the predictor
(cell 2:41-53), so oracle 1's sampling noise enters both; ours (``varprobe.analysis.next_word``)
average each over R resplits seeded per context. Cell 16 prints the coefficients: TVD between
oracles 0.11515 where the paper's Table 3 prints 0.117; the others round to the table's digits.

Ours here: the words (responses and draws as ``varprobe.words.read_word`` reads them, where the
authors compare raw responses with lowercased draws stripped of punctuation), the contexts (the
run's: (18, 3) left out), the model and its draws, and the tagger's tokenizer (no sentence split,
``varprobe.probes.pos_tags``). What the two protocols give on the authors' own GPT-2 samples:
``docs/methods.md``, "The authors' protocol for Table 3".
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from varprobe.analysis.authors_protocol import authors_split, counts_of, distribution
from varprobe.analysis.next_word import ModelEstimate, human_counts
from varprobe.metrics.distributions import tvd

AUTHORS_SEED = 0
"""The seed of the authors' one split, the same in every context (``self.seed = 0``, cell 1:44)."""


def authors_order(counts: Mapping[str, int]) -> list[str]:
    """One context's responses, one entry per response, in the order the authors' split draws
    them from: the Provo norms' order, most frequent first and ties in alphabetical order (every
    position of the norms file lists its responses so), each repeated ``count`` times (cell
    1:50-51).

    Parameters
    ----------
    counts : mapping of str to int
        The context's response counts.

    Returns
    -------
    list of str

    Examples
    --------
    >>> authors_order({"b": 1, "c": 2, "a": 1})
    ['c', 'c', 'a', 'b']
    """
    return [w for w, n in sorted(counts.items(), key=lambda item: (-item[1], item[0])) for _ in range(n)]


def one_split(counts: Mapping[str, int], seed: int) -> tuple[dict[str, float], dict[str, float]]:
    """Oracle 1 and oracle 2 of one context as the authors split it (cell 1:46-68), as MLEs:
    ``authors_split`` of ``authors_order(counts)`` with ``random.seed(seed)`` and half the
    responses (after the odd one's removal) to oracle 1.

    Parameters
    ----------
    counts : mapping of str to int
        The context's response counts (at least two responses).
    seed : int
        The seed of ``random.seed``.

    Returns
    -------
    oracle1 : dict of str to float
    oracle2 : dict of str to float
    """
    words = authors_order(counts)
    first, second = authors_split(words, seed, half=len(words) // 2)
    return distribution(counts_of(first)), distribution(counts_of(second))


def split_tvds(responses: pd.DataFrame, estimates: Mapping[tuple[int, int], ModelEstimate],
               seeds) -> pd.DataFrame:
    """Per context with a model word and split seed s of ``seeds``: TVD(M, O1_s) and TVD(O2_s,
    O1_s), both from the authors' one split seeded s (``one_split``), the pair the authors'
    target and predictor are (cell 2:41-53, at s = ``AUTHORS_SEED``).

    Parameters
    ----------
    responses : pandas.DataFrame
        A ``provo_responses`` table.
    estimates : mapping of (int, int) to ModelEstimate
        The model's distribution per context (``varprobe.commands.read_estimates``).
    seeds : iterable of int
        The split seeds.

    Returns
    -------
    pandas.DataFrame
        ``text_id``, ``word_number``, ``seed``, ``tvd_model_oracle1``, ``tvd_oracle2_oracle1``.
    """
    humans = human_counts(responses)
    rows = []
    for key, counts in humans.items():
        model = estimates.get(key, ModelEstimate(None)).distribution
        if model is None:
            continue
        for seed in seeds:
            o1, o2 = one_split(counts, seed)
            rows.append({"text_id": key[0], "word_number": key[1], "seed": seed,
                         "tvd_model_oracle1": tvd(model, o1), "tvd_oracle2_oracle1": tvd(o2, o1)})
    return pd.DataFrame(rows, columns=["text_id", "word_number", "seed", "tvd_model_oracle1",
                                       "tvd_oracle2_oracle1"])


def ard_coefficients(design: pd.DataFrame, y: np.ndarray) -> dict[str, float]:
    """The coefficients of ``sklearn.linear_model.ARDRegression()`` with its defaults, as the
    authors fit it (cells 11 and 14-16): type-II maximum likelihood of one Gaussian precision per
    coefficient, an intercept fitted and left out.

    Parameters
    ----------
    design : pandas.DataFrame
        One column per predictor, one row per context.
    y : numpy.ndarray
        The target, one value per row.

    Returns
    -------
    dict of str to float
        Each column's coefficient.
    """
    from sklearn.linear_model import ARDRegression

    fit = ARDRegression().fit(design.to_numpy(dtype=float), np.asarray(y, dtype=float))
    return dict(zip(design.columns, map(float, fit.coef_), strict=True))
