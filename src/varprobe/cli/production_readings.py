"""Subcommands that read a run's production tables per task as Giulianelli et al. 2023 do
(``varprobe.analysis.production_readings``): each reads the summary and every system's
per-input divergences and writes one declared table for the results page."""

from __future__ import annotations

import argparse
from pathlib import Path

from varprobe import tables

READINGS = {"signs": "production_signs", "model-human-w1": "production_model_human_w1",
            "paper-miscalibrated": "production_paper_miscalibrated"}
"""Each reading's subcommand suffix and the schema of its table."""


def _systems(paths: list[str]) -> list[tuple[str, str, str, object]]:
    """(dataset, model, decoding, divergences) of each ``.../DATASET/MODEL/DECODING/divergences.parquet``."""
    return [(*Path(p).parts[-4:-1], tables.read(p, "production_divergences")) for p in paths]


def _unavailable(paths: list[str]) -> dict[str, list[str]]:
    """The probes each dataset's divergences could not compute (their tables' metadata)."""
    found: dict[str, list[str]] = {}
    for path in paths:
        found.setdefault(Path(path).parts[-4], list(tables.read_metadata(path).get("unavailable", {})))
    return found


def _reading(args: argparse.Namespace) -> None:
    from varprobe.analysis import production_readings as readings

    if args.reading == "signs":
        frame = readings.mean_difference_signs(tables.read(args.summary, "production_summary"), args.decoding)
    elif args.reading == "model-human-w1":
        frame = readings.model_human_w1(tables.read(args.summary, "production_summary"), _systems(args.divergences))
    else:
        frame = readings.paper_miscalibrated(_systems(args.divergences), _unavailable(args.divergences))
    tables.write(frame, args.out, READINGS[args.reading])


def register(sub) -> None:
    """Add this module's subcommands to ``sub``."""
    for reading, schema in READINGS.items():
        p = sub.add_parser(f"production-{reading}", help=f"Giulianelli et al. per task: table {schema}")
        p.add_argument("--summary", required=True, help="the production summary (schema production_summary)")
        p.add_argument("--divergences", nargs="+", required=True,
                       help="every system's per-input divergences, DATASET/MODEL/DECODING/divergences.parquet")
        p.add_argument("--decoding", required=True, help="the decoding whose signs are read (Fig. 3's)")
        p.add_argument("--out", required=True)
        p.set_defaults(run=_reading, reading=reading)
