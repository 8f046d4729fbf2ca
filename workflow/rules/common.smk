"""Config validation and the one place where config is expanded into targets."""

import json
import re

from snakemake.utils import validate

validate(config, "../schemas/config.schema.yaml")

RESULTS = "results"
MODELS = {m["name"]: m for m in config["models"]}
DECODINGS = {d["name"]: d for d in config.get("provo", {}).get("decodings", [])}
NETWORKS = [name for name, m in MODELS.items() if "samples" not in m]
EXTERNAL = [name for name, m in MODELS.items() if "samples" in m]
PRODUCTION = config.get("production", {})
PRODUCTION_DECODINGS = {d["name"]: d for d in PRODUCTION.get("decodings", [])}


def _alternatives(names):
    """A wildcard constraint matching exactly the given names."""
    return "|".join(re.escape(n) for n in names) or "(?!)"


wildcard_constraints:
    model=_alternatives(MODELS),
    decoding=_alternatives([*DECODINGS, "given", *PRODUCTION_DECODINGS]),
    dataset="[A-Za-z0-9_-]+",


def model_decodings(model):
    """The decodings a model is run with: the configured ones, or ``given`` for samples files."""
    return ["given"] if model in EXTERNAL else list(DECODINGS)


def systems():
    """Every (model, decoding) pair of the study."""
    return [(m, d) for m in MODELS for d in model_decodings(m)]


def system_path(pattern):
    """``pattern`` (with {model} and {decoding}) for every system."""
    return [pattern.format(model=m, decoding=d) for m, d in systems()]


def model_entry(wildcards):
    """The model's config entry as JSON, for the rule's params (only what the rule uses)."""
    return json.dumps(MODELS[wildcards.model], sort_keys=True)


def decoding_entry(wildcards):
    """The decoding's config entry as JSON."""
    return json.dumps(DECODINGS[wildcards.decoding], sort_keys=True)


def production_decoding_entry(wildcards):
    """A production decoding's config entry as JSON."""
    return json.dumps(PRODUCTION_DECODINGS[wildcards.decoding], sort_keys=True)


def uses_gpu(wildcards):
    """1 when the model's config puts it on CUDA, else 0: the ``gpu`` resource of its jobs."""
    return int(MODELS[wildcards.model].get("device", "cpu").startswith("cuda"))


def log_path(stage, *names):
    """The log file of one job of ``stage``."""
    return "/".join([RESULTS, "logs", stage, *names]) + ".log"


def benchmark_path(stage, *names):
    """The benchmark file of one job of ``stage``."""
    return "/".join([RESULTS, "benchmarks", stage, *names]) + ".tsv"


onstart:
    shell(
        "varprobe check-models --models {models:q}",
        models=json.dumps(config["models"]),
    )
