#!/usr/bin/env bash
# Configures and builds gpuvp into ${GPUVP_BUILD_DIR:-build}. Extra arguments go to cmake's configure step.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GPUVP_BUILD_DIR:-$root/build}
# The compiler cache keys on paths relative to the checkout, so a fresh clone elsewhere (CI's)
# reuses what an earlier build compiled.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=${GPUVP_BUILD_TYPE:-RelWithDebInfo} "$@" >/dev/null
cmake --build "$build" -j"$(nproc)"
