"""The token-level variant of the calibration study (Ilia & Aziz 2024, Appendix D, Table 4, Fig. 13).

Per context c the model distribution is its exact next-token distribution pi(. | c) (softmax
over the full vocabulary, no decoding transformation) and the human distribution the MLE of the
responses' *first tokens*: each response r is tokenised as the continuation ``" " + r`` (the
sampler's convention: a new word starts with whitespace) and its first token id kept. The
oracle control splits the *responses* as the word-level study does (``oracle_splits``, same
seeds: the same halves) and maps each half to first tokens. Per context:

* ``tvd`` = TVD(pi, h) = 1/2 sum_{t in V} |pi(t) - h(t)|, exact over the whole vocabulary;
* ``tvd_model_oracle1`` = mean_r TVD(pi, o1_r), ``tvd_oracle2_oracle1`` = mean_r TVD(o2_r, o1_r),
  ``tvd_oracle1_human``/``tvd_oracle2_human`` = mean_r TVD(o_r, h);
* entropies (nats) of pi (over V), h, and the means over r of o1 and o2;
* the mode of pi, its probability (the ECE confidence) and the human majority token.

Ties between modes go to the smallest token id. The summary has, for the model, oracle 1 and
oracle 2 as predictors, the expected TVD to all humans (with a percentile-bootstrap 95% CI),
the expected TVD to oracle 1 and the ECE with the human-majority first token as target (the
oracles' ECE averaged over the R resplits): the paper's Table 4.

The family's declaration: ``varprobe.families.token_level``; its subcommands:
``varprobe.families.token_level.cli``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import numpy as np
import pandas as pd

from varprobe.analysis.next_word import ControlSettings, human_counts, oracle_splits
from varprobe.metrics.bootstrap import bootstrap_mean_ci
from varprobe.metrics.calibration import ece
from varprobe.metrics.dense import dense_entropy, dense_tvd
from varprobe.metrics.distributions import entropy, mle, mode, tvd

SYSTEMS = ("model", "oracle 1", "oracle 2")


def first_tokens(distribution: Mapping[str, float], first_token: Callable[[str], int]) -> dict[int, float]:
    """Map a distribution (or counts) over words to one over their first token ids, summing
    the words that share a first token.

    Parameters
    ----------
    distribution : Mapping of str to float
        Probabilities or counts over words.
    first_token : callable
        The first token id of a word.

    Returns
    -------
    dict of int to float
        The summed values per first token id.
    """
    mapped: dict[int, float] = {}
    for word, value in distribution.items():
        token = int(first_token(word))
        mapped[token] = mapped.get(token, 0) + value
    return mapped


def token_table(
    contexts: pd.DataFrame,
    responses: pd.DataFrame,
    next_tokens: Iterable[np.ndarray],
    *,
    first_token: Callable[[str], int],
    token_text: Callable[[int], str],
    settings: ControlSettings,
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Per-context token-level TVDs and entropies (schema ``token_level_tvd``), and for the
    oracles' ECE their confidences and human-majority hits, each shape (contexts, R, 2)
    (oracle 1, oracle 2).

    ``next_tokens``: the model's next-token distribution of each context in order, shape
    ``(V,)``, read one at a time; ``first_token(word)``: the first token id of ``" " + word``;
    ``token_text(id)``: its text.

    Parameters
    ----------
    contexts : pandas.DataFrame
        The contexts (``provo_contexts``), in the order of ``next_tokens``.
    responses : pandas.DataFrame
        The human responses (``provo_responses``).
    next_tokens : iterable of numpy.ndarray
        The model's next-token distribution per context.
    first_token : callable
        The first token id of a word.
    token_text : callable
        The text of a token id.
    settings : ControlSettings
        The oracle resplits.

    Returns
    -------
    tuple of (pandas.DataFrame, numpy.ndarray, numpy.ndarray)
        The per-context table, the oracles' confidences and their hits.
    """
    humans = human_counts(responses)
    rows, confidences, hits = [], [], []
    for ctx, next_token in zip(contexts.itertuples(index=False), next_tokens, strict=True):
        key = (int(ctx.text_id), int(ctx.word_number))
        ids = {word: first_token(word) for word in humans[key]}
        human = mle(first_tokens(humans[key], ids.__getitem__))
        splits = [(first_tokens(o1, ids.__getitem__), first_tokens(o2, ids.__getitem__))
                  for o1, o2 in oracle_splits(key, humans[key], settings)]
        p = np.asarray(next_token, dtype=np.float64)
        top = int(np.argmax(p))
        majority = int(mode(human)[0])
        modes = [(mode(o1), mode(o2)) for o1, o2 in splits]
        rows.append({
            "text_id": key[0], "word_number": key[1], "context_length": int(ctx.context_length),
            "n_humans": sum(humans[key].values()), "n_first_tokens": len(human),
            "tvd": dense_tvd(p, human),
            "tvd_model_oracle1": float(np.mean([dense_tvd(p, o1) for o1, _ in splits])),
            "tvd_oracle2_oracle1": float(np.mean([tvd(o2, o1) for o1, o2 in splits])),
            "tvd_oracle1_human": float(np.mean([tvd(o1, human) for o1, _ in splits])),
            "tvd_oracle2_human": float(np.mean([tvd(o2, human) for _, o2 in splits])),
            "entropy_model": dense_entropy(p), "entropy_human": entropy(human),
            "entropy_oracle1": float(np.mean([entropy(o1) for o1, _ in splits])),
            "entropy_oracle2": float(np.mean([entropy(o2) for _, o2 in splits])),
            "model_mode_id": top, "model_mode": token_text(top), "confidence": float(p[top]),
            "human_majority_id": majority, "human_majority": token_text(majority),
            "model_probability_majority": float(p[majority]),
        })
        confidences.append([[m1[1], m2[1]] for m1, m2 in modes])
        hits.append([[int(m1[0]) == majority, int(m2[0]) == majority] for m1, m2 in modes])
    shape = (len(rows), settings.resplits, 2)
    return (pd.DataFrame(rows), np.array(confidences, dtype=float).reshape(shape),
            np.array(hits, dtype=bool).reshape(shape))


def token_summary(table: pd.DataFrame, confidences: np.ndarray, hits: np.ndarray,
                  settings: ControlSettings) -> pd.DataFrame:
    """One row per predictor of ``SYSTEMS`` (schema ``token_level_summary`` without the model
    name): expected TVD to all humans with its bootstrap CI, expected TVD to oracle 1, ECE with
    the human-majority target, mean entropy.

    Parameters
    ----------
    table : pandas.DataFrame
        ``token_table``'s table.
    confidences, hits : numpy.ndarray
        ``token_table``'s oracle confidences and hits.
    settings : ControlSettings
        The resplits, ECE bins, bootstrap resamples and seed.

    Returns
    -------
    pandas.DataFrame
        One row per predictor.
    """
    if table.empty:
        raise ValueError("the token-level table has no context")
    model_hits = (table["model_mode_id"] == table["human_majority_id"]).to_numpy()
    columns = {
        "model": ("tvd", "tvd_model_oracle1", "entropy_model",
                  ece(table["confidence"].to_numpy(), model_hits, settings.ece_bins)),
        "oracle 1": ("tvd_oracle1_human", None, "entropy_oracle1", _oracle_ece(confidences, hits, 0, settings)),
        "oracle 2": ("tvd_oracle2_human", "tvd_oracle2_oracle1", "entropy_oracle2",
                     _oracle_ece(confidences, hits, 1, settings)),
    }
    rows = []
    for system, (to_humans, to_oracle1, entropy_column, calibration) in columns.items():
        rng = np.random.default_rng(np.random.SeedSequence([settings.seed, 1]))
        mean, low, high = bootstrap_mean_ci(table[to_humans].to_numpy(), rng,
                                            n_resamples=settings.bootstrap_resamples)
        rows.append({
            "system": system, "n_contexts": len(table), "expected_tvd": mean, "ci_low": low,
            "ci_high": high,
            "expected_tvd_oracle1": float(table[to_oracle1].mean()) if to_oracle1 else np.nan,
            "ece_human_majority": calibration, "mean_entropy": float(table[entropy_column].mean()),
        })
    return pd.DataFrame(rows)


def _oracle_ece(confidences: np.ndarray, hits: np.ndarray, which: int, settings: ControlSettings) -> float:
    return float(np.mean([ece(confidences[:, r, which], hits[:, r, which], settings.ece_bins)
                          for r in range(settings.resplits)]))
