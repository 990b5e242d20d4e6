#!/usr/bin/env bash
# Start-up: how much of a program's own host-side preparation gpuvp's start-up hides. `gpuvp run`
# starts the program as soon as the platform's socket listens and builds the GPU model while the
# program prepares its data; the program's first CUDA call waits for the platform. Runs
# prepare_then_launch with PREP_MS (default 80) ms of preparation and with none, alternating,
# REPEAT times (default 15) each, and prints the median wall times and the part of the
# preparation that did not add to the run (0 ms: start-up and preparation one after the other).
#
#   bench/startup/run_bench.sh [build-dir = build]    (needs gpuvp, lib/libcudart.so.13, nvcc)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
nvcc=${GPUVP_NVCC:-/usr/local/cuda/bin/nvcc}
prep=${PREP_MS:-80}
repeat=${REPEAT:-15}
config=${CONFIG:-v100}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$nvcc" -cudart shared -o "$work/prepare_then_launch" "$here/prepare_then_launch.cu"
for ((r = 0; r < repeat; ++r)); do
  for p in 0 "$prep"; do
    start=$(date +%s%N)
    "$build/gpuvp" run --config "$config" -- "$work/prepare_then_launch" "$p" > "$work/out.txt" 2> "$work/err.txt" || {
      echo "gpuvp run failed"; cat "$work/out.txt" "$work/err.txt"; exit 1; }
    grep -q PASS "$work/out.txt" || { echo "wrong result"; cat "$work/out.txt"; exit 1; }
    echo "$p $(( ($(date +%s%N) - start) / 1000 ))" >> "$work/walls.txt"
  done
done
python3 - "$work/walls.txt" "$prep" "$config" <<'PY'
import statistics, sys
walls = {}
for line in open(sys.argv[1]):
    p, us = line.split()
    walls.setdefault(int(p), []).append(int(us) / 1000.0)
prep = int(sys.argv[2])
none, some = statistics.median(walls[0]), statistics.median(walls[prep])
print("preset %s; median of %d runs each" % (sys.argv[3], len(walls[0])))
print("no preparation: %.1f ms; %d ms of preparation: %.1f ms; preparation hidden by start-up: %.1f ms"
      % (none, prep, some, prep - (some - none)))
PY
