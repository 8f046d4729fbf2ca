"""Subcommands that measure, from a run's per-context tables, what the results page shows
of the Provo study beyond its summaries (``varprobe.analysis.page_measures``): each reads tables, calls one function
and writes one declared table."""

from __future__ import annotations

import argparse

import pandas as pd

from varprobe import tables
from varprobe.commands import json_value


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
