"""The configured decodings and the systems of each study (model x decoding on Provo, dataset x
model x decoding in production), which the studies, the analysis families and the check of
API decodings read."""

from varprobe.api.endpoint import ApiEndpoint
from varprobe.data import record_of

DECODINGS = {d["name"]: d for d in config.get("provo", {}).get("decodings", [])}
ENUMERATED = [n for n, d in DECODINGS.items() if d.get("method") == "enumerate"]
SAMPLED = [n for n in DECODINGS if n not in ENUMERATED]
PRODUCTION = config.get("production", {})
PRODUCTION_DECODINGS = {d["name"]: d for d in PRODUCTION.get("decodings", [])}
PROVO_MODELS = [n for n in MODELS if n not in FINETUNED or n in PROVO_FINETUNED]


def runs_decoding(model, decoding):
    """Whether ``model`` runs ``decoding`` (its `decodings` list, default all)."""
    return decoding in MODELS[model].get("decodings", [decoding])


wildcard_constraints:
    model=_alternatives(MODELS),
    decoding=_alternatives([*DECODINGS, "given", *PRODUCTION_DECODINGS]),
    shard=r"[1-9][0-9]*",
    dataset="[A-Za-z0-9_-]+",


def model_decodings(model):
    """The Provo decodings a model is run with: ``given`` for samples files; the sampled ones
    for API and fine-tuned models (no logits here to enumerate, or one model per fold); all
    for networks; always within the model's own `decodings` list."""
    if model in EXTERNAL:
        return ["given"]
    names = DECODINGS if model in NETWORKS else SAMPLED
    return [d for d in names if runs_decoding(model, d)]


def systems():
    """Every (model, decoding) pair of the Provo study."""
    return [(m, d) for m in PROVO_MODELS for d in model_decodings(m)]


def system_path(pattern):
    """``pattern`` (with {model} and {decoding}) for every system."""
    return [pattern.format(model=m, decoding=d) for m, d in systems()]


PROVO = f"{RESULTS}/provo"
PROVO_SYSTEM = f"{PROVO}/{{model}}/{{decoding}}"


def estimate_kind(wildcards):
    """``distribution`` for an enumerated decoding, else ``samples``: the model table a system
    is scored from (and the CLI flag naming it)."""
    return "distribution" if wildcards.decoding in ENUMERATED else "samples"


def estimate_table(wildcards):
    """The system's model table: its samples or its enumerated distribution."""
    return f"{PROVO}/{wildcards.model}/{wildcards.decoding}/{estimate_kind(wildcards)}.parquet"


PROD_DATASETS = {d["name"]: d for d in PRODUCTION.get("datasets", [])}
DATASET_RECORDS = {name: record_of(entry) for name, entry in PROD_DATASETS.items()}
"""The record of each configured production dataset: the registered one
(varprobe.data.DATASETS), or the one built from an entry that brings its own file."""


def dataset_setting(dataset, key):
    """A dataset entry's setting, with the study-wide default or the dataset record's
    (its split, language, reference cap and own options)."""
    entry, record = PROD_DATASETS[dataset], DATASET_RECORDS[dataset]
    defaults = {
        **record.options,
        "split": record.default_split,
        "language": record.output_language,
        "max_references": record.max_references,
        "simplification": record.simplification,
        "max_inputs": PRODUCTION.get("max_inputs"),
        "input_choice": PRODUCTION.get("input_choice"),
        "models": [
            *NETWORKS,
            *API,
            *(n for n, f in FINETUNED.items() if f["dataset"] == dataset),
        ],
    }
    return entry.get(key, defaults[key])


def production_systems():
    """Every (dataset, model, decoding) of the production study."""
    return [
        (d, m, dec)
        for d in PROD_DATASETS
        for m in dataset_setting(d, "models")
        for dec in PRODUCTION_DECODINGS
        if runs_decoding(m, dec)
    ]


def check_api_decodings():
    """Fail at parse time, naming model, decoding and parameter, where an API model would run
    a decoding its endpoint cannot apply (it would otherwise be silently changed)."""
    from varprobe.api.bodies import decoding_fields
    from varprobe.sampling.decoding import Decoding

    runs = [(m, DECODINGS[d]) for m, d in systems() if m in API]
    runs += [
        (m, PRODUCTION_DECODINGS[d]) for _, m, d in production_systems() if m in API
    ]
    for model, decoding in runs:
        endpoint = ApiEndpoint.from_config(model, MODELS[model]["api"])
        try:
            decoding_fields(endpoint, Decoding.from_config(decoding))
        except ValueError as err:
            raise ValueError(
                f"{err}; leave the decoding out with the model's `decodings:` list"
            ) from None


if API:
    check_api_decodings()
