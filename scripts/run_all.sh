#!/usr/bin/env bash
# Build every stage, then verify and time them all on the GPU and print the table.
#   scripts/run_all.sh [reduce options...]   e.g. scripts/run_all.sh --n 2^28 --csv out.csv
# With no CUDA device it still builds, then says so and exits non-zero.
# Environment: BUILD_DIR (default build), CMAKE_ARGS, JOBS.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
configure_and_build
exec "${BUILD_DIR:-$(repo_root)/build}/reduction/reduce" "$@"
