"""Token-level calibration (Liu et al. 2024): each network model's ECE, cw-ECE, Full-ECE and
probability-weighted Full-ECE over a text corpus, for every number of bins; summary and figure."""

import json

from varprobe.config_checks import calibration_bin_counts

TC = config["analyses"]["token_calibration"]
TC_DIR = f"{RESULTS}/analyses/token_calibration"
TC_CORPUS = TC["corpus"]
TC_BINS = calibration_bin_counts(TC)


# The corpus: the configured Provo passages, or a production dataset's references.
TC_CORPUS_NAME = "provo" if TC_CORPUS == "provo" else TC_CORPUS["dataset"]
TC_CORPUS_KIND = "contexts" if TC_CORPUS == "provo" else "instances"
TC_CORPUS_TABLE = (
    f"{PROVO}/contexts.parquet"
    if TC_CORPUS == "provo"
    else f"{PROD}/{TC_CORPUS_NAME}/instances.parquet"
)


rule token_calibration:
    """One model's token-level calibration metrics at every number of bins, their RSDs, and the
    same metrics with labels drawn from the model (a perfectly calibrated model's: the floor)."""
    input:
        TC_CORPUS_TABLE,
    output:
        metrics=f"{TC_DIR}/{{model}}/metrics.parquet",
        rsd=f"{TC_DIR}/{{model}}/rsd.parquet",
        floor=f"{TC_DIR}/{{model}}/floor.parquet",
    wildcard_constraints:
        model=_alternatives(NETWORKS),
    params:
        model=model_entry,
        corpus=TC_CORPUS_NAME,
        kind=TC_CORPUS_KIND,
        bins=TC_BINS,
        max_texts=["--max-texts", TC["max_texts"]] if TC["max_texts"] else [],
        ddof=TC["rsd_ddof"],
        seed=config["seed"],
        cpu_fallback=cpu_fallback,
    threads: job_threads("token_calibration")
    resources:
        **job_resources("token_calibration"),
        gpu=uses_gpu,
        # Memory only (results do not depend on it): a resource, so changing it reruns nothing.
        rows_per_update=TC["rows_per_update"],
    conda:
        CONDA_ENV
    log:
        log_path("token_calibration", "{model}"),
    benchmark:
        benchmark_path("token_calibration", "{model}")
    shell:
        "OMP_NUM_THREADS={threads:q} varprobe token-calibration --model {params.model:q} "
        "--{params.kind:q} {input:q} --corpus {params.corpus:q} --bins {params.bins:q} "
        "{params.max_texts:q} --ddof {params.ddof:q} --rows-per-update {resources.rows_per_update:q} "
        "--seed {params.seed:q} --gpus {resources.gpu:q} {params.cpu_fallback:q} --out {output.metrics:q} "
        "--rsd-out {output.rsd:q} --floor-out {output.floor:q} > {log:q} 2>&1"


report_table(
    "token_calibration_summary",
    f"{TC_DIR}/summary.parquet",
    "Token calibration",
    "ECE, classwise ECE and Full-ECE per model, with their RSD over M",
    caption=(
        "Token-level calibration (Liu et al. 2024) of each model's full next-token distributions over the\n"
        "configured corpus, at the headline number of bins M, with each metric's relative standard deviation\n"
        "(RSD) over the M of ``rsd_bins`` (the paper's Table 1). ``full_ece`` follows eqs. (11)-(13) as\n"
        "printed, whose bin weights sum to the vocabulary size; ``full_ece_weighted`` is eq. (9)'s sampled-token\n"
        "view (each (position, token) pair weighted by its probability, weights summing to 1). Lower values are\n"
        "better calibrated; a lower RSD means the metric depends less on the arbitrary choice of M."
    ),
)


rule token_calibration_summary:
    """Every model's metrics at the headline number of bins with their RSDs, and the figure."""
    input:
        metrics=expand(f"{TC_DIR}/{{model}}/metrics.parquet", model=NETWORKS),
        rsd=expand(f"{TC_DIR}/{{model}}/rsd.parquet", model=NETWORKS),
        floors=expand(f"{TC_DIR}/{{model}}/floor.parquet", model=NETWORKS),
    output:
        summary=f"{TC_DIR}/summary.parquet",
        figure=report(
            f"{TC_DIR}/figures/metrics_by_bins.png",
            caption=CAPTION,
            category="Token calibration",
        ),
        table=f"{TC_DIR}/figures/metrics_by_bins.parquet",
    params:
        caption=(
            "Each token-level calibration metric (one panel) against the number of bins M on a log axis, one line\n"
            "per model, beside its floor (dashed, the same colour): the metric with labels drawn from the model's\n"
            "own distributions, what a perfectly calibrated model scores on as many positions, the estimator's\n"
            "finite-sample bias. A flat line means the metric is robust to the choice of M (Liu et al. 2024 report\n"
            "that Full-ECE varies much less with M than classwise ECE); the table behind the figure holds every\n"
            "point."
        ),
        bins=TC["bins"],
    conda:
        CONDA_ENV
    threads: job_threads("token_calibration_summary")
    resources:
        **job_resources("token_calibration_summary"),
    log:
        log_path("token_calibration_summary", "summary"),
    benchmark:
        benchmark_path("token_calibration_summary", "summary")
    shell:
        "varprobe token-calibration-summary --metrics {input.metrics:q} --rsd {input.rsd:q} "
        "--floors {input.floors:q} "
        "--bins {params.bins:q} --out {output.summary:q} --figure {output.figure:q} "
        "--table {output.table:q} > {log:q} 2>&1"


PAGE_TABLES["token_calibration_bins"] = f"{TC_DIR}/bins.parquet"
TC_LABELS = {"metrics": "corpus", "floor": "drawn from the model"}
"""Whose labels each of a model's token-calibration tables scores."""


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


ANALYSIS_TARGETS.extend(
    [
        # The floors: the results page reads them beside the metrics (its Full-ECE disagreement).
        *expand(f"{TC_DIR}/{{model}}/floor.parquet", model=NETWORKS),
        f"{TC_DIR}/summary.parquet",
        f"{TC_DIR}/figures/metrics_by_bins.png",
        f"{TC_DIR}/figures/metrics_by_bins.parquet",
    ]
)
