"""The fine-tuned models' targets, input functions and settings (their rules: finetune.smk)."""

import json

FINETUNE_TARGETS = []
"""The loss figures and comparisons of the fine-tuned models."""
PRODUCTION_FINETUNED = [n for n in FINETUNED if n not in PROVO_FINETUNED]


def training_settings(wildcards):
    """A fine-tuned model's training settings as JSON (``RunPlan.training_settings``)."""
    return json.dumps(PLAN.training_settings(wildcards.model), sort_keys=True)


def fold_passages(wildcards):
    """The training and validation passages of one fold (``RunPlan.fold_passages``)."""
    return PLAN.fold_passages(wildcards.model, int(wildcards.fold))


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
