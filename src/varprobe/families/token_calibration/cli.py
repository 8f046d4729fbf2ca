"""The subcommands of analysis family ``token_calibration`` (``varprobe.families.token_calibration``):
each reads tables, calls ``varprobe.families.token_calibration.analysis`` and writes tables (and figures)."""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from varprobe import tables
from varprobe.families.token_calibration.analysis import (
    bins_table, metric_table, provo_passages, reference_texts, rsd_table, score_texts, summary_table,
)
from varprobe.commands import json_value, load_model
from varprobe.metrics.token_calibration import CalibrationAccumulator


def _token_calibration(args: argparse.Namespace) -> None:
    if args.contexts:
        texts = provo_passages(tables.read(args.contexts, "provo_contexts"), args.max_texts)
    else:
        texts = reference_texts(tables.read(args.instances, "production_instances"), args.max_texts)
    loaded, device = load_model(args.model, gpus=args.gpus, cpu_fallback=args.cpu_fallback)
    n_classes = loaded.model.get_output_embeddings().weight.shape[0]
    accumulator = CalibrationAccumulator(n_classes, bins=tuple(args.bins))
    floor = CalibrationAccumulator(n_classes, bins=tuple(args.bins))
    n_texts = score_texts(loaded.model, loaded.tokenizer, texts, accumulator,
                          rows_per_update=args.rows_per_update, floor=floor, seed=args.seed)
    if accumulator.n_positions == 0:
        raise ValueError(f"corpus {args.corpus!r}: no text has two tokens, nothing to score")
    names = {"model": loaded.spec.name, "corpus": args.corpus}
    metrics = metric_table(accumulator).assign(**names)
    rsd = rsd_table(metrics, args.ddof).assign(**names)
    run = {**names, "model_entry": args.model, "device": device, "n_texts": n_texts}
    metadata = {**run, "resolution": accumulator.resolution, "sparse_pairs": accumulator.n_sparse_pairs,
                "accumulator_peak_bytes": accumulator.peak_nbytes}
    print(f"{loaded.spec.name}: {n_texts} texts, {accumulator.n_positions} positions, "
          f"{n_classes} classes; accumulator peak {accumulator.peak_nbytes / 2**20:.1f} MiB "
          f"({accumulator.n_sparse_pairs} sparse pairs)", file=sys.stderr)
    tables.write(metrics, args.out, "token_calibration", metadata)
    tables.write(rsd, args.rsd_out, "token_calibration_rsd", metadata)
    tables.write(metric_table(floor).assign(**names), args.floor_out, "token_calibration",
                 {**run, "labels": "drawn from the model's own distributions", "seed": args.seed})


def _token_calibration_summary(args: argparse.Namespace) -> None:
    from varprobe.families.token_calibration.plots import metrics_against_bins

    metrics = pd.concat([tables.read(p, "token_calibration") for p in args.metrics], ignore_index=True)
    rsd = pd.concat([tables.read(p, "token_calibration_rsd") for p in args.rsd], ignore_index=True)
    peaks = {(m := tables.read_metadata(p))["model"]: m["accumulator_peak_bytes"] for p in args.metrics}
    summary = summary_table(metrics, rsd, args.bins)
    summary["accumulator_peak_bytes"] = summary["model"].map(peaks)
    tables.write(summary, args.out, "token_calibration_summary", {"headline_bins": args.bins})
    floors = pd.concat([tables.read(p, "token_calibration") for p in args.floors], ignore_index=True)
    curve = (pd.concat([metrics.assign(labels="corpus"), floors.assign(labels="drawn")], ignore_index=True)
             .sort_values(["model", "labels", "metric", "bins"], ignore_index=True))
    metrics_against_bins(curve).savefig(args.figure, dpi=150)
    tables.write(curve, args.table, "token_calibration_figure")


def _token_calibration_bins(args: argparse.Namespace) -> None:
    frames = [tables.read(e["table"], "token_calibration").assign(labels=e["labels"]) for e in args.tables]
    tables.write(bins_table(pd.concat(frames, ignore_index=True)), args.out, "token_calibration_bins")


def register(sub) -> None:
    """Add this module's subcommands to ``sub``."""
    p = sub.add_parser("token-calibration",
                       help="a model's ECE, cw-ECE and Full-ECE over a corpus, for every number of bins")
    p.add_argument("--model", type=json_value, required=True, help="the model's config entry as JSON")
    p.add_argument("--gpus", type=int, default=1, help="GPUs given to this job; 0 runs CUDA models on CPU")
    p.add_argument("--cpu-fallback", action="store_true",
                   help="run CUDA models on CPU where no CUDA device is usable")
    corpus = p.add_mutually_exclusive_group(required=True)
    corpus.add_argument("--contexts", help="a Provo contexts table: its passages are the corpus")
    corpus.add_argument("--instances", help="a production instances table: its references are the corpus")
    p.add_argument("--corpus", required=True, help="the corpus's name, recorded in the tables")
    p.add_argument("--bins", type=int, nargs="+", required=True, help="numbers of bins M")
    p.add_argument("--max-texts", type=int, default=None, help="score only the first texts")
    p.add_argument("--ddof", type=int, default=1, help="delta degrees of freedom of the RSD's std")
    p.add_argument("--rows-per-update", type=int, default=64,
                   help="positions per accumulator update (memory only; results do not depend on it)")
    p.add_argument("--seed", type=int, default=0, help="seed of the floor's drawn labels")
    p.add_argument("--out", required=True)
    p.add_argument("--rsd-out", required=True)
    p.add_argument("--floor-out", required=True,
                   help="the metrics with every label drawn from the model's own distribution: a "
                        "perfectly calibrated model's values, the estimators' finite-sample bias")
    p.set_defaults(run=_token_calibration)

    p = sub.add_parser("token-calibration-summary",
                       help="token calibration across models: headline table and figure")
    p.add_argument("--metrics", nargs="+", required=True)
    p.add_argument("--rsd", nargs="+", required=True)
    p.add_argument("--floors", nargs="+", required=True,
                   help="the models' floor tables (labels drawn from the model), drawn beside the metrics")
    p.add_argument("--bins", type=int, required=True, help="the headline number of bins")
    p.add_argument("--out", required=True)
    p.add_argument("--figure", required=True)
    p.add_argument("--table", required=True)
    p.set_defaults(run=_token_calibration_summary)

    p = sub.add_parser("token-calibration-bins", help="each token-calibration metric at every bin count")
    p.add_argument("--tables", type=json_value, required=True,
                   help="JSON list of {table, labels}: a token_calibration table and whose labels it scores")
    p.add_argument("--out", required=True)
    p.set_defaults(run=_token_calibration_bins)
