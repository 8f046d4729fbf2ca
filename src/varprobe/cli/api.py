"""Subcommands for models behind an OpenAI-compatible endpoint (``varprobe.api``)."""

from __future__ import annotations

import argparse
import sys

from varprobe import tables
from varprobe.commands import json_value


def add_api_options(parser: argparse.ArgumentParser) -> None:
    """The options of a job that may query an API model: the reply cache, and tuning that
    overrides the model entry's."""
    parser.add_argument("--api-cache", help="folder of cached replies (reused across runs)")
    parser.add_argument("--api-concurrency", type=int, help="requests in flight")
    parser.add_argument("--api-max-retries", type=int, help="retries of a transient failure")
    parser.add_argument("--api-timeout", type=float, help="seconds per request")
    parser.add_argument("--api-backoff", type=float, help="seconds before the first retry")


def api_endpoint(args: argparse.Namespace):
    """The endpoint of ``args.model`` (a config entry) that must be an API model, with the
    ``TUNING`` options of ``args`` over its entry's, checking that ``args.decoding`` is one an
    endpoint can sample (not an enumeration) and that a reply cache is given."""
    from varprobe.api.endpoint import TUNING, ApiEndpoint
    from varprobe.models.spec import ModelSpec

    spec = ModelSpec.from_config(args.model)
    if not spec.is_api:
        raise ValueError(f"model {spec.name!r} has no api block; this subcommand is for API models")
    decoding = args.decoding
    if decoding.get("method", "sample") != "sample":
        raise ValueError(f"model {spec.name!r}: decoding {decoding.get('name')!r} needs the model's "
                         f"distribution (method {decoding['method']!r}); an API model only samples")
    if not args.api_cache:
        raise ValueError(f"model {spec.name!r} is an API model: give --api-cache")
    given = {k: getattr(args, f"api_{k}") for k in TUNING if getattr(args, f"api_{k}") is not None}
    return ApiEndpoint.from_config(spec.name, {**spec.api, **given})


def api_metadata(endpoint, decoding, max_tokens: int) -> dict:
    """What the requests carried besides prompt and seed (``generation``), and where they went."""
    from varprobe.api.bodies import sent_parameters

    return {"generation": sent_parameters(endpoint, decoding, max_tokens),
            "endpoint": {"url": endpoint.url, "model": endpoint.model, "seeded": endpoint.seed}}


def _provo_api_sample(args: argparse.Namespace) -> None:
    from varprobe.api.cache import ReplyCache
    from varprobe.api.client import ApiClient
    from varprobe.api.provo import provo_samples
    from varprobe.sampling.decoding import Decoding

    endpoint = api_endpoint(args)
    decoding = Decoding.from_config(args.decoding)
    contexts = tables.read(args.contexts, "provo_contexts")
    with ApiClient(endpoint, ReplyCache(args.api_cache)) as client:
        samples, stats = provo_samples(client, contexts, decoding, n=args.n_samples, seed=args.seed)
        print(client.report(), file=sys.stderr)
    prompting = endpoint.provo
    metadata = {"model": args.model, "decoding": decoding.name, "seed": args.seed,
                **api_metadata(endpoint, decoding, prompting.token_budget(args.n_samples)),
                "provo": {"mode": prompting.mode, "prompt": prompting.template, "n": args.n_samples}}
    tables.write(samples, args.out, "provo_samples", metadata)
    tables.write(stats, args.replies_out, "provo_api_parse", metadata)


def _provo_api_summary(args: argparse.Namespace) -> None:
    import pandas as pd

    rows = []
    for path in args.replies:
        names = tables.read_metadata(path)
        stats = tables.read(path, "provo_api_parse")
        counts = stats.drop(columns=["text_id", "word_number", "mode"]).sum()
        rows.append({"model": names["model"]["name"], "decoding": names["decoding"],
                     "mode": names["provo"]["mode"], "contexts": len(stats), **counts.to_dict()})
    tables.write(pd.DataFrame(rows), args.out, "provo_api_summary")


def register(sub) -> None:
    """Add this module's subcommands to ``sub``."""
    p = sub.add_parser("provo-api-sample",
                       help="next words from an API model (Ilia & Aziz 2024, App. C.2: single or list mode)")
    p.add_argument("--model", type=json_value, required=True,
                   help="the model's config entry as JSON (with api)")
    p.add_argument("--decoding", type=json_value, required=True, help="the decoding's config entry as JSON")
    p.add_argument("--contexts", required=True)
    p.add_argument("--n-samples", type=int, required=True, help="words per context")
    p.add_argument("--seed", type=int, required=True)
    add_api_options(p)
    p.add_argument("--out", required=True, help="samples table (provo_samples)")
    p.add_argument("--replies-out", required=True,
                   help="per-context reply and parse statistics (provo_api_parse)")
    p.set_defaults(run=_provo_api_sample)

    p = sub.add_parser("provo-api-summary", help="one row of reply and parse counts per API system")
    p.add_argument("--replies", nargs="+", required=True, help="provo_api_parse tables")
    p.add_argument("--out", required=True)
    p.set_defaults(run=_provo_api_summary)
