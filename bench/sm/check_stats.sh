#!/bin/sh
# Speed work on the timing model must not change any simulated result: runs vectorAdd through
# bench/sm's wiring (GpuCore + crossbar + L2 slices + HBM) and compares the SHA-256 of its
# statistics JSON (every counter, histogram and the last core cycle) with the figures recorded
# before the speed work began.
# The bench uses the knobs' declared defaults: a deliberate change of a default (or of the model)
# changes the figures; re-record them then (bench/sm/check_stats.sh BENCH --print) in the same
# commit, saying why. Re-recorded once for issue 6: one SmStepper replaced the per-SM SC_THREADs,
# so launches and responses now take effect on the next edge and SMs act in index order
# within a cycle (documented in models/gpu/sm/README.md). Re-recorded for issue 5's validation:
# the L2 fill latency and data width and the HBM controller latency changed the defaults (and
# the SM's lost-wake fix, 93e9529, moved one late response on 2^20). Re-recorded for issue 5's
# speed goal: the HBM controller, the crossbar and the L2 slices (all slices together) each run
# all their wakes in one process
# (models/memory/wake_queue.h), so same-instant wakes of their channels/ports now run in a
# fixed key order instead of SystemC's timed-queue order (gpuvp validate: every figure still
# within 10 %). Re-recorded for the SM's instruction cache (instructions fetched from L2 into a
# per-SM cache; new statistics; vectorAdd 2^18 3999 -> 3975 core cycles).
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
65536 eab97853a465cb3f6ecb921f0d2334e99c106a1316d21f3af0eb322c83977a3a
262144 4bf19ebb0d35d8710a996708cc08a7169bf6b66d6b89a6dc59cb97019f3a9998
1048576 b2238318a0bc3c94ba09fb6b86ed68dd8438895462de8846a3575903465b12cf
HASHES
exit $status
