"""Raw datasets: one rule fetches any of them, from its original home or the data mirror, and
checks it against its pinned digest (varprobe/data/sources.py); every job that reads raw files
gets the same options (raw_options, common.smk), so a copy fetched earlier is checked again
when read."""

import sys


if not config["data_verify"]:
    print(
        "varprobe: warning: data_verify is false: raw files are not checked against their "
        "pinned digests, nor against their loaders' counts (each job's log names the files)",
        file=sys.stderr,
    )


rule fetch_dataset:
    """Download one raw file of a dataset, or copy it from the configured data mirror."""
    input:
        mirror_origin,
    output:
        f"{RESULTS}/raw/{{dataset}}/{{file}}",
    params:
        options=lambda w: raw_options(w.dataset),
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
        "varprobe fetch --dataset {wildcards.dataset:q} --file {wildcards.file:q} --dest {output:q} "
        "{params.options:q} > {log:q} 2>&1"
