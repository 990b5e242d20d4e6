#!/usr/bin/env bash
# Soak test of `gpuvp serve`: four clients loop over the workload programs against one
# served platform while one client is SIGKILLed every few seconds; at the end it checks that every
# program that was not killed was correct, that the platform's RSS and open file descriptors are
# flat, that no request was lost, and that the platform still serves a program.
#
# Usage: bench/soak/run.sh MINUTES [options]        (bench/soak/run.sh --help lists the options)
#   e.g. bench/soak/run.sh 1                          what CI runs (ctest -L soak)
#        bench/soak/run.sh 20 --seed 7                a longer run with another kill schedule
# The build folder is build/ (or $GPUVP_BUILD_DIR, or --build-dir). Exit status 0: passed;
# 1: a check failed (or the CUDA workload programs are not built); 2: bad usage (or an unknown
# workload).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
exec python3 "$root/bench/soak/soak.py" --root "$root" "$@"
