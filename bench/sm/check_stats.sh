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
# within 10 %). Re-recorded for the SM's constant and instruction caches: kernel parameters now come through
# the SM's constant cache and instructions through its instruction cache, both filled from L2
# (new statistics, and the cold fills at each SM's start move the cycles: vectorAdd 2^18
# 3999 -> 6800 core cycles).
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
65536 785e8d13b7113ffbdfa77b876b8d1574e0c524b05519e50f7cd1b1877f2495b4
262144 8af9f0c43e8c884bc76cb8997ca1c9de788cc1013bb3344f2548beee551ebefa
1048576 d86cbdd9f09ba19cd56b731ef0c32bbc8002f86dba345ecb6e908b5e2f30eaf7
HASHES
exit $status
