#!/usr/bin/env bash
# Build every stage, then verify and time them all on the GPU and print the table.
#   scripts/run_all.sh [reduce options...]   e.g. scripts/run_all.sh --n 2^28 --csv out.csv
# Needs no test framework: the tests are built only when Catch2 is found (a new build
# directory is configured with REDUCTION_BUILD_TESTS=AUTO; scripts/test.sh installs it).
# With no CUDA device it still builds, then says so and exits 3.
# Environment: BUILD_DIR (default build), CMAKE_ARGS, JOBS, PRESET.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
configure_and_build
exec "$(build_dir)/reduction/reduce" "$@"
