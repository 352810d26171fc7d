#!/usr/bin/env bash
# Configure, build and run every test. Host tests always run; GPU tests run when a
# CUDA device is present and are reported as Skipped (not passed) when none is.
#   scripts/test.sh [ctest arguments...]     e.g. scripts/test.sh -L host
# Environment: BUILD_DIR (default build), CMAKE_ARGS, JOBS.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
configure_and_build
cd "${BUILD_DIR:-$(repo_root)/build}"
ctest --output-on-failure "$@"
