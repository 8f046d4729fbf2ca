"""varprobe: do language models reproduce the variability of human language production?"""

from snakemake.utils import min_version

min_version("9.0")


configfile: "config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"


if "provo" in config:

    include: "workflow/rules/provo.smk"


if "production" in config:

    include: "workflow/rules/production.smk"


# Each key of `analyses` is a rule family in workflow/rules/ (built on the Provo study).
for analysis in config.get("analyses", {}):

    include: f"workflow/rules/{analysis}.smk"


include: "workflow/rules/report.smk"


rule all:
    """Every table and figure of the configured studies."""
    input:
        provo_targets() if "provo" in config else [],
        production_targets() if "production" in config else [],
        ANALYSIS_TARGETS,
        REPORT_PAGES,
