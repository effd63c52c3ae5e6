#!/usr/bin/env bash
# A tco-sim sweep on a real Slurm cluster: install Slurm and MUNGE from Debian's packages, start
# a single-node cluster on this machine, run a sweep as a job array of 4 tasks with the batch
# script users get (docs/slurm/sweep.sbatch), merge the shards, and check the merged CSV is
# byte-identical to the same sweep run locally in one process. Prints both wall times.
#
#   bash ci/slurm-sweep.sh                       # 48-point analytic grid of starter.toml
#   SWEEP_MODE=simulated bash ci/slurm-sweep.sh  # the same grid, every fleet simulated
#   TCO_SIM=target/release/tco-sim bash ci/slurm-sweep.sh
#
# Needs root (apt-get, the daemons). Everything the cluster writes lives in a temporary folder,
# the daemons run with their own slurm.conf (SLURM_CONF), and all are stopped on exit, even on
# failure; /etc/slurm is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
MODE=${SWEEP_MODE:-analytic}
TASKS=4

say() { echo "slurm-sweep: $*"; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  say "installing slurm-wlm and munge"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
fi

if [ -z "${TCO_SIM:-}" ]; then
  say "building tco-sim"
  cargo build --quiet
  TCO_SIM="${CARGO_TARGET_DIR:-$ROOT/target}/debug/tco-sim"
fi
TCO_SIM=$(realpath "$TCO_SIM")
export TCO_SIM

WORK=$(mktemp -d -t tco-slurm.XXXXXX)
HOST=$(hostname -s)
export SLURM_CONF=$WORK/etc/slurm.conf
mkdir -p "$WORK"/{etc,spool/ctld,spool/d,log,run}
chmod 0755 "$WORK"
MUNGE_PID=/run/munge/tco-ci-munged.pid

cleanup() {
  local rc=$?
  scontrol shutdown >/dev/null 2>&1 || true
  # Stop each daemon this script started, by its pid file, and wait for it to go before its
  # folder is removed.
  for f in "$WORK"/run/slurmd.pid "$WORK"/run/slurmctld.pid "$MUNGE_PID"; do
    [ -s "$f" ] || continue
    pid=$(cat "$f")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
  if [ $rc -ne 0 ]; then
    say "failed; logs:"
    tail -n 20 "$WORK"/log/* "$WORK"/out/*.log /var/log/munge/tco-ci-munged.log 2>/dev/null || true
  fi
  rm -rf "$WORK"
  exit $rc
}
trap cleanup EXIT

# MUNGE authenticates the daemons to each other. Debian's package makes a key; make one if not.
if [ ! -s /etc/munge/munge.key ]; then
  mungekey --create --keyfile=/etc/munge/munge.key
fi
chown munge:munge /etc/munge/munge.key
chmod 0400 /etc/munge/munge.key
mkdir -p /run/munge /var/log/munge /var/lib/munge
chown munge:munge /run/munge /var/log/munge /var/lib/munge
# munged runs as its own user, so its files live in its own folders, not in $WORK.
runuser -u munge -- munged --socket=/run/munge/munge.socket.2 \
  --pid-file="$MUNGE_PID" --log-file=/var/log/munge/tco-ci-munged.log

cat >"$SLURM_CONF" <<EOF
ClusterName=tco-ci
SlurmctldHost=$HOST
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SchedulerType=sched/backfill
StateSaveLocation=$WORK/spool/ctld
SlurmdSpoolDir=$WORK/spool/d
SlurmctldPidFile=$WORK/run/slurmctld.pid
SlurmdPidFile=$WORK/run/slurmd.pid
SlurmctldLogFile=$WORK/log/slurmctld.log
SlurmdLogFile=$WORK/log/slurmd.log
SlurmctldPort=16817
SlurmdPort=16818
NodeName=$HOST CPUs=2 State=UNKNOWN
PartitionName=ci Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF

slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 60); do
  state=$(sinfo -h -n "$HOST" -o %T 2>/dev/null || true)
  case $state in idle*|mix*|alloc*) break ;; esac
  sleep 1
done
sinfo -h -n "$HOST" -o %T | grep -qE 'idle|mix|alloc' || { say "node never came up ($state)"; exit 1; }
say "cluster up: node $HOST, $(sinfo -h -o '%c CPUs, partition %P')"

# The study: 48 points of the starter scenario (4 traffic levels × 3 electricity prices × 4
# growth rates), analytic by default so CI takes seconds.
cat >"$WORK/study.toml" <<EOF
scenario = "$ROOT/scenarios/starter.toml"
analytic = $([ "$MODE" = analytic ] && echo true || echo false)
[grid]
"traffic.peak_rps" = [300, 400, 600, 800]
"costs.electricity_usd_per_kwh" = [0.06, 0.12, 0.18]
"traffic.growth_per_year" = [0.1, 0.2, 0.3, 0.4]
EOF
mkdir -p "$WORK/out"

say "sbatch --array=0-$((TASKS - 1)) --wait ($MODE)"
t0=$(now)
sbatch --quiet --wait --array=0-$((TASKS - 1)) --chdir="$WORK/out" \
  --output="$WORK/out/task-%a.log" \
  "$ROOT/docs/slurm/sweep.sbatch" "$WORK/study.toml" "$WORK/shards"
t1=$(now)
"$TCO_SIM" sweep merge "$WORK/shards" --out "$WORK/merged.parquet" --quiet
t2=$(now)

t3=$(now)
"$TCO_SIM" sweep "$WORK/study.toml" --out "$WORK/local" --quiet
t4=$(now)

cmp "$WORK/merged.csv" "$WORK/local/results.csv"
cmp "$WORK/merged.parquet" "$WORK/local/results.parquet"
rows=$(($(wc -l <"$WORK/local/results.csv") - 1))
say "$MODE, 48 points, $rows rows: job array of $TASKS tasks $(secs "$t0" "$t1") s (+ merge $(secs "$t1" "$t2") s), local single process $(secs "$t3" "$t4") s; merged CSV and Parquet identical to the local run"
