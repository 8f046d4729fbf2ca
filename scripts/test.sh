#!/usr/bin/env bash
# Run the whole test suite (set up the environment first if needed). Arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export PATH="$PWD/.venv/bin:$PATH"
export VARPROBE_DATA_MIRROR="${VARPROBE_DATA_MIRROR:-$(cd .. && pwd)/shared/data}"
snakemake --lint
snakefmt --check Snakefile workflow/rules
exec python -m pytest -ra "$@"
