"""The production study's targets, input functions and settings (its rules: production.smk)."""

import json

from varprobe.data.user_task import is_user_task

PROD = f"{RESULTS}/production"
PROD_SYSTEM = f"{PROD}/{{dataset}}/{{model}}/{{decoding}}"
COPY_ADEQUACY = f"{PROD}/{{dataset}}/copy_source/adequacy.parquet"
"""A dataset's copy baseline's per-input adequacy (varprobe.cli.production.COPY_FOLDER)."""


def simplification_option(wildcards):
    """``--simplification`` for a simplification task (its entry's or record's
    ``simplification``: SARI is scored), else nothing, as a list of arguments."""
    return (
        ["--simplification"]
        if PLAN.dataset_setting(wildcards.dataset, "simplification")
        else []
    )


def production_decoding_entry(wildcards):
    """A production decoding's config entry as JSON."""
    return json.dumps(PLAN.production_decodings[wildcards.decoding], sort_keys=True)


def production_checkpoint(wildcards):
    """A production model's checkpoint: its own for a model fine-tuned on a dataset, else none."""
    return (
        f"{FT_DIR}/{wildcards.model}/checkpoint" if wildcards.model in FINETUNED else []
    )


def dataset_shards(wildcards):
    """A dataset's generation shards (production.shards, at most one per input)."""
    return PLAN.production_shards(wildcards.dataset)


def sample_shards(wildcards):
    """The sample shards of a production system, in order."""
    return [
        f"{PROD}/{wildcards.dataset}/{wildcards.model}/{wildcards.decoding}/shards/{i}.parquet"
        for i in range(1, dataset_shards(wildcards) + 1)
    ]


def dataset_thresholds(wildcards):
    """The miscalibration thresholds of a dataset's probes, as JSON."""
    return json.dumps(PLAN.thresholds(wildcards.dataset))


def production_path(pattern):
    """``pattern`` (with {dataset}, {model}, {decoding}) for every production system."""
    return [
        pattern.format(dataset=d, model=m, decoding=dec)
        for d, m, dec in PLAN.production_systems()
    ]


def first_system_distances():
    """One distances table per dataset: its H rows are the same for every system."""
    first = {}
    for d, m, dec in PLAN.production_systems():
        first.setdefault(d, f"{PROD}/{d}/{m}/{dec}/distances.parquet")
    return list(first.values())


def production_targets():
    """The tables and figures of the production study."""
    return [
        f"{PROD}/summary.parquet",
        f"{PROD}/adequacy.parquet",
        f"{PROD}/beats_copy.parquet",
        *(f"{PROD}/figures/{name}.png" for name in PRODUCTION_FIGURES),
        *production_path(f"{PROD_SYSTEM}/miscalibrated.parquet"),
    ]


PRODUCTION_FIGURES = (
    "human_variability",
    "mean_differences",
    "w1_densities",
    "mean_w1",
)


def _raw_files(dataset, split):
    """The raw files ``split`` of ``dataset`` is read from: those fetched into results/raw, or
    the file an entry brings and its digest record (none for a `datasets:` source)."""
    entry = PLAN.datasets[dataset]
    if is_user_task(entry):
        if "file" not in entry:
            return []
        return [entry["file"], data_digest(entry["file"], f"production/{dataset}")]
    return [
        f"{RESULTS}/raw/{dataset}/{f}"
        for f in PLAN.dataset_records[dataset].raw_files(split)
    ]


def raw_inputs(wildcards):
    """The raw files a dataset's configured split is read from."""
    return _raw_files(
        wildcards.dataset, PLAN.dataset_setting(wildcards.dataset, "split")
    )


def example_inputs(wildcards):
    """The raw files a dataset's few-shot examples are read from."""
    return _raw_files(wildcards.dataset, PLAN.few_shot_split(wildcards.dataset))


def data_options(wildcards):
    """The command-line options of a dataset's instances table."""
    return PLAN.instances_arguments(wildcards.dataset)


def example_options(wildcards):
    """The command-line options of the instances table a dataset's few-shot examples are drawn
    from: every input of its few-shot split."""
    return PLAN.instances_arguments(wildcards.dataset, examples=True)


def few_shot_examples(wildcards):
    """The few-shot examples table of a dataset with ``few_shot``, as an input (none without)."""
    if "few_shot" not in PLAN.datasets[wildcards.dataset]:
        return []
    return f"{PROD}/{wildcards.dataset}/examples.parquet"


def few_shot_options(wildcards, input):
    """``--few-shot K --examples TABLE`` for a dataset with ``few_shot``, else nothing, as a
    list of arguments."""
    if not input.examples:
        return []
    k = PLAN.datasets[wildcards.dataset]["few_shot"]
    return ["--few-shot", str(k), "--examples", str(input.examples)]


def probe_resources(wildcards):
    """The options of a dataset's distances job (``RunPlan.probe_arguments``)."""
    return PLAN.probe_arguments(wildcards.dataset)
