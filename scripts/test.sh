#!/usr/bin/env bash
# Command two: set up, build, and run the whole test suite.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
build=${GPUVP_BUILD_DIR:-$root/build}
cd "$build"
exec ctest --output-on-failure -j"$(nproc)" "$@"
