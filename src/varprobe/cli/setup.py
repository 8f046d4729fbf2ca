"""Subcommands that prepare a run: raw data in place, models reachable, profiles installed."""

from __future__ import annotations

import argparse
from pathlib import Path

from varprobe.commands import add_raw_checks, json_value


def _fetch(args: argparse.Namespace) -> None:
    from varprobe.data.fetching import fetch
    from varprobe.data.sources import resolve_mirror

    fetch(args.dataset, Path(args.dest), resolve_mirror(args.mirror), file=args.file,
          verify=not args.allow_unverified)


def _check_models(args: argparse.Namespace) -> None:
    """Fail fast where a model cannot be reached: a local model's weights or samples
    (``check_available``); an API model's block, not its endpoint (its jobs name an unreachable
    server or a refused key, and a rerun answered from the reply cache needs neither)."""
    from varprobe.api.endpoint import ApiEndpoint
    from varprobe.models.loading import check_available
    from varprobe.models.spec import ModelSpec

    for entry in args.models:
        spec = ModelSpec.from_config(entry)
        if spec.is_api:
            ApiEndpoint.from_config(spec.name, spec.api)
        else:
            check_available(spec)


def _install_profile(args: argparse.Namespace) -> None:
    from varprobe.profiles import install

    target, copied = install(args.name)
    state = "installed" if copied else "already installed, the same files,"
    print(f"profiles/{args.name} {state} as {target}: `snakemake --profile {args.name}` finds it")


def register(sub) -> None:
    """Add this module's subcommands to ``sub``."""
    p = sub.add_parser("fetch", help="place a dataset's raw file (download or data mirror)")
    p.add_argument("--dataset", required=True)
    p.add_argument("--file", default=None, help="which file of a dataset of several")
    p.add_argument("--dest", required=True)
    add_raw_checks(p)
    p.set_defaults(run=_fetch)

    p = sub.add_parser("check-models", help="fail fast when a configured model is unreachable")
    p.add_argument("--models", type=json_value, required=True, help="the models list of the config as JSON")
    p.set_defaults(run=_check_models)

    p = sub.add_parser("install-profile", help="install a Snakemake profile of profiles/ where "
                       "`snakemake --profile NAME` finds it (never over a different one)")
    p.add_argument("name", nargs="?", default="slurm", help="a folder of profiles/ (default: slurm)")
    p.set_defaults(run=_install_profile)
