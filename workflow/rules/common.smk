"""Config validation and the one place where config is expanded into targets."""

import json
import re
import shlex

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


# Production study (workflow/rules/production.smk)
PROD = f"{RESULTS}/production"
PROD_SYSTEM = PROD + "/{dataset}/{model}/{decoding}"
PRC = PRODUCTION  # the production section, {} when the study is not configured
DEFAULT_SPLITS = {
    "wmt14": "newstest2014",
    "asset": "valid",
    "dailydialog": "dev",
    "writingprompts": "test",
}
OUTPUT_LANGUAGES = {"wmt14": "de"}
PROD_DATASETS = {d["name"]: d for d in PRC.get("datasets", [])}


def dataset_setting(dataset, key):
    """A dataset entry's setting, with the study-wide or built-in default."""
    entry = PROD_DATASETS[dataset]
    defaults = {
        "split": DEFAULT_SPLITS[dataset],
        "language": OUTPUT_LANGUAGES.get(dataset, "en"),
        "references": "extra",
        "min_stories": 5,
        "turn_separator": "\n",
        "max_inputs": PRC.get("max_inputs"),
        "models": NETWORKS,
    }
    return entry.get(key, defaults[key])


def production_systems():
    """Every (dataset, model, decoding) of the production study."""
    return [
        (d, m, dec)
        for d in PROD_DATASETS
        for m in dataset_setting(d, "models")
        for dec in PRODUCTION_DECODINGS
    ]


def production_path(pattern):
    """``pattern`` (with {dataset}, {model}, {decoding}) for every production system."""
    return [
        pattern.format(dataset=d, model=m, decoding=dec)
        for d, m, dec in production_systems()
    ]


def first_system_distances():
    """One distances table per dataset: its H rows are the same for every system."""
    first = {}
    for d, m, dec in production_systems():
        first.setdefault(d, f"{PROD}/{d}/{m}/{dec}/distances.parquet")
    return list(first.values())


def production_targets():
    """The tables and figures of the production study."""
    return [
        f"{PROD}/summary.parquet",
        *(f"{PROD}/figures/{name}.png" for name in PRODUCTION_FIGURES),
        *production_path(PROD_SYSTEM + "/miscalibrated.parquet"),
    ]


PRODUCTION_FIGURES = (
    "human_variability",
    "mean_differences",
    "w1_densities",
    "mean_w1",
)


def raw_inputs(wildcards):
    """The raw files a dataset's configured split is read from."""
    from varprobe.data.production import raw_files

    split = dataset_setting(wildcards.dataset, "split")
    return [
        f"{RESULTS}/raw/{wildcards.dataset}/{f}"
        for f in raw_files(wildcards.dataset, split)
    ]


def data_options(wildcards):
    """The command-line options of a dataset's instances table."""
    d = wildcards.dataset
    limit = dataset_setting(d, "max_inputs")
    return (
        f"--split {dataset_setting(d, 'split')} "
        f"--references {dataset_setting(d, 'references')} "
        f"--min-stories {dataset_setting(d, 'min_stories')} "
        f"--turn-separator {shlex.quote(dataset_setting(d, 'turn_separator'))}"
        + (f" --max-inputs {limit}" if limit else "")
    )


def probe_resources(wildcards):
    """The spaCy pipeline and sentence encoder of a dataset's output language, as options."""
    language = dataset_setting(wildcards.dataset, "language")
    pipeline = PRC["probes"]["spacy_pipelines"].get(language)
    encoder = PRC["probes"]["sentence_encoders"].get(language)
    return (
        f"--language {language} --spacy-pipeline '{json.dumps(pipeline)}' "
        f"--encoder '{json.dumps(encoder)}'"
    )


onstart:
    shell(
        "varprobe check-models --models {models:q}",
        models=json.dumps(config["models"]),
    )
