#!/usr/bin/env bash
# Stop the daemons started by scripts/slurm/start.sh, by PID file. Options:
#   --keep-munge   leave munged running
#   --purge        also wipe slurm state (job ids restart at 1, old jobs forgotten)
set -uo pipefail
KEEP_MUNGE=0; PURGE=0
for a in "$@"; do case "$a" in --keep-munge) KEEP_MUNGE=1;; --purge) PURGE=1;; esac; done

stop_pidfile() {   # $1 pidfile  $2 name
  local pf=$1 pid
  [ -f "$pf" ] || return 0
  pid=$(cat "$pf")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then echo "$2 ($pid) did not exit, SIGKILL"; kill -KILL "$pid"; fi
  fi
  rm -f "$pf"
  echo "stopped $2 ($pid)"
}

# cancel leftover jobs first so no slurmstepd outlives slurmd
if command -v scancel >/dev/null && scontrol ping 2>/dev/null | grep -q 'is UP'; then
  scancel --quiet --user="$(id -un)" 2>/dev/null || true
fi
stop_pidfile /run/slurmd.pid slurmd
stop_pidfile /run/slurmctld.pid slurmctld     # its child slurmscriptd exits with it
stop_pidfile /run/slurmdbd.pid slurmdbd
stop_pidfile /run/mysqld/mysqld.pid mariadbd
[ "$KEEP_MUNGE" = 1 ] || stop_pidfile /run/munge/munged.pid munged
if [ "$PURGE" = 1 ]; then
  rm -rf /var/spool/slurmctld/* /var/spool/slurmd/*
  # (the accounting DB, if any, lives in /var/lib/mysql/slurm_acct_db)
  echo "purged slurm state"
fi
exit 0
