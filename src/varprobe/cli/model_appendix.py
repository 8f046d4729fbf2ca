"""Subcommands of the appendix experiments that run the model itself (Ilia & Aziz 2024, App. A
biased model estimate, App. D token level) and their TVD histograms."""

from __future__ import annotations

import argparse
import json
import sys

import pandas as pd
from tqdm import tqdm

from varprobe import tables
from varprobe.cli.shared import add_model_job, add_shard_options, load_model, merge_shards


def _control(args: argparse.Namespace):
    from varprobe.analysis.next_word import ControlSettings

    return ControlSettings(args.seed, args.resplits, args.ece_bins, args.bootstrap)


def _biased_estimator(args: argparse.Namespace) -> None:
    from varprobe.analysis.biased_estimator import BiasedSettings, biased_estimates, model_draws, sources
    from varprobe.sampling.scoring import WordScorer
    from varprobe.sampling.shards import shard_rows

    settings = BiasedSettings(tuple(args.nucleus), args.nucleus_samples, args.max_tokens,
                              args.batch_size, args.seed)
    contexts = tables.read(args.contexts, "provo_contexts")
    rows = shard_rows(contexts["text_id"].tolist(), args.shard, args.shards)
    contexts = contexts.iloc[rows.start : rows.stop]
    loaded, device = load_model(args)
    name = loaded.spec.name
    print(f"{name}: greedy and nucleus draws for {len(contexts)} contexts", file=sys.stderr)
    draws = model_draws(loaded.model, loaded.tokenizer, contexts, settings)
    scorer = WordScorer(loaded.model, loaded.tokenizer, args.score_batch)
    progress = tqdm(total=len(contexts), file=sys.stderr, mininterval=5, desc=f"{name}/biased scores")

    def score(context, words):
        progress.update()
        return scorer.word_log_probs(context, words)

    support = biased_estimates(contexts, tables.read(args.samples, "provo_samples"),
                               tables.read(args.responses, "provo_responses"), draws, score,
                               sources(settings.nucleus))
    progress.close()
    metadata = {"model": name, "decoding": "biased", "model_entry": json.loads(args.model),
                "device": device, "samples": args.samples, "biased": vars(settings),
                "shard": [args.shard, args.shards]}
    tables.write(support, args.out, "biased_support", metadata)


def _biased_merge(args: argparse.Namespace) -> None:
    from varprobe.analysis.biased_estimator import support_estimates
    from varprobe.analysis.next_word import context_table, model_summary

    support, metadata = merge_shards(args.shards, args.support_out, "biased_support")
    estimates, failure_rate = support_estimates(support)
    control = _control(args)
    table, oracle_hits = context_table(tables.read(args.contexts, "provo_contexts"),
                                       tables.read(args.responses, "provo_responses"), estimates, control)
    names = {"model": metadata["model"], "decoding": "biased"}
    tables.write(table, args.tvd_out, "provo_tvd", names)
    summary = model_summary(table, oracle_hits, failure_rate, control)
    tables.write(pd.DataFrame([{**names, **summary}]), args.system_out, "provo_system", names)


def _token_level(args: argparse.Namespace) -> None:
    from varprobe.analysis.token_level import token_summary, token_table
    from varprobe.sampling.scoring import WordScorer

    control = _control(args)
    contexts = tables.read(args.contexts, "provo_contexts")
    responses = tables.read(args.responses, "provo_responses")
    loaded, device = load_model(args)
    scorer = WordScorer(loaded.model, loaded.tokenizer)
    progress = tqdm(total=len(contexts), file=sys.stderr, mininterval=5, desc=f"{loaded.spec.name}/tokens")

    def next_token(context):
        progress.update()
        return scorer.next_token_log_probs(context).exp().cpu().numpy()

    table, confidences, hits = token_table(
        contexts, responses, next_token, scorer.first_token,
        lambda token: loaded.tokenizer.decode([token]), control,
    )
    progress.close()
    summary = token_summary(table, confidences, hits, control).assign(model=loaded.spec.name)
    metadata = {"model": loaded.spec.name, "model_entry": json.loads(args.model), "device": device}
    tables.write(table, args.tvd_out, "token_level_tvd", metadata)
    tables.write(summary, args.summary_out, "token_level_summary", metadata)


def _tvd_histogram(args: argparse.Namespace) -> None:
    from varprobe.plots.appendix import tvd_histograms

    series = {}
    for label, schema, column, path in args.series:
        if column not in tables.SCHEMAS.get(schema, {}):
            raise ValueError(f"--series {label!r}: schema {schema!r} has no column {column!r}")
        series[label] = tables.read(path, schema)[column].to_numpy()
    fig, table = tvd_histograms(series, args.xlabel)
    fig.savefig(args.figure, dpi=150)
    tables.write(table, args.table, "tvd_histogram")


def _add_control(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--contexts", required=True)
    parser.add_argument("--responses", required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--resplits", type=int, required=True)
    parser.add_argument("--ece-bins", type=int, required=True)
    parser.add_argument("--bootstrap", type=int, required=True)


def register(sub) -> None:
    """Add this module's subcommands to ``sub``."""
    p = sub.add_parser("biased-estimator",
                       help="biased model estimate: exact word probabilities renormalised over a support")
    add_model_job(p, decoding=False)
    p.add_argument("--contexts", required=True)
    p.add_argument("--responses", required=True)
    p.add_argument("--seed", type=int, required=True, help="the greedy and nucleus draws' seed")
    p.add_argument("--samples", required=True, help="the system's samples table (part of the support)")
    p.add_argument("--nucleus", type=float, nargs="+", required=True, help="top-p values of the nucleus draws")
    p.add_argument("--nucleus-samples", type=int, required=True, help="draws per nucleus value")
    p.add_argument("--max-tokens", type=int, required=True)
    p.add_argument("--batch-size", type=int, required=True, help="sampler nodes per forward pass")
    p.add_argument("--score-batch", type=int, default=64, help="words scored per forward pass")
    add_shard_options(p, "contexts")
    p.add_argument("--out", required=True, help="the shard's support table")
    p.set_defaults(run=_biased_estimator)

    p = sub.add_parser("biased-estimator-merge",
                       help="the biased estimate's support shards -> its support, TVD and system tables")
    p.add_argument("--shards", nargs="+", required=True, help="the support shards, in shard order")
    _add_control(p)
    p.add_argument("--support-out", required=True)
    p.add_argument("--tvd-out", required=True)
    p.add_argument("--system-out", required=True)
    p.set_defaults(run=_biased_merge)

    p = sub.add_parser("token-level", help="exact next-token distribution vs the humans' first tokens")
    add_model_job(p, decoding=False)
    _add_control(p)
    p.add_argument("--tvd-out", required=True)
    p.add_argument("--summary-out", required=True)
    p.set_defaults(run=_token_level)

    p = sub.add_parser("tvd-histogram", help="histograms of per-context TVD columns (App. Figs. 5, 13)")
    p.add_argument("--series", nargs=4, action="append", required=True,
                   metavar=("LABEL", "SCHEMA", "COLUMN", "TABLE"), help="one histogram; repeatable")
    p.add_argument("--xlabel", required=True)
    p.add_argument("--figure", required=True)
    p.add_argument("--table", required=True)
    p.set_defaults(run=_tvd_histogram)
