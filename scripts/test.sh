#!/usr/bin/env bash
# Command two: set up, build, and run the whole test suite; then the sanitizer stage.
#
# Sanitizer stage: a second tree (${GPUVP_SANITIZE_BUILD_DIR:-build-sanitize}) configured with
# GPUVP_SANITIZE=ON (AddressSanitizer + UndefinedBehaviorSanitizer) builds what the unit, config,
# bridge, runtime (driver, transport, fatbin parser) and conformance (every workload on the PTX
# model) tests need and runs those tests (ctest labels); any sanitizer report fails its test and
# the run. The `gpuvp run` tests stay in the main tree: they need the whole platform and nvcc-built
# programs loading an instrumented libcudart (docs/hardening.md). ThreadSanitizer covers the
# parallel paths in the main tree (parallel_tsan_stepping). GPUVP_SANITIZE_STAGE=0 skips the stage.
# docs/hardening.md says more.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
build=${GPUVP_BUILD_DIR:-$root/build}
(cd "$build" && ctest --output-on-failure -j"$(nproc)" "$@")

if [ "${GPUVP_SANITIZE_STAGE:-1}" = 0 ]; then exit 0; fi
sanitize_build=${GPUVP_SANITIZE_BUILD_DIR:-$root/build-sanitize}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}  # as scripts/build.sh
start=$(date +%s)
cmake -S "$root" -B "$sanitize_build" -G Ninja -DCMAKE_BUILD_TYPE=${GPUVP_BUILD_TYPE:-RelWithDebInfo} \
      -DGPUVP_SANITIZE=ON >/dev/null
cmake --build "$sanitize_build" -j"$(nproc)" --target \
  stats_test tlm_conventions_test testbench_test config_tests bridge_tests systemc_or_list_leak \
  gpuvp_driver_tests gpuvp_fatbin_tests conformance_test
cd "$sanitize_build"
# A test that fails is run once more (a guard against a test that fails for timing under the
# sanitizers' slowdown); any sanitizer report in the output fails the stage all the same.
log="$sanitize_build/sanitizer-stage.log"
status=0
ctest --output-on-failure -j"$(nproc)" --repeat until-pass:2 -L '^(unit|config|bridge|runtime|conformance)$' \
  2>&1 | tee "$log" || status=1
# Any sanitizer report fails the stage, also one whose test passed when run again.
if grep -qE "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|AddressSanitizer: CHECK failed" "$log"; then
  echo "sanitizer stage: a sanitizer reported (above; the whole log: $log)"
  status=1
fi
echo "sanitizer stage: $(( $(date +%s) - start )) s"
exit $status
