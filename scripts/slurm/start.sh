#!/usr/bin/env bash
# Idempotently install, configure and start a single-node SLURM cluster on loopback
# (Debian 12, root, no systemd): CI's live scheduler for `--profile profiles/slurm`.
# Safe to run repeatedly; a changed setting restarts the daemons.
#   FAKE_GPUS=N  advertise N fake GPUs as gres (default 1; 0 = a cluster without GPUs)
#   WITH_DBD=1   also run MariaDB + slurmdbd so sacct/sacctmgr work (default 0)
# Every finished job is recorded by the controller itself (job completion log, no database)
# in /var/log/slurm/jobcomp.log (job id, partition, state); finished jobs also stay in
# `scontrol show job` for MinJobAge (600 s), with their GPU request (TresPerJob=gres:gpu:N).
# (Tracking gres/gpu in the job completion log's TRES would need slurmdbd.)
set -euo pipefail

T0=$(date +%s%N)
log() { local ms=$(( ($(date +%s%N) - T0) / 1000000 )); printf '[slurm/start %d.%03ds] %s\n' $((ms/1000)) $((ms%1000)) "$*"; }
HERE=$(cd "$(dirname "$0")" && pwd)

[ "$(id -u)" = 0 ] || { echo "must run as root" >&2; exit 1; }
# Never overwrite a real cluster's configuration: only ours (ClusterName=ci) or none.
if [ -f /etc/slurm/slurm.conf ] && ! grep -qx 'ClusterName=ci' /etc/slurm/slurm.conf; then
  echo "/etc/slurm/slurm.conf belongs to another cluster; not touching it" >&2; exit 1
fi

# ---------------------------------------------------------------- install
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null \
   || ! command -v munged >/dev/null || ! command -v sbatch >/dev/null; then
  log "installing slurm-wlm + munge"
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  # --no-install-recommends avoids ~35 extra plugin/-dev packages (hdf5, rrd, rocm, ...)
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
  log "installed"
fi
WITH_DBD=${WITH_DBD:-0}
if [ "$WITH_DBD" = 1 ] && { ! command -v slurmdbd >/dev/null || ! command -v mariadbd >/dev/null; }; then
  log "installing slurmdbd + mariadb-server"
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends slurmdbd mariadb-server >/dev/null
  log "installed"
fi
log "slurm $(slurmd -V | awk '{print $2}'), $(munged -V 2>&1 | awk '{print $1}')"

# ---------------------------------------------------------------- munge
# munge's postinst normally creates /etc/munge/munge.key; make sure it exists
# and has the ownership/permissions munged insists on.
if [ ! -s /etc/munge/munge.key ]; then
  log "creating munge key"
  mungekey --create --keyfile=/etc/munge/munge.key --force
fi
chown munge:munge /etc/munge /etc/munge/munge.key
chmod 0700 /etc/munge
chmod 0600 /etc/munge/munge.key
install -d -o munge -g munge -m 0755 /run/munge        # normally systemd's RuntimeDirectory
install -d -o munge -g munge -m 0700 /var/log/munge /var/lib/munge

munge_ok() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }
if ! munge_ok; then
  log "starting munged"
  if [ -f /run/munge/munged.pid ] && ! kill -0 "$(cat /run/munge/munged.pid)" 2>/dev/null; then
    rm -f /run/munge/munged.pid   # stale pid file from a killed daemon
  fi
  runuser -u munge -- /usr/sbin/munged     # daemonizes; pid in /run/munge/munged.pid
  for _ in $(seq 50); do munge_ok && break; sleep 0.1; done
  munge_ok || { echo "munged failed"; tail -n 20 /var/log/munge/munged.log; exit 1; }
fi

# ---------------------------------------------------------------- config
NODE=localhost                     # fixed node name, independent of the machine's hostname
CPUS=$(nproc)
MEM_TOTAL=$(free -m | awk '/^Mem:/{print $2}')
REALMEM=$(( MEM_TOTAL - 1024 ))    # margin: node goes INVAL/drained if RealMemory > what slurmd sees
FAKE_GPUS=${FAKE_GPUS:-1}
if [ "$FAKE_GPUS" -gt 0 ]; then
  GRES_LINE="GresTypes=gpu"; NODE_GRES=" Gres=gpu:${FAKE_GPUS}"
  # File= is required for gres/gpu (Count= alone -> node INVAL "gres/gpu count reported
  # lower than configured"); TaskPlugin=task/none confines nothing, so dummy files do.
  # One File per GPU (count must match File). Use char devices (clones of /dev/null,
  # major 1 minor 3): with plain files jobs get no CUDA_VISIBLE_DEVICES/SLURM_JOB_GPUS.
  install -d -m 0755 /run/fakegpu
  for i in $(seq 0 $((FAKE_GPUS - 1))); do
    [ -c "/run/fakegpu/gpu$i" ] || { rm -f "/run/fakegpu/gpu$i"; mknod -m 666 "/run/fakegpu/gpu$i" c 1 3; }
  done
  GRES_CONF="NodeName=${NODE} Name=gpu File=/run/fakegpu/gpu[0-$((FAKE_GPUS - 1))]"
else
  GRES_LINE="#GresTypes="; NODE_GRES=""; GRES_CONF="# no gres"
fi
install -d -m 0755 /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
if [ "$WITH_DBD" = 1 ]; then
  ACCT_LINES="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost"
else
  ACCT_LINES="AccountingStorageType=accounting_storage/none"
fi

cat > /etc/slurm/slurm.conf.new <<EOF
ClusterName=ci
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
MailProg=/bin/true
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
DefMemPerCPU=512
${ACCT_LINES}
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=/var/log/slurm/jobcomp.log
ReturnToService=2
MinJobAge=600
${GRES_LINE}
NodeName=${NODE} NodeAddr=127.0.0.1 NodeHostname=${NODE} CPUs=${CPUS} RealMemory=${REALMEM}${NODE_GRES} State=UNKNOWN
PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu  Nodes=ALL Default=NO  MaxTime=INFINITE State=UP
EOF
echo "$GRES_CONF" > /etc/slurm/gres.conf.new

CONF_CHANGED=0
for f in slurm.conf gres.conf; do
  if cmp -s "/etc/slurm/$f.new" "/etc/slurm/$f"; then
    rm -f "/etc/slurm/$f.new"
  else
    log "writing /etc/slurm/$f"; mv "/etc/slurm/$f.new" "/etc/slurm/$f"; CONF_CHANGED=1
  fi
done

# ---------------------------------------------------------------- daemons
running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

if [ "$CONF_CHANGED" = 1 ] && { running /run/slurmctld.pid || running /run/slurmd.pid; }; then
  # node/gres changes need a daemon restart; 'scontrol reconfigure' is not enough
  log "config changed: restarting slurm daemons"
  "$HERE/stop.sh" --keep-munge
fi
if [ "$WITH_DBD" = 1 ]; then
  if ! mysqladmin ping >/dev/null 2>&1; then
    log "starting mariadbd"
    install -d -o mysql -g mysql -m 0755 /run/mysqld
    setsid /usr/sbin/mariadbd --user=mysql --pid-file=/run/mysqld/mysqld.pid \
      --log-error=/var/log/slurm/mariadb.err </dev/null >/dev/null 2>&1 &
    for _ in $(seq 150); do mysqladmin ping >/dev/null 2>&1 && break; sleep 0.2; done
    mysqladmin ping >/dev/null || { tail -n 20 /var/log/slurm/mariadb.err; exit 1; }
  fi
  mysql -e "CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'slurmpw';
            GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';"
  cat > /etc/slurm/slurmdbd.conf <<EOF
AuthType=auth/munge
DbdHost=localhost
SlurmUser=root
LogFile=/var/log/slurm/slurmdbd.log
PidFile=/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=slurmpw
StorageLoc=slurm_acct_db
EOF
  chmod 0600 /etc/slurm/slurmdbd.conf     # slurmdbd refuses a world-readable config
  if ! running /run/slurmdbd.pid; then
    log "starting slurmdbd"
    slurmdbd
  fi
  for _ in $(seq 100); do sacctmgr -n show cluster >/dev/null 2>&1 && break; sleep 0.2; done
  # register cluster/account/user (idempotent); -i = no confirmation prompt
  sacctmgr -n -P show cluster format=cluster | grep -qx ci || sacctmgr -i add cluster ci >/dev/null
  sacctmgr -n -P show account format=account | grep -qx ciacct || sacctmgr -i add account ciacct >/dev/null
  # (root already has an association to account 'root'; add it to 'ciacct' too)
  sacctmgr -n -P show assoc where user=root account=ciacct format=account | grep -qx ciacct \
    || sacctmgr -i add user root account=ciacct >/dev/null
fi
if ! running /run/slurmctld.pid; then
  log "starting slurmctld"
  slurmctld                          # daemonizes, writes /run/slurmctld.pid
fi
for _ in $(seq 100); do scontrol ping 2>/dev/null | grep -q 'is UP' && break; sleep 0.2; done
scontrol ping | grep -q 'is UP' || { tail -n 30 /var/log/slurm/slurmctld.log; exit 1; }

if ! running /run/slurmd.pid; then
  log "starting slurmd"
  slurmd -N "$NODE"                  # -N: our node name, whatever the hostname is
fi

# ---------------------------------------------------------------- wait idle
node_state() { sinfo -h -n "$NODE" -o %T 2>/dev/null | head -n1; }
for _ in $(seq 150); do
  case "$(node_state)" in idle|mixed|allocated) break ;; esac
  sleep 0.2
done
case "$(node_state)" in
  idle|mixed|allocated) ;;
  *) # e.g. drained/down after an unclean stop
     log "node state '$(node_state)', trying resume"
     scontrol update nodename="$NODE" state=resume 2>/dev/null || true
     sleep 1 ;;
esac
st=$(node_state)
log "node $NODE state: $st"
case "$st" in idle|mixed|allocated) ;; *)
  sinfo -R; tail -n 30 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log; exit 1 ;;
esac
sinfo -o '%P %a %D %T %N %c %m %G'
