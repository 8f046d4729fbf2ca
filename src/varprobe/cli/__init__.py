"""Command line: one subcommand per workflow stage. The Snakemake rules call these, nothing else.

Every subcommand reads tables, calls the package and writes tables atomically; errors end the
process with a one-line message that names the culprit (``varprobe: error: ...``). Each study's
subcommands live in a module of this package with a ``register(sub)`` function; so do each analysis
family's, in the module of the family's name (``varprobe.families``).
"""

from __future__ import annotations

import argparse
import importlib

from varprobe.families import families
from varprobe.cli import (
    api, explorer, finetune, page_measures, production, production_readings, provo, report, setup)

STUDIES = (setup, provo, api, production, finetune, page_measures, production_readings, report, explorer)


def build_parser() -> argparse.ArgumentParser:
    """The ``varprobe`` argument parser with one subcommand per stage."""
    parser = argparse.ArgumentParser(prog="varprobe", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(required=True, metavar="COMMAND")
    for study in STUDIES:
        study.register(sub)
    for family in dict.fromkeys(families().values()):
        importlib.import_module(f"{__name__}.{family.name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``varprobe`` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        args.run(args)
    except (ValueError, OSError, RuntimeError, KeyError) as err:
        parser.exit(1, f"varprobe: error: {err}\n")


if __name__ == "__main__":
    main()
