#!/usr/bin/env bash
# Command one: set up, build, and run gpuvp's main job on its built-in default configuration.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
build=${GPUVP_BUILD_DIR:-$root/build}
"$build/gpuvp" info "$@"
echo
exec "$build/gpuvp" pcie-sweep --stats "$build/pcie-sweep-stats.json" "$@"
