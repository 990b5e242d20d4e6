#!/usr/bin/env bash
# Simulation speed of the timing model under `gpuvp run` on the V100 preset: vectorAdd (2^16 and
# 2^20 elements), a shared-memory matmul (256) and one irregular workload (BFS from
# sw/workloads). Prints simulated cycles, warp-instructions, wall seconds, warp-instructions per
# wall second, the user CPU seconds of the run (gpuvp and its host program, /usr/bin/time %U) and
# warp-instructions per user-CPU second (the figure to compare on a loaded, shared machine), and
# the speed-up over GPGPU-Sim 4.2 on this machine where we have its figure (vectorAdd 2^20: 77 s,
# 9.4 K warp-inst/s; matmul 256: 95 s, 22.6 K warp-inst/s; single-threaded, so its wall ~ CPU).
#
#   bench/timing/run_bench.sh [build-dir = build]    (needs gpuvp, lib/libcudart.so.13, nvcc)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
nvcc=${GPUVP_NVCC:-/usr/local/cuda/bin/nvcc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$nvcc" -cudart shared -o "$work/vector_add" "$here/vector_add.cu"
"$nvcc" -cudart shared -o "$work/matmul" "$here/matmul.cu"
bfs="$build/sw/workloads/bin/workload_bfs"

printf '%-22s %12s %14s %9s %16s %9s %16s %s\n' workload cycles warp-instr wall-s warp-instr/s user-s "warp-instr/user-s" "vs GPGPU-Sim 4.2 (per user-CPU s)"
run() {  # name gpgpusim_wall_s gpgpusim_rate program args...
  local name=$1 ref_wall=$2 ref_rate=$3
  shift 3
  local start end
  start=$(date +%s.%N)
  /usr/bin/time -f %U -o "$work/user.txt" "$build/gpuvp" run --config v100 --stats "$work/stats.json" -- "$@" > "$work/out.txt" 2> "$work/err.txt" || {
    echo "$name: gpuvp run failed"; cat "$work/out.txt" "$work/err.txt"; exit 1; }
  end=$(date +%s.%N)
  python3 - "$work/stats.json" "$name" "$start" "$end" "$ref_wall" "$ref_rate" "$work/user.txt" <<'PY'
import json, sys
stats, name, start, end, ref_wall, ref_rate, user_file = sys.argv[1:]
user = max(float(open(user_file).read().split()[-1]), 0.01)
g = json.load(open(stats))["run"]["groups"]["gpu"]["counters"]
cycles, warps = g["cycles"]["value"], g["warp_instructions"]["value"]
wall = float(end) - float(start)
rate = warps / wall
user_rate = warps / user
vs = "-"
if ref_wall != "-":
    vs = "%.1fx faster (GPGPU-Sim: %s s); %.1fx its warp-inst/s" % (float(ref_wall) / user, ref_wall, user_rate / float(ref_rate))
print("%-22s %12d %14d %9.2f %16.0f %9.2f %16.0f %s" % (name, cycles, warps, wall, rate, user, user_rate, vs))
PY
}
run "vectorAdd 2^16" - - "$work/vector_add" 65536
run "vectorAdd 2^20" 77 9400 "$work/vector_add" 1048576
run "matmul 256 (shared)" 95 22600 "$work/matmul" 256
run "bfs (irregular)" - - "$bfs"
echo "(wall and user-s: the whole gpuvp run, platform start-up and host program included)"
