"""Raw datasets: one rule fetches any of them, from its original home or the data mirror, and
checks it against its pinned digest (varprobe/data/sources.py); every job that reads raw files
gets the same options (raw_options), so a copy fetched earlier is checked again when read."""


if not config["data_verify"]:
    print(
        "varprobe: warning: data_verify is false: raw files are not checked against their "
        "pinned digests, nor against their loaders' counts (each job's log names the files)",
        file=sys.stderr,
    )


def dataset_mirror(dataset):
    """The data mirror of a dataset's raw files: its own ``data_mirror`` entry, else the
    top-level one (None: download, or ``$VARPROBE_DATA_MIRROR``)."""
    return PROD_DATASETS.get(dataset, {}).get("data_mirror") or config["data_mirror"]


def raw_options(dataset):
    """The options of every job that fetches or reads ``dataset``'s raw files: ``--mirror DIR``
    and, when ``data_verify`` is false, ``--allow-unverified``."""
    mirror = dataset_mirror(dataset)
    options = [f"--mirror {shlex.quote(mirror)}"] if mirror else []
    if not config["data_verify"]:
        options.append("--allow-unverified")
    return " ".join(options)


def mirror_origin(wildcards):
    """The mirror file a raw file is copied from (none for a download), as an input: a mirror
    file fixed or replaced after an earlier fetch is newer than the copy, which is fetched again."""
    from varprobe.data.sources import resolve_mirror, source_of

    mirror = resolve_mirror(dataset_mirror(wildcards.dataset))
    if mirror is None:
        return []
    origin = mirror / source_of(wildcards.dataset, wildcards.file).mirror_path
    return [str(origin)] if origin.is_file() else []


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
        "varprobe fetch --dataset {wildcards.dataset} --file {wildcards.file} --dest {output} "
        "{params.options} > {log} 2>&1"
