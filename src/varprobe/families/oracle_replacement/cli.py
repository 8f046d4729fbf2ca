"""The subcommands of analysis family ``oracle_replacement`` (``varprobe.families.oracle_replacement``):
each reads tables, calls ``varprobe.families.oracle_replacement.analysis`` and writes tables (and figures)."""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from varprobe import tables
from varprobe.families.oracle_replacement.analysis import (
    HALF, oracle_pairs, oracle_size, pooled_histograms, replacement_curve, replacement_overlap,
    replacement_summary, tvd_differences,
)
from varprobe.commands import add_estimates, read_estimates
from varprobe.metrics.histogram import histogram_rows


def _oracle_replacement(args: argparse.Namespace) -> None:

    estimates, _ = read_estimates(args.samples, args.distribution)
    pairs, skipped = oracle_pairs(
        tables.read(args.responses, "provo_responses"), estimates, oracle_sizes=args.oracle_sizes,
        seeds=args.seeds, seed=args.seed,
    )
    curve, histograms = replacement_curve(pairs, skipped, k_percent=args.k_percent, seed=args.seed,
                                          bins=args.bins)
    names = {"model": args.model, "decoding": args.decoding}
    tables.write(curve.assign(**names), args.curve_out, "oracle_replacement", names)
    tables.write(histograms.assign(**names), args.histogram_out, "histogram", names)


def _oracle_replacement_summary(args: argparse.Namespace) -> None:
    from varprobe.families.oracle_replacement.plots import replacement_curves, replacement_histograms

    curve = pd.concat([tables.read(p, "oracle_replacement") for p in args.curves], ignore_index=True)
    histograms = pd.concat([tables.read(p, "histogram") for p in args.histograms], ignore_index=True)
    pooled = pooled_histograms(histograms)
    summary = replacement_summary(curve, replacement_overlap(pooled), args.overlap_threshold)
    shown = {f"k={k:g}" for k in [*args.figure_k, 100]}
    drawn = pooled[pooled["group"].str.split().str[1].isin(shown)]
    tables.write(summary, args.summary_out, "oracle_replacement_summary")
    tables.write(drawn, args.table, "histogram")
    replacement_curves(summary).savefig(args.curve_figure, dpi=150)
    replacement_histograms(drawn, args.figure_k).savefig(args.histogram_figure, dpi=150)


def _tvd_differences(args: argparse.Namespace) -> None:
    from varprobe.families.oracle_replacement.plots import difference_histograms

    oracle = tables.read(args.oracle, "provo_tvd")
    edges = np.linspace(-1.0, 1.0, args.bins + 1)
    differences, histograms = [], []
    for path in args.tvd:
        names = tables.read_metadata(path)
        names = {"model": names["model"], "decoding": names["decoding"]}
        frame = tvd_differences(tables.read(path, "provo_tvd"), oracle).assign(**names)
        differences.append(frame)
        histograms.append(histogram_rows(frame["difference"], edges, "difference", seed_index=pd.NA, **names))
    tables.write(pd.concat(differences, ignore_index=True), args.out, "tvd_differences")
    histograms = pd.concat(histograms, ignore_index=True)
    tables.write(histograms, args.table, "histogram")
    difference_histograms(histograms).savefig(args.figure, dpi=150)


def register(sub) -> None:
    """Add this module's subcommands to ``sub``."""
    p = sub.add_parser("oracle-replacement", help="mean TVD after replacing k%% of a model's TVDs by "
                                                  "oracle TVDs (Sec. 5, App. E)")
    add_estimates(p)
    p.add_argument("--responses", required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--oracle-sizes", type=oracle_size, nargs="+", required=True,
                   help=f"responses per oracle, or {HALF!r}: half the context's responses")
    p.add_argument("--seeds", type=int, required=True, help="oracle pairs drawn per size")
    p.add_argument("--k-percent", type=float, nargs="+", required=True, help="shares replaced, in %%")
    p.add_argument("--bins", type=int, required=True, help="histogram bins over [0, 1]")
    p.add_argument("--model", required=True)
    p.add_argument("--decoding", required=True)
    p.add_argument("--curve-out", required=True)
    p.add_argument("--histogram-out", required=True)
    p.set_defaults(run=_oracle_replacement)

    p = sub.add_parser("oracle-replacement-summary", help="replacement curves over seeds (Figs. 15-16)")
    p.add_argument("--curves", nargs="+", required=True)
    p.add_argument("--histograms", nargs="+", required=True)
    p.add_argument("--figure-k", type=float, nargs="+", required=True, help="k shown as histograms")
    p.add_argument("--overlap-threshold", type=float, required=True,
                   help="the histogram overlap with the oracles' at which k matches")
    p.add_argument("--summary-out", required=True)
    p.add_argument("--table", required=True, help="the pooled histograms drawn")
    p.add_argument("--curve-figure", required=True)
    p.add_argument("--histogram-figure", required=True)
    p.set_defaults(run=_oracle_replacement_summary)

    p = sub.add_parser("tvd-differences", help="TVD(model, humans) - TVD(oracle 2, humans) (Fig. 12)")
    p.add_argument("--tvd", nargs="+", required=True, help="the systems' provo tvd tables")
    p.add_argument("--oracle", required=True, help="the oracle control's tvd table")
    p.add_argument("--bins", type=int, required=True, help="histogram bins over [-1, 1]")
    p.add_argument("--out", required=True)
    p.add_argument("--table", required=True)
    p.add_argument("--figure", required=True)
    p.set_defaults(run=_tvd_differences)
