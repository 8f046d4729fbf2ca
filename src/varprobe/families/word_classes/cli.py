"""The subcommands of analysis family ``word_classes`` (``varprobe.families.word_classes``):
each reads tables, calls ``varprobe.families.word_classes.analysis`` and writes tables (and figures)."""

from __future__ import annotations

import argparse
import sys
import time

import pandas as pd

from varprobe import tables
from varprobe.analysis.next_word import ControlSettings
from varprobe.families.word_classes.analysis import (
    class_summary, class_table, semantic_classifier, syntactic_classifier,
)
from varprobe.commands import add_estimates, json_value, read_estimates
from varprobe.metrics.word_classes import K_RULES


def _class_tvd(args: argparse.Namespace, classify) -> None:
    settings = ControlSettings(seed=args.seed, resplits=args.resplits, bootstrap_resamples=args.bootstrap)
    estimates, _ = read_estimates(args.samples, args.distribution)
    started = time.perf_counter()
    table = class_table(
        tables.read(args.contexts, "provo_contexts"),
        tables.read(args.responses, "provo_responses"),
        estimates, classify=classify, settings=settings,
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
    args.settings = {"embeddings": embeddings, "n_init": args.n_init, "max_iter": args.max_iter,
                     "k_rule": args.k_rule}
    vectors = load_word_vectors(embeddings)
    _class_tvd(args, semantic_classifier(vectors, args.seed, n_init=args.n_init, max_iter=args.max_iter,
                                         k_rule=args.k_rule))


def _word_class_summary(args: argparse.Namespace) -> None:
    rows = pd.concat([tables.read(p, "word_class_system") for p in args.systems], ignore_index=True)
    levels = set(rows["level"])
    if levels != {args.level}:
        raise ValueError(f"--systems mix levels {sorted(levels)}; expected only {args.level!r}")
    tables.write(rows.sort_values(["model", "decoding"], ignore_index=True), args.out,
                 "word_class_system", {"level": args.level})


def _word_class_figure(args: argparse.Namespace) -> None:
    from varprobe.families.word_classes.plots import class_tvd_histograms

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
    p.add_argument("--k-rule", choices=K_RULES, default="elbow",
                   help="how k is chosen: the elbow of the SSE curve, or the authors' first small change")
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
