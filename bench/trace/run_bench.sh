#!/usr/bin/env bash
# Cost of transaction tracing under `gpuvp run` on the V100 preset, as ratios within this one
# run: each workload (bench/timing's vectorAdd, sw/workloads' bfs) runs with tracing off, everything traced (compact and JSON), and a narrow
# filter (one L2 slice's input link; compact and JSON) and sampling. Prints CPU seconds (user +
# system of gpuvp and the program, best of $GPUVP_BENCH_REPEAT, default 3: on a shared machine
# CPU time is steadier than wall time), the slowdown over tracing off, and the trace's size.
# For comparison: MGPUSim's tracing slows it about 10x (752 MB for a small run); the aim here is
# <= 1.5x with a narrow filter and compact output.
#
#   bench/trace/run_bench.sh [build-dir = build]    (needs gpuvp, lib/libcudart.so.13, nvcc, workload_bfs)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
repeat=${GPUVP_BENCH_REPEAT:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

best_wall() {  # trace-file options... -- program args: prints the least CPU time in seconds
  local best=""
  for _ in $(seq "$repeat"); do
    rm -f "$work"/trace.*
    local cpu
    cpu=$( { TIMEFORMAT='%U %S'; time "$build/gpuvp" run --config v100 "$@" > "$work/out.txt" 2> "$work/err.txt" || {
      echo "gpuvp run $* failed" >&2; cat "$work/out.txt" "$work/err.txt" >&2; exit 1; }; } 2>&1 )
    best=$(python3 -c "import sys; u,s=sys.argv[1].split(); w=float(u)+float(s); b=sys.argv[2]; print(w if b=='' or w<float(b) else b)" "$cpu" "$best")
  done
  echo "$best"
}

size_of() { if [ -f "$1" ]; then stat -c %s "$1"; else echo 0; fi; }

printf '%-16s %-34s %9s %9s %14s\n' workload tracing cpu-s slowdown trace-bytes
bench() {  # name program args...
  local name=$1
  shift
  local off
  off=$(best_wall -- "$@")
  printf '%-16s %-34s %9.2f %9s %14s\n' "$name" "off" "$off" "1.00x" "-"
  row() {  # label file options...
    local label=$1 file=$2
    shift 2
    local wall
    wall=$(best_wall --trace "$file" "$@" -- "${program[@]}")
    printf '%-16s %-34s %9.2f %8.2fx %14d\n' "$name" "$label" "$wall" "$(python3 -c "print($wall/$off)")" \
      "$(size_of "$file")"
  }
  program=("$@")
  row "everything, compact" "$work/trace.gvtrace"
  row "everything, JSON" "$work/trace.json"
  row "module=*l2_0.in, compact" "$work/trace.gvtrace" --trace-filter 'module=*l2_0.in'
  row "module=*l2_0.in, JSON" "$work/trace.json" --trace-filter 'module=*l2_0.in'
  row "every=64, compact" "$work/trace.gvtrace" --trace-filter 'every=64'
}
nvcc=${GPUVP_NVCC:-/usr/local/cuda/bin/nvcc}
"$nvcc" -cudart shared -o "$work/vector_add" "$here/../timing/vector_add.cu"
bench "vectorAdd 2^18" "$work/vector_add" 262144
bench "bfs" "$build/sw/workloads/bin/workload_bfs"
echo "(cpu: user + system of the whole gpuvp run, platform start-up and host program included; best of $repeat)"
