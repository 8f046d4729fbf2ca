#!/usr/bin/env bash
# Run the main job on the default config.yaml (set up the environment first if needed).
# Extra arguments go to snakemake, e.g. `scripts/run.sh --configfile configs/provo-full.yaml`;
# profiles/default comes with every run, a --profile among them beneath it (scripts/launch.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/launch.sh "$@"
exec "${snakemake[@]}"
