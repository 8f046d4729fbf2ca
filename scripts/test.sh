#!/usr/bin/env bash
# Run the whole test suite (set up the environment first if needed, with the llama.cpp server of
# the API-model tests: scripts/bootstrap.sh --with-llama). Arguments go to pytest.
# pytest-xdist runs it in VARPROBE_TEST_WORKERS processes (default: one more than the cores, since
# the tests also wait on subprocesses, servers and the cluster; none on a one-core machine, or 0:
# one process, no xdist). Tests that share an expensive fixture (a module's
# Snakemake run, the SLURM cluster, the llama.cpp server) stay in one worker, the longest first
# (tests/conftest.py: pytest_collection_modifyitems); each worker's Snakemake runs get its share
# of the cores. A later `-n N` among the arguments overrides the default.
# tests/test_slurm.py starts a one-node SLURM cluster (scripts/slurm/start.sh, root + apt) and
# stops it again; the trap below stops it too if pytest dies or times out on the way.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh --with-llama
export PATH="$PWD/.venv/bin:$PATH"
export VARPROBE_DATA_MIRROR="${VARPROBE_DATA_MIRROR:-$(cd .. && pwd)/shared/data}"
snakemake --lint
snakefmt --check Snakefile workflow/rules src/varprobe/families
# The documentation site, strictly: warnings are errors, every internal reference and link must
# resolve (nitpicky); offline (no intersphinx, no external link check). Into git-ignored docs/_build.
sphinx-build -W --keep-going -n -q -b html docs docs/_build/html

slurm_running() { [ -f /run/slurmctld.pid ] && kill -0 "$(cat /run/slurmctld.pid)" 2>/dev/null; }
if slurm_running; then slurm_before=1; else slurm_before=0; fi
stop_slurm() { if [ "$slurm_before" = 0 ] && slurm_running; then bash scripts/slurm/stop.sh; fi; }
trap stop_slurm EXIT
cores=$(nproc)
workers=${VARPROBE_TEST_WORKERS:-$((cores < 2 ? 0 : cores + 1))}
timeout -k 30 "${VARPROBE_TEST_TIMEOUT:-2400}" python -m pytest -n "$workers" --dist loadgroup \
  --no-loadscope-reorder -ra --durations=25 "$@"
