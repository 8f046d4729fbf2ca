"""The subcommands of analysis family ``sample_size`` (``varprobe.families.sample_size``):
each reads tables, calls ``varprobe.families.sample_size.analysis`` and writes tables (and figures)."""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from varprobe import tables
from varprobe.analysis.next_word import ControlSettings
from varprobe.families.sample_size.analysis import (
    SHOWN_QUANTILE, mse_interval_table, sample_size_summary, sample_size_table,
)


def _sample_size(args: argparse.Namespace) -> None:
    settings = ControlSettings(seed=args.seed, resplits=args.resplits)
    table = sample_size_table(
        tables.read(args.samples, "provo_samples"), tables.read(args.responses, "provo_responses"),
        sizes=args.sizes, repeats=args.repeats, settings=settings,
    )
    names = {"model": args.model, "decoding": args.decoding}
    summary = sample_size_summary(table, args.sizes)
    tables.write(table.assign(**names), args.out, "sample_size_contexts", names)
    tables.write(summary.assign(**names), args.summary_out, "sample_size_summary", names)


def _sample_size_figure(args: argparse.Namespace) -> None:
    from varprobe.metrics.histogram import histogram_rows
    from varprobe.families.sample_size.plots import squared_error_histograms

    contexts = pd.concat([tables.read(p, "sample_size_contexts") for p in args.contexts], ignore_index=True)
    summary = pd.concat([tables.read(p, "sample_size_summary") for p in args.summaries], ignore_index=True)
    summary = summary.sort_values(["model", "decoding", "size"], ignore_index=True)
    top = contexts["squared_error"].quantile(SHOWN_QUANTILE)
    edges = np.linspace(0.0, top if np.isfinite(top) and top > 0 else 1.0, args.bins + 1)
    histograms = pd.concat(
        [histogram_rows(part["squared_error"], edges, f"n={n}", model=m, decoding=d, seed_index=pd.NA)
         for (m, d, n), part in contexts.groupby(["model", "decoding", "size"], sort=True)],
        ignore_index=True,
    )
    tables.write(summary, args.summary_out, "sample_size_summary")
    tables.write(histograms, args.table, "histogram")
    squared_error_histograms(histograms, summary).savefig(args.figure, dpi=150)


def _sample_size_intervals(args: argparse.Namespace) -> None:
    contexts = pd.concat([tables.read(p, "sample_size_contexts") for p in args.contexts], ignore_index=True)
    tables.write(mse_interval_table(contexts, args.resamples, args.seed), args.out, "sample_size_intervals")


def register(sub) -> None:
    """Add this module's subcommands to ``sub``."""
    p = sub.add_parser("sample-size", help="MSE of subsampled TVDs against the full sample's (App. C.1)")
    p.add_argument("--samples", required=True, help="a samples table (sampled decodings)")
    p.add_argument("--responses", required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--resplits", type=int, required=True, help="oracle resplits, as in the study")
    p.add_argument("--sizes", type=int, nargs="+", required=True, help="subsample sizes n")
    p.add_argument("--repeats", type=int, required=True, help="subsamples drawn per context and size")
    p.add_argument("--model", required=True)
    p.add_argument("--decoding", required=True)
    p.add_argument("--out", required=True, help="per-context table")
    p.add_argument("--summary-out", required=True, help="per-size MSE table")
    p.set_defaults(run=_sample_size)

    p = sub.add_parser("sample-size-figure", help="histograms of per-context squared errors (Fig. 11)")
    p.add_argument("--contexts", nargs="+", required=True, help="per-context tables of sample-size")
    p.add_argument("--summaries", nargs="+", required=True, help="summary tables of sample-size")
    p.add_argument("--bins", type=int, required=True)
    p.add_argument("--summary-out", required=True, help="all systems' per-size MSE")
    p.add_argument("--table", required=True, help="the histogram table")
    p.add_argument("--figure", required=True)
    p.set_defaults(run=_sample_size_figure)

    p = sub.add_parser("sample-size-intervals", help="bootstrap intervals of the sample-size MSE")
    p.add_argument("--contexts", nargs="+", required=True, help="every system's sample-size contexts table")
    p.add_argument("--resamples", type=int, required=True, help="bootstrap resamples")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(run=_sample_size_intervals)
