"""The biased model estimate of next-word distributions (Ilia & Aziz 2024, App. A, Table 2, Fig. 5)."""

BIASED = ANALYSES["biased_estimator"]  # its defaults filled in by the schema
if BIASED["samples_decoding"] not in PLAN.sampled:
    raise ValueError(
        f"analyses.biased_estimator.samples_decoding: {BIASED['samples_decoding']!r} is not "
        f"a sampled decoding of provo.decodings (those are: {', '.join(PLAN.sampled) or 'none'})"
    )
BIASED_DIR = f"{RESULTS}/analyses/biased_estimator/{{model}}"
BIASED_SYSTEM = f"{PROVO}/{{model}}/{BIASED['samples_decoding']}/system.parquet"


rule biased_estimator:
    """One shard of the contexts (provo.shards, whole passages): the greedy and nucleus draws,
    the support words and their exact, renormalised probabilities."""
    input:
        contexts=rules.provo_data.output.contexts,
        responses=rules.provo_data.output.responses,
        samples=f"{PROVO}/{{model}}/{BIASED['samples_decoding']}/samples.parquet",
    output:
        f"{BIASED_DIR}/shards/{{shard}}.parquet",
    wildcard_constraints:
        model=_alternatives(NETWORKS),
    params:
        model=model_entry,
        seed=config["seed"],
        shards=PLAN.provo_shards,
        nucleus=BIASED["nucleus"],
        nucleus_samples=BIASED["nucleus_samples"],
        max_tokens=config["provo"]["max_tokens"],
        cpu_fallback=cpu_fallback,
    threads: job_threads("biased_estimator")
    resources:
        **job_resources("biased_estimator"),
        gpu=uses_gpu,
        # Speed and memory only: resources, not params, so changing them reruns nothing.
        batch_size=config["provo"]["batch_size"],
        score_batch=BIASED["score_batch"],
    conda:
        CONDA_ENV
    log:
        log_path("biased_estimator", "{model}", "{shard}"),
    benchmark:
        benchmark_path("biased_estimator", "{model}", "{shard}")
    shell:
        "OMP_NUM_THREADS={threads:q} varprobe biased-estimator --model {params.model:q} "
        "--contexts {input.contexts:q} --responses {input.responses:q} --seed {params.seed:q} "
        "--samples {input.samples:q} --nucleus {params.nucleus:q} "
        "--nucleus-samples {params.nucleus_samples:q} --max-tokens {params.max_tokens:q} "
        "--batch-size {resources.batch_size:q} --score-batch {resources.score_batch:q} "
        "--shard {wildcards.shard:q} --shards {params.shards:q} "
        "--gpus {resources.gpu:q} {params.cpu_fallback:q} --out {output:q} > {log:q} 2>&1"


rule biased_estimator_merge:
    """The support shards, in order -> the support, the per-context TVD and the system row."""
    input:
        contexts=rules.provo_data.output.contexts,
        responses=rules.provo_data.output.responses,
        shards=expand(
            f"{BIASED_DIR}/shards/{{shard}}.parquet",
            shard=range(1, PLAN.provo_shards + 1),
            allow_missing=True,
        ),
    output:
        support=f"{BIASED_DIR}/support.parquet",
        tvd=f"{BIASED_DIR}/tvd.parquet",
        system=f"{BIASED_DIR}/system.parquet",
    params:
        **CONTROL_PARAMS,
    threads: job_threads("biased_estimator_merge")
    resources:
        **job_resources("biased_estimator_merge"),
    conda:
        CONDA_ENV
    log:
        log_path("biased_estimator_merge", "{model}"),
    benchmark:
        benchmark_path("biased_estimator_merge", "{model}")
    shell:
        f"varprobe biased-estimator-merge --shards {{input.shards:q}} {CONTROL_ARGS} "
        "--support-out {output.support:q} > {log:q} 2>&1"


report_tables(
    "biased_estimator_summary",
    f"{BIASED_DIR}/summary.parquet",
    "Appendix",
    "Biased model estimate of {model} beside its samples and the oracle (Table 2)",
    [{"model": m} for m in NETWORKS],
    caption=(
        "ECE and expected TVD of the biased model estimate (Ilia & Aziz 2024, App. A, Table 2): each\n"
        "word of a support (sampled, greedy, nucleus, human and corpus words) gets the model's exact\n"
        "probability of being the next complete word, renormalised over the support. The row with\n"
        "decoding ``biased`` sits beside the sampled system it extends and the oracle control (oracle 2\n"
        "predicting). Compare ``expected_tvd`` and the ``ece_*`` columns across the rows: a biased\n"
        "estimate that forces mass onto the human words need not be closer to the humans."
    ),
)


rule biased_estimator_summary:
    """The biased estimate beside the sampled system and the oracle control (Table 2)."""
    input:
        rules.provo_oracle.output.system,
        BIASED_SYSTEM,
        rules.biased_estimator_merge.output.system,
    output:
        f"{BIASED_DIR}/summary.parquet",
    conda:
        CONDA_ENV
    threads: job_threads("biased_estimator_summary")
    resources:
        **job_resources("biased_estimator_summary"),
    log:
        log_path("biased_estimator_summary", "{model}"),
    benchmark:
        benchmark_path("biased_estimator_summary", "{model}")
    shell:
        "varprobe provo-summary --systems {input:q} --out {output:q} > {log:q} 2>&1"


rule biased_estimator_figure:
    """Histograms of per-context TVD to all humans: biased estimate and oracle (Fig. 5)."""
    input:
        model=rules.biased_estimator_merge.output.tvd,
        oracle=rules.provo_oracle.output.tvd,
    output:
        figure=report(
            f"{BIASED_DIR}/tvd_histogram.png",
            caption=CAPTION,
            category="Appendix",
            subcategory="biased model estimate",
        ),
        table=f"{BIASED_DIR}/tvd_histogram.parquet",
    params:
        caption=(
            "Histograms of per-context TVD to the full human distribution for the biased model estimate and\n"
            "for oracle 2 (half of the humans) (Ilia & Aziz 2024, App. A, Fig. 5). Mass further right than\n"
            "the oracle's means the estimate is further from the humans than a human sample of half the\n"
            "size. The bars are in ``tvd_histogram.parquet``."
        ),
        series=lambda w: f"{w.model} (biased)",
    conda:
        CONDA_ENV
    threads: job_threads("biased_estimator_figure")
    resources:
        **job_resources("biased_estimator_figure"),
    log:
        log_path("biased_estimator_figure", "{model}"),
    benchmark:
        benchmark_path("biased_estimator_figure", "{model}")
    shell:
        "varprobe tvd-histogram --series {params.series:q} provo_tvd tvd {input.model:q} "
        "--series 'oracle 2' provo_tvd tvd {input.oracle:q} "
        "--xlabel 'TVD(·, H) per context' --figure {output.figure:q} "
        "--table {output.table:q} > {log:q} 2>&1"


ANALYSIS_TARGETS.extend(
    expand(
        f"{BIASED_DIR}/{{name}}",
        model=NETWORKS,
        name=["summary.parquet", "tvd_histogram.png"],
    )
)
