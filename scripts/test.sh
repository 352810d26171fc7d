#!/usr/bin/env bash
# Configure, build and run every test. Host tests always run; GPU tests run when a
# CUDA device is present and are reported as Skipped (not passed) when none is.
#   scripts/test.sh [ctest arguments...]     e.g. scripts/test.sh -L host
#   PRESET=ci scripts/test.sh                through a CMake preset (CI: warnings are errors)
#
# It sets itself up first. The tests need Catch2 (found by CMake), and matplotlib, pandas
# and pytest (for the python3 on PATH: the figures, the docs generator, the Python tests).
# When one is missing it installs it:
#   1. with apt-get (catch2, and python3-matplotlib, python3-pandas and python3-pytest when
#      python3 is the system's) when it runs as root or has passwordless sudo;
#   2. otherwise, where the network allows, Catch2 through CMake's download
#      (REDUCTION_FETCH_CATCH2=ON) and the Python packages with pip install --user;
#   3. otherwise it stops, exit 2, with one sentence naming what is missing, why it
#      could not be installed, and the command that installs it. Nothing is built.
# REDUCTION_NO_INSTALL=1 skips 1 and 2 (nothing is installed or downloaded).
# Environment: BUILD_DIR (default build, or the preset's), CMAKE_ARGS, JOBS, PRESET,
# REDUCTION_NO_INSTALL.
#
# The arguments go to ctest, and only these are taken (anything else, or an option
# without its value, is refused with exit 2 before anything is installed or built):
#   -L/--label-regex RE, -LE/--label-exclude RE, -R/--tests-regex RE,
#   -E/--exclude-regex RE, -j/--parallel N, --timeout S, --repeat until-pass:N (or
#   until-fail:N, after-timeout:N), -V/--verbose, -VV/--extra-verbose,
#   --output-on-failure, -N/--show-only, --rerun-failed, --stop-on-failure,
#   --schedule-random, -Q/--quiet, --progress.
#
# Reading the result: ctest's "100% tests passed, 0 tests failed out of N" counts a
# skipped test as passed. Without a GPU every GPU test is skipped; the lines after
# "The following tests did not run:" name them, each marked (Skipped). A skipped test
# was not run and proves nothing.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
program=test.sh

# The arguments, checked before anything is installed, configured or built.
ctest_value_options="-L --label-regex -LE --label-exclude -R --tests-regex -E --exclude-regex -j --parallel --timeout
  --repeat"
ctest_flags="-V --verbose -VV --extra-verbose --output-on-failure -N --show-only --rerun-failed --stop-on-failure
  --schedule-random -Q --quiet --progress"
args=("$@")
i=0
while [ "$i" -lt ${#args[@]} ]; do
  arg=${args[$i]}
  case "$arg" in
    -h | --help)
      script_help "${BASH_SOURCE[0]}"
      exit 0
      ;;
  esac
  # -j8 is -j 8.
  if [[ $arg =~ ^-j[0-9]+$ ]]; then
    check_whole_number "$program" "-j" "${arg#-j}" 1 1024
    i=$((i + 1))
    continue
  fi
  if [[ " $(echo $ctest_value_options) " == *" $arg "* ]]; then
    value=${args[$((i + 1))]:-}
    if [ $((i + 1)) -ge ${#args[@]} ] || [ -z "$value" ] || [[ $value == -* ]]; then
      case "$arg" in
        -L | --label-regex | -LE | --label-exclude) what="a label regular expression, such as host or gpu" ;;
        -R | --tests-regex | -E | --exclude-regex) what="a test-name regular expression, such as scripts" ;;
        -j | --parallel) what="a number of tests at a time, such as 4" ;;
        --timeout) what="seconds, such as 600" ;;
        --repeat) what="until-fail:N, until-pass:N or after-timeout:N" ;;
      esac
      refuse "$program" "$arg needs a value ($what)${value:+, not '$value'}."
    fi
    case "$arg" in
      -j | --parallel) check_whole_number "$program" "$arg" "$value" 1 1024 ;;
      --timeout) check_whole_number "$program" "$arg" "$value" 1 86400 ;;
      --repeat)
        [[ $value =~ ^(until-fail|until-pass|after-timeout):[1-9][0-9]{0,3}$ ]] ||
          refuse "$program" "--repeat '$value' is not until-fail:N, until-pass:N or after-timeout:N (N from 1)."
        ;;
    esac
    i=$((i + 2))
    continue
  fi
  if [[ " $(echo $ctest_flags) " == *" $arg "* ]]; then
    i=$((i + 1))
    continue
  fi
  refuse "$program" "'$arg' is not a ctest option this script passes on (it takes -L, -LE, -R, -E, -j, --timeout," \
    "--repeat, -V, -VV, --output-on-failure, -N, --rerun-failed, --stop-on-failure, --schedule-random, -Q and" \
    "--progress; see scripts/test.sh --help)."
done
check_build_env "$program"
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
# The Python packages the tests import (Debian's python3-NAME), those missing on one line.
python_modules="pandas pytest matplotlib"
missing_modules() {
  local m found=()
  for m in $python_modules; do "$python" -c "import $m" >/dev/null 2>&1 || found+=("$m"); done
  echo "${found[*]:-}"
}

python=$(command -v python3 || echo python3)
# Debian's python3-matplotlib (python3-pandas, python3-pytest) serves the system python3 only (prefix /usr), not a pyenv
# or virtual-environment one.
system_python=0
if [ "$("$python" -c 'import sys; print(sys.prefix)' 2>/dev/null)" = /usr ]; then system_python=1; fi

need_catch2=1
if catch2_found; then need_catch2=0; fi
need_python=$(missing_modules)
reasons=() # why what is missing could not be installed
missing() { [ "$need_catch2" -eq 1 ] || [ -n "$need_python" ]; }

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
  if [ -n "$need_python" ] && [ "$system_python" -eq 1 ]; then
    for m in $need_python; do packages+=("python3-$m"); done
  fi
  if [ "$sudo_prefix" != none ] && [ ${#packages[@]} -gt 0 ]; then
    echo "$program: installing ${packages[*]} for the tests (apt-get)" >&2
    # shellcheck disable=SC2086
    if $sudo_prefix env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 &&
      $sudo_prefix env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >&2; then
      if catch2_found; then need_catch2=0; fi
      need_python=$(missing_modules)
    else
      reasons+=("apt-get install ${packages[*]} failed")
    fi
  fi

  # 2. Downloads, where the network allows: Catch2 through CMake, the Python packages with pip.
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
  if [ -n "$need_python" ]; then
    if ! "$python" -m pip --version >/dev/null 2>&1; then
      reasons+=("$python has no pip")
    else
      echo "$program: installing $need_python for $python (pip install --user)" >&2
      # shellcheck disable=SC2086
      "$python" -m pip install --user --quiet --retries 1 --timeout 30 $need_python >/dev/null 2>&1 || true
      if [ -n "$(missing_modules)" ]; then reasons+=("pip install --user $need_python failed"); fi
      need_python=$(missing_modules)
    fi
  fi
fi

# 3. Otherwise: one sentence naming what is missing and the command that installs it.
if missing; then
  packages=()
  commands=()
  [ "$need_catch2" -eq 0 ] || packages+=(catch2)
  if [ -n "$need_python" ] && [ "$system_python" -eq 1 ]; then
    for m in $need_python; do packages+=("python3-$m"); done
  fi
  [ ${#packages[@]} -eq 0 ] || commands+=("'sudo apt-get install ${packages[*]}'")
  if [ -n "$need_python" ] && [ "$system_python" -eq 0 ]; then commands+=("'$python -m pip install $need_python'"); fi
  names=()
  [ "$need_catch2" -eq 0 ] || names+=(Catch2)
  # shellcheck disable=SC2206
  names+=($need_python)
  what=${names[0]}
  for ((k = 1; k < ${#names[@]}; k++)); do what+=$([ $k -eq $((${#names[@]} - 1)) ] && echo " and " || echo ", ")${names[$k]}; done
  [ -z "$need_python" ] || what+=" (for $python)"
  if [ ${#names[@]} -gt 1 ]; then what+=", which are"; else what+=", which is"; fi
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
