"""Fine-tuned models: checkpoints (GPU-tagged, like sampling) that the sampling rules load over
their base model's weights; loss curves (Ilia & Aziz 2024, Fig. 18) and, for the Provo protocol,
the fine-tuned against the pretrained model's TVD on the held-out contexts (Fig. 17). Input
functions and settings: finetune_inputs.smk."""


include: "finetune_inputs.smk"


rule finetune_provo:
    """Fine-tune on the Provo passages of every fold but one (Ilia & Aziz 2024, App. F)."""
    input:
        norms=f"{RESULTS}/raw/provo/Provo_Corpus-Predictability_Norms.csv",
    output:
        checkpoint=directory(f"{FT_DIR}/{{model}}/fold{{fold}}/checkpoint"),
        losses=f"{FT_DIR}/{{model}}/fold{{fold}}/losses.parquet",
    wildcard_constraints:
        model=_alternatives(PROVO_FINETUNED),
        fold=r"[1-9][0-9]*",
    params:
        model=model_entry,
        settings=training_settings,
        passages=fold_passages,
        cpu_fallback=cpu_fallback,
        raw=raw_options("provo"),
    # Its fine-tuned model's sampling and analyses wait for it: started early.
    priority: 40
    threads: job_threads("finetune_provo")
    resources:
        **job_resources("finetune_provo"),
        gpu=uses_gpu,
    conda:
        CONDA_ENV
    log:
        log_path("finetune_provo", "{model}", "{fold}"),
    benchmark:
        benchmark_path("finetune_provo", "{model}", "{fold}")
    shell:
        "OMP_NUM_THREADS={threads:q} varprobe finetune-provo --model {params.model:q} "
        "--norms {input.norms:q} {params.raw:q} --fold {wildcards.fold:q} "
        "--train-passages {params.passages[train]:q} "
        f"--validation-passages {{params.passages[validation]:q}} {FINETUNE_JOB}"


rule finetune_data:
    """A production dataset's training or validation split -> its instances table."""
    input:
        finetune_split_files,
    output:
        f"{FT_DIR}/{{model}}/data/{{split}}.parquet",
    wildcard_constraints:
        model=_alternatives(PRODUCTION_FINETUNED),
    params:
        dataset=lambda w: FINETUNED[w.model]["dataset"],
        raw_dir=lambda w: f"{RESULTS}/raw/{FINETUNED[w.model]['dataset']}",
        raw=lambda w: raw_options(FINETUNED[w.model]["dataset"]),
    threads: job_threads("finetune_data")
    resources:
        **job_resources("finetune_data"),
    conda:
        CONDA_ENV
    log:
        log_path("finetune_data", "{model}", "{split}"),
    benchmark:
        benchmark_path("finetune_data", "{model}", "{split}")
    shell:
        "varprobe production-data --dataset {params.dataset:q} --raw-dir {params.raw_dir:q} "
        "--split {wildcards.split:q} {params.raw:q} --out {output:q} > {log:q} 2>&1"


rule finetune_production:
    """Fine-tune on a production dataset's training split: prompt(source) -> each reference."""
    input:
        unpack(finetune_instances),
    output:
        checkpoint=directory(f"{FT_DIR}/{{model}}/checkpoint"),
        losses=f"{FT_DIR}/{{model}}/losses.parquet",
    wildcard_constraints:
        model=_alternatives(PRODUCTION_FINETUNED),
    params:
        model=model_entry,
        settings=training_settings,
        prompt=lambda w: PLAN.datasets[FINETUNED[w.model]["dataset"]]["prompt"],
        chat="--chat" if PLAN.production.get("chat_template") else "--no-chat",
        validation=lambda w, input: (
            ["--validation-instances", input.validation]
            if "validation" in input.keys()
            else []
        ),
        cpu_fallback=cpu_fallback,
    threads: job_threads("finetune_production")
    resources:
        **job_resources("finetune_production"),
        gpu=uses_gpu,
    conda:
        CONDA_ENV
    log:
        log_path("finetune_production", "{model}"),
    benchmark:
        benchmark_path("finetune_production", "{model}")
    shell:
        "OMP_NUM_THREADS={threads:q} varprobe finetune-production --model {params.model:q} "
        "--instances {input.train:q} {params.validation:q} --prompt {params.prompt:q} "
        f"{{params.chat:q}} {FINETUNE_JOB}"


rule finetune_figure:
    """Training and validation loss per epoch, one panel per fold (Ilia & Aziz 2024, Fig. 18)."""
    input:
        loss_tables,
    output:
        figure=report(
            f"{FT_DIR}/{{model}}/figures/losses.png",
            caption=CAPTION,
            category="Fine-tuning",
            subcategory="{model}",
        ),
        table=f"{FT_DIR}/{{model}}/figures/losses.parquet",
    params:
        caption=(
            "Training and validation loss (mean cross-entropy per token, nats) of a fine-tuned model per\n"
            "epoch; epoch 0 is the pretrained model before any update. For the Provo protocol (Ilia & Aziz\n"
            "2024, App. F, Fig. 18) one panel per fold: trained on the other folds' passages, validated on the\n"
            "validation passages."
        ),
    threads: job_threads("finetune_figure")
    resources:
        **job_resources("finetune_figure"),
    conda:
        CONDA_ENV
    log:
        log_path("finetune_figure", "{model}"),
    benchmark:
        benchmark_path("finetune_figure", "{model}")
    shell:
        "varprobe finetune-figure --losses {input:q} --figure {output.figure:q} "
        "--table {output.table:q} > {log:q} 2>&1"


rule finetune_comparison:
    """Per held-out context, the TVD to the humans of the fine-tuned and of the pretrained
    model (Ilia & Aziz 2024, Fig. 17), and their summary."""
    input:
        finetuned=lambda w: expand(
            f"{PROVO}/{w.model}/{{decoding}}/tvd.parquet",
            decoding=PLAN.compared_decodings(w.model),
        ),
        base=lambda w: expand(
            f"{PROVO}/{FINETUNED[w.model]['base']}/{{decoding}}/tvd.parquet",
            decoding=PLAN.compared_decodings(w.model),
        ),
    output:
        contexts=f"{FT_DIR}/{{model}}/comparison/contexts.parquet",
        summary=f"{FT_DIR}/{{model}}/comparison/summary.parquet",
        figure=report(
            f"{FT_DIR}/{{model}}/figures/tvd.png",
            caption=CAPTION,
            category="Fine-tuning",
            subcategory="{model}",
        ),
    wildcard_constraints:
        model=_alternatives(PROVO_FINETUNED),
    params:
        caption=(
            "TVD between the human next-word distribution and the model's, per held-out Provo context, for\n"
            "the fine-tuned model (each context sampled by the fold model that did not train on its passage)\n"
            "and for the pretrained model it was fine-tuned from (Ilia & Aziz 2024, Fig. 17)."
        ),
        base=lambda w: FINETUNED[w.model]["base"],
        decodings=lambda w: PLAN.compared_decodings(w.model),
        seed=config["seed"],
        bootstrap=lambda w: config["provo"]["bootstrap_resamples"],  # Provo fine-tunings only
    threads: job_threads("finetune_comparison")
    resources:
        **job_resources("finetune_comparison"),
    conda:
        CONDA_ENV
    log:
        log_path("finetune_comparison", "{model}"),
    benchmark:
        benchmark_path("finetune_comparison", "{model}")
    shell:
        "varprobe finetune-comparison --model {wildcards.model:q} --base {params.base:q} "
        "--decodings {params.decodings:q} --finetuned {input.finetuned:q} --pretrained {input.base:q} "
        "--seed {params.seed:q} --bootstrap {params.bootstrap:q} --contexts-out {output.contexts:q} "
        "--summary-out {output.summary:q} --figure {output.figure:q} > {log:q} 2>&1"


FINETUNE_TARGETS.extend(f"{FT_DIR}/{m}/figures/losses.png" for m in FINETUNED)
report_tables(
    "finetune_losses",
    f"{FT_DIR}/{{model}}/figures/losses.parquet",
    "Fine-tuning",
    "Training and validation loss of {model}",
    [{"model": m} for m in FINETUNED],
    caption=(
        "Training and validation loss (mean cross-entropy per token, nats) of a fine-tuned model per\n"
        "epoch; epoch 0 is the pretrained model before any update. For the Provo protocol (Ilia & Aziz\n"
        "2024, App. F, Fig. 18) one panel per fold: trained on the other folds' passages, validated on the\n"
        "validation passages."
    ),
)
COMPARED = [m for m in PROVO_FINETUNED if PLAN.compared_decodings(m)]
FINETUNE_TARGETS.extend(f"{FT_DIR}/{m}/figures/tvd.png" for m in COMPARED)
report_tables(
    "finetune_comparison",
    f"{FT_DIR}/{{model}}/comparison/summary.parquet",
    "Fine-tuning",
    "Fine-tuned against pretrained model: {model}",
    [{"model": m} for m in COMPARED],
    caption=(
        "Fine-tuned against pretrained model on the held-out Provo contexts, per decoding: the number of\n"
        "contexts both models have words for, each one's mean TVD to the humans, the mean paired\n"
        "difference (fine-tuned minus pretrained) with a bootstrap 95% interval, and the share of contexts\n"
        "where the fine-tuned model is closer to the humans."
    ),
)
