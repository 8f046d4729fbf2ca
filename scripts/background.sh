#!/usr/bin/env bash
# Run the main job in the background, detached from this shell, with its log: for long runs
# (configs/paper-scale.yaml) that must outlive a terminal. Run it from the working directory (the
# repository root, or a directory holding its own config.yaml); arguments go to snakemake.
#   scripts/background.sh --configfile configs/paper-scale.yaml --keep-going
#   scripts/background.sh --profile profiles/slurm --configfile configs/paper-scale.yaml   # a cluster
#   scripts/background.sh --status    # whether a run is going, its jobs done, the end of its log
#   scripts/background.sh --stop      # stop it (its running jobs are redone by the next start)
# The log is logs/background.log (appended: one "=== start" line per run, "=== end rc=N" when it
# ends). Start it again after a cut-off (a killed run, a machine that went away): the working
# directory that the dead run left locked is unlocked, and only the unfinished jobs run.
set -euo pipefail
log=logs/background.log
group=.snakemake/background.pid   # the run's process group
now() { date -u +%FT%TZ; }
alive() { [ -f "$group" ] && kill -0 -- "-$(cat "$group")" 2> /dev/null; }
case "${1:-}" in
  --status)
    if alive; then echo "running: process group $(cat "$group"), log $log"; else echo "not running"; fi
    [ -f "$log" ] || exit 0
    # Snakemake's last "N of M steps (P%) done" since the last start: M counts that start's jobs.
    progress=$(awk '/^=== start/ {p = ""} /^[0-9]+ of [0-9]+ steps \([0-9]+%\) done$/ {p = $0} END {print p}' "$log")
    echo "since the last start: ${progress:-no job done}"
    tail -n 5 "$log"
    exit 0 ;;
  --stop)
    if ! alive; then echo "background.sh: no run is going here" >&2; exit 1; fi
    echo "=== stopped by scripts/background.sh --stop $(now)" >> "$log"
    kill -TERM -- "-$(cat "$group")"
    exit 0 ;;
esac
if alive; then
  echo "background.sh: a run is going here (process group $(cat "$group"), log $log); stop it first: scripts/background.sh --stop" >&2
  exit 1
fi
source "$(dirname "$0")/launch.sh" "$@"   # the environment and the command line: snakemake
mkdir -p logs .snakemake
if [ -f "$group" ]; then
  # --stop kills the run's wrapper too, so a stopped run leaves its file as a cut-off one does.
  case "$(grep '^=== ' "$log" 2> /dev/null | tail -n 1)" in
    "=== stopped by"*) how="stopped" ;;
    *) how="cut off" ;;
  esac
  echo "=== $how: run $(cat "$group") is gone; unlocking $(now)" >> "$log"
  "${unlock[@]}" >> "$log" 2>&1
  rm -f "$group"   # else the wait below reads the dead run's file, or the new one half-written
fi
# setsid: the run leads its own process group (its pid), which --stop and a later start find.
# Its start line is logged before its file is written, so a --stop never logs ahead of it; its
# file is removed before its end line, so a log that shows the end shows a run that is gone.
# A new session is also a new autogroup where Linux has them, and the scheduler shares the CPUs
# between autogroups by the autogroup's nice, not the processes': a niced start
# (`nice scripts/background.sh ...`) passes its nice on to the run's autogroup.
setsid bash -c 'n=$(nice); [ "$n" -le 0 ] || [ ! -e /proc/self/autogroup ] || echo "$n" > /proc/self/autogroup
  echo "=== start $(date -u +%FT%TZ): ${*:2}" >> "$1"; echo $$ > "$0"
  "${@:2}" >> "$1" 2>&1 && rc=0 || rc=$?
  rm -f "$0"; echo "=== end rc=$rc $(date -u +%FT%TZ)" >> "$1"' \
  "$group" "$log" "${snakemake[@]}" < /dev/null > /dev/null 2>&1 &
for _ in $(seq 50); do [ -s "$group" ] && break; sleep 0.1; done
echo "started: process group $(cat "$group"), log $log"
