"""The run's explorer: every Provo context and production input in one static page."""

EXPLORER = f"{RESULTS}/explorer"
PROVO_EXPLORED = (
    dict(
        contexts=f"{PROVO}/contexts.parquet",
        responses=f"{PROVO}/responses.parquet",
        oracle=f"{PROVO}/oracle/control/tvd.parquet",
        summary=f"{PROVO}/summary.parquet",
        tvd=system_path(f"{PROVO_SYSTEM}/tvd.parquet"),
        estimates=[
            f"{PROVO}/{m}/{d}/{'distribution' if d in PLAN.enumerated else 'samples'}.parquet"
            for m, d in PLAN.provo_systems()
        ],
    )
    if "provo" in config
    else {}
)
PRODUCTION_EXPLORED = (
    dict(
        instances=[f"{PROD}/{d}/instances.parquet" for d in PLAN.datasets],
        samples=production_path(f"{PROD_SYSTEM}/samples.parquet"),
        distances=production_path(f"{PROD_SYSTEM}/distances.parquet"),
        divergences=production_path(f"{PROD_SYSTEM}/divergences.parquet"),
        adequacy=production_path(f"{PROD_SYSTEM}/adequacy.parquet"),
    )
    if "production" in config
    else {}
)


# The CLI options naming each table (a path or a list of paths), as a list of arguments:
# --provo-tvd A B ...
EXPLORER_OPTIONS = [
    argument
    for study, found in (("provo", PROVO_EXPLORED), ("production", PRODUCTION_EXPLORED))
    for key, paths in found.items()
    for argument in (
        f"--{study}-{key}",
        *(paths if isinstance(paths, list) else [paths]),
    )
]


rule explorer:
    """The static explorer page (a folder) of every Provo context and production input."""
    input:
        **{f"provo_{k}": v for k, v in PROVO_EXPLORED.items()},
        **{f"production_{k}": v for k, v in PRODUCTION_EXPLORED.items()},
    output:
        folder=directory(EXPLORER),
        # The same explorer in one file: a pure HTML report cannot hold a folder.
        single=report(f"{EXPLORER}.html", caption=CAPTION, category="Explorer"),
    params:
        caption=(
            "An explorer of every context and every input of this run, a static page (open ``index.html``; no\n"
            "server, no network). The Provo view lists every context with each system's TVD to the humans (with\n"
            "the interval an exact system's unresolved mass leaves open), the oracle control's TVD, the failure\n"
            "rate and an exact system's certified mass, sortable and filterable; choosing a context shows the\n"
            "human responses and each system's word distribution as bars (the corpus word starred, unresolved\n"
            "mass hatched) and the failures by reason. The production view lists every input of a dataset x\n"
            "model x decoding with its source and the per-probe means of H, M, C and the W1 statistics;\n"
            "choosing an input shows its references, its samples and the H, M and C distance histograms of the\n"
            "chosen probe."
        ),
        options=EXPLORER_OPTIONS,
    localrule: True
    conda:
        CONDA_ENV
    threads: job_threads("explorer")
    resources:
        **job_resources("explorer"),
    log:
        log_path("explorer", "explorer"),
    benchmark:
        benchmark_path("explorer", "explorer")
    shell:
        "varprobe explorer {params.options:q} --out {output.folder:q} --single {output.single:q} "
        "> {log:q} 2>&1"


EXPLORER_TARGETS = [EXPLORER] if PROVO_EXPLORED or PRODUCTION_EXPLORED else []
