"""The run record, results/run.json (varprobe.run_record): the config without its secrets, the
commit, package versions, models, seeds, data digests, stage times and the headline numbers with
their intervals, written after the results page. Every job's summary tables carry the same
provenance in their metadata: the workflow hands it to them here (varprobe.tables.PROVENANCE_ENV)."""

import json
import os

from varprobe.run_record import provenance
from varprobe.tables import PROVENANCE_ENV

# Set when the workflow is read, by the main process and by every job's own (a cluster job's
# too): the jobs' commands inherit it. Metadata only: no table's numbers, and no job's
# inputs or params, depend on it, so a new commit reruns nothing.
os.environ[PROVENANCE_ENV] = json.dumps(
    provenance(config, workflow.basedir), sort_keys=True
)

RUN_RECORD = f"{RESULTS}/run.json"


rule run_record:
    """Write the run record after the results page (its stage times read the benchmark files)."""
    input:
        page=RESULTS_PAGE,
        tables=[entry["table"] for entry in REPORT_TABLES.values()],
        measured=[PAGE_TABLES[k] for k in ("provo_intervals",) if k in PAGE_TABLES],
    output:
        RUN_RECORD,
    params:
        # the validated config, as the page gets it: a changed setting rewrites the record
        config=lambda w: json.dumps(config, sort_keys=True),
        workflow_dir=workflow.basedir,
        # a function: the registry's titles may hold braces, which a plain string would expand
        tables=lambda w: json.dumps(
            [dict(name=name, **entry) for name, entry in REPORT_TABLES.items()]
        ),
        measured=lambda w: json.dumps(
            {k: PAGE_TABLES[k] for k in ("provo_intervals",) if k in PAGE_TABLES}
        ),
        figure_probes=PLAN.figure_probes,
    localrule: True
    conda:
        CONDA_ENV
    threads: job_threads("run_record")
    resources:
        **job_resources("run_record"),
    log:
        log_path("run_record", "results"),
    benchmark:
        benchmark_path("run_record", "results")
    shell:
        "varprobe run-record --config {params.config:q} "
        "--workflow-dir {params.workflow_dir:q} "
        f"--results {RESULTS} "
        "--tables {params.tables:q} --measured {params.measured:q} "
        "--figure-probes {params.figure_probes:q} --out {output:q} > {log:q} 2>&1"
