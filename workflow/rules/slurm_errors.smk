"""After a failed run on SLURM: explain a refused GPU request."""

import re
import sys
from pathlib import Path

GPU_REFUSED = """
varprobe: SLURM refused to schedule a GPU job ({reason}).
A model whose config says `device: cuda` makes its model jobs (provo_sample,
provo_enumerate, production_sample, finetune_provo, finetune_production) request one GPU. Either
  * route GPU jobs to a partition that has GPUs: give that partition `max_gpu` in the profile's
    partitions file (`slurm-partition-config`, profiles/slurm/partitions.yaml), or
  * on a cluster without GPUs, set `gpu: 0` for those rules under `set-resources` in the
    profile (profiles/slurm/config.yaml): CUDA models then run on CPU.
"""


def explain_refused_gpu_jobs(logs):
    """After a failed run: when SLURM refused a GPU request, name the profile setting to change.

    ``logs``: the run's log file(s), as Snakemake hands them to ``onerror``.
    """
    paths = [logs] if isinstance(logs, str) else list(logs or [])
    text = "".join(
        Path(p).read_text(errors="replace") for p in paths if Path(p).is_file()
    )
    found = re.search(
        r"sbatch: error: ((?:Invalid generic resource|Requested node configuration is not "
        r"available)[^'\n]*)",
        text,
    )
    if found:
        print(GPU_REFUSED.format(reason=found.group(1).strip()), file=sys.stderr)


onerror:
    explain_refused_gpu_jobs(log)
