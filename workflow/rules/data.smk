"""Raw datasets: one rule fetches any of them, from its original home or the data mirror."""


rule fetch_dataset:
    """Download one raw file of a dataset, or copy it from the configured data mirror."""
    output:
        f"{RESULTS}/raw/{{dataset}}/{{file}}",
    params:
        mirror=f"--mirror {config['data_mirror']}" if config["data_mirror"] else "",
    log:
        log_path("fetch", "{dataset}", "{file}"),
    shell:
        "varprobe fetch --dataset {wildcards.dataset} --file {wildcards.file} --dest {output} "
        "{params.mirror} > {log} 2>&1"
