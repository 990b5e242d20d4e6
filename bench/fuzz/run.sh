#!/usr/bin/env bash
# Runs every libFuzzer target for SECONDS each (default 60), from the seed corpora in the repo.
# Usage: bench/fuzz/run.sh [SECONDS] [BUILD_DIR] [TARGET...]
#   TARGET: ptx fatbin cubin config trace elastic sweep stats command (default: all). Builds the
#   fuzzers first unless FUZZ_NO_BUILD=1. FUZZ_RUNS=N bounds each run by input count instead,
#   with the corpus reset to the seeds, so that a run is the same every time (what the test
#   suite's smoke runs use).
# Crashing inputs are written to BUILD_DIR/bench/fuzz/NAME-crash-*; a crash fails the run. Turn
# each into a regression test: copy it to bench/fuzz/regressions/NAME/ (the suite runs them).
set -euo pipefail
seconds="${1:-60}"
build="${2:-build}"
shift $(( $# < 2 ? $# : 2 ))
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=(ptx fatbin cubin config trace elastic sweep stats command); fi
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
build="$(cd "$build" && pwd)"

binary_of() {
  case "$1" in
    ptx) echo "$build/bench/ptx/ptx_parser_fuzzer" ;;
    *) echo "$build/bench/fuzz/$1_fuzzer" ;;
  esac
}
if [ "${FUZZ_NO_BUILD:-0}" != 1 ] && [ -z "${FUZZ_RUNS:-}" ]; then
  build_targets=()
  for t in "${targets[@]}"; do
    case "$t" in
      ptx) build_targets+=(gpuvp_ptx_parser_fuzz gpuvp_ptx_test_kernels gpuvp_ptx_bench_kernels) ;;
      *) build_targets+=("gpuvp_${t}_fuzz") ;;
    esac
  done
  cmake --build "$build" --target "${build_targets[@]}" -j"$(nproc)"
fi

mkdir -p "$build/bench/fuzz"
status=0
for t in "${targets[@]}"; do
  binary=$(binary_of "$t")
  corpus="$build/bench/fuzz/corpus-$t"
  if [ -n "${FUZZ_RUNS:-}" ]; then rm -rf "$corpus"; fi
  mkdir -p "$corpus"
  if [ "$t" = ptx ]; then
    cp -f "$build"/tests/ptx/*.ptx "$corpus"/ 2>/dev/null || true
  fi
  cp -f "$root/bench/fuzz/corpus/$t"/* "$corpus"/ 2>/dev/null || true
  limit=(-max_total_time="$seconds")
  if [ -n "${FUZZ_RUNS:-}" ]; then limit=(-runs="$FUZZ_RUNS"); fi
  # The command target's platform lives across inputs (its memory is the soak's concern), and
  # LeakSanitizer does not scan SystemC's coroutine stacks: no per-input leak check there; its
  # inputs may wait up to 8 s for a channel to be freed.
  extra=()
  if [ "$t" = command ]; then extra=(-detect_leaks=0 -timeout=30); fi
  log="$build/bench/fuzz/$t.log"
  start=$(date +%s)
  set +e
  "$binary" "${limit[@]}" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -seed=1 "${extra[@]}" \
    -artifact_prefix="$build/bench/fuzz/$t-" "$corpus" >"$log" 2>&1
  rc=$?
  set -e
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  if [ $rc -eq 0 ]; then
    echo "fuzz $t: ok, $runs inputs in $(( $(date +%s) - start )) s, 0 crashes"
  else
    echo "fuzz $t: FAILED (exit $rc) after $(( $(date +%s) - start )) s; log: $log"
    tail -n 40 "$log"
    status=1
  fi
done
exit $status
