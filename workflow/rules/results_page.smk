"""The run's results page: every study's tables and figures, the papers' tables with their
values beside ours, the config, commit, machine and stage times, through one template
(varprobe.results_page). Copy results/docs/ to docs/ to publish a run's page."""

import json


STUDY_TARGETS = [
    *(provo_targets() if "provo" in config else []),
    *(production_targets() if "production" in config else []),
    *(FINETUNE_TARGETS if FINETUNED else []),
    *ANALYSIS_TARGETS,
]
"""Every table and figure of the configured studies."""

RESULTS_PAGE = f"{RESULTS}/docs/results.md"


rule results_page:
    """Write the results page after every study's targets (its stage times read their
    benchmark files)."""
    input:
        targets=STUDY_TARGETS,
        tables=[entry["table"] for entry in REPORT_TABLES.values()],
        measured=page_table_paths(),
    output:
        page=RESULTS_PAGE,
        appendix=f"{RESULTS}/docs/results-appendix.md",  # beside the page: varprobe results-page writes both
        figures=directory(f"{RESULTS}/docs/figures"),
    params:
        # The validated config (the schema's defaults applied): the page reads its settings
        # there alone; a changed setting rerenders it (seconds: it reads tables only). The
        # files are shown as written; the checkout, not its commit: a new commit changes no
        # table, so it must not rerun the page.
        config=lambda w: json.dumps(config, sort_keys=True),
        configfiles=CONFIG_FILES,
        workflow_dir=workflow.basedir,
        # a function: the registry's titles may hold braces, which a plain string would expand
        tables=lambda w: json.dumps(
            [dict(name=name, **entry) for name, entry in REPORT_TABLES.items()]
        ),
        figures=[t for t in STUDY_TARGETS if t.endswith(".png")],
        not_run=json.dumps({**NOT_RUN, **NOT_FITTED}, sort_keys=True),
        measured=lambda w: json.dumps(PAGE_TABLES, sort_keys=True),
    localrule: True
    conda:
        CONDA_ENV
    threads: job_threads("results_page")
    resources:
        **job_resources("results_page"),
    log:
        log_path("results_page", "results"),
    benchmark:
        benchmark_path("results_page", "results")
    shell:
        "varprobe results-page --config {params.config:q} "
        "--configfiles {params.configfiles:q} --measured {params.measured:q} "
        "--workflow-dir {params.workflow_dir:q} "
        "--tables {params.tables:q} --figures {params.figures:q} "
        f"--results {RESULTS} --benchmarks {RESULTS}/benchmarks "
        "--figures-dir {output.figures:q} --not-run {params.not_run:q} "
        "--out {output.page:q} > {log:q} 2>&1"
