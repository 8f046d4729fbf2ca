"""Subcommands that measure, from a run's per-context tables, what the results page shows
beyond the summaries (``varprobe.analysis.page_measures``): each reads tables, calls one function
and writes one declared table."""

from __future__ import annotations

import argparse

import pandas as pd

from varprobe import tables
from varprobe.commands import json_value, read_estimates


def _systems(entries: list[dict], schema: str) -> list[tuple[str, str, pd.DataFrame]]:
    """(model, decoding, table) of each ``{model, decoding, table}`` entry, read as ``schema``."""
    return [(e["model"], e["decoding"], tables.read(e["table"], schema)) for e in entries]


def _control(args: argparse.Namespace):
    from varprobe.analysis.next_word import ControlSettings

    return ControlSettings(seed=args.seed, resplits=args.resplits, ece_bins=args.bins,
                           bootstrap_resamples=args.resamples)


def _provo_intervals(args: argparse.Namespace) -> None:
    from varprobe.analysis.page_measures import interval_table

    frame = interval_table(_systems(args.systems, "provo_tvd"), args.bins, args.resamples, args.seed)
    tables.write(frame, args.out, "provo_intervals")


def _provo_failures(args: argparse.Namespace) -> None:
    from varprobe.analysis.page_measures import failure_table

    tables.write(failure_table(_systems(args.systems, "provo_samples")), args.out, "provo_failures")


def _provo_oracle_splits(args: argparse.Namespace) -> None:
    from varprobe.analysis.page_measures import oracle_split_table

    frame = oracle_split_table(tables.read(args.contexts, "provo_contexts"),
                               tables.read(args.responses, "provo_responses"), _control(args))
    tables.write(frame, args.out, "provo_oracle_splits")


def _provo_human_ties(args: argparse.Namespace) -> None:
    from varprobe.analysis.page_measures import human_oracle_majority_ece

    found = human_oracle_majority_ece(tables.read(args.contexts, "provo_contexts"),
                                      tables.read(args.responses, "provo_responses"), _control(args))
    tables.write(pd.DataFrame([found]), args.out, "provo_human_ties")


def _regression_codings(args: argparse.Namespace) -> None:
    from varprobe.analysis.page_measures import regression_codings
    from varprobe.families.regression.analysis import last_word_tags
    from varprobe.probes.pos_tags import UniversalTagger

    tvd = tables.read(args.tvd, "provo_tvd")
    tags = last_word_tags(tvd, tables.read(args.contexts, "provo_contexts"), UniversalTagger())
    estimates, _ = read_estimates(args.samples, args.distribution)
    frame = regression_codings(tvd, tags, tables.read(args.responses, "provo_responses"), estimates)
    tables.write(frame.assign(model=args.model, decoding=args.decoding), args.out, "regression_codings")


def _sample_size_intervals(args: argparse.Namespace) -> None:
    from varprobe.analysis.page_measures import mse_interval_table

    contexts = pd.concat([tables.read(p, "sample_size_contexts") for p in args.contexts], ignore_index=True)
    tables.write(mse_interval_table(contexts, args.resamples, args.seed), args.out, "sample_size_intervals")


def _token_calibration_bins(args: argparse.Namespace) -> None:
    from varprobe.analysis.page_measures import bins_table

    frames = [tables.read(e["table"], "token_calibration").assign(labels=e["labels"]) for e in args.tables]
    tables.write(bins_table(pd.concat(frames, ignore_index=True)), args.out, "token_calibration_bins")


def _bootstrap(p: argparse.ArgumentParser) -> None:
    p.add_argument("--resamples", type=int, required=True, help="bootstrap resamples")
    p.add_argument("--seed", type=int, required=True)


def _oracles(p: argparse.ArgumentParser) -> None:
    p.add_argument("--contexts", required=True, help="the Provo contexts table")
    p.add_argument("--responses", required=True, help="the Provo responses table")
    p.add_argument("--resplits", type=int, required=True, help="oracle resplits per context")
    p.add_argument("--bins", type=int, required=True, help="ECE bins")
    _bootstrap(p)


SYSTEMS_HELP = "JSON list of {model, decoding, table}: each system's table"


def register(sub) -> None:
    """Add this module's subcommands to ``sub``."""
    p = sub.add_parser("provo-intervals", help="Table 1's bootstrap intervals of every system")
    p.add_argument("--systems", type=json_value, required=True, help=SYSTEMS_HELP + " (schema provo_tvd)")
    p.add_argument("--bins", type=int, required=True, help="ECE bins")
    _bootstrap(p)
    p.add_argument("--out", required=True)
    p.set_defaults(run=_provo_intervals)

    p = sub.add_parser("provo-failures", help="every sampled system's draws per failure reason")
    p.add_argument("--systems", type=json_value, required=True, help=SYSTEMS_HELP + " (schema provo_samples)")
    p.add_argument("--out", required=True)
    p.set_defaults(run=_provo_failures)

    p = sub.add_parser("provo-oracle-splits", help="the oracles' mean TVDs per resplit")
    _oracles(p)
    p.add_argument("--out", required=True)
    p.set_defaults(run=_provo_oracle_splits)

    p = sub.add_parser("provo-human-ties", help="the human row's oracle-majority ECE under two tie-breakings")
    _oracles(p)
    p.add_argument("--out", required=True)
    p.set_defaults(run=_provo_human_ties)

    p = sub.add_parser("regression-codings",
                       help="one system's ARD fit under each coding, ours and the authors' protocol")
    p.add_argument("--tvd", required=True, help="the system's per-context table")
    p.add_argument("--contexts", required=True, help="the Provo contexts table")
    p.add_argument("--responses", required=True, help="the Provo responses table (the authors' split splits it)")
    model = p.add_mutually_exclusive_group(required=True)
    model.add_argument("--samples", help="the system's samples table (a sampled decoding)")
    model.add_argument("--distribution", help="the system's distribution table (an exact decoding)")
    p.add_argument("--model", required=True)
    p.add_argument("--decoding", required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(run=_regression_codings)

    p = sub.add_parser("sample-size-intervals", help="bootstrap intervals of the sample-size MSE")
    p.add_argument("--contexts", nargs="+", required=True, help="every system's sample-size contexts table")
    _bootstrap(p)
    p.add_argument("--out", required=True)
    p.set_defaults(run=_sample_size_intervals)

    p = sub.add_parser("token-calibration-bins", help="each token-calibration metric at every bin count")
    p.add_argument("--tables", type=json_value, required=True,
                   help="JSON list of {table, labels}: a token_calibration table and whose labels it scores")
    p.add_argument("--out", required=True)
    p.set_defaults(run=_token_calibration_bins)
