"""Subcommand writing the run's explorer page from its tables (``varprobe.explorer``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from varprobe import tables


def _same_length(args: argparse.Namespace, *names: str) -> list:
    lists = [getattr(args, n) or [] for n in names]
    if len({len(x) for x in lists}) > 1:
        given = ", ".join(f"--{n.replace('_', '-')}: {len(x)}" for n, x in zip(names, lists, strict=True))
        raise ValueError(f"these options need one path per system each ({given})")
    return lists


def _provo(args: argparse.Namespace) -> dict | None:
    from varprobe.explorer.data import ProvoSystem

    tvds, estimates = _same_length(args, "provo_tvd", "provo_estimates")
    if not args.provo_contexts:
        if tvds:
            raise ValueError("--provo-tvd given without --provo-contexts")
        return None
    summary = (tables.read(args.provo_summary, "provo_system") if args.provo_summary else None)
    systems = []
    for tvd_path, estimate_path in zip(tvds, estimates, strict=True):
        names = tables.read_metadata(tvd_path)
        exact = Path(estimate_path).stem == "distribution"
        estimate = tables.read(estimate_path, "provo_distribution" if exact else "provo_samples")
        row = {}
        if summary is not None:
            found = summary[(summary["model"] == names["model"])
                            & (summary["decoding"] == names["decoding"])]
            row = found.iloc[0].drop(["model", "decoding"]).to_dict() if len(found) else {}
        systems.append(ProvoSystem(names["model"], names["decoding"], tvd=tables.read(tvd_path, "provo_tvd"),
                                   estimate=estimate, exact=exact, summary=row))
    return {
        "contexts": tables.read(args.provo_contexts, "provo_contexts"),
        "responses": tables.read(args.provo_responses, "provo_responses"),
        "oracle": tables.read(args.provo_oracle, "provo_tvd"),
        "systems": systems,
    }


def _production(args: argparse.Namespace) -> dict | None:
    from varprobe.explorer.data import ProductionSystem

    samples, distances, divergences = _same_length(
        args, "production_samples", "production_distances", "production_divergences")
    adequacy = args.production_adequacy or [None] * len(divergences)
    if len(adequacy) != len(divergences):
        raise ValueError(f"--production-adequacy needs one path per system ({len(divergences)}), "
                         f"got {len(adequacy)}")
    if not args.production_instances:
        if divergences:
            raise ValueError("--production-divergences given without --production-instances")
        return None
    instances = {Path(p).parent.name: tables.read(p, "production_instances")
                 for p in args.production_instances}
    systems = []
    for sample_path, distance_path, divergence_path, adequacy_path in zip(
            samples, distances, divergences, adequacy, strict=True):
        dataset, model, decoding = Path(divergence_path).parts[-4:-1]
        systems.append(ProductionSystem(
            dataset, model, decoding, samples=tables.read(sample_path, "production_samples"),
            distances=tables.read(distance_path, "production_distances"),
            divergences=tables.read(divergence_path, "production_divergences"),
            adequacy=tables.read(adequacy_path, "production_adequacy") if adequacy_path else None,
        ))
    return {"instances": instances, "systems": systems}


def _explorer(args: argparse.Namespace) -> None:
    from varprobe.explorer.page import write_explorer

    provo, production = _provo(args), _production(args)
    if provo is None and production is None:
        raise ValueError("nothing to explore: give the Provo tables, the production tables or both")
    manifest = write_explorer(args.out, args.title, provo, production, top=args.top,
                              block=args.block, single=args.single)
    size = sum(f.stat().st_size for f in Path(args.out).rglob("*") if f.is_file())
    print(f"explorer: {args.out} ({size / 1e6:.2f} MB); Provo systems "
          f"{(manifest['provo'] or {}).get('systems', [])}; production systems "
          f"{[s['name'] for s in (manifest['production'] or {}).get('systems', [])]}")


def register(sub) -> None:
    """Add this module's subcommands to ``sub``."""
    p = sub.add_parser("explorer", help="the run's static explorer page (a folder) from its tables")
    p.add_argument("--out", required=True, help="the explorer folder (replaced)")
    p.add_argument("--single", help="also the whole explorer as this one HTML file (the report's)")
    p.add_argument("--title", default="varprobe explorer")
    p.add_argument("--provo-contexts")
    p.add_argument("--provo-responses")
    p.add_argument("--provo-oracle", help="the oracle control's tvd.parquet")
    p.add_argument("--provo-summary", help="summary.parquet (system-level TVD and its CI)")
    p.add_argument("--provo-tvd", nargs="*", help="each system's tvd.parquet")
    p.add_argument("--provo-estimates", nargs="*",
                   help="each system's samples.parquet or distribution.parquet, in --provo-tvd order")
    p.add_argument("--production-instances", nargs="*",
                   help="each dataset's instances.parquet (the dataset: its folder's name)")
    p.add_argument("--production-samples", nargs="*")
    p.add_argument("--production-distances", nargs="*")
    p.add_argument("--production-divergences", nargs="*",
                   help=".../{dataset}/{model}/{decoding}/divergences.parquet, the system named "
                        "by its folders; samples and distances in the same order")
    p.add_argument("--production-adequacy", nargs="*",
                   help="each system's adequacy.parquet, in --production-divergences order (optional)")
    p.add_argument("--top", type=int, default=25, help="word bars per system and context")
    p.add_argument("--block", type=int, default=50, help="production inputs per data chunk")
    p.set_defaults(run=_explorer)
