"""Subcommands of run records: the workflow's last job writes one (``run-record``); a user
compares two runs (``compare``) or gathers many into one table (``collect``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from varprobe.commands import json_value


def _run_record(args: argparse.Namespace) -> None:
    from varprobe import run_record

    record = run_record.build(config=args.config, checkout=args.workflow_dir, results=args.results,
                              report_tables=args.tables, measured=args.measured, probes=args.figure_probes)
    run_record.write(record, args.out)
    print(f"{args.out}: {len(record['headlines'])} headline numbers, commit "
          f"{record['provenance']['commit']} (dirty: {record['provenance']['dirty']})")


def _compare(args: argparse.Namespace) -> None:
    from varprobe import run_comparison, run_record

    a, b = run_record.read(args.run_a), run_record.read(args.run_b)
    print(run_comparison.comparison_text(a, b), end="")


def _collect(args: argparse.Namespace) -> None:
    from varprobe import run_comparison, run_record, tables

    records = [run_record.read(run) for run in args.runs]
    table = run_comparison.collected(records)
    tables.write(table, args.out, "run_headlines")
    print(run_comparison.collected_text(table), end="")
    print(f"{args.out}: {len(table)} rows from {len(records)} runs")


def register(sub) -> None:
    """Add this module's subcommands to ``sub``.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The ``varprobe`` parser's subcommands.

    Returns
    -------
    None
    """
    p = sub.add_parser("run-record", help="write the run record results/run.json (the workflow's last job)")
    p.add_argument("--config", type=json_value, required=True, help="the validated config as JSON")
    p.add_argument("--workflow-dir", required=True, help="the workflow's folder (its git checkout)")
    p.add_argument("--results", required=True, help="the run's results folder")
    p.add_argument("--tables", type=json_value, required=True,
                   help="the report's tables as JSON: a list of {name, table, schema, ...}")
    p.add_argument("--measured", type=json_value, required=True, help="the results page's tables as JSON")
    p.add_argument("--figure-probes", nargs="*", default=[], help="the production figures' probes")
    p.add_argument("--out", required=True, type=Path)
    p.set_defaults(run=_run_record)

    p = sub.add_parser("compare", help="the headline numbers of two runs side by side, with their intervals")
    p.add_argument("run_a", metavar="RUN_A", help="a run folder, its results folder or its run.json")
    p.add_argument("run_b", metavar="RUN_B", help="the same, of the other run")
    p.set_defaults(run=_compare)

    p = sub.add_parser("collect", help="gather runs' headline numbers into one table (Parquet), "
                       "one row per run, system and quantity")
    p.add_argument("runs", nargs="+", metavar="RUN", help="run folders or run.json files (runs/*)")
    p.add_argument("--out", type=Path, default=Path("runs.parquet"),
                   help="the table written (default: runs.parquet)")
    p.set_defaults(run=_collect)

