"""What the results page shows beyond the studies' summaries, measured from their per-context
tables (varprobe.analysis.page_measures): Table 1's intervals, the measured causes of the
disagreements with the papers. One rule per table, written to its PAGE_TABLES path."""

import json


include: "page_inputs.smk"


if "provo" in config:

    rule provo_intervals:
        """Table 1's bootstrap intervals of every system (the summaries' means lack some)."""
        input:
            system_path(f"{PROVO_SYSTEM}/tvd.parquet"),
            rules.provo_oracle.output.tvd,
        output:
            PAGE_TABLES["provo_intervals"],
        params:
            systems=lambda w: system_tables(PAGE_SYSTEMS, f"{PROVO_SYSTEM}/tvd.parquet"),
            bins=config["provo"]["ece_bins"],
            resamples=config["provo"]["bootstrap_resamples"],
            seed=config["seed"],
        conda:
            CONDA_ENV
        threads: job_threads("provo_intervals")
        resources:
            **job_resources("provo_intervals"),
        log:
            log_path("provo_intervals", "page"),
        benchmark:
            benchmark_path("provo_intervals", "page")
        shell:
            "varprobe provo-intervals --systems {params.systems:q} --bins {params.bins:q} "
            "--resamples {params.resamples:q} --seed {params.seed:q} --out {output:q} > {log:q} 2>&1"

    rule provo_failures:
        """Every sampled system's failed draws by reason, read under the paper's protocol."""
        input:
            [f"{PROVO}/{m}/{d}/samples.parquet" for m, d in SAMPLED_SYSTEMS],
        output:
            PAGE_TABLES["provo_failures"],
        params:
            systems=lambda w: system_tables(
                SAMPLED_SYSTEMS, f"{PROVO_SYSTEM}/samples.parquet"
            ),
        conda:
            CONDA_ENV
        threads: job_threads("provo_failures")
        resources:
            **job_resources("provo_failures"),
        log:
            log_path("provo_failures", "page"),
        benchmark:
            benchmark_path("provo_failures", "page")
        shell:
            "varprobe provo-failures --systems {params.systems:q} --out {output:q} > {log:q} 2>&1"

    rule provo_oracle_measure:
        """The oracles' mean TVDs per resplit, or the human row's ECE under two tie-breakings."""
        input:
            contexts=rules.provo_data.output.contexts,
            responses=rules.provo_data.output.responses,
        output:
            f"{PROVO}/page/{{measure}}.parquet",
        wildcard_constraints:
            measure="oracle_splits|human_ties",
        params:
            command=lambda w: f"provo-{w.measure.replace('_', '-')}",
            seed=config["seed"],
            resplits=config["provo"]["resplits"],
            bins=config["provo"]["ece_bins"],
            resamples=config["provo"]["bootstrap_resamples"],
        conda:
            CONDA_ENV
        threads: job_threads("provo_oracle_measure")
        resources:
            **job_resources("provo_oracle_measure"),
        log:
            log_path("provo_oracle_measure", "{measure}"),
        benchmark:
            benchmark_path("provo_oracle_measure", "{measure}")
        shell:
            "varprobe {params.command:q} --contexts {input.contexts:q} "
            "--responses {input.responses:q} --resplits {params.resplits:q} "
            "--bins {params.bins:q} --resamples {params.resamples:q} --seed {params.seed:q} "
            "--out {output:q} > {log:q} 2>&1"


if "regression" in ANALYSES:
    CODED_MODEL, CODED_DECODING = PLAN.provo_systems()[0]
    CODED_KIND = "distribution" if CODED_DECODING in PLAN.enumerated else "samples"

    rule regression_codings:
        """The first system's ARD fit under each coding, ours and the authors' protocol (Table
        3's disagreement)."""
        input:
            tvd=f"{PROVO}/{CODED_MODEL}/{CODED_DECODING}/tvd.parquet",
            contexts=f"{PROVO}/contexts.parquet",
            responses=f"{PROVO}/responses.parquet",
            model=f"{PROVO}/{CODED_MODEL}/{CODED_DECODING}/{CODED_KIND}.parquet",
        output:
            PAGE_TABLES["regression_codings"],
        params:
            model=CODED_MODEL,
            decoding=CODED_DECODING,
            kind=CODED_KIND,
        conda:
            CONDA_ENV
        threads: job_threads("regression_codings")
        resources:
            **job_resources("regression_codings"),
        log:
            log_path("regression_codings", "page"),
        benchmark:
            benchmark_path("regression_codings", "page")
        shell:
            "varprobe regression-codings --tvd {input.tvd:q} --contexts {input.contexts:q} "
            "--responses {input.responses:q} --{params.kind:q} {input.model:q} "
            "--model {params.model:q} --decoding {params.decoding:q} --out {output:q} "
            "> {log:q} 2>&1"


if "sample_size" in ANALYSES:

    rule sample_size_intervals:
        """Bootstrap intervals over contexts of the sample-size MSE, per system and size."""
        input:
            [
                f"{SAMPLE_SIZE_DIR}/{m}/{d}/contexts.parquet"
                for m, d in SAMPLE_SIZE_SYSTEMS
            ],
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


if "token_calibration" in ANALYSES:

    rule token_calibration_bins:
        """Each token-calibration metric at every bin count, on the corpus's labels and on
        labels drawn from the model (Full-ECE's disagreement)."""
        input:
            [f"{TC_DIR}/{m}/{k}.parquet" for k in TC_LABELS for m in NETWORKS],
        output:
            PAGE_TABLES["token_calibration_bins"],
        params:
            tables=lambda w: json.dumps(
                [
                    {"table": f"{TC_DIR}/{m}/{k}.parquet", "labels": labels}
                    for k, labels in TC_LABELS.items()
                    for m in NETWORKS
                ]
            ),
        conda:
            CONDA_ENV
        threads: job_threads("token_calibration_bins")
        resources:
            **job_resources("token_calibration_bins"),
        log:
            log_path("token_calibration_bins", "page"),
        benchmark:
            benchmark_path("token_calibration_bins", "page")
        shell:
            "varprobe token-calibration-bins --tables {params.tables:q} --out {output:q} "
            "> {log:q} 2>&1"


if "production" in config:

    rule production_reading:
        """Giulianelli et al. read per task: the signs of mean M - H on the main probes, W1(M, H)
        against the footnotes' thresholds, or each task's own miscalibration rule (Sec. 7).
        """
        input:
            summary=rules.production_summary.output,
            divergences=production_path(f"{PROD_SYSTEM}/divergences.parquet"),
        output:
            f"{PROD}/page/{{reading}}.parquet",
        wildcard_constraints:
            reading="|".join(PRODUCTION_READINGS),
        params:
            decoding=PLAN.production["figures"]["decoding"],
        conda:
            CONDA_ENV
        threads: job_threads("production_reading")
        resources:
            **job_resources("production_reading"),
        log:
            log_path("production_reading", "{reading}"),
        benchmark:
            benchmark_path("production_reading", "{reading}")
        shell:
            "varprobe production-{wildcards.reading} --summary {input.summary:q} "
            "--divergences {input.divergences:q} --decoding {params.decoding:q} "
            "--out {output:q} > {log:q} 2>&1"
