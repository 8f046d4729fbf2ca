"""Subcommands that render a run's tables for reading: report pages, the results page, the
per-stage times."""

from __future__ import annotations

import argparse
from pathlib import Path

from varprobe import tables
from varprobe.commands import json_value


def _report_table(args: argparse.Namespace) -> None:
    from varprobe.reporting import table_page

    frame = tables.read_frame(args.table)
    page = table_page(frame, args.title, tables.read_metadata(args.table))
    with tables.atomic(args.out) as partial:
        partial.write_text(page, encoding="utf-8")


def _results_page(args: argparse.Namespace) -> None:
    from varprobe.results_page.page import APPENDIX_FILE, commit, copy_figures, render, split

    out = Path(args.out)
    figures = copy_figures(args.figures, args.results, Path(args.figures_dir))
    page, appendix = split(render(config=args.config, configfiles=args.configfiles, commit=commit(args.workflow_dir),
                                  entries=args.tables, figures=figures, benchmarks=args.benchmarks,
                                  measured=args.measured, results=args.results, not_run=args.not_run))
    for path, text in ((out.with_name(APPENDIX_FILE), appendix), (out, page)):
        with tables.atomic(path) as partial:
            partial.write_text(text, encoding="utf-8")


def _stage_times(args: argparse.Namespace) -> None:
    from varprobe.stage_times import stage_times, table

    print(table(stage_times(Path(args.benchmarks))))


def _tvd_histogram(args: argparse.Namespace) -> None:
    from varprobe.plots.appendix import tvd_histograms

    series = {}
    for label, schema, column, path in args.series:
        try:
            known = tables.declared_columns(schema)
        except KeyError:
            known = {}
        if column not in known:
            raise ValueError(f"--series {label!r}: schema {schema!r} has no column {column!r}")
        series[label] = tables.read(path, schema)[column].to_numpy()
    fig, table = tvd_histograms(series, args.xlabel)
    fig.savefig(args.figure, dpi=150)
    tables.write(table, args.table, "tvd_histogram")


def register(sub) -> None:
    """Add this module's subcommands to ``sub``."""
    p = sub.add_parser("report-table", help="a Parquet table as an HTML page for the report")
    p.add_argument("--table", required=True)
    p.add_argument("--title", required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(run=_report_table)

    p = sub.add_parser("results-page", help="the run's results page (Markdown and its figures)")
    p.add_argument("--config", type=json_value, required=True,
                   help="JSON: the run's validated config, the schema's defaults applied")
    p.add_argument("--configfiles", nargs="+", required=True,
                   help="the run's config files, in the order Snakemake layered them (shown as written)")
    p.add_argument("--workflow-dir", required=True, help="the workflow's checkout (its commit)")
    p.add_argument("--tables", type=json_value, required=True,
                   help="JSON list of the registered summary tables: {name, table, title, category}")
    p.add_argument("--measured", type=json_value, required=True,
                   help="JSON {name: path, or production paths}: the run's measured tables of the page")
    p.add_argument("--figures", nargs="*", default=[], help="every figure of the run")
    p.add_argument("--results", required=True, help="the results folder the figures lie in")
    p.add_argument("--benchmarks", required=True, help="the run's benchmark folder")
    p.add_argument("--figures-dir", required=True, help="where the page's figures are copied")
    p.add_argument("--not-run", type=json_value, default={},
                   help="JSON {analysis key: reason}: configured analyses that cannot run on the corpus")
    p.add_argument("--out", required=True, help="the page; its appendix is written beside it (results-appendix.md)")
    p.set_defaults(run=_results_page)

    p = sub.add_parser("stage-times", help="a run's wall time, CPU time and peak memory per stage")
    p.add_argument("benchmarks", nargs="?", default="results/benchmarks")
    p.set_defaults(run=_stage_times)

    p = sub.add_parser("tvd-histogram", help="histograms of per-context TVD columns (App. Figs. 5, 13)")
    p.add_argument("--series", nargs=4, action="append", required=True,
                   metavar=("LABEL", "SCHEMA", "COLUMN", "TABLE"), help="one histogram; repeatable")
    p.add_argument("--xlabel", required=True)
    p.add_argument("--figure", required=True)
    p.add_argument("--table", required=True)
    p.set_defaults(run=_tvd_histogram)
