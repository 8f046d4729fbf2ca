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
        oracle_sizes=REPLACEMENT["oracle_sizes"],
        seeds=REPLACEMENT["seeds"],
        k_percent=REPLACEMENT["k_percent"],
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
        "varprobe oracle-replacement --{params.kind:q} {input.model:q} --responses {input.responses:q} "
        "--seed {params.seed:q} --oracle-sizes {params.oracle_sizes:q} --seeds {params.seeds:q} "
        "--k-percent {params.k_percent:q} --bins {params.bins:q} --model {wildcards.model:q} "
        "--decoding {wildcards.decoding:q} --curve-out {output.curve:q} "
        "--histogram-out {output.histograms:q} > {log:q} 2>&1"


report_table(
    "oracle_replacement_summary",
    f"{REPLACEMENT_DIR}/summary.parquet",
    "Appendix",
    "k%-oracle replacement: mean TVD and histogram overlap against k",
    caption=(
        "The k%-oracle replacement (Sec. 5, App. E): per system, oracle size (``half``: the half split\n"
        "of Fig. 14) and k, the mean TVD to an oracle after k% of the contexts' model TVDs are replaced\n"
        "by the TVD between two disjoint oracles, averaged over seeds with its spread, and ``overlap``,\n"
        "the overlap of the replaced TVDs' histogram (pooled over seeds) with the oracles' (k = 100).\n"
        "``k_match`` is the smallest k whose overlap reaches ``overlap_threshold``: where the replaced\n"
        "TVDs distribute like the oracles', as the paper judges Figs. 14-16. The slope\n"
        "(model_mean_tvd - oracle_mean_tvd) / 100 is the TVD worth one percentage point of contexts."
    ),
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
            caption=CAPTION,
            category="Appendix",
        ),
        histogram=report(
            f"{REPLACEMENT_DIR}/histograms.png",
            caption=CAPTION,
            category="Appendix",
        ),
        table=f"{REPLACEMENT_DIR}/histograms.parquet",
    params:
        # Of both figures.
        caption=(
            "*curves.png*: against k, the percentage of contexts whose model-oracle TVD is replaced by\n"
            "the oracle-oracle TVD, one column per oracle size (half split: Fig. 14; fixed sizes: Figs.\n"
            "15-16). Top: the mean TVD to oracle B over seeds with the min-max band; the dashed line and\n"
            "band are the oracles' mean TVD +- one seed standard deviation. Bottom: the overlap of the\n"
            "replaced TVDs' histogram with the oracles', the dashed line the threshold; the dotted line\n"
            "in both is the matching k, the first k whose overlap reaches it. k = 0 is the model, k = 100\n"
            "human performance.\n"
            "\n"
            "*histograms.png*: histograms (density, pooled over seeds) of the per-context TVDs after\n"
            "replacing k% of a model's TVDs to an oracle by oracle-oracle TVDs, for a few k (rows: oracle\n"
            "sizes; paper Figs. 14-16), each over the oracles' (k = 100, dashed). The k = 0 panel is the\n"
            "model. The numbers are in ``histograms.parquet``."
        ),
        figure_k=REPLACEMENT["figure_k"],
        overlap_threshold=REPLACEMENT["overlap_threshold"],
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
        "varprobe oracle-replacement-summary --curves {input.curves:q} "
        "--histograms {input.histograms:q} --figure-k {params.figure_k:q} "
        "--overlap-threshold {params.overlap_threshold:q} "
        "--summary-out {output.summary:q} --table {output.table:q} "
        "--curve-figure {output.curve:q} --histogram-figure {output.histogram:q} > {log:q} 2>&1"


rule tvd_differences:
    """Per-context TVD(model, humans) - TVD(oracle 2, humans) of every system (Fig. 12)."""
    input:
        oracle=f"{PROVO}/oracle/control/tvd.parquet",
        tvd=system_path(f"{PROVO_SYSTEM}/tvd.parquet"),
    output:
        differences=f"{RESULTS}/analyses/tvd_differences/differences.parquet",
        figure=report(
            f"{RESULTS}/analyses/tvd_differences/histograms.png",
            caption=CAPTION,
            category="Appendix",
        ),
        table=f"{RESULTS}/analyses/tvd_differences/histograms.parquet",
    params:
        caption=(
            "Histograms (density) of the per-context difference TVD(model, humans) - TVD(oracle 2, humans),\n"
            "both against all human responses, the oracle's averaged over the resplits (paper Fig. 12). Mass\n"
            "right of the dashed zero line marks contexts where the model is further from the humans than a\n"
            "half-size human sample. The per-context values are in ``differences.parquet``."
        ),
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
        "varprobe tvd-differences --tvd {input.tvd:q} --oracle {input.oracle:q} --bins {params.bins:q} "
        "--out {output.differences:q} --table {output.table:q} --figure {output.figure:q} > {log:q} 2>&1"


ANALYSIS_TARGETS.extend(
    [
        *rules.oracle_replacement_summary.output,
        *rules.tvd_differences.output,
    ]
)
