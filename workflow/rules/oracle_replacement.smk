"""What do TVD differences mean? (Ilia & Aziz 2024, Sec. 5, App. E, Figs. 14-16): the mean TVD
after replacing k% of a system's per-context TVDs by oracle ones; and the per-context
model-minus-oracle TVD differences (App. C.4, Fig. 12)."""

REPLACEMENT = ANALYSES["oracle_replacement"]
REPLACEMENT_DIR = f"{RESULTS}/analyses/oracle_replacement"


rule oracle_replacement:
    """Per oracle size, seed and k: the mean TVD with k% of the model's TVDs replaced."""
    input:
        model=estimate_table,
        responses=f"{PROVO}/responses.parquet",
    output:
        curve=f"{REPLACEMENT_DIR}/{{model}}/{{decoding}}/curve.parquet",
        histograms=f"{REPLACEMENT_DIR}/{{model}}/{{decoding}}/histograms.parquet",
    params:
        kind=estimate_kind,
        seed=config["seed"],
        oracle_sizes=" ".join(map(str, REPLACEMENT["oracle_sizes"])),
        seeds=REPLACEMENT["seeds"],
        k_percent=" ".join(map(str, REPLACEMENT["k_percent"])),
        bins=REPLACEMENT["bins"],
    conda:
        CONDA_ENV
    threads: job_threads("oracle_replacement")
    resources:
        **job_resources("oracle_replacement"),
    log:
        log_path("oracle_replacement", "{model}", "{decoding}"),
    benchmark:
        benchmark_path("oracle_replacement", "{model}", "{decoding}")
    shell:
        "varprobe oracle-replacement --{params.kind} {input.model} --responses {input.responses} "
        "--seed {params.seed} --oracle-sizes {params.oracle_sizes} --seeds {params.seeds} "
        "--k-percent {params.k_percent} --bins {params.bins} --model {wildcards.model} "
        "--decoding {wildcards.decoding} --curve-out {output.curve} "
        "--histogram-out {output.histograms} > {log} 2>&1"


report_table(
    "oracle_replacement_summary",
    f"{REPLACEMENT_DIR}/summary.parquet",
    "Appendix",
    "k%-oracle replacement: mean TVD against k",
)


rule oracle_replacement_summary:
    """Replacement curves over seeds, the matching k and the histograms (Figs. 15-16)."""
    input:
        curves=system_path(f"{REPLACEMENT_DIR}/{{model}}/{{decoding}}/curve.parquet"),
        histograms=system_path(
            f"{REPLACEMENT_DIR}/{{model}}/{{decoding}}/histograms.parquet"
        ),
    output:
        summary=f"{REPLACEMENT_DIR}/summary.parquet",
        curve=report(
            f"{REPLACEMENT_DIR}/curves.png",
            caption="../report/oracle_replacement_curves.rst",
            category="Appendix",
        ),
        histogram=report(
            f"{REPLACEMENT_DIR}/histograms.png",
            caption="../report/oracle_replacement_histograms.rst",
            category="Appendix",
        ),
        table=f"{REPLACEMENT_DIR}/histograms.parquet",
    params:
        figure_k=" ".join(map(str, REPLACEMENT["figure_k"])),
    conda:
        CONDA_ENV
    threads: job_threads("oracle_replacement_summary")
    resources:
        **job_resources("oracle_replacement_summary"),
    log:
        log_path("oracle_replacement_summary", "summary"),
    benchmark:
        benchmark_path("oracle_replacement_summary", "summary")
    shell:
        "varprobe oracle-replacement-summary --curves {input.curves} "
        "--histograms {input.histograms} --figure-k {params.figure_k} "
        "--summary-out {output.summary} --table {output.table} "
        "--curve-figure {output.curve} --histogram-figure {output.histogram} > {log} 2>&1"


rule tvd_differences:
    """Per-context TVD(model, humans) - TVD(oracle 2, humans) of every system (Fig. 12)."""
    input:
        oracle=f"{PROVO}/oracle/control/tvd.parquet",
        tvd=system_path(f"{PROVO_SYSTEM}/tvd.parquet"),
    output:
        differences=f"{RESULTS}/analyses/tvd_differences/differences.parquet",
        figure=report(
            f"{RESULTS}/analyses/tvd_differences/histograms.png",
            caption="../report/tvd_differences.rst",
            category="Appendix",
        ),
        table=f"{RESULTS}/analyses/tvd_differences/histograms.parquet",
    params:
        bins=REPLACEMENT["difference_bins"],
    conda:
        CONDA_ENV
    threads: job_threads("tvd_differences")
    resources:
        **job_resources("tvd_differences"),
    log:
        log_path("tvd_differences", "figure"),
    benchmark:
        benchmark_path("tvd_differences", "figure")
    shell:
        "varprobe tvd-differences --tvd {input.tvd} --oracle {input.oracle} --bins {params.bins} "
        "--out {output.differences} --table {output.table} --figure {output.figure} > {log} 2>&1"


ANALYSIS_TARGETS.extend(
    [
        *rules.oracle_replacement_summary.output,
        *rules.tvd_differences.output,
    ]
)
