"""The subsampling experiment (Ilia & Aziz 2024, App. C.1, Fig. 11): per sampled system, the MSE
of the TVDs of subsamples of each context's draws against the full sample's."""

SAMPLE_SIZE = ANALYSES["sample_size"]
SAMPLE_SIZE_DIR = f"{RESULTS}/analyses/sample_size"
SAMPLE_SIZE_SYSTEMS = [
    (m, d) for m, d in PLAN.provo_systems() if d not in PLAN.enumerated
]


rule sample_size:
    """Per context and size: TVD to the oracles of a subsample of the draws and of them all."""
    input:
        samples=f"{PROVO_SYSTEM}/samples.parquet",
        responses=f"{PROVO}/responses.parquet",
    output:
        contexts=f"{SAMPLE_SIZE_DIR}/{{model}}/{{decoding}}/contexts.parquet",
        summary=f"{SAMPLE_SIZE_DIR}/{{model}}/{{decoding}}/summary.parquet",
    wildcard_constraints:
        decoding=_alternatives([*PLAN.sampled, "given"]),
    params:
        seed=config["seed"],
        resplits=config["provo"]["resplits"],
        sizes=SAMPLE_SIZE["sizes"],
        repeats=SAMPLE_SIZE["repeats"],
    conda:
        CONDA_ENV
    threads: job_threads("sample_size")
    resources:
        **job_resources("sample_size"),
    log:
        log_path("sample_size", "{model}", "{decoding}"),
    benchmark:
        benchmark_path("sample_size", "{model}", "{decoding}")
    shell:
        "varprobe sample-size --samples {input.samples:q} --responses {input.responses:q} "
        "--seed {params.seed:q} --resplits {params.resplits:q} --sizes {params.sizes:q} "
        "--repeats {params.repeats:q} --model {wildcards.model:q} --decoding {wildcards.decoding:q} "
        "--out {output.contexts:q} --summary-out {output.summary:q} > {log:q} 2>&1"


report_table(
    "sample_size_summary",
    f"{SAMPLE_SIZE_DIR}/summary.parquet",
    "Appendix",
    "Sample-size ablation: MSE of subsample TVDs",
    caption=(
        "Mean squared error, per sampled system and subsample size n, between the TVD to the oracles of a\n"
        "subsample of n of a context's draws and that of all N draws (Ilia & Aziz 2024, App. C.1). A small\n"
        "MSE at n means n draws per context estimate the per-context TVD about as well as N do. Sizes with\n"
        "n >= N cannot be subsampled: their MSE is NaN and ``note`` says so; ``n_without_words`` counts\n"
        "subsamples whose draws all failed (left out of the MSE); ``n_contexts_*`` count contexts, each\n"
        "once, by why they have a subsample TVD or none (``varprobe.families.sample_size.analysis.context_counts``)."
    ),
)


rule sample_size_figure:
    """Every sampled system's MSE per size and the histograms of squared errors (Fig. 11)."""
    input:
        contexts=[
            f"{SAMPLE_SIZE_DIR}/{m}/{d}/contexts.parquet"
            for m, d in SAMPLE_SIZE_SYSTEMS
        ],
        summaries=[
            f"{SAMPLE_SIZE_DIR}/{m}/{d}/summary.parquet"
            for m, d in SAMPLE_SIZE_SYSTEMS
        ],
    output:
        summary=f"{SAMPLE_SIZE_DIR}/summary.parquet",
        figure=report(
            f"{SAMPLE_SIZE_DIR}/squared_errors.png",
            caption=CAPTION,
            category="Appendix",
        ),
        table=f"{SAMPLE_SIZE_DIR}/squared_errors.parquet",
    params:
        caption=(
            "Histograms (density) of the per-context squared errors (TVD_n - TVD_N)^2 for each subsample size\n"
            "n, one line per sampled system, the MSE in the legend (paper Fig. 11). Mass concentrated near 0\n"
            "means subsamples of that size reproduce the full sample's TVD. A panel that says \"not\n"
            'subsampled" is a size at or above the number of draws per context. The numbers are in\n'
            "``squared_errors.parquet``."
        ),
        bins=SAMPLE_SIZE["bins"],
    conda:
        CONDA_ENV
    threads: job_threads("sample_size_figure")
    resources:
        **job_resources("sample_size_figure"),
    log:
        log_path("sample_size_figure", "figure"),
    benchmark:
        benchmark_path("sample_size_figure", "figure")
    shell:
        "varprobe sample-size-figure --contexts {input.contexts:q} --summaries {input.summaries:q} "
        "--bins {params.bins:q} --summary-out {output.summary:q} --table {output.table:q} "
        "--figure {output.figure:q} > {log:q} 2>&1"


PAGE_TABLES["sample_size_intervals"] = f"{SAMPLE_SIZE_DIR}/intervals.parquet"


rule sample_size_intervals:
    """Bootstrap intervals over contexts of the sample-size MSE, per system and size."""
    input:
        [f"{SAMPLE_SIZE_DIR}/{m}/{d}/contexts.parquet" for m, d in SAMPLE_SIZE_SYSTEMS],
    output:
        PAGE_TABLES["sample_size_intervals"],
    params:
        resamples=config["provo"]["bootstrap_resamples"],
        seed=config["seed"],
    conda:
        CONDA_ENV
    threads: job_threads("sample_size_intervals")
    resources:
        **job_resources("sample_size_intervals"),
    log:
        log_path("sample_size_intervals", "page"),
    benchmark:
        benchmark_path("sample_size_intervals", "page")
    shell:
        "varprobe sample-size-intervals --contexts {input:q} --resamples {params.resamples:q} "
        "--seed {params.seed:q} --out {output:q} > {log:q} 2>&1"


ANALYSIS_TARGETS.extend(rules.sample_size_figure.output)
