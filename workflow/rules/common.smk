"""What every study shares: config validation, the CLI prefix of the rules' commands, job
resources, log and benchmark paths, the options of every job that reads raw files, and the
registries of analysis targets and report tables. The models and systems every study reads:
models.smk and systems.smk; a study's targets and input functions: its STUDY_inputs.smk,
which its rule file includes."""

import re
import shlex
import sys
from pathlib import Path

from varprobe.availability import unavailable_analyses
from varprobe.cli import CONSOLE_PREFIX
from varprobe.config_loading import in_precedence, validate_config
from varprobe.data.parse_memory import parse_mem_mb
from varprobe.data.user_files import record_digest
from varprobe.families import families

for note in validate_config(
    config, workflow.source_path("../schemas/config.schema.yaml"), workflow.configfiles
):
    print(f"varprobe: note: {note}", file=sys.stderr)

CONFIG_FILES = in_precedence(workflow.configfiles, workflow.overwrite_configfiles)
"""The config files read, in the order they apply (each over the ones before it)."""

VARPROBE = f"{shlex.quote(sys.executable)} -m varprobe"
"""The package's CLI in the interpreter running Snakemake."""

# The rules' commands start with `varprobe`, a shell function that runs the `varprobe` on
# PATH (a conda env's, or the activated venv's) and else this interpreter's, so that the
# venv's snakemake run without its bin on PATH still finds the CLI. The prefix is an
# f-string that Snakemake formats again (hence four braces for one); it replaces Snakemake's
# default strict mode, restated first. It then keeps the console (this process's stderr) for
# the CLI (varprobe.cli.CONSOLE_PREFIX): an error of a full disk reaches it when the job's log,
# on that disk, cannot take it.
shell.prefix(
    f"set -euo pipefail; varprobe() {{{{ if type -P varprobe > /dev/null; "
    f'then command varprobe "$@"; else {VARPROBE} "$@"; fi; }}}}; '
    + CONSOLE_PREFIX.replace("{", "{{").replace("}", "}}")
)

RESULTS = "results"
CONDA_ENV = str(Path(workflow.basedir, "envs", "varprobe.yaml"))
"""The jobs' conda environment. This path and ``CAPTION`` are absolute: Snakemake reads a relative
one from the folder of the rule file using it, and the families' rule files live in the package."""


def _alternatives(names):
    """A wildcard constraint matching exactly the given names."""
    return "|".join(re.escape(n) for n in names) or "(?!)"


RESOURCE_LOOKUPS = set()
"""The ``resources`` entries the rules of this run read (``job_spec``), by rule name."""


def job_spec(rule):
    """A rule's ``resources`` entry of the config over the ``default`` entry."""
    RESOURCE_LOOKUPS.add(rule)
    return {**config["resources"]["default"], **config["resources"].get(rule, {})}


def job_threads(rule):
    """A rule's threads: its ``cpus_per_task`` in config."""
    return job_spec(rule)["cpus_per_task"]


def job_resources(rule, parses_input=False):
    """A rule's scheduler resources from config; memory and runtime grow with the attempt. A
    job that ``parses_input`` (a cloze corpus, a task file, raw files) asks for at least the
    memory that parsing its input files takes, from their sizes and rows
    (``varprobe.data.parse_memory``): a large user's file would exceed the configured
    mem_mb."""
    spec = job_spec(rule)

    def configured(wildcards, attempt):
        return spec["mem_mb"] * attempt

    def parsing(wildcards, input, attempt):
        return max(spec["mem_mb"], parse_mem_mb(input)) * attempt

    return dict(
        mem_mb=parsing if parses_input else configured,
        runtime=lambda wildcards, attempt: spec["runtime"] * attempt,
        cpus_per_task=spec["cpus_per_task"],
    )


PAGE_TABLES = {}
"""Each measured table of the results page, by its name in varprobe.results_page (the page reads
these, never a path of its own): the studies' in page_inputs.smk, a family's in its rules.smk."""

REPORT_TABLES = {}
"""Summary tables shown in the HTML report: name -> table, category, title, caption, schema
(report.smk renders each as an HTML page)."""

CAPTION = str(Path(workflow.basedir, "workflow", "report", "caption.rst"))
"""The caption file of every output in the HTML report: it shows the ``caption`` param (reST)
of the rule that wrote the output, so a caption is written once, in its rule."""


def report_table(name, table, category, title, caption, schema=None):
    """Show the Parquet ``table`` in the report as page ``name``, captioned by ``caption`` (reST);
    ``schema``, the table's declared schema (varprobe.tables), where the results page has a view
    of it (varprobe.results_page.VIEWS)."""
    REPORT_TABLES[name] = dict(
        table=table, category=category, title=title, caption=caption, schema=schema
    )


def report_tables(name, pattern, category, title, keys, caption, schema=None):
    """``report_table`` once per wildcard set in ``keys`` (dicts such as {"model": ...}): page
    ``name_<values>`` shows ``pattern`` filled in, all with one ``caption``."""
    for key in keys:
        report_table(
            "_".join([name, *key.values()]),
            pattern.format(**key),
            category,
            title.format(**key),
            caption,
            schema=schema,
        )


def log_path(stage, *names):
    """The log file of one job of ``stage``."""
    return f"{RESULTS}/logs/{stage}/{'/'.join(names)}.log"


def benchmark_path(stage, *names):
    """The benchmark file of one job of ``stage``."""
    return f"{RESULTS}/benchmarks/{stage}/{'/'.join(names)}.tsv"


def dataset_mirror(dataset):
    """The data mirror of a dataset's raw files: its own ``data_mirror`` entry, else the
    top-level one (None: download, or ``$VARPROBE_DATA_MIRROR``)."""
    return PLAN.datasets.get(dataset, {}).get("data_mirror") or config["data_mirror"]


def raw_options(dataset):
    """The options of every job that fetches or reads ``dataset``'s raw files, as a list of
    arguments: ``--mirror DIR`` and, when ``data_verify`` is false, ``--allow-unverified``.
    """
    mirror = dataset_mirror(dataset)
    options = ["--mirror", mirror] if mirror else []
    if not config["data_verify"]:
        options.append("--allow-unverified")
    return options


def mirror_origin(wildcards):
    """The mirror file a raw file is copied from (none for a download), as an input: a mirror
    file fixed or replaced after an earlier fetch is newer than the copy, which is fetched again.
    Once the copy is the pinned file, the mirror's time no longer counts (``ancient``): a mirror
    copied anew, same bytes and a new time, reruns nothing."""
    from varprobe.data.fetching import source_of
    from varprobe.data.sources import is_pinned_copy, resolve_mirror

    mirror = resolve_mirror(dataset_mirror(wildcards.dataset))
    if mirror is None:
        return []
    source = source_of(wildcards.dataset, wildcards.file)
    origin = mirror / source.mirror_path
    if not origin.is_file():
        return []
    copy = Path(RESULTS) / "raw" / wildcards.dataset / wildcards.file
    return [ancient(str(origin)) if is_pinned_copy(copy, source) else str(origin)]


def data_digest(path, name):
    """The digest record of a data file the config brings (a cloze corpus, a task, a samples
    file), ``name`` naming its entry: an input of the jobs that read the file, beside it, so that
    a file edited with its time kept (``cp -p``) is read again. Brought up to date here,
    when the workflow starts (``varprobe.data.user_files.record_digest``), not in each job.
    """
    record = Path(RESULTS) / "digests" / f"{name}.sha256"
    if workflow.is_main_process and record_digest(Path(path), record):
        print(f"varprobe: note: {path}: digest recorded in {record}", file=sys.stderr)
    return str(record)


NOT_RUN = unavailable_analyses(config)
"""The configured analyses that cannot run on the configured cloze corpus, with the reason (said
here and on the results page)."""
for key, reason in NOT_RUN.items():
    print(f"varprobe: warning: analyses.{key} is not run: {reason}", file=sys.stderr)
ANALYSES = {k: v for k, v in config.get("analyses", {}).items() if k not in NOT_RUN}
NOT_FITTED = {}
"""Analyses run on part of what the config asks for: key -> what was left out and why (each
family's rule file fills it; the results page lists it with ``NOT_RUN``)."""
ANALYSIS_FAMILIES = families()
"""Every analysis family by config key (varprobe.families)."""
ANALYSIS_TARGETS = []
"""The outputs of the configured analysis families: each family's rule file extends it."""
