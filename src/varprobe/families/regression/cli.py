"""The subcommands of analysis family ``regression`` (``varprobe.families.regression``):
each reads tables, calls ``varprobe.families.regression.analysis`` and writes tables (and figures)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict

import pandas as pd

from varprobe import tables
from varprobe.families.regression.analysis import (
    LABELS, PREDICTOR_ORDER, PriorSettings, SamplerSettings, design_matrix, fit_ard,
    last_word_tags,
)
from varprobe.commands import read_estimates
from varprobe.published import PAPER_COEFFICIENTS


def _regression(args: argparse.Namespace) -> None:
    from varprobe.probes.pos_tags import UniversalTagger

    prior = PriorSettings(args.precision_shape, args.precision_rate, args.intercept_sd, args.sigma_sd)
    sampler = SamplerSettings(seed=args.seed, chains=args.chains, draws=args.draws, tune=args.tune,
                              target_accept=args.target_accept)
    tvd = tables.read(args.tvd, "provo_tvd")
    tags = last_word_tags(tvd, tables.read(args.contexts, "provo_contexts"), UniversalTagger())
    design = design_matrix(tvd, tags, args.reference_tag)
    if design.n_dropped:
        print(f"varprobe: dropped {design.n_dropped} of {len(tvd)} contexts with a NaN target or "
              f"predictor", file=sys.stderr)
    fit = fit_ard(design, prior, sampler)
    frame = fit.table.assign(model=args.model, decoding=args.decoding, reference_tag=design.reference_tag)
    metadata = {
        "model": args.model, "decoding": args.decoding, "reference_tag": design.reference_tag,
        "n_observations": len(design.y), "n_dropped": design.n_dropped,
        "tag_counts": design.tag_counts, "prior": asdict(prior), "sampler": asdict(sampler),
        "diagnostics": fit.diagnostics,
    }
    tables.write(frame, args.out, "regression_coefficients", metadata)
    shown = frame.set_index("predictor")[["mean", "hdi_2.5%", "hdi_97.5%", "r_hat", "ess_bulk", "flagged"]]
    print(f"{args.model}/{args.decoding}: n={len(design.y)}, reference tag {design.reference_tag!r}, "
          f"{fit.diagnostics}\n{shown.round(3).to_string()}", file=sys.stderr)


def _regression_figure(args: argparse.Namespace) -> None:
    from varprobe.families.regression.plots import coefficient_plot

    coefficients = pd.concat(
        [tables.read(p, "regression_coefficients") for p in args.coefficients], ignore_index=True
    )
    paper = pd.DataFrame({"predictor": list(PAPER_COEFFICIENTS), "mean": list(PAPER_COEFFICIENTS.values())})
    fig, table = coefficient_plot(coefficients, PREDICTOR_ORDER, LABELS, paper)
    fig.savefig(args.figure, dpi=150)
    tables.write(table, args.table, "regression_figure")


def _regression_codings(args: argparse.Namespace) -> None:
    from varprobe.families.regression.codings import regression_codings
    from varprobe.probes.pos_tags import UniversalTagger

    tvd = tables.read(args.tvd, "provo_tvd")
    tags = last_word_tags(tvd, tables.read(args.contexts, "provo_contexts"), UniversalTagger())
    estimates, _ = read_estimates(args.samples, args.distribution)
    frame = regression_codings(tvd, tags, tables.read(args.responses, "provo_responses"), estimates)
    tables.write(frame.assign(model=args.model, decoding=args.decoding), args.out, "regression_codings")


def register(sub) -> None:
    """Add this module's subcommands to ``sub``."""
    p = sub.add_parser("regression", help="ARD regression of a system's per-context TVD")
    p.add_argument("--tvd", required=True, help="the system's provo_tvd table")
    p.add_argument("--contexts", required=True, help="the provo_contexts table (for POS tags)")
    p.add_argument("--model", required=True)
    p.add_argument("--decoding", required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--chains", type=int, default=2)
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--tune", type=int, default=1000)
    p.add_argument("--target-accept", type=float, default=0.9)
    p.add_argument("--reference-tag", default=None,
                   help="the tag without a column (default: the most frequent)")
    p.add_argument("--precision-shape", type=float, default=1.0, help="a0 of lambda_j ~ Gamma(a0, b0)")
    p.add_argument("--precision-rate", type=float, default=0.01, help="b0 of lambda_j ~ Gamma(a0, b0)")
    p.add_argument("--intercept-sd", type=float, default=1.0)
    p.add_argument("--sigma-sd", type=float, default=1.0)
    p.add_argument("--out", required=True)
    p.set_defaults(run=_regression)

    p = sub.add_parser("regression-figure", help="ARD coefficients with 95%% HDIs (paper Fig. 3)")
    p.add_argument("--coefficients", nargs="+", required=True)
    p.add_argument("--figure", required=True)
    p.add_argument("--table", required=True)
    p.set_defaults(run=_regression_figure)

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
