#!/bin/sh
# Speed work on the timing model must not change any simulated result: runs vectorAdd through
# bench/sm's wiring (GpuCore + crossbar + L2 slices + HBM) and compares the SHA-256 of its
# statistics JSON (every counter, histogram and the last core cycle) with the figures recorded
# before the speed work began.
# The bench uses the knobs' declared defaults: a deliberate change of a default (or of the model)
# changes the figures; re-record them then (bench/sm/check_stats.sh BENCH --print) in the same
# commit, saying why.
#   bench/sm/check_stats.sh build-dir/bench/sm/gpuvp_sm_bench [--print]
set -eu
bench=${1:?usage: check_stats.sh path/to/gpuvp_sm_bench}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
while read -r n expected; do
  "$bench" "$n" "$tmp/stats.json" > /dev/null
  got=$(sha256sum "$tmp/stats.json" | cut -d' ' -f1)
  if [ "${2:-}" = "--print" ]; then echo "$n $got"; continue; fi
  if [ "$got" = "$expected" ]; then echo "vectorAdd $n: stats identical"
  else echo "vectorAdd $n: stats CHANGED ($got, expected $expected)"; status=1; fi
done <<'HASHES'
65536 a05e547d51d33aa10401a18a6c0de318a49c28cabde2a3a1c56cce6b8f712a91
262144 c0641cdf256e2d6eac4df38423d7dda871bd95e9e8ad69413cf33eb84c17b3c2
1048576 7198ae82f42b0f0d5cfcbe592a5cdaf8da1ee486f17abfabb8fb2ece076edb83
HASHES
exit $status
