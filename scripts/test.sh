#!/usr/bin/env bash
# Configure, build and run every test. Host tests always run; GPU tests run when a
# CUDA device is present and are reported as Skipped (not passed) when none is.
#   scripts/test.sh [ctest arguments...]     e.g. scripts/test.sh -L host
#   PRESET=ci scripts/test.sh                through a CMake preset (CI: warnings are errors)
#
# It sets itself up first. The tests need Catch2 (found by CMake) and matplotlib (for the
# python3 on PATH). When one is missing it installs it:
#   1. with apt-get (catch2, and python3-matplotlib when python3 is the system's) when
#      it runs as root or has passwordless sudo;
#   2. otherwise, where the network allows, Catch2 through CMake's download
#      (REDUCTION_FETCH_CATCH2=ON) and matplotlib with pip install --user;
#   3. otherwise it stops, exit 2, with one sentence naming what is missing, why it
#      could not be installed, and the command that installs it. Nothing is built.
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
  printf '%s\n' 'cmake_minimum_required(VERSION 3.24)' 'project(catch2_probe LANGUAGES CXX)' 'find_package(Catch2 QUIET)' \
    'if(NOT Catch2_FOUND)' '  message(FATAL_ERROR "Catch2 was not found")' 'endif()' >"$probe/CMakeLists.txt"
  # shellcheck disable=SC2086
  cmake -S "$probe" -B "$probe/build" ${CMAKE_ARGS:-} >/dev/null 2>&1 || rc=$?
  rm -rf "$probe"
  return "$rc"
}
matplotlib_found() { "$python" -c 'import matplotlib' >/dev/null 2>&1; }

python=$(command -v python3 || echo python3)
# Debian's python3-matplotlib serves the system python3 only (prefix /usr), not a pyenv
# or virtual-environment one.
system_python=0
if [ "$("$python" -c 'import sys; print(sys.prefix)' 2>/dev/null)" = /usr ]; then system_python=1; fi

need_catch2=1
need_matplotlib=1
if catch2_found; then need_catch2=0; fi
if matplotlib_found; then need_matplotlib=0; fi
reasons=() # why what is missing could not be installed
missing() { [ $((need_catch2 + need_matplotlib)) -gt 0 ]; }

# 1. apt-get, as root or with passwordless sudo.
if missing && [ -n "${REDUCTION_NO_INSTALL:-}" ]; then
  reasons+=("REDUCTION_NO_INSTALL is set")
elif missing; then
  sudo_prefix=none
  if ! command -v apt-get >/dev/null 2>&1; then
    reasons+=("there is no apt-get")
  elif [ "$(id -u)" = 0 ]; then
    sudo_prefix=""
  elif command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
    sudo_prefix=sudo
  else
    reasons+=("apt-get needs root or passwordless sudo")
  fi
  packages=()
  [ "$need_catch2" -eq 0 ] || packages+=(catch2)
  [ "$need_matplotlib" -eq 0 ] || [ "$system_python" -eq 0 ] || packages+=(python3-matplotlib)
  if [ "$sudo_prefix" != none ] && [ ${#packages[@]} -gt 0 ]; then
    echo "$program: installing ${packages[*]} for the tests (apt-get)" >&2
    # shellcheck disable=SC2086
    if $sudo_prefix env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 &&
      $sudo_prefix env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >&2; then
      if catch2_found; then need_catch2=0; fi
      if matplotlib_found; then need_matplotlib=0; fi
    else
      reasons+=("apt-get install ${packages[*]} failed")
    fi
  fi

  # 2. Downloads, where the network allows: Catch2 through CMake, matplotlib with pip.
  if [ "$need_catch2" -eq 1 ]; then
    if ! command -v git >/dev/null 2>&1; then
      reasons+=("there is no git to download Catch2 with")
    elif timeout 30 git ls-remote --exit-code https://github.com/catchorg/Catch2.git refs/tags/v3.5.4 \
      >/dev/null 2>&1; then
      echo "$program: Catch2 is not installed; CMake will download Catch2 3.5.4 (REDUCTION_FETCH_CATCH2=ON)" >&2
      fetch_catch2=(-DREDUCTION_FETCH_CATCH2=ON)
      need_catch2=0
    else
      reasons+=("github.com cannot be reached to download Catch2")
    fi
  fi
  if [ "$need_matplotlib" -eq 1 ]; then
    if ! "$python" -m pip --version >/dev/null 2>&1; then
      reasons+=("$python has no pip")
    else
      echo "$program: installing matplotlib for $python (pip install --user)" >&2
      if "$python" -m pip install --user --quiet --retries 1 --timeout 30 matplotlib >/dev/null 2>&1 &&
        matplotlib_found; then
        need_matplotlib=0
      else
        reasons+=("pip install --user matplotlib failed")
      fi
    fi
  fi
fi

# 3. Otherwise: one sentence naming what is missing and the command that installs it.
if missing; then
  packages=()
  commands=()
  [ "$need_catch2" -eq 0 ] || packages+=(catch2)
  if [ "$need_matplotlib" -eq 1 ] && [ "$system_python" -eq 1 ]; then packages+=(python3-matplotlib); fi
  [ ${#packages[@]} -eq 0 ] || commands+=("'sudo apt-get install ${packages[*]}'")
  if [ "$need_matplotlib" -eq 1 ] && [ "$system_python" -eq 0 ]; then commands+=("'$python -m pip install matplotlib'"); fi
  if [ "$need_catch2" -eq 1 ] && [ "$need_matplotlib" -eq 1 ]; then
    what="Catch2 and matplotlib (for $python), which are"
  elif [ "$need_catch2" -eq 1 ]; then
    what="Catch2, which is"
  else
    what="matplotlib (for $python), which is"
  fi
  why=$(
    IFS=';'
    echo "${reasons[*]}" | sed 's/;/; /g'
  )
  how=${commands[0]}
  [ ${#commands[@]} -lt 2 ] || how="${commands[0]} and ${commands[1]}"
  echo "$program: the tests need $what not installed and cannot be installed here ($why): install with $how," \
    "then run scripts/test.sh again." >&2
  exit 2
fi

configure_and_build -DREDUCTION_BUILD_TESTS=ON "${fetch_catch2[@]}"
cd "$build"
ctest --output-on-failure --no-tests=error "$@"
