"""The subcommands of analysis family ``token_level`` (``varprobe.families.token_level``):
each reads tables, calls ``varprobe.families.token_level.analysis`` and writes tables (and figures)."""

from __future__ import annotations

import argparse
import sys

from tqdm import tqdm

from varprobe import tables
from varprobe.families.token_level.analysis import token_summary, token_table
from varprobe.commands import add_control, add_model_job, control_settings, load_model


def _token_level(args: argparse.Namespace) -> None:
    from varprobe.sampling.scoring import WordScorer
    from varprobe.sampling.word_model import WordModel

    control = control_settings(seed=args.seed, resplits=args.resplits, ece_bins=args.ece_bins,
                               bootstrap=args.bootstrap)
    contexts = tables.read(args.contexts, "provo_contexts")
    responses = tables.read(args.responses, "provo_responses")
    loaded, device = load_model(args.model, gpus=args.gpus, cpu_fallback=args.cpu_fallback)
    scorer = WordScorer(WordModel(loaded.model, loaded.tokenizer))
    next_tokens = (p.exp().cpu().numpy() for p in scorer.next_token_log_probs(contexts["context"]))
    table, confidences, hits = token_table(
        contexts, responses,
        tqdm(next_tokens, total=len(contexts), file=sys.stderr, mininterval=5, desc=f"{loaded.spec.name}/tokens"),
        first_token=scorer.first_token, token_text=lambda token: loaded.tokenizer.decode([token]),
        settings=control,
    )
    summary = token_summary(table, confidences, hits, control).assign(model=loaded.spec.name)
    metadata = {"model": loaded.spec.name, "model_entry": args.model, "device": device}
    tables.write(table, args.tvd_out, "token_level_tvd", metadata)
    tables.write(summary, args.summary_out, "token_level_summary", metadata)


def register(sub) -> None:
    """Add this module's subcommands to ``sub``."""
    p = sub.add_parser("token-level", help="exact next-token distribution vs the humans' first tokens")
    add_model_job(p, decoding=False)
    add_control(p)
    p.add_argument("--tvd-out", required=True)
    p.add_argument("--summary-out", required=True)
    p.set_defaults(run=_token_level)
