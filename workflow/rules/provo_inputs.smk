"""The Provo study's targets, input functions and settings (its rules: provo.smk)."""

import json

from varprobe.config_checks import figure_context_keys

SAMPLERS = [*NETWORKS, *PROVO_FINETUNED]
"""The models the Provo sampler runs (fine-tuned ones per fold)."""
CORPUS = config.get("provo", {}).get("corpus")
"""The configured cloze corpus (varprobe.data.cloze), or None: Provo."""
FIGURE_CONTEXTS = figure_context_keys(config)
"""provo.figure_contexts as keys of the contexts table (text_id:word_number): a context_id
corpus names its contexts by their id."""
PROVO_NORMS = f"{RESULTS}/raw/provo/Provo_Corpus-Predictability_Norms.csv"


def corpus_input():
    """What the next-word study's contexts are read from: Provo's norms as fetched, or the
    configured corpus's file and its digest record (none for a `datasets:` source)."""
    if CORPUS is None:
        return [PROVO_NORMS]
    if "file" not in CORPUS:
        return []
    return [CORPUS["file"], data_digest(CORPUS["file"], "provo/corpus")]


# The provo-data option naming what it reads: the norms file, or the corpus entry (JSON) as a
# param. Provo's command and params stay as they were before corpora, so that a Provo run's
# results are not redone for them.
CORPUS_OPTION = "--norms {input:q}" if CORPUS is None else "--corpus {params.corpus:q}"
CORPUS_PARAMS = {} if CORPUS is None else {"corpus": json.dumps(CORPUS, sort_keys=True)}


def samples_file(wildcards):
    """The samples CSV a samples model is ingested from: its ``samples`` file, or the file
    converted from its published system's (rule provo_published)."""
    return (
        MODELS[wildcards.model].get("samples")
        or f"{PROVO}/{wildcards.model}/given/published.csv"
    )


def samples_digest(wildcards):
    """The digest record of a samples file the config brings (none for a published system's:
    its files are pinned)."""
    entry = MODELS[wildcards.model]
    return (
        data_digest(entry["samples"], f"models/{wildcards.model}")
        if "samples" in entry
        else []
    )


def published_files(wildcards):
    """The fetched files of a published model's system."""
    from varprobe.data.published_generations import DATASET, system

    return [
        f"{RESULTS}/raw/{DATASET}/{file}"
        for file in system(PUBLISHED[wildcards.model]).files
    ]


def decoding_entry(wildcards):
    """The decoding's config entry as JSON."""
    return json.dumps(PLAN.provo_decodings[wildcards.decoding], sort_keys=True)


def decoding_draws(wildcards):
    """The draws per context of a sampled decoding (``RunPlan.draws``)."""
    return PLAN.draws(wildcards.decoding)


def fold_checkpoint(model, fold):
    """The checkpoint folder of one fold of a Provo fine-tuned model."""
    return f"{FT_DIR}/{model}/fold{fold}/checkpoint"


def sample_checkpoint(wildcards):
    """A sampling shard's checkpoint: its fold's for a fine-tuned model, else none."""
    if wildcards.model not in PROVO_FINETUNED:
        return []
    fold, _ = PLAN.sampled_folds(wildcards.model)[int(wildcards.shard) - 1]
    return fold_checkpoint(wildcards.model, fold)


def sample_scope(wildcards):
    """The options that place a sampling shard, as a list of arguments: its fold's checkpoint
    and held-out passages for a fine-tuned model, else none (the shard's share of the
    contexts)."""
    if wildcards.model not in PROVO_FINETUNED:
        return []
    fold, texts = PLAN.sampled_folds(wildcards.model)[int(wildcards.shard) - 1]
    return ["--checkpoint", fold_checkpoint(wildcards.model, fold), "--texts", *texts]


def provo_targets():
    """The tables and figures of the Provo study; the word bars (Fig. 1) only where
    ``provo.figure_contexts`` names contexts to draw; the authors' protocol table only for the
    Provo norms (not another cloze corpus); each published system's values under the authors'
    protocol."""
    bars = config["provo"]["figure_contexts"]
    return [
        f"{PROVO}/summary.parquet",
        *([f"{PROVO}/authors_protocol.parquet"] if CORPUS is None else []),
        *(f"{PROVO}/{model}/given/authors.parquet" for model in PUBLISHED),
        f"{PROVO}/figures/tvd_density.png",
        *(system_path(f"{PROVO_SYSTEM}/bars.png") if bars else []),
        *([f"{PROVO}/figures/model_size.png"] if len(PLAN.sized_models) >= 2 else []),
    ]
