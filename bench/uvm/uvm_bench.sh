#!/bin/sh
# Unified-memory bench: the `stream` program of sw/workloads/uvm under every prefetcher, one table
# of kernel cycles, far faults and migrated bytes (seed 003's qualitative result: TBNp faults
# least and runs fastest on a stream), then the host wall time of a fault-bound run (no
# prefetcher) at the default and at twice the fault latency: idle skipping makes the simulated
# fault time free, so the wall-time ratio stays near 1 while the kernel cycles grow.
#   bench/uvm/uvm_bench.sh [BUILD_DIR]     (default: build)
set -eu
build=${1:-build}
gpuvp="$build/platform/cli/gpuvp"
[ -x "$gpuvp" ] || gpuvp=$(find "$build" -name gpuvp -type f -perm -u+x | head -n 1)
suite="$build/sw/workloads/bin/uvm_suite"
[ -x "$gpuvp" ] && [ -x "$suite" ] || { echo "uvm_bench: build gpuvp and gpuvp_uvm_suite first ($build)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

counter() { jq -r ".run.groups[\"$2\"].counters.$3.value" "$1"; }
run() {  # run NAME PROGRAM SETTINGS...  -> $tmp/NAME.json, wall seconds in $tmp/NAME.wall
  name=$1; program=$2; shift 2
  sets=""
  for s in "$@"; do sets="$sets --set $s"; done
  start=$(date +%s.%N)
  # shellcheck disable=SC2086
  "$gpuvp" run --stats "$tmp/$name.json" $sets -- "$suite" "$program" > "$tmp/$name.out" 2>&1 ||
    { cat "$tmp/$name.out" >&2; exit 1; }
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l > "$tmp/$name.wall"
  grep -q "PASS uvm $program" "$tmp/$name.out" || { cat "$tmp/$name.out" >&2; exit 1; }
}

printf '%-18s %14s %12s %16s %12s\n' prefetcher kernel_cycles far_faults migrated_bytes accuracy
for p in none random sequential_local tbn; do
  run "$p" stream "uvm.prefetcher=$p"
  f="$tmp/$p.json"
  printf '%-18s %14s %12s %16s %12s\n' "$p" "$(counter "$f" gpu cycles)" "$(counter "$f" uvm.gmmu far_faults)" \
    "$(counter "$f" uvm.gmmu migrated_bytes)" "$(jq -r '.run.groups["uvm.gmmu"].ratios.prefetch_accuracy.value' "$f")"
done
best_faults=$(for p in none random sequential_local tbn; do echo "$(counter "$tmp/$p.json" uvm.gmmu far_faults) $p"; done | sort -n | head -n 1 | cut -d' ' -f2)
best_time=$(for p in none random sequential_local tbn; do echo "$(counter "$tmp/$p.json" gpu cycles) $p"; done | sort -n | head -n 1 | cut -d' ' -f2)
echo "fewest faults: $best_faults; fewest kernel cycles: $best_time (seed 003: tbn for both)"

run lat1 stream uvm.prefetcher=none
run lat2 stream uvm.prefetcher=none uvm.fault_latency=90us
echo "fault-bound run (no prefetcher), fault latency 45 us -> 90 us:"
echo "  kernel cycles x$(echo "$(counter "$tmp/lat2.json" gpu cycles) / $(counter "$tmp/lat1.json" gpu cycles)" | bc -l | cut -c1-5)" \
     " host wall time x$(echo "$(cat "$tmp/lat2.wall") / $(cat "$tmp/lat1.wall")" | bc -l | cut -c1-5)"
