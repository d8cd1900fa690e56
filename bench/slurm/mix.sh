#!/usr/bin/env bash
# Runs one job mix on the Slurm cluster of cluster.sh and prints how many jobs per second it completed, from the
# first submission to the moment none is left (polled every 0.1 s):
#   bench/slurm/mix.sh DIR trivial N     a job array of N one-task jobs running `true`
#   bench/slurm/mix.sh DIR gang N        a job array of N jobs of 4 tasks (on any nodes), each task `true` (srun)
set -euo pipefail
dir="$(cd "${1:?directory}" && pwd)"
kind="${2:?trivial|gang}"
count="${3:?count}"
export SLURM_CONF="$dir/slurm.conf"
out="$dir/out"
mkdir -p "$out"
start=$(date +%s.%N)
case "$kind" in
  trivial) sbatch --parsable --array="1-$count" -n 1 -c 1 --mem=1G -o /dev/null -e "$out/%A_%a.err" --wrap=true >/dev/null ;;
  gang) sbatch --parsable --array="1-$count" -n 4 -c 1 --mem-per-cpu=1G -o /dev/null -e "$out/%A_%a.err" --wrap='srun true' >/dev/null ;;
  *) echo "unknown mix $kind" >&2; exit 2 ;;
esac
while [ -n "$(squeue -h -o %i 2>/dev/null | head -1)" ]; do
  sleep 0.1
done
end=$(date +%s.%N)
python3 -c "import sys; s=float(sys.argv[2])-float(sys.argv[1]); n=int(sys.argv[3]); print(f'{n/s:.1f} {s:.2f}')" "$start" "$end" "$count"
