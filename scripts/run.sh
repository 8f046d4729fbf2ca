#!/usr/bin/env bash
# Run the main job on the default config.yaml (set up the environment first if needed).
# Extra arguments go to snakemake, e.g. `scripts/run.sh --configfile configs/provo-full.yaml`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export PATH="$PWD/.venv/bin:$PATH"
exec snakemake --profile profiles/default "$@"
