#!/usr/bin/env bash
# Configure, build and run every test. Host tests always run; GPU tests run when a
# CUDA device is present and are reported as Skipped (not passed) when none is.
#   scripts/test.sh [ctest arguments...]     e.g. scripts/test.sh -L host
#   PRESET=ci scripts/test.sh                through a CMake preset (CI: warnings are errors)
#
# It sets itself up first. The tests need Catch2 (found by CMake) and matplotlib (for the
# python3 on PATH). When one is missing it installs it:
#   1. with apt-get (catch2, python3-matplotlib) when it runs as root or has
#      passwordless sudo;
#   2. otherwise, where the network allows, Catch2 through CMake's download
#      (REDUCTION_FETCH_CATCH2=ON) and matplotlib with pip install --user;
#   3. otherwise it stops, exit 2, with one sentence naming what is missing and the
#      command that installs it.
# REDUCTION_NO_INSTALL=1 skips 1 and 2 (nothing is installed or downloaded).
# Environment: BUILD_DIR (default build, or the preset's), CMAKE_ARGS, JOBS, PRESET,
# REDUCTION_NO_INSTALL.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
program=test.sh
build=$(build_dir)
fetch_catch2=()

# Catch2 as the build will look for it (CMAKE_PREFIX_PATH and CMAKE_ARGS included), or
# downloaded at configure time when CMAKE_ARGS or the build directory asks for that.
catch2_found() {
  case " ${CMAKE_ARGS:-} ${fetch_catch2[*]:-} " in *REDUCTION_FETCH_CATCH2=ON*) return 0 ;; esac
  if grep -qs '^REDUCTION_FETCH_CATCH2:BOOL=ON$' "$build/CMakeCache.txt"; then return 0; fi
  local probe rc=0
  probe=$(mktemp -d "${TMPDIR:-/tmp}/catch2_probe.XXXXXX")
  printf '%s\n' 'cmake_minimum_required(VERSION 3.24)' 'project(catch2_probe NONE)' 'find_package(Catch2 QUIET)' \
    'if(NOT Catch2_FOUND)' '  message(FATAL_ERROR "Catch2 was not found")' 'endif()' >"$probe/CMakeLists.txt"
  # shellcheck disable=SC2086
  cmake -S "$probe" -B "$probe/build" ${CMAKE_ARGS:-} >/dev/null 2>&1 || rc=$?
  rm -rf "$probe"
  return "$rc"
}
matplotlib_found() { python3 -c 'import matplotlib' >/dev/null 2>&1; }

# "" (root) or "sudo" when apt-get may be run, else failure.
system_installer() {
  [ -z "${REDUCTION_NO_INSTALL:-}" ] || return 1
  command -v apt-get >/dev/null 2>&1 || return 1
  if [ "$(id -u)" = 0 ]; then
    echo ""
  elif command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
    echo sudo
  else
    return 1
  fi
}

need_catch2=1
need_matplotlib=1
if catch2_found; then need_catch2=0; fi
if matplotlib_found; then need_matplotlib=0; fi

if [ $((need_catch2 + need_matplotlib)) -gt 0 ] && sudo_prefix=$(system_installer); then
  packages=()
  [ "$need_catch2" -eq 0 ] || packages+=(catch2)
  [ "$need_matplotlib" -eq 0 ] || packages+=(python3-matplotlib)
  echo "$program: installing ${packages[*]} for the tests (apt-get)" >&2
  # shellcheck disable=SC2086
  if $sudo_prefix env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 &&
    $sudo_prefix env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >&2; then
    if catch2_found; then need_catch2=0; fi
    if matplotlib_found; then need_matplotlib=0; fi
  else
    echo "$program: apt-get could not install ${packages[*]}" >&2
  fi
fi

if [ "$need_catch2" -eq 1 ] && [ -z "${REDUCTION_NO_INSTALL:-}" ] && command -v git >/dev/null 2>&1 &&
  timeout 30 git ls-remote --exit-code https://github.com/catchorg/Catch2.git refs/tags/v3.5.4 >/dev/null 2>&1; then
  echo "$program: Catch2 is not installed; CMake will download Catch2 3.5.4 (REDUCTION_FETCH_CATCH2=ON)" >&2
  fetch_catch2=(-DREDUCTION_FETCH_CATCH2=ON)
  need_catch2=0
fi

if [ "$need_matplotlib" -eq 1 ] && [ -z "${REDUCTION_NO_INSTALL:-}" ] && python3 -m pip --version >/dev/null 2>&1; then
  echo "$program: installing matplotlib for $(command -v python3) (pip install --user)" >&2
  if python3 -m pip install --user --quiet --retries 1 --timeout 30 matplotlib >&2 && matplotlib_found; then
    need_matplotlib=0
  fi
fi

if [ $((need_catch2 + need_matplotlib)) -gt 0 ]; then
  python=$(command -v python3 || echo python3)
  packages=()
  if [ "$need_catch2" -eq 1 ] && [ "$need_matplotlib" -eq 1 ]; then
    what="Catch2 and matplotlib (for $python), which are"
    packages=(catch2 python3-matplotlib)
  elif [ "$need_catch2" -eq 1 ]; then
    what="Catch2, which is"
    packages=(catch2)
  else
    what="matplotlib (for $python), which is"
    packages=(python3-matplotlib)
  fi
  if [ -n "${REDUCTION_NO_INSTALL:-}" ]; then
    why="REDUCTION_NO_INSTALL is set"
  else
    why="apt-get needs root or passwordless sudo, and the download needs a network"
  fi
  alternative=""
  [ "$need_matplotlib" -eq 0 ] || alternative=" (or, for matplotlib, python3 -m pip install --user matplotlib)"
  echo "$program: the tests need $what not installed and cannot be installed here ($why): install with" \
    "'sudo apt-get install ${packages[*]}'$alternative, then run scripts/test.sh again." >&2
  exit 2
fi

configure_and_build -DREDUCTION_BUILD_TESTS=ON "${fetch_catch2[@]}"
cd "$build"
ctest --output-on-failure --no-tests=error "$@"
