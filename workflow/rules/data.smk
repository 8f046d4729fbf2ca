"""Raw datasets: one rule fetches any of them, from its original home or the data mirror."""


rule fetch_dataset:
    """Download one raw file of a dataset, or copy it from the configured data mirror."""
    output:
        f"{RESULTS}/raw/{{dataset}}/{{file}}",
    params:
        mirror=mirror_option,
    conda:
        CONDA_ENV
    threads: job_threads("fetch_dataset")
    resources:
        **job_resources("fetch_dataset"),
    log:
        log_path("fetch", "{dataset}", "{file}"),
    benchmark:
        benchmark_path("fetch", "{dataset}", "{file}")
    shell:
        "varprobe fetch --dataset {wildcards.dataset} --file {wildcards.file} --dest {output} "
        "{params.mirror} > {log} 2>&1"
