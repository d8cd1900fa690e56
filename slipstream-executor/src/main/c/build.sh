#!/bin/sh
# Builds the launcher (slipstream-launch.c) into $1: static where the C library's archive is there (its exec then loads
# nothing), dynamic otherwise. Called by the executor's Maven profile "launcher" where /usr/bin/cc exists (on Linux).
set -eu
out="$1"
src="$(dirname "$0")/slipstream-launch.c"
mkdir -p "$out"
flags="-std=gnu11 -O2 -Wall -Wextra"
# shellcheck disable=SC2086 # the flags are words
if ! /usr/bin/cc $flags -static -o "$out/slipstream-launch" "$src" 2>"$out/static.err"; then
  echo "slipstream-launch: no static C library here, linking dynamically: $(head -c 300 "$out/static.err")" >&2
  /usr/bin/cc $flags -o "$out/slipstream-launch" "$src"
fi
rm -f "$out/static.err"
