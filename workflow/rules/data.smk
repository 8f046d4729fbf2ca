"""Raw datasets: one rule fetches any of them, from its original home or the data mirror."""


rule fetch_dataset:
    """Download a dataset's raw file, or copy it from the configured data mirror."""
    output:
        f"{RESULTS}/raw/{{dataset}}.csv",
    params:
        mirror=f"--mirror {config['data_mirror']}" if config["data_mirror"] else "",
    conda:
        CONDA_ENV
    threads: job_threads("fetch_dataset")
    resources:
        **job_resources("fetch_dataset"),
    log:
        log_path("fetch", "{dataset}"),
    benchmark:
        benchmark_path("fetch", "{dataset}")
    shell:
        "varprobe fetch --dataset {wildcards.dataset} --dest {output} {params.mirror} > {log} 2>&1"
