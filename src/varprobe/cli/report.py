"""Subcommands that render tables for the HTML report."""

from __future__ import annotations

import argparse

from varprobe import tables


def _report_table(args: argparse.Namespace) -> None:
    from varprobe.reporting import table_page

    frame = tables.read_frame(args.table)
    page = table_page(frame, args.title, tables.read_metadata(args.table))
    with tables.atomic(args.out) as partial:
        partial.write_text(page, encoding="utf-8")


def register(sub) -> None:
    """Add this module's subcommands to ``sub``."""
    p = sub.add_parser("report-table", help="a Parquet table as an HTML page for the report")
    p.add_argument("--table", required=True)
    p.add_argument("--title", required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(run=_report_table)
