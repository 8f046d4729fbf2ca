"""The token-level calibration study (Ilia & Aziz 2024, App. D, Table 4, Fig. 13)."""

TOKEN_DIR = f"{RESULTS}/analyses/token_level/{{model}}"

report_tables(
    "token_level_summary",
    f"{TOKEN_DIR}/summary.parquet",
    "Appendix",
    "Token-level TVD and ECE of {model}, oracle 1 and oracle 2 (Table 4)",
    [{"model": m} for m in NETWORKS],
    caption=(
        "Token-level calibration (Ilia & Aziz 2024, App. D, Table 4): the model's exact next-token\n"
        "distribution against the MLE of the humans' first tokens (each response tokenised with a\n"
        "leading space). Rows: the model, oracle 1 and oracle 2 as predictors. ``expected_tvd`` is the\n"
        "mean TVD to all humans (exact over the vocabulary for the model), ``ece_human_majority`` the ECE\n"
        "of the predictor's mode with the human-majority first token as target."
    ),
)


rule token_level:
    """Exact next-token distribution vs the humans' first tokens: TVD, oracles, ECE."""
    input:
        contexts=rules.provo_data.output.contexts,
        responses=rules.provo_data.output.responses,
    output:
        tvd=f"{TOKEN_DIR}/tvd.parquet",
        summary=f"{TOKEN_DIR}/summary.parquet",
    wildcard_constraints:
        model=_alternatives(NETWORKS),
    params:
        **CONTROL_PARAMS,
        model=model_entry,
        cpu_fallback=cpu_fallback,
    threads: job_threads("token_level")
    resources:
        **job_resources("token_level"),
        gpu=uses_gpu,
    conda:
        CONDA_ENV
    log:
        log_path("token_level", "{model}"),
    benchmark:
        benchmark_path("token_level", "{model}")
    shell:
        "OMP_NUM_THREADS={threads:q} varprobe token-level --model {params.model:q} "
        "--contexts {input.contexts:q} --responses {input.responses:q} --seed {params.seed:q} "
        "--resplits {params.resplits:q} --ece-bins {params.ece_bins:q} "
        "--bootstrap {params.bootstrap:q} --gpus {resources.gpu:q} {params.cpu_fallback:q} "
        "--tvd-out {output.tvd:q} --summary-out {output.summary:q} > {log:q} 2>&1"


rule token_level_figure:
    """Histograms of per-context token-level TVD to all humans: model and oracle (Fig. 13)."""
    input:
        rules.token_level.output.tvd,
    output:
        figure=report(
            f"{TOKEN_DIR}/tvd_histogram.png",
            caption=CAPTION,
            category="Appendix",
            subcategory="token level",
        ),
        table=f"{TOKEN_DIR}/tvd_histogram.parquet",
    params:
        caption=(
            "Histograms of per-context TVD between first-token distributions and the full human one: the\n"
            "model's exact next-token distribution and oracle 2 (half of the humans) (Ilia & Aziz 2024,\n"
            "App. D, Fig. 13). Mass further right than the oracle's means the model is further from the\n"
            "humans than a human sample of half the size. The bars are in ``tvd_histogram.parquet``."
        ),
    conda:
        CONDA_ENV
    threads: job_threads("token_level_figure")
    resources:
        **job_resources("token_level_figure"),
    log:
        log_path("token_level_figure", "{model}"),
    benchmark:
        benchmark_path("token_level_figure", "{model}")
    shell:
        "varprobe tvd-histogram --series {wildcards.model:q} token_level_tvd tvd {input:q} "
        "--series 'oracle 2' token_level_tvd tvd_oracle2_human {input:q} "
        "--xlabel 'first-token TVD(·, H) per context' --figure {output.figure:q} "
        "--table {output.table:q} > {log:q} 2>&1"


ANALYSIS_TARGETS.extend(
    expand(
        f"{TOKEN_DIR}/{{name}}",
        model=NETWORKS,
        name=["summary.parquet", "tvd_histogram.png"],
    )
)
