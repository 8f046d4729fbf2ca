# Sourced by run.sh and background.sh with snakemake's arguments: sets up the environment if
# needed, puts its venv first on PATH and builds the command line in the array `snakemake`, with
# this checkout's Snakefile (`unlock`: the same command that only unlocks, its flag ahead of the
# arguments, which may end in `-- TARGETS`). Snakemake finds profiles/default beside it (the workflow profile)
# whatever the working directory; a --profile among the arguments comes on top of it.
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$repo/scripts/bootstrap.sh"
export PATH="$repo/.venv/bin:$PATH"
snakemake=(snakemake -s "$repo/Snakefile" "$@")
unlock=(snakemake -s "$repo/Snakefile" --unlock "$@")
