"""Config validation and the one place where config is expanded into targets."""

import json
import re
import shlex
import sys
from pathlib import Path

from varprobe.api.endpoint import TUNING as API_TUNING, ApiEndpoint
from varprobe.config_checks import validate_config
from varprobe.data import DATASETS
from varprobe.models.spec import ModelSpec
from varprobe.probes import NEEDS, PROBES as PROBE_RECORDS

validate_config(
    config, workflow.source_path("../schemas/config.schema.yaml"), workflow.configfiles
)

VARPROBE = f"{shlex.quote(sys.executable)} -m varprobe"
"""The package's CLI in the interpreter running Snakemake."""

# The rules' commands start with `varprobe`, a shell function that runs the `varprobe` on
# PATH (a conda env's, or the activated venv's) and else this interpreter's, so that the
# venv's snakemake run without its bin on PATH still finds the CLI. The prefix is an
# f-string that Snakemake formats again (hence four braces for one); it replaces Snakemake's
# default strict mode, restated first.
shell.prefix(
    f"set -euo pipefail; varprobe() {{{{ if type -P varprobe > /dev/null; "
    f'then command varprobe "$@"; else {VARPROBE} "$@"; fi; }}}}; '
)

RESULTS = "results"
CONDA_ENV = "../../envs/varprobe.yaml"
SHARDS = list(range(1, config.get("provo", {}).get("shards", 1) + 1))
MODELS = {m["name"]: m for m in config["models"]}
DECODINGS = {d["name"]: d for d in config.get("provo", {}).get("decodings", [])}
ENUMERATED = [n for n, d in DECODINGS.items() if d.get("method") == "enumerate"]
SAMPLED = [n for n in DECODINGS if n not in ENUMERATED]
PRODUCTION = config.get("production", {})
PRODUCTION_DECODINGS = {d["name"]: d for d in PRODUCTION.get("decodings", [])}

# Model kinds, as the package decides them (varprobe.models.spec.KINDS).
MODEL_KINDS = {n: ModelSpec.from_config(m).kind for n, m in MODELS.items()}
NETWORKS = [n for n, k in MODEL_KINDS.items() if k == "network"]
EXTERNAL = [n for n, k in MODEL_KINDS.items() if k == "samples"]
API = [n for n, k in MODEL_KINDS.items() if k == "api"]
FINETUNED = {
    n: MODELS[n]["finetune"] for n, k in MODEL_KINDS.items() if k == "fine-tuned"
}
PROVO_FINETUNED = [n for n, f in FINETUNED.items() if f["dataset"] == "provo"]
SAMPLERS = [*NETWORKS, *PROVO_FINETUNED]
"""The models the Provo sampler runs (fine-tuned ones per fold)."""
PROVO_MODELS = [n for n in MODELS if n not in FINETUNED or n in PROVO_FINETUNED]
API_DEFAULTS = ApiEndpoint.tuning_defaults()
"""The `api` keys that tune speed and robustness only (job resources, not params)."""


def _check_finetune_studies():
    """Fail at parse time, naming the entry, on a fine-tuned model whose study is not run."""
    for name, tune in FINETUNED.items():
        study = "provo" if tune["dataset"] == "provo" else "production"
        if study not in config:
            raise ValueError(
                f"model {name!r} is fine-tuned on {tune['dataset']!r} but config has no "
                f"`{study}:` section to evaluate it in"
            )


_check_finetune_studies()


def runs_decoding(model, decoding):
    """Whether ``model`` runs ``decoding`` (its `decodings` list, default all)."""
    return decoding in MODELS[model].get("decodings", [decoding])


def _alternatives(names):
    """A wildcard constraint matching exactly the given names."""
    return "|".join(re.escape(n) for n in names) or "(?!)"


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


def job_entry(name):
    """A model's entry as its jobs read it: without the keys that change no result (its
    decodings list, an API block's tuning); a fine-tuned model is its base's weights under its
    own name, device and dtype (the checkpoint reaches the job as an input)."""
    entry = {k: v for k, v in MODELS[name].items() if k != "decodings"}
    if name in API:
        entry["api"] = {k: v for k, v in entry["api"].items() if k not in API_TUNING}
    if name in FINETUNED:
        base = MODELS[entry.pop("finetune")["base"]]
        sources = ("pretrained", "package", "gguf_file")
        entry = {**{k: base[k] for k in sources if k in base}, **entry}
    return entry


def model_entry(wildcards):
    """The model's job entry as JSON, for the rule's params (only what changes results)."""
    return json.dumps(job_entry(wildcards.model), sort_keys=True)


def api_setting(key):
    """A resource function: an API model's tuning value ``key``, the default for other models;
    floats as strings (a resource is an integer or a string)."""

    def value(wildcards):
        found = MODELS[wildcards.model].get("api", {}).get(key, API_DEFAULTS[key])
        return found if isinstance(found, int) else str(found)

    return value


API_RESOURCES = {
    **{f"api_{key}": api_setting(key) for key in API_TUNING},
    "api_cache": config["api_cache"],
}
"""Resources of a job that may query an API model: changing them reruns nothing."""
API_OPTIONS = " ".join(
    f"--api-{key.replace('_', '-')} {{resources.api_{key}}}"
    for key in [*API_TUNING, "cache"]
)
"""The CLI options passing ``API_RESOURCES`` on."""


def decoding_entry(wildcards):
    """The decoding's config entry as JSON."""
    return json.dumps(DECODINGS[wildcards.decoding], sort_keys=True)


def production_decoding_entry(wildcards):
    """A production decoding's config entry as JSON."""
    return json.dumps(PRODUCTION_DECODINGS[wildcards.decoding], sort_keys=True)


def estimate_kind(wildcards):
    """``distribution`` for an enumerated decoding, else ``samples``: the model table a system
    is scored from (and the CLI flag naming it)."""
    return "distribution" if wildcards.decoding in ENUMERATED else "samples"


def estimate_table(wildcards):
    """The system's model table: its samples or its enumerated distribution."""
    return f"{PROVO}/{wildcards.model}/{wildcards.decoding}/{estimate_kind(wildcards)}.parquet"


def uses_gpu(wildcards):
    """1 when the model's config puts it on CUDA, else 0: the ``gpu`` resource of its jobs.

    0 means no GPU request at all (the SLURM executor drops ``--gpus`` for 0).
    """
    return int(MODELS[wildcards.model].get("device", "cpu").startswith("cuda"))


def cpu_fallback(wildcards):
    """``--cpu-fallback`` for a CUDA model when config allows it, else nothing: a param only
    where it can matter, so changing it never reruns a CPU model's sampling."""
    return "--cpu-fallback" if uses_gpu(wildcards) and config["cpu_fallback"] else ""


def job_spec(rule):
    """A rule's ``resources`` entry of the config over the ``default`` entry."""
    return {**config["resources"]["default"], **config["resources"].get(rule, {})}


def job_threads(rule):
    """A rule's threads: its ``cpus_per_task`` in config."""
    return job_spec(rule)["cpus_per_task"]


def job_resources(rule):
    """A rule's scheduler resources from config; memory and runtime grow with the attempt."""
    spec = job_spec(rule)
    return dict(
        mem_mb=lambda wildcards, attempt: spec["mem_mb"] * attempt,
        runtime=lambda wildcards, attempt: spec["runtime"] * attempt,
        cpus_per_task=spec["cpus_per_task"],
    )


REPORT_TABLES = {}
"""Summary tables shown in the HTML report: name -> table, category, title (report.smk renders
each as an HTML page captioned by workflow/report/<name>.rst)."""


def report_table(name, table, category, title, caption=None):
    """Show the Parquet ``table`` in the report as page ``name``, captioned by
    report/<caption>.rst (default: report/<name>.rst)."""
    REPORT_TABLES[name] = dict(
        table=table, category=category, title=title, caption=caption or name
    )


def report_tables(name, pattern, category, title, keys):
    """``report_table`` once per wildcard set in ``keys`` (dicts such as {"model": ...}): page
    ``name_<values>`` shows ``pattern`` filled in, all captioned by report/<name>.rst.
    """
    for key in keys:
        report_table(
            "_".join([name, *key.values()]),
            pattern.format(**key),
            category,
            title.format(**key),
            caption=name,
        )


def log_path(stage, *names):
    """The log file of one job of ``stage``."""
    return f"{RESULTS}/logs/{stage}/{'/'.join(names)}.log"


def benchmark_path(stage, *names):
    """The benchmark file of one job of ``stage``."""
    return f"{RESULTS}/benchmarks/{stage}/{'/'.join(names)}.tsv"


PROVO = f"{RESULTS}/provo"
PROVO_TEXTS = (
    range(1, 56)
    if config.get("provo", {}).get("texts") == "all"
    else config.get("provo", {}).get("texts", [])
)
FT_DIR = f"{RESULTS}/finetune"
FINETUNE_TARGETS = []
"""The loss figures and comparisons of the fine-tuned models (workflow/rules/finetune.smk)."""


def passage_span(span):
    """The passage ids of a `{first, last}` span of a finetune entry."""
    return list(range(span["first"], span["last"] + 1))


def provo_folds(model):
    """The cross-validation folds (lists of passage ids) of a Provo fine-tuned model."""
    from varprobe.finetune.folds import contiguous_folds

    tune = FINETUNED[model]
    return contiguous_folds(passage_span(tune["train_passages"]), tune["folds"])


def sampled_folds(model):
    """``(fold, passages)``: each fold of a Provo fine-tuned model that holds out configured
    Provo passages, with those passages; the fold's model samples their contexts."""
    held = [
        (k, [t for t in fold if t in PROVO_TEXTS])
        for k, fold in enumerate(provo_folds(model), start=1)
    ]
    return [(k, texts) for k, texts in held if texts]


def model_shards(model):
    """The sampling jobs of a model: one per needed fold for a Provo fine-tuned model (shard i
    is its i-th sampled fold), else the configured shards."""
    if model in PROVO_FINETUNED:
        return list(range(1, len(sampled_folds(model)) + 1))
    return SHARDS


def fold_checkpoint(model, fold):
    """The checkpoint folder of one fold of a Provo fine-tuned model."""
    return f"{FT_DIR}/{model}/fold{fold}/checkpoint"


def production_checkpoint(wildcards):
    """A production model's checkpoint: its own for a model fine-tuned on a dataset, else none."""
    return (
        f"{FT_DIR}/{wildcards.model}/checkpoint" if wildcards.model in FINETUNED else []
    )


def sample_checkpoint(wildcards):
    """A sampling shard's checkpoint: its fold's for a fine-tuned model, else none."""
    if wildcards.model not in PROVO_FINETUNED:
        return []
    fold, _ = sampled_folds(wildcards.model)[int(wildcards.shard) - 1]
    return fold_checkpoint(wildcards.model, fold)


def sample_scope(wildcards):
    """The options that place a sampling shard: its fold's checkpoint and held-out passages
    for a fine-tuned model, else nothing (the shard's share of the contexts)."""
    if wildcards.model not in PROVO_FINETUNED:
        return ""
    fold, texts = sampled_folds(wildcards.model)[int(wildcards.shard) - 1]
    return f"--checkpoint {fold_checkpoint(wildcards.model, fold)} --texts " + " ".join(
        map(str, texts)
    )


ANALYSES = config.get("analyses", {})
ANALYSIS_TARGETS = []
"""The outputs of the analysis families (workflow/rules/<key of `analyses`>.smk): each family's
file extends it."""
PROVO_SYSTEM = f"{PROVO}/{{model}}/{{decoding}}"


def provo_targets():
    """The tables and figures of the Provo study; the word bars (Fig. 1) only where
    ``provo.figure_contexts`` names contexts to draw."""
    bars = config["provo"]["figure_contexts"]
    return [
        f"{PROVO}/summary.parquet",
        f"{PROVO}/figures/tvd_density.png",
        *(system_path(f"{PROVO_SYSTEM}/bars.png") if bars else []),
    ]


# Production study (workflow/rules/production.smk)
PROD = f"{RESULTS}/production"
PROD_SYSTEM = f"{PROD}/{{dataset}}/{{model}}/{{decoding}}"
DEFAULT_SPLITS = {n: d.default_split for n, d in DATASETS.items()}
OUTPUT_LANGUAGES = {n: d.output_language for n, d in DATASETS.items()}
PROD_DATASETS = {d["name"]: d for d in PRODUCTION.get("datasets", [])}


def dataset_setting(dataset, key):
    """A dataset entry's setting, with the study-wide or built-in default."""
    entry = PROD_DATASETS[dataset]
    defaults = {
        "split": DEFAULT_SPLITS[dataset],
        "language": OUTPUT_LANGUAGES[dataset],
        "references": "extra",
        "min_stories": 5,
        "max_references": DATASETS[dataset].max_references,
        "turn_separator": "\n",
        "max_inputs": PRODUCTION.get("max_inputs"),
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
        *production_path(f"{PROD_SYSTEM}/miscalibrated.parquet"),
    ]


PRODUCTION_FIGURES = (
    "human_variability",
    "mean_differences",
    "w1_densities",
    "mean_w1",
)


def dataset_mirror(dataset):
    """The data mirror of a dataset's raw files: its own ``data_mirror`` entry, else the
    top-level one (None: download, or ``$VARPROBE_DATA_MIRROR``)."""
    return PROD_DATASETS.get(dataset, {}).get("data_mirror") or config["data_mirror"]


def raw_options(dataset):
    """The options of every job that fetches or reads ``dataset``'s raw files: ``--mirror DIR``
    and, when ``data_verify`` is false, ``--allow-unverified``."""
    mirror = dataset_mirror(dataset)
    options = [f"--mirror {shlex.quote(mirror)}"] if mirror else []
    if not config["data_verify"]:
        options.append("--allow-unverified")
    return " ".join(options)


def mirror_origin(wildcards):
    """The mirror file a raw file is copied from (none for a download), as an input: a mirror
    file fixed or replaced after an earlier fetch is newer than the copy, which is fetched again.
    """
    from varprobe.data.sources import resolve_mirror, source_of

    mirror = resolve_mirror(dataset_mirror(wildcards.dataset))
    if mirror is None:
        return []
    origin = mirror / source_of(wildcards.dataset, wildcards.file).mirror_path
    return [str(origin)] if origin.is_file() else []


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
    cap = dataset_setting(d, "max_references")
    return (
        f"--split {dataset_setting(d, 'split')} "
        f"--references {dataset_setting(d, 'references')} "
        f"--min-stories {dataset_setting(d, 'min_stories')} "
        f"--turn-separator {shlex.quote(dataset_setting(d, 'turn_separator'))} "
        f"--seed {config['seed']}"
        + (f" --max-inputs {limit}" if limit else "")
        + (f" --max-references {cap}" if cap else "")
    )


PROBE_RESOURCES = {
    "tagger": ("spacy_pipelines", "--spacy-pipeline"),
    "encoder": ("sentence_encoders", "--encoder"),
}
"""Each need of a probe record (varprobe.probes.NEEDS) but the tokenizer, which is always
there: the `production.probes` key naming its resource per language, and the option of
production-distances that passes it on."""
PROBE_NEEDS = {probe.needs for probe in PROBE_RECORDS.values()}
"""What the registered probes need: a distances job loads only those resources."""


def _check_probe_resources():
    """Fail at parse time on a need of the probe records that no config key provides."""
    unprovided = set(NEEDS) - {"tokenizer", *PROBE_RESOURCES}
    if unprovided:
        raise ValueError(
            f"probe needs {sorted(unprovided)} (varprobe.probes.NEEDS) have no entry in "
            "PROBE_RESOURCES (workflow/rules/common.smk)"
        )


_check_probe_resources()


def probe_resources(wildcards):
    """A dataset's output language and, for each resource the probe records need, the one
    configured for that language (null: none, and the probes needing it are unavailable), as
    options; then the truncation options."""
    language = dataset_setting(wildcards.dataset, "language")
    configured = PRODUCTION["probes"]
    options = [f"--language {language}"]
    for need, (key, option) in PROBE_RESOURCES.items():
        resource = configured[key].get(language) if need in PROBE_NEEDS else None
        options.append(f"{option} '{json.dumps(resource)}'")
    encoder = configured["sentence_encoders"].get(language)
    return " ".join(options) + truncation_options(language, encoder)


def truncation_options(language, encoder):
    """The token budget of every probed text and the language's tokenizer that counts it (its
    sentence encoder's unless configured), as options; none when texts are probed whole.
    """
    probes = PRODUCTION["probes"]
    budget = probes.get("max_response_tokens", PRODUCTION["max_new_tokens"])
    if budget is None:
        return ""
    tokenizer = probes.get("truncation_tokenizers", {}).get(language, encoder)
    if tokenizer is None:
        raise ValueError(
            f"production.probes: no tokenizer counts max_response_tokens for language "
            f"{language!r} (it has no sentence encoder): set "
            f"production.probes.truncation_tokenizers.{language} to a hub id, path or "
            "{package: NAME}, or max_response_tokens: null to probe whole texts"
        )
    return (
        f" --max-response-tokens {budget} "
        f"--truncation-tokenizer '{json.dumps(tokenizer)}'"
    )


onstart:
    shell(
        "varprobe check-models --models {models:q}",
        models=json.dumps([job_entry(m) for m in MODELS if m not in FINETUNED]),
    )


GPU_REFUSED = """
varprobe: SLURM refused to schedule a GPU job ({reason}).
A model whose config says `device: cuda` makes its model jobs (provo_sample,
provo_enumerate, production_sample, finetune_provo, finetune_production) request one GPU. Either
  * route GPU jobs to a partition that has GPUs: give that partition `max_gpu` in the profile's
    partitions file (`slurm-partition-config`, profiles/slurm/partitions.yaml), or
  * on a cluster without GPUs, set `gpu: 0` for those rules under `set-resources` in the
    profile (profiles/slurm/config.yaml): CUDA models then run on CPU.
"""


def explain_refused_gpu_jobs(logs):
    """After a failed run: when SLURM refused a GPU request, name the profile setting to change.

    ``logs``: the run's log file(s), as Snakemake hands them to ``onerror``.
    """
    paths = [logs] if isinstance(logs, str) else list(logs or [])
    text = "".join(
        Path(p).read_text(errors="replace") for p in paths if Path(p).is_file()
    )
    found = re.search(
        r"sbatch: error: ((?:Invalid generic resource|Requested node configuration is not "
        r"available)[^'\n]*)",
        text,
    )
    if found:
        print(GPU_REFUSED.format(reason=found.group(1).strip()), file=sys.stderr)


onerror:
    explain_refused_gpu_jobs(log)


# Fine-tuned models (workflow/rules/finetune.smk)
PRODUCTION_FINETUNED = [n for n in FINETUNED if n not in PROVO_FINETUNED]


def check_production_finetuned():
    """Fail at parse time, naming the model, on a production fine-tuning without its dataset
    or training split."""
    for model in PRODUCTION_FINETUNED:
        dataset = FINETUNED[model]["dataset"]
        if dataset not in PROD_DATASETS:
            raise ValueError(
                f"model {model!r} is fine-tuned on {dataset!r}, which is not among "
                "production.datasets"
            )
        if not FINETUNED[model].get("split"):
            raise ValueError(
                f"model {model!r}: finetune.split (the training split of {dataset!r}) is "
                "required"
            )


PROTOCOL_KEYS = (
    "base",
    "dataset",
    "train_passages",
    "validation_passages",
    "folds",
    "split",
    "validation_split",
)
"""Keys of a finetune entry that choose the data; the others are training settings."""


def training_settings(wildcards):
    """A fine-tuned model's training settings, defaults filled in, as JSON (so spelling out a
    default changes nothing)."""
    from varprobe.finetune.settings import FinetuneSettings

    tune = FINETUNED[wildcards.model]
    given = {k: v for k, v in tune.items() if k not in PROTOCOL_KEYS}
    return json.dumps(FinetuneSettings.from_config(given).to_dict(), sort_keys=True)


def fold_passages(wildcards):
    """The training passages of one fold (every fold but it) and the validation passages."""
    folds = provo_folds(wildcards.model)
    held = int(wildcards.fold)
    train = [t for k, fold in enumerate(folds, start=1) if k != held for t in fold]
    validation = passage_span(FINETUNED[wildcards.model]["validation_passages"])
    return dict(
        train=" ".join(map(str, train)), validation=" ".join(map(str, validation))
    )


def finetune_split_files(wildcards):
    """The raw files of a fine-tuned model's training (or validation) split."""
    from varprobe.data.production import raw_files

    dataset = FINETUNED[wildcards.model]["dataset"]
    return [f"{RESULTS}/raw/{dataset}/{f}" for f in raw_files(dataset, wildcards.split)]


def finetune_instances(wildcards):
    """The instances tables a production fine-tuning trains (and validates) on."""
    tune = FINETUNED[wildcards.model]
    tables = dict(train=f"{FT_DIR}/{wildcards.model}/data/{tune['split']}.parquet")
    if tune["validation_split"]:
        tables["validation"] = (
            f"{FT_DIR}/{wildcards.model}/data/{tune['validation_split']}.parquet"
        )
    return tables


FINETUNE_JOB = (
    "--settings {params.settings:q} --gpus {resources.gpu} {params.cpu_fallback} "
    "--checkpoint-out {output.checkpoint} --losses-out {output.losses} > {log} 2>&1"
)


def loss_tables(wildcards):
    """Every loss table of a fine-tuned model: one per trained fold, or its one training."""
    if wildcards.model in PROVO_FINETUNED:
        return [
            f"{FT_DIR}/{wildcards.model}/fold{k}/losses.parquet"
            for k, _ in sampled_folds(wildcards.model)
        ]
    return [f"{FT_DIR}/{wildcards.model}/losses.parquet"]


def compared_decodings(model):
    """The Provo decodings both a fine-tuned model and its base run."""
    base = FINETUNED[model]["base"]
    return [d for d in model_decodings(model) if d in model_decodings(base)]
