#!/usr/bin/env bash
# Parallel SM stepping: wall time of `gpuvp run` on the timing benchmark's workloads
# (bench/timing: vectorAdd 2^16 and 2^20, matmul 256 and 512, BFS) with 1 and 2 stepping threads
# (sim.threads; also 4 with THREADS="1 2 4"; "2r": 2 MPI ranks of one thread each, gpuvp run --mpi,
# which needs a windowed CONFIG) at window length WINDOW (sim.window, default 8;
# WINDOW=1: cycle by cycle), measured in this one run, and the ratio to 1 thread. Also checks
# that the statistics JSON is byte-identical for every thread count, and prints the 1-thread
# run's split of CPU time between the windows (SMs alone, and partitions such as the HBM
# controllers with memory.hbm.partition: the part threads share) and everything else (boundaries,
# memory side, SystemC, host program), the share of its wall time outside the stepper's phases
# (nothing runs beside it: start-up, the host program's own work, the end), and the speed-up
# these allow at 2, 8, 16 and 64 threads: the time outside the phases, plus for the phases the
# largest of their serial part (run on one thread, beside the windows: sim.overlap), the HBM
# partition's part and their share of the whole (perfect balance). Runs alternate between
# thread counts and the best of REPEAT (default 2) is kept, to damp the noise of a shared machine;
# a column per thread count says whether all its runs beat (faster) or lost to (slower) all the
# 1-thread runs, or whether the two sets overlap (inside the host's noise).
# CONFIG (default v100) is the preset (v100_windowed: windows with exact responses while the
# window is at most half its cluster latency, i.e. WINDOW <= 8; WINDOW overrides its sim.window).
# WORKLOADS (default "va16 va20 mm256 mm512 bfs") picks the programs; SETS adds --set options to
# every run (e.g. a 4x larger GPU: "gpu.sm.count=336 memory.l2.slices=128 memory.hbm.stacks=16").
# On a machine without nvcc, PROGRAMS names a directory holding vector_add and matmul built from
# bench/timing (bench/parallel/bundle.sh makes such a directory with gpuvp and its libraries).
#
#   bench/parallel/run_bench.sh [build-dir = build]    (needs gpuvp, lib/libcudart.so.13, nvcc)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
nvcc=${GPUVP_NVCC:-/usr/local/cuda/bin/nvcc}
threads_list=${THREADS:-1 2}
repeat=${REPEAT:-2}
distribution=${DISTRIBUTION:-static}
window=${WINDOW:-8}
config=${CONFIG:-v100}
workloads=${WORKLOADS:-va16 va20 mm256 mm512 bfs}
sets=()
for s in ${SETS:-}; do sets+=(--set "$s"); done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ -n "${PROGRAMS:-}" ]; then
  programs=$(cd "$PROGRAMS" && pwd)
  bfs="$programs/workload_bfs"
else
  programs=$work
  "$nvcc" -cudart shared -o "$work/vector_add" "$here/../timing/vector_add.cu"
  "$nvcc" -cudart shared -o "$work/matmul" "$here/../timing/matmul.cu"
  bfs="$build/sw/workloads/bin/workload_bfs"
fi

echo "host: $(nproc) CPUs; preset $config; window $window cycles; distribution $distribution; best of $repeat; load average $(cut -d' ' -f1-3 /proc/loadavg)${SETS:+; --set $SETS}"
header="%-22s %14s"
for t in $threads_list; do header+=" %10s"; done
for t in $threads_list; do [ "$t" = 1 ] || header+=" %9s"; done
for t in $threads_list; do [ "$t" = 1 ] || header+=" %8s"; done
label() { if [[ $1 == *r ]]; then echo "$1"; else echo "${1}t"; fi; }  # 2t: 2 threads, 2r: 2 ranks
args=(workload warp-instr)
for t in $threads_list; do args+=("wall-$(label "$t")"); done
for t in $threads_list; do [ "$t" = 1 ] || args+=("1t/$(label "$t")"); done
for t in $threads_list; do [ "$t" = 1 ] || args+=("$(label "$t")-runs"); done
printf "$header %s\n" "${args[@]}" "stats   windows  outside; bound at 2/8/16/64 threads"

bench() {  # name program args...
  local name=$1
  shift
  declare -A runs
  for ((r = 0; r < repeat; ++r)); do
    for t in $threads_list; do
      local start end launcher=() threads=$t
      if [[ $t == *r ]]; then  # N MPI ranks, one stepping thread each
        launcher=(mpirun --allow-run-as-root --oversubscribe -np "${t%r}")
        threads=1
      fi
      start=$(date +%s.%N)
      "${launcher[@]}" "$build/gpuvp" run ${launcher[@]:+--mpi} --config "$config" --threads "$threads" \
        --set "sim.sm_distribution=$distribution" \
        --set "sim.window=$window" --set sim.window_profile=true "${sets[@]}" \
        --stats "$work/stats_$t.json" -- "$@" > "$work/out.txt" 2> "$work/err_$t.txt" || {
        echo "$name: gpuvp run failed with $t threads"; cat "$work/out.txt" "$work/err_$t.txt"; exit 1; }
      end=$(date +%s.%N)
      local wall
      wall=$(python3 -c "print(float('$end') - float('$start'))")
      runs[$t]="${runs[$t]:-}${runs[$t]:+,}$wall"
    done
  done
  local walls=""
  for t in $threads_list; do walls+="$t=${runs[$t]} "; done
  python3 - "$work" "$name" "$walls" <<'PY'
import json, sys
work, name, walls = sys.argv[1], sys.argv[2], sys.argv[3].split()
runs = {k: [float(x) for x in v.split(",")] for k, v in (w.split("=") for w in walls)}
best = {t: min(r) for t, r in runs.items()}
def stripped(t):
    j = json.load(open("%s/stats_%s.json" % (work, t)))
    j["run"]["groups"].pop("bridge", None)  # host-side wall-clock counters
    for k in j["kernels"]:
        k["groups"].pop("bridge", None)
    return json.dumps(j, sort_keys=True)
threads = list(best)  # THREADS order, "1" first
ref = stripped(threads[0])
same = all(stripped(t) == ref for t in threads)
warps = json.load(open("%s/stats_%s.json" % (work, threads[0])))["run"]["groups"]["gpu"]["counters"]["warp_instructions"]["value"]
def verdict(t):  # do the runs' ranges separate, or is the difference inside this host's noise?
    if max(runs[t]) < min(runs["1"]):
        return "faster"
    if min(runs[t]) > max(runs["1"]):
        return "slower"
    return "overlap"
cols = (["%10.2f" % best[t] for t in threads] + ["%8.2fx" % (best["1"] / best[t]) for t in threads if t != "1"] +
        ["%8s" % verdict(t) for t in threads if t != "1"])
split = ""
import re
profile = open("%s/err_%s.txt" % (work, threads[0])).read()  # the last 1-thread run's
m = re.search(r"CPU ([0-9.]+) s in windows, ([0-9.]+) s in partitions, ([0-9.]+) s elsewhere", profile)
w = re.search(r"wall ([0-9.]+) s in windows, ([0-9.]+) s at boundaries", profile)
if m and w:
    win, part, rest = float(m.group(1)), float(m.group(2)), float(m.group(3))
    total = win + part + rest
    # Wall time of that run: inside the stepper's phases (one thread: its windows, partitions
    # and everything else of the phases) and outside them (start-up, the host program's own
    # work and copies, memory-side work while no SM is due, the end), where nothing runs beside
    # the SystemC thread whatever the thread count. In the phases the rest runs on the SystemC
    # thread beside the windows (sim.overlap) and a partition (the HBM's) on one pool thread: a
    # phase takes at least each of them and at least its share of all of it.
    wall = runs[threads[0]][-1]
    phases = float(w.group(1)) + float(w.group(2))
    outside = max(0.0, wall - phases)
    serial = max(0.0, phases - win - part)
    split = "   %4.0f %%  %4.0f %%; %s" % (
        100 * (win + part) / total, 100 * outside / wall,
        " ".join("%.2fx" % (wall / (outside + max(serial, part, phases / n))) for n in (2, 8, 16, 64)))
print("%-22s %14d %s %s%s" % (name, warps, " ".join(cols), "identical" if same else "DIFFER", split))
if not same:
    sys.exit(1)
PY
}
for w in $workloads; do
  case $w in
    va16) bench "vectorAdd 2^16" "$programs/vector_add" 65536 ;;
    va20) bench "vectorAdd 2^20" "$programs/vector_add" 1048576 ;;
    mm256) bench "matmul 256 (shared)" "$programs/matmul" 256 ;;
    mm512) bench "matmul 512 (shared)" "$programs/matmul" 512 ;;
    bfs) bench "bfs (irregular)" "$bfs" ;;
    *) echo "unknown workload '$w' (va16 va20 mm256 mm512 bfs)"; exit 2 ;;
  esac
done
echo "(wall: the whole gpuvp run, platform start-up and host program included; 1t/Nt > 1: N threads faster;"
echo " Nt-runs: faster / slower when every N-thread run beat / lost to every 1-thread run, overlap when the"
echo " two sets of runs overlap (the difference is inside this host's run-to-run noise);"
echo " windows: of the 1-thread run's process CPU time, the part spent with SMs running windows or"
echo " partitions (the HBM controllers with memory.hbm.partition) simulating beside them; outside: of its"
echo " wall time, the part outside the stepper's phases (start-up, the host program, memory-side work with"
echo " no SM due, the end), which no thread count shortens; bound: the speed-up those allow)"
