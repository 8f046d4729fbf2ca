"""Subcommands for models behind an OpenAI-compatible endpoint (``varprobe.api``)."""

from __future__ import annotations

import argparse
import json
import sys

from varprobe import tables
from varprobe.cli.shared import decoding_of


def api_endpoint(model_entry: str, decoding_entry: str):
    """The endpoint of a model's config entry (JSON) that must be an API model, checking that
    the decoding entry (JSON) is one an endpoint can sample (not an enumeration)."""
    from varprobe.api.endpoint import ApiEndpoint
    from varprobe.models.spec import ModelSpec

    spec = ModelSpec.from_config(json.loads(model_entry))
    if not spec.is_api:
        raise ValueError(f"model {spec.name!r} has no api block; this subcommand is for API models")
    decoding = json.loads(decoding_entry)
    if decoding.get("method", "sample") != "sample":
        raise ValueError(f"model {spec.name!r}: decoding {decoding.get('name')!r} needs the model's "
                         f"distribution (method {decoding['method']!r}); an API model only samples")
    return ApiEndpoint.from_config(spec.name, spec.api)


def api_metadata(endpoint, decoding, max_tokens: int) -> dict:
    """What the requests carried besides prompt and seed (``generation``), and where they went."""
    from varprobe.api.bodies import sent_parameters

    return {"generation": sent_parameters(endpoint, decoding, max_tokens),
            "endpoint": {"url": endpoint.url, "model": endpoint.model, "seeded": endpoint.seed}}


def _provo_api_sample(args: argparse.Namespace) -> None:
    from varprobe.api.cache import ReplyCache
    from varprobe.api.client import ApiClient
    from varprobe.api.provo import provo_samples

    endpoint = api_endpoint(args.model, args.decoding)
    decoding = decoding_of(args.decoding)
    contexts = tables.read(args.contexts, "provo_contexts")
    with ApiClient(endpoint, ReplyCache(args.cache)) as client:
        samples, stats = provo_samples(client, contexts, decoding, args.n_samples, args.seed)
        print(client.report(), file=sys.stderr)
    prompting = endpoint.provo
    metadata = {"model": json.loads(args.model), "decoding": decoding.name, "seed": args.seed,
                **api_metadata(endpoint, decoding, prompting.token_budget(args.n_samples)),
                "provo": {"mode": prompting.mode, "prompt": prompting.template, "n": args.n_samples}}
    tables.write(samples, args.out, "provo_samples", metadata)
    tables.write(stats, args.stats_out, "provo_api_parse", metadata)


def register(sub) -> None:
    """Add this module's subcommands to ``sub``."""
    p = sub.add_parser("provo-api-sample",
                       help="next words from an API model (Ilia & Aziz 2024, App. C.2: single or list mode)")
    p.add_argument("--model", required=True, help="the model's config entry as JSON (with api)")
    p.add_argument("--decoding", required=True, help="the decoding's config entry as JSON")
    p.add_argument("--contexts", required=True)
    p.add_argument("--n-samples", type=int, required=True, help="words per context")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--cache", required=True, help="folder of cached replies (reused across runs)")
    p.add_argument("--out", required=True, help="samples table (provo_samples)")
    p.add_argument("--stats-out", required=True, help="parse statistics (provo_api_parse)")
    p.set_defaults(run=_provo_api_sample)
