#!/bin/sh
# Speed work on the timing model must not change any simulated result: runs vectorAdd through
# bench/sm's wiring (GpuCore + crossbar + L2 slices + HBM) and compares the SHA-256 of its
# statistics JSON (every counter, histogram and the last core cycle) with the figures recorded
# before the speed work began.
# The bench uses the knobs' declared defaults: a deliberate change of a default (or of the model)
# changes the figures; re-record them then (bench/sm/check_stats.sh BENCH --print) in the same
# commit, saying why. Re-recorded once for issue 6: one SmStepper replaced the per-SM SC_THREADs,
# so launches and responses now take effect on the next edge and SMs act in index order
# within a cycle (documented in models/gpu/sm/README.md).
#   bench/sm/check_stats.sh build-dir/bench/sm/gpuvp_sm_bench [--print]
set -eu
bench=${1:?usage: check_stats.sh path/to/gpuvp_sm_bench}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
# Each size runs with every thread count in THREADS (default "1 2"): sim.threads must never
# change a statistic either.
while read -r n expected; do
  for threads in ${THREADS:-1 2}; do
    GPUVP_THREADS=$threads "$bench" "$n" "$tmp/stats.json" > /dev/null
    got=$(sha256sum "$tmp/stats.json" | cut -d' ' -f1)
    if [ "${2:-}" = "--print" ]; then echo "$n $got"; break; fi
    if [ "$got" = "$expected" ]; then echo "vectorAdd $n, $threads thread(s): stats identical"
    else echo "vectorAdd $n, $threads thread(s): stats CHANGED ($got, expected $expected)"; status=1; fi
  done
done <<'HASHES'
65536 a106603d698b4e10a528b17cce3a25d94bcaa308dfc11c423fc9aab0ef699f5f
262144 a26d6bea115fb443a2524026f37a8f6c9293a207e9564fd39ae725ce5148a5d2
1048576 e1143eaf4176b74781c5de9243a040c7b9e2d73ce6f8fda5c9709f99ce8e8ebe
HASHES
exit $status
