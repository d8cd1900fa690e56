#!/usr/bin/env bash
# A Slurm cluster of 16 emulated nodes on this machine (one slurmctld, 16 `slurmd -N`, each on a port of its own), for
# the side-by-side throughput comparison of bench/run slurm. Not part of Slipstream: a yardstick.
#
#   bench/slurm/cluster.sh start DIR     installs slurm-wlm and munge from Debian when missing, starts munged (if no
#                                        munged runs), slurmctld and the slurmd's with their state and logs under DIR
#   bench/slurm/cluster.sh stop DIR      stops what start started
#
# Every Slurm command of the benchmark reads DIR/slurm.conf through SLURM_CONF.
set -euo pipefail
action="${1:?start|stop}"
dir="$(mkdir -p "${2:?a directory}" && cd "$2" && pwd)"
nodes="${SLURM_NODES:-16}"
export SLURM_CONF="$dir/slurm.conf"

start() {
  if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    echo "installing slurm-wlm and munge from Debian" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
  fi
  if [ ! -s /etc/munge/munge.key ]; then
    mungekey --create --keyfile=/etc/munge/munge.key 2>/dev/null || dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null
    chmod 0400 /etc/munge/munge.key
  fi
  mkdir -p /run/munge "$dir/state" "$dir/spool"
  if ! pgrep -x munged >/dev/null; then
    munged --force --num-threads=10 --pid-file="$dir/munged.pid"
    echo "$dir/munged.pid" >"$dir/started-munged"
  fi
  last=$(printf '%02d' "$nodes")
  cat >"$SLURM_CONF" <<CONF
ClusterName=bench
SlurmctldHost=localhost
SlurmctldPort=16817
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd-%n.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
MaxJobCount=200000
MaxArraySize=100001
MinJobAge=2
NodeName=node[01-$last] NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=64 RealMemory=256000 Port=[17001-$((17000 + nodes))]
PartitionName=bench Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
  slurmctld -i
  for i in $(seq -f '%02g' 1 "$nodes"); do
    slurmd -N "node$i"
  done
  # ready once every node is idle
  for _ in $(seq 1 300); do
    idle=$(sinfo -h -t idle -o '%D' 2>/dev/null | awk '{s+=$1} END {print s+0}')
    [ "$idle" -eq "$nodes" ] && return 0
    sleep 0.2
  done
  echo "the Slurm nodes did not become idle; see $dir/*.log" >&2
  return 1
}

stop() {
  for pidfile in "$dir"/slurmd-*.pid "$dir/slurmctld.pid"; do
    [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true
  done
  if [ -f "$dir/started-munged" ] && [ -f "$dir/munged.pid" ]; then
    kill "$(cat "$dir/munged.pid")" 2>/dev/null || true
    rm -f "$dir/started-munged"
  fi
  for _ in $(seq 1 50); do   # gone within 10 s
    pgrep -f "slurmd -N node|slurmctld -i|munged --force --num-threads=10 --pid-file=$dir/" >/dev/null || return 0
    sleep 0.2
  done
  pkill -KILL -f "slurmd -N node|slurmctld -i|munged --force --num-threads=10 --pid-file=$dir/" || true
}

"$action"
