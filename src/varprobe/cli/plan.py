"""``varprobe plan``: what a config will cost before it runs (per stage: draws, forward tokens,
memory, an estimated wall time from the benchmark records), or with ``--progress`` how far a
running run is and its ETA (``varprobe.plan_estimate``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from varprobe.workflow_files import SCHEMA, root

_CHECKOUT = Path(__file__).resolve().parents[3]
"""The checkout the package is imported from (its ``benchmarks/`` records)."""

def _plan(args: argparse.Namespace) -> None:
    from varprobe import plan_estimate

    if args.progress:
        print(plan_estimate.progress_text(plan_estimate.progress(args.log)), end="")
        return
    base = [Path("config.yaml")] if Path("config.yaml").is_file() else []
    files = list(dict.fromkeys([*base, *args.configfile]))
    if not files:
        raise FileNotFoundError("no config.yaml in the working directory and no --configfile given")
    config = plan_estimate.merged_config(files, args.schema or root() / SCHEMA)
    records = plan_estimate.read_records(args.records)
    rows = plan_estimate.plan(config, results=args.results, records=records)
    print(f"config: {', '.join(map(str, files))}; benchmark records: "
          f"{args.records if records else f'none ({args.records} absent or empty)'}")
    print(plan_estimate.plan_text(rows), end="")


def register(sub) -> None:
    """Add ``plan`` to ``sub``.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The ``varprobe`` parser's subcommands.

    Returns
    -------
    None
    """
    p = sub.add_parser("plan", help="per stage of a config: draws, forward tokens, memory and an estimated "
                       "wall time from the benchmark records; --progress: a running run's progress and ETA")
    p.add_argument("--configfile", nargs="+", type=Path, default=[],
                   help="config files over ./config.yaml, as snakemake --configfile takes them")
    p.add_argument("--records", type=Path, default=_CHECKOUT / "benchmarks" / "records.jsonl",
                   help="the benchmark records (default: the checkout's benchmarks/records.jsonl)")
    p.add_argument("--results", type=Path, default=Path("results"),
                   help="the run's results folder: its tables fix counts the config leaves open")
    p.add_argument("--schema", type=Path, default=None, help="the config schema (default: the workflow's)")
    p.add_argument("--progress", action="store_true",
                   help="instead: the progress and ETA of the run logged in --log")
    p.add_argument("--log", type=Path, default=Path("logs/background.log"),
                   help="the run's log (default: scripts/background.sh's logs/background.log)")
    p.set_defaults(run=_plan)
