#!/bin/bash
# Slipstream's wrapper of one instance in its Slurm job. The same text for every instance: nothing in it comes from a
# job. $1 is the instance's directory on the shared file system, where the server wrote, before it submitted the job:
#   argv   the command, one argument after another, each ended by a NUL byte (never read by a shell)
#   env    the instance's environment, as export lines
#   probe  its startup probe, if any, NUL-separated: period, failure threshold, initial delay, then the command
# What this script writes back into report/ (the job's account's own; the directory itself is the server's), each file
# whole (a temporary file renamed), the server reads:
#   slurm_job     the job's id, once it runs (finds it again when Slurm no longer remembers its name)
#   ready         the startup probe passed; probe_failed: it failed "<tries> <last exit code>"
#   exit_code     how the command ended: its exit code, 128 + n when signal n killed it
# Its own variables start with _ss_ so that no variable of the instance's environment replaces one.
_ss_dir=$1
# Slurm's choice of GPUs (the gpu GRES it allocated, which the job's cgroup lets it open) wins over the control plane's.
_ss_slurm_gpus=${CUDA_VISIBLE_DEVICES-}
_ss_timeout=$(command -v timeout)

_ss_record() {
  printf '%s\n' "$2" > "$_ss_dir/report/$1.tmp" && mv -f "$_ss_dir/report/$1.tmp" "$_ss_dir/report/$1"
}

_ss_environment() {
  . "$_ss_dir/env"
  if [ -n "$_ss_slurm_gpus" ]; then
    export CUDA_VISIBLE_DEVICES="$_ss_slurm_gpus" NVIDIA_VISIBLE_DEVICES="$_ss_slurm_gpus"
  fi
}

# Tries the probe in the instance's environment and working directory until it passes or failed the threshold in a row;
# a try that outlives its period by 5 s is killed (where the node has coreutils' timeout).
_ss_probe() {
  local _ss_spec _ss_failures=0 _ss_exit
  mapfile -d '' -t _ss_spec < "$_ss_dir/probe"
  sleep "${_ss_spec[2]}"
  while :; do
    ( _ss_environment
      if [ -n "$_ss_timeout" ]; then exec "$_ss_timeout" -s KILL "$((_ss_spec[0] + 5))" "${_ss_spec[@]:3}"; fi
      exec "${_ss_spec[@]:3}" ) > /dev/null 2>&1
    _ss_exit=$?
    if [ "$_ss_exit" -eq 0 ]; then
      _ss_record ready "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
      return
    fi
    _ss_failures=$((_ss_failures + 1))
    if [ "$_ss_failures" -ge "${_ss_spec[1]}" ]; then
      _ss_record probe_failed "$_ss_failures $_ss_exit"
      return
    fi
    sleep "${_ss_spec[0]}"
  done
}

mapfile -d '' -t _ss_argv < "$_ss_dir/argv" || exit 125
_ss_record slurm_job "$SLURM_JOB_ID"
if [ -e "$_ss_dir/probe" ]; then
  _ss_probe &
fi
# A stop signals every process of the job (scancel --full): this shell outlives the signal, waits for the command and
# records how it ended. Its subshell starts with the signal's default action again.
trap : TERM
( _ss_environment; exec "${_ss_argv[@]}" )
_ss_code=$?
_ss_record exit_code "$_ss_code"
exit "$_ss_code"
