"""What the results page shows beyond the studies' summaries, measured from their per-context
tables (varprobe.analysis.page_measures): Table 1's intervals, the measured causes of the
disagreements with the papers. One rule per table, written to its PAGE_TABLES path; an analysis
family's own are in its rules.smk."""

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
