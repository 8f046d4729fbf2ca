"""What the subcommands share: JSON options parsed once (``json_value``), the options of a model
job (model, decoding, device, shards), loading its model, model estimates, the oracle control,
and merging shard tables. The study and analysis-family commands import it; it imports no
command."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path

from varprobe import tables


def json_value(text: str):
    """The value of an option given as JSON, parsed once by argparse (``type=json_value``); text
    that is not JSON is an error of the option, which argparse names."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"not valid JSON ({err}): {text!r}") from None


def job_spec(model: Mapping, *, gpus: int, cpu_fallback: bool, checkpoint: str | None = None):
    """The model of a job on the device the job may use.

    Parameters
    ----------
    model : Mapping
        The model's config entry (``--model``).
    gpus : int
        GPUs given to the job (``--gpus``); 0 runs CUDA models on CPU.
    cpu_fallback : bool
        Whether a CUDA model runs on CPU where no CUDA device is usable (``--cpu-fallback``).
    checkpoint : str or None
        A fine-tuning checkpoint folder applied over the model's weights (``--checkpoint``).

    Returns
    -------
    varprobe.models.spec.ModelSpec
        The model's spec on that device, with the checkpoint.
    """
    import dataclasses

    import torch

    from varprobe.models.loading import run_device
    from varprobe.models.spec import ModelSpec

    spec = ModelSpec.from_config(model)
    device = run_device(spec, gpus, cpu_fallback, torch.cuda.is_available())
    if device != spec.device:
        print(f"model {spec.name!r} configured for {spec.device!r} runs on {device!r}", file=sys.stderr)
    # A model that falls back to CPU runs whole there, not spread by its device map.
    placement = spec.device_map if device == spec.device else None
    return dataclasses.replace(spec, device=device, device_map=placement, checkpoint=checkpoint)


def load_model(model: Mapping, *, gpus: int, cpu_fallback: bool, checkpoint: str | None = None):
    """The causal LM of a job, loaded on the device the job may use (``job_spec``, whose
    parameters these are), and that device."""
    from varprobe.models.loading import load_causal_lm

    spec = job_spec(model, gpus=gpus, cpu_fallback=cpu_fallback, checkpoint=checkpoint)
    return load_causal_lm(spec), spec.device


def read_estimates(samples: str | Path | None, distribution: str | Path | None) -> tuple[dict, float]:
    """The model's per-context estimates from ``--samples`` or ``--distribution``, and its
    failure rate: the share of failed draws, or the mean resolved failure mass per context.

    Parameters
    ----------
    samples : str or Path or None
        A ``provo_samples`` table (sampled decodings); read when given.
    distribution : str or Path or None
        A ``provo_distribution`` table (exact decodings); read when ``samples`` is None.

    Returns
    -------
    estimates : dict
        ``ModelEstimate`` by context ``(text_id, word_number)``.
    failure_rate : float
        The share of failed draws (nan when none were drawn), or the mean failure mass per
        context, in [0, 1].
    """
    from varprobe.analysis.next_word import enumerated_estimates, failure_rate, sampled_estimates

    if samples:
        draws = tables.read(samples, "provo_samples")
        return sampled_estimates(draws), failure_rate(draws)
    enumerated = tables.read(distribution, "provo_distribution")
    per_context = enumerated.groupby(["text_id", "word_number"])["failure_mass"].first()
    return enumerated_estimates(enumerated), float(per_context.mean())


def add_model_job(parser: argparse.ArgumentParser, decoding: bool = True) -> None:
    """The options of a job that runs a model: its config entry, the decoding's (unless
    ``decoding`` is False), and which device it may use."""
    parser.add_argument("--model", type=json_value, required=True, help="the model's config entry as JSON")
    if decoding:
        parser.add_argument("--decoding", type=json_value, required=True,
                            help="the decoding's config entry as JSON")
    parser.add_argument("--gpus", type=int, default=1,
                        help="GPUs given to this job; 0 runs CUDA models on CPU")
    parser.add_argument("--cpu-fallback", action="store_true",
                        help="run CUDA models on CPU where no CUDA device is usable")


def add_checkpoint(parser: argparse.ArgumentParser) -> None:
    """The option of a job that may load a fine-tuned model: its checkpoint folder."""
    parser.add_argument("--checkpoint", default=None,
                        help="fine-tuning checkpoint folder applied over the model's weights")


def add_estimates(parser: argparse.ArgumentParser) -> None:
    """The options of a job that reads a model's estimates (``read_estimates``): a samples or a
    distribution table."""
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--samples", help="a samples table (sampled decodings)")
    group.add_argument("--distribution", help="a distribution table (exact decodings)")


def add_shard_options(parser: argparse.ArgumentParser, what: str) -> None:
    """The options of a sampling job that draws for one shard of its study's ``what``."""
    parser.add_argument("--shard", type=int, default=1, help=f"which shard of the {what} (1-based)")
    parser.add_argument("--shards", type=int, default=1, help=f"how many shards the {what} form")


def merge_shards(paths: list[str], out: str, schema: str):
    """Concatenate the ``schema`` tables of shards 1..K of K, in order, into ``out``; their
    metadata must agree on every setting (``varprobe.sampling.shards.merge_metadata``).
    Returns the merged table and its metadata."""
    import pandas as pd

    from varprobe.sampling.shards import merge_metadata

    merged = pd.concat([tables.read(p, schema) for p in paths], ignore_index=True)
    metadata = merge_metadata([tables.read_metadata(p) for p in paths], paths)
    tables.write(merged, out, schema, metadata)
    return merged, metadata


def add_raw_checks(parser: argparse.ArgumentParser) -> None:
    """The options of a job that fetches or reads raw dataset files: the data mirror they come
    from, and the opt-out of their checks (``varprobe.data.sources``)."""
    parser.add_argument("--mirror", default=None,
                        help="data mirror the raw files come from (default: $VARPROBE_DATA_MIRROR; "
                             "none: downloaded)")
    parser.add_argument("--allow-unverified", action="store_true",
                        help="skip the pinned digests and the loaders' counts, with a warning naming "
                             "each file (config data_verify: false)")


def verify_raw(dataset: str, *paths: str | Path, mirror: str | None, allow_unverified: bool) -> None:
    """Check the raw files ``paths`` of ``dataset``, fetched by an earlier job, before a job
    reads them (``verify_copy``; ``--allow-unverified`` warns instead).

    Parameters
    ----------
    dataset : str
        The dataset's config name, whose pinned digests the files are checked against.
    *paths : str or Path
        The raw files to check.
    mirror : str or None
        ``--mirror``: the data mirror the files came from (None: ``$VARPROBE_DATA_MIRROR``).
    allow_unverified : bool
        ``--allow-unverified``: warn, naming each file, instead of raising.

    Returns
    -------
    None
    """
    from varprobe.data.fetching import verify_copy
    from varprobe.data.sources import resolve_mirror

    resolved = resolve_mirror(mirror)
    for path in paths:
        verify_copy(dataset, Path(path), resolved, not allow_unverified)


def add_control(parser: argparse.ArgumentParser) -> None:
    """The options of the oracle control a model analysis is scored with (``control_settings``)."""
    parser.add_argument("--contexts", required=True)
    parser.add_argument("--responses", required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--resplits", type=int, required=True)
    parser.add_argument("--ece-bins", type=int, required=True)
    parser.add_argument("--bootstrap", type=int, required=True)


def control_settings(seed: int, resplits: int, ece_bins: int, bootstrap: int):
    """The ``ControlSettings`` of ``add_control``'s options.

    Parameters
    ----------
    seed : int
        ``--seed``: the seed of the oracle's resplits and bootstrap.
    resplits : int
        ``--resplits``: the number of random splits of the human responses.
    ece_bins : int
        ``--ece-bins``: the number of equal-width confidence bins of the ECE.
    bootstrap : int
        ``--bootstrap``: the number of bootstrap resamples of each interval.

    Returns
    -------
    ControlSettings
    """
    from varprobe.analysis.next_word import ControlSettings

    return ControlSettings(seed, resplits, ece_bins, bootstrap)
