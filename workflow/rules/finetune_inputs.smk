"""The fine-tuned models' targets, input functions and settings (their rules: finetune.smk)."""

import json

from varprobe.run_plan import passage_span

FINETUNE_TARGETS = []
"""The loss figures and comparisons of the fine-tuned models."""
PRODUCTION_FINETUNED = [n for n in FINETUNED if n not in PROVO_FINETUNED]


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
    from varprobe.finetune.folds import training_ids

    tune = FINETUNED[wildcards.model]
    train = training_ids(
        passage_span(tune["train_passages"]), tune["folds"], int(wildcards.fold)
    )
    validation = passage_span(tune["validation_passages"])
    return dict(train=train, validation=validation)


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
    "--settings {params.settings:q} --gpus {resources.gpu:q} {params.cpu_fallback:q} "
    "--checkpoint-out {output.checkpoint:q} --losses-out {output.losses:q} > {log:q} 2>&1"
)


def loss_tables(wildcards):
    """Every loss table of a fine-tuned model: one per trained fold, or its one training."""
    if wildcards.model in PROVO_FINETUNED:
        return [
            f"{FT_DIR}/{wildcards.model}/fold{k}/losses.parquet"
            for k, _ in PLAN.sampled_folds(wildcards.model)
        ]
    return [f"{FT_DIR}/{wildcards.model}/losses.parquet"]


def compared_decodings(model):
    """The Provo decodings both a fine-tuned model and its base run."""
    base = FINETUNED[model]["base"]
    return [d for d in PLAN.model_decodings(model) if d in PLAN.model_decodings(base)]
