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
# A job whose launch failed (a slurmd too slow to answer on this loaded machine) is requeued held, and would wait
# for an operator forever: it is released (looked for once a second), as an operator would, and runs again (its time
# counts).
polls=0
while [ -n "$(squeue -h -o %i 2>/dev/null | head -1)" ]; do
  polls=$((polls + 1))
  held=""
  if [ $((polls % 10)) -eq 0 ]; then
    held="$(squeue -h -t PD -o '%i %r' 2>/dev/null | awk '/launch failed requeued held|JobHeldAdmin|JobHeldUser/ {print $1}' || true)"
  fi
  if [ -n "$held" ]; then
    echo "releasing held job(s): $held" >&2
    # shellcheck disable=SC2086
    scontrol release $held >/dev/null 2>&1 || true
  fi
  sleep 0.1
done
end=$(date +%s.%N)
python3 -c "import sys; s=float(sys.argv[2])-float(sys.argv[1]); n=int(sys.argv[3]); print(f'{n/s:.1f} {s:.2f}')" "$start" "$end" "$count"
