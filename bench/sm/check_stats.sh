#!/bin/sh
# Speed work on the timing model must not change any simulated result: runs vectorAdd through
# bench/sm's wiring (GpuCore + crossbar + L2 slices + HBM) and compares the SHA-256 of its
# statistics JSON (every counter, histogram and the last core cycle) with the figures recorded
# when they were last re-recorded.
# The bench uses the knobs' declared defaults: a deliberate change of a default (or of the model)
# changes the figures; re-record them then (bench/sm/check_stats.sh BENCH --print) in the same
# commit, saying why (git log of this file lists every re-recording and its reason).
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
65536 e1ac42fc317ff0c9b7fb1dbffa9a7f5026dcd3876b9195177b44350b8f6ae397
262144 e9b605f119f2e67366336da40053fb0de79cab45c01b0c1522ae7c9acddf2dd7
1048576 39b73463a3da1da9b0c8065f5326218d63087c7bdaaa4cecd04e81e090b22a8f
HASHES
exit $status
