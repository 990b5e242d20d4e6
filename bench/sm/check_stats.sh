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
# the L2 fill latency and data width and the HBM controller latency changed the defaults.
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
65536 2c2276ea30cdedff197acccc8cfe4dfecffc36193f16d6089bd6390c0f2a80ab
262144 47463bda4b8c31aa2fd6a74cf6470bffc61183e91966e7ac62e5db52ca588c28
1048576 179cbc5ab7da2c626f8c4cf11984b4642a5710391ad150b29bacf7406cc473e2
HASHES
exit $status
