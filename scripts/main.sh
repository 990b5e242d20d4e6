#!/usr/bin/env bash
# Command one: set up, build, and run gpuvp's main job on its built-in default configuration
# (v100): a bundled, unmodified CUDA program (vectorAdd, built with `nvcc -cudart shared`) run
# end to end on the platform, printing its output and the platform's statistics.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
build=${GPUVP_BUILD_DIR:-$root/build}
"$build/gpuvp" info "$@"
echo
exec "$build/gpuvp" run "$@" --stats "$build/vector_add-stats.json" -- "$build/sw/workloads/bin/workload_vector_add"
