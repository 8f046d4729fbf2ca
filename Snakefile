"""varprobe: do language models reproduce the variability of human language production?"""

import sys

from snakemake.utils import min_version

from varprobe.config_checks import resource_notes

min_version("9.0")


configfile: "config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/models.smk"
include: "workflow/rules/systems.smk"
include: "workflow/rules/slurm_errors.smk"
include: "workflow/rules/data.smk"


if "provo" in config:

    include: "workflow/rules/provo.smk"


if "production" in config:

    include: "workflow/rules/production.smk"


if FINETUNED:

    include: "workflow/rules/finetune.smk"


# Each key of `analyses` runs an analysis family (varprobe.families), whose rules are in its
# folder (src/varprobe/families/<name>/rules.smk); a family with several keys is included once.
for family in dict.fromkeys(ANALYSIS_FAMILIES[a] for a in ANALYSES):

    include: str(family.rules)


include: "workflow/rules/report.smk"
include: "workflow/rules/explorer.smk"
include: "workflow/rules/page_measures.smk"
include: "workflow/rules/results_page.smk"
include: "workflow/rules/run_record.smk"


# After every rule is defined: the resources entries none of them read.
for note in resource_notes(config["resources"], RESOURCE_LOOKUPS):
    print(f"varprobe: note: {note}", file=sys.stderr)


rule all:
    """Every table and figure of the configured studies, the report pages, the explorer, the
    results page and the run record."""
    input:
        STUDY_TARGETS,
        REPORT_PAGES,
        EXPLORER_TARGETS,
        RESULTS_PAGE,
        RUN_RECORD,
