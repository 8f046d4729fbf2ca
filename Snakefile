"""varprobe: do language models reproduce the variability of human language production?"""

from snakemake.utils import min_version

min_version("9.0")


configfile: "config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/provo.smk"


rule all:
    """Every table and figure of the configured study."""
    input:
        provo_targets(),
