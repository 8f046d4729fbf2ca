"""The subcommands of analysis family ``biased_estimator`` (``varprobe.families.biased_estimator``):
each reads tables, calls ``varprobe.families.biased_estimator.analysis`` and writes tables (and figures)."""

from __future__ import annotations

import argparse
import sys

import pandas as pd
from tqdm import tqdm

from varprobe import tables
from varprobe.families.biased_estimator.analysis import (
    BiasedSettings, biased_estimates, model_draws, sources, support_estimates,
)
from varprobe.analysis.next_word import context_table, model_summary
from varprobe.commands import (
    add_control, add_model_job, add_shard_options, control_settings, load_model, merge_shards,
)


def _biased_estimator(args: argparse.Namespace) -> None:
    from varprobe.sampling.scoring import WordScorer
    from varprobe.sampling.word_model import WordModel
    from varprobe.sampling.shards import shard_rows

    settings = BiasedSettings(nucleus=tuple(args.nucleus), nucleus_samples=args.nucleus_samples,
                              max_tokens=args.max_tokens, batch_size=args.batch_size, seed=args.seed)
    contexts = tables.read(args.contexts, "provo_contexts")
    rows = shard_rows(contexts["text_id"].tolist(), args.shard, args.shards)
    contexts = contexts.iloc[rows.start : rows.stop]
    loaded, device = load_model(args.model, gpus=args.gpus, cpu_fallback=args.cpu_fallback)
    name = loaded.spec.name
    print(f"{name}: greedy and nucleus draws for {len(contexts)} contexts", file=sys.stderr)
    lm = WordModel(loaded.model, loaded.tokenizer)  # the draws and the scores read one encoding
    draws = model_draws(lm, contexts, settings)
    scorer = WordScorer(lm, args.score_batch)

    def score_many(pairs):
        return tqdm(scorer.word_log_probs_many(pairs), total=len(contexts), file=sys.stderr, mininterval=5,
                    desc=f"{name}/biased scores")

    support = biased_estimates(contexts, tables.read(args.samples, "provo_samples"),
                               tables.read(args.responses, "provo_responses"), draws, score_many=score_many,
                               order=sources(settings.nucleus))
    metadata = {"model": name, "decoding": "biased", "model_entry": args.model,
                "device": device, "samples": args.samples, "biased": vars(settings),
                "shard": [args.shard, args.shards]}
    tables.write(support, args.out, "biased_support", metadata)


def _biased_merge(args: argparse.Namespace) -> None:
    support, metadata = merge_shards(args.shards, args.support_out, "biased_support")
    estimates, failure_rate = support_estimates(support)
    control = control_settings(seed=args.seed, resplits=args.resplits, ece_bins=args.ece_bins,
                               bootstrap=args.bootstrap)
    table, oracle_hits = context_table(tables.read(args.contexts, "provo_contexts"),
                                       tables.read(args.responses, "provo_responses"), estimates, control)
    names = {"model": metadata["model"], "decoding": "biased"}
    tables.write(table, args.tvd_out, "provo_tvd", names)
    summary = model_summary(table, oracle_hits, failure_rate, control)
    tables.write(pd.DataFrame([{**names, **summary}]), args.system_out, "provo_system", names)


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
    add_control(p)
    p.add_argument("--support-out", required=True)
    p.add_argument("--tvd-out", required=True)
    p.add_argument("--system-out", required=True)
    p.set_defaults(run=_biased_merge)
