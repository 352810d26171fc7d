#!/usr/bin/env bash
# Build every stage, then verify and time them all on the GPU and print the table.
#   scripts/run_all.sh [reduce options...]   e.g. scripts/run_all.sh --n 2^28 --csv out.csv
# Needs no test framework: it configures with REDUCTION_BUILD_TESTS=AUTO, so the tests
# are built only when Catch2 is found (scripts/test.sh installs it), whatever an earlier
# run or a preset asked for. With no CUDA device it still builds, then says so and
# exits 3.
# Environment: BUILD_DIR (default build), CMAKE_ARGS, JOBS, PRESET. A bad JOBS, PRESET or
# BUILD_DIR (a file, say) is refused (exit 2) before anything is configured; the runner
# refuses its own bad options the same way.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
check_build_env run_all.sh
configure_and_build -DREDUCTION_BUILD_TESTS=AUTO
exec "$(build_dir)/reduction/reduce" "$@"
