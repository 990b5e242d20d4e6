#!/usr/bin/env bash
# Runs the PTX parser fuzzer for a fixed time (default 60 s), seeded with nvcc's PTX.
# Usage: bench/ptx/fuzz.sh [seconds] [build-dir] [--no-build]
# FUZZ_RUNS=N bounds the run by input count instead (with -seed=1 the same inputs every time,
# which is what the test suite uses so that a failure reproduces).
set -euo pipefail
seconds="${1:-60}"
build="${2:-build}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
if [ "${3:-}" != "--no-build" ]; then
  cmake --build "$build" --target gpuvp_ptx_parser_fuzz gpuvp_ptx_test_kernels gpuvp_ptx_bench_kernels -j2
fi
corpus="$build/bench/ptx/fuzz-corpus"
# A bounded run starts from the seeds alone, so that it is the same run every time.
if [ -n "${FUZZ_RUNS:-}" ]; then rm -rf "$corpus"; fi
mkdir -p "$corpus"
cp -f "$build"/tests/ptx/*.ptx "$build"/bench/ptx/*.ptx "$corpus"/ 2>/dev/null || true
limit=(-max_total_time="$seconds")
if [ -n "${FUZZ_RUNS:-}" ]; then limit=(-runs="$FUZZ_RUNS"); fi
exec "$build/bench/ptx/ptx_parser_fuzzer" "${limit[@]}" -max_len=65536 -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1 -seed=1 \
  -artifact_prefix="$build/bench/ptx/" "$corpus"
