# shellcheck shell=bash
# Shared by the scripts. Sourced, not run.
#  - Refusals as the programs make them: one sentence on stderr naming the value and
#    what is allowed, exit 2, before anything is written (refuse, check_whole_number,
#    check_output_file, check_output_dir, check_build_env); exit 3 when a script that
#    needs a GPU finds none, before it builds or writes (detect_gpu).
#  - Files written whole: tee_atomic and log_to write through a new file beside the
#    target, renamed into place at the end (scripts/output_files.py holds the rules,
#    for the Python scripts too).
#  - Configure and build the project into a build directory. Honours BUILD_DIR,
#    CMAKE_ARGS (extra configure arguments), JOBS and PRESET (a configure preset of
#    CMakePresets.json, such as ci: its settings and, unless BUILD_DIR says otherwise,
#    its build directory).

repo_root() { cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd; }

# refuse PROGRAM SENTENCE...: the words, joined by spaces, as one sentence on stderr
# after "PROGRAM: ", then exit 2 (bad usage).
refuse() {
  local program=$1
  shift
  echo "$program: $*" >&2
  exit 2
}

# script_help SCRIPT: prints the comment block at the top of SCRIPT (its help), without
# the "#" marks.
script_help() { sed -n '2,/^[^#]/p' "$1" | sed -e '$d' -e 's/^# \{0,1\}//'; }

# check_whole_number PROGRAM WHAT VALUE MIN MAX: refuses VALUE unless it is a whole
# number (digits only) from MIN to MAX.
check_whole_number() {
  if ! [[ $3 =~ ^[0-9]{1,9}$ ]] || [ "$((10#$3))" -lt "$4" ] || [ "$((10#$3))" -gt "$5" ]; then
    refuse "$1" "$2 '$3' is not a whole number from $4 to $5."
  fi
}

# check_output_file PROGRAM WHAT PATH: refuses (exit 2) a PATH that cannot be written as
# an output file (scripts/output_files.py problem()). Writes nothing.
check_output_file() {
  local sentence
  sentence=$(python3 "$(repo_root)/scripts/output_files.py" file "$2" "$3") || refuse "$1" "$sentence"
}

# check_output_dir PROGRAM WHAT PATH: refuses (exit 2) a PATH that is not a folder files
# can be written in, or cannot be made one (output_files.py directory_problem()).
# Creates nothing.
check_output_dir() {
  local sentence
  sentence=$(python3 "$(repo_root)/scripts/output_files.py" dir "$2" "$3") || refuse "$1" "$sentence"
}

# tee_atomic FILE: as tee FILE, but FILE is written through a new file beside it and
# renamed into place when the input ends, so it is never left partly written and
# nothing else is touched (an interrupted run leaves FILE as it was). Runs in a
# subshell of its own. Exit status: tee's, or 1 when FILE could not be written.
tee_atomic() (
  target=$1
  helper="$(repo_root)/scripts/output_files.py"
  if ! temp=$(python3 "$helper" temp "$target"); then
    echo "$(basename "$0"): $temp" >&2
    cat
    exit 1
  fi
  trap 'rm -f -- "$temp"' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  rc=0
  tee -- "$temp" || rc=$?
  if [ "$rc" -eq 0 ]; then
    python3 "$helper" commit "$temp" "$target" >&2 || rc=1
  fi
  exit "$rc"
)

# log_to FILE: from here on, everything the script prints also goes to FILE, through
# tee_atomic; FILE is in place when the script exits (the EXIT trap waits for it).
log_to() {
  exec > >(tee_atomic "$1") 2>&1
  _log_pid=$!
  trap _on_exit EXIT
}

# The EXIT trap of log_to: closes the output so the log's tee_atomic puts the log in
# place, and waits for it.
_on_exit() {
  exec >&- 2>&-
  wait "$_log_pid" 2>/dev/null || true
}

# The binaryDir of configure preset $2 in $1/CMakePresets.json (following "inherits");
# fails, saying which presets there are, when there is no such preset.
preset_binary_dir() {
  python3 - "$1" "$2" <<'EOF'
import json, sys
root, name = sys.argv[1], sys.argv[2]
with open(f"{root}/CMakePresets.json", encoding="utf-8") as f:
    presets = {p["name"]: p for p in json.load(f).get("configurePresets", [])}
def binary_dir(n, seen=()):
    p = presets[n]
    if "binaryDir" in p:
        return p["binaryDir"]
    parents = p.get("inherits", [])
    for parent in [parents] if isinstance(parents, str) else parents:
        if parent in presets and parent not in seen:
            found = binary_dir(parent, seen + (n,))
            if found:
                return found
    return None
if name not in presets:
    sys.exit(f"PRESET '{name}' is not a configure preset of CMakePresets.json (there are: {', '.join(presets)}).")
found = binary_dir(name)
if not found:
    sys.exit(f"PRESET '{name}' names no build directory (binaryDir) in CMakePresets.json.")
print(found.replace("${sourceDir}", root))
EOF
}

# The build directory: BUILD_DIR, else the preset's, else ROOT/build. Fails when PRESET
# names no preset.
build_dir() {
  local preset_dir=""
  if [ -n "${PRESET:-}" ]; then preset_dir=$(preset_binary_dir "$(repo_root)" "$PRESET") || return 2; fi
  if [ -n "${BUILD_DIR:-}" ]; then
    echo "$BUILD_DIR"
  elif [ -n "$preset_dir" ]; then
    echo "$preset_dir"
  else
    echo "$(repo_root)/build"
  fi
}

# Whether $1 holds a generated build system (a configure that succeeded).
has_build_system() { [ -f "$1/build.ninja" ] || [ -f "$1/Makefile" ]; }

# check_build_env PROGRAM: refuses (exit 2) a JOBS that is not a whole number from 1 to
# 4096, a PRESET that CMakePresets.json does not have, and a build directory (BUILD_DIR,
# the preset's or ROOT/build) that is not a folder or cannot be made one. Writes nothing.
check_build_env() {
  local program=$1 sentence build what="the build directory"
  if [ -n "${JOBS:-}" ]; then check_whole_number "$program" JOBS "$JOBS" 1 4096; fi
  if [ -n "${PRESET:-}" ]; then
    sentence=$(preset_binary_dir "$(repo_root)" "$PRESET" 2>&1) || refuse "$program" "$sentence"
  fi
  build=$(build_dir) || exit 2
  [ -z "${BUILD_DIR:-}" ] || what=BUILD_DIR
  check_output_dir "$program" "$what" "$build"
}

# The highest folder of path $1 that does not exist yet (what creating $1 would create),
# or nothing when $1 exists.
first_missing() {
  local path=$1 parent
  [ -e "$path" ] && return 0
  while :; do
    parent=$(dirname -- "$path")
    if [ -e "$parent" ] || [ "$parent" = "$path" ]; then
      echo "$path"
      return 0
    fi
    path=$parent
  done
}

# The one configure command of the scripts. Configures the build directory (BUILD_DIR,
# else the preset's, else ROOT/build) with PRESET's settings, or Ninja (when installed)
# and Release for a new directory; extra arguments, then CMAKE_ARGS, go to cmake.
# CMAKE_ARGS is recorded in the build directory (scripts_cmake_args.txt); when it
# differs from the one the cache last saw (a value changed or dropped), the cache is
# started afresh (cmake --fresh, keeping the generator), so no earlier value lingers.
# A configure that fails leaves no build directory that would break the next run: the
# folders it created are removed (nothing else), and one without a build system loses
# its cache, so the next run configures afresh. A build directory that is not a folder
# is refused (exit 2) before anything runs.
configure_build_dir() {
  local root build program
  program=$(basename "$0")
  root=$(repo_root)
  build=$(build_dir) || return 2
  (check_build_env "$program") || return 2
  # A cache without a build system is what a failed configure leaves: start again.
  if [ -f "$build/CMakeCache.txt" ] && ! has_build_system "$build"; then
    rm -rf "${build:?}/CMakeCache.txt" "${build:?}/CMakeFiles"
  fi
  local record="$build/scripts_cmake_args.txt" fresh=0 generator=""
  if [ -f "$build/CMakeCache.txt" ] && [ "$(cat "$record" 2>/dev/null)" != "${CMAKE_ARGS:-}" ]; then
    fresh=1
    generator=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$build/CMakeCache.txt")
    echo "$program: CMAKE_ARGS is not what $build was last configured with; configuring it afresh" \
      "(cmake --fresh)." >&2
  fi
  local configure=(cmake -S "$root" -B "$build")
  [ "$fresh" -eq 0 ] || configure+=(--fresh)
  if [ -n "${PRESET:-}" ]; then
    configure+=(--preset "$PRESET")
  elif [ ! -f "$build/CMakeCache.txt" ] || [ "$fresh" -eq 1 ]; then
    if [ -n "$generator" ]; then
      configure+=(-G "$generator")
    elif command -v ninja >/dev/null 2>&1; then
      configure+=(-G Ninja)
    fi
    configure+=(-DCMAKE_BUILD_TYPE=Release)
  fi
  configure+=("$@")
  local created
  created=$(first_missing "$build")
  local rc=0
  # shellcheck disable=SC2086
  "${configure[@]}" ${CMAKE_ARGS:-} || rc=$?
  if [ -f "$build/CMakeCache.txt" ]; then printf '%s\n' "${CMAKE_ARGS:-}" >"$record"; fi
  if [ "$rc" -ne 0 ]; then
    if [ -n "$created" ]; then
      rm -rf -- "$created"
    elif ! has_build_system "$build"; then
      rm -rf "${build:?}/CMakeCache.txt" "${build:?}/CMakeFiles" "$record"
    fi
    echo "$program: configuring $build failed (see above); nothing of it is kept that would stop the" \
      "next run from configuring afresh." >&2
    return 1
  fi
}

# Configures (every time, so a changed CMAKE_ARGS or a newly installed package is seen)
# and builds. Extra arguments go to the configure step.
configure_and_build() {
  configure_build_dir "$@" || return
  cmake --build "$(build_dir)" --parallel "${JOBS:-$(nproc 2>/dev/null || echo 2)}"
}

# The configure of scripts/device.sh: no preset, code for the
# H200 (sm_90), the tests on, and ROOT/.deps (a Catch2 installed beside the checkout) on
# the prefix path when it exists. Extra arguments go to cmake.
configure_for_device() {
  local args=(-DCMAKE_CUDA_ARCHITECTURES=90 -DREDUCTION_BUILD_TESTS=ON)
  [ -d "$(repo_root)/.deps" ] && args+=(-DCMAKE_PREFIX_PATH="$(repo_root)/.deps")
  PRESET="" configure_build_dir "${args[@]}" "$@"
}

# Path of a CUDA tool NAME: OVERRIDE (an environment variable's value) when set, else
# the one on PATH, in $CUDA_HOME/bin, in /usr/local/cuda/bin, or among the further
# candidates given. Prints nothing when none is found.
#   find_cuda_tool NAME OVERRIDE [CANDIDATE...]
find_cuda_tool() {
  local name=$1 found=$2
  shift 2
  [ -n "$found" ] || found=$(command -v "$name" || true)
  for candidate in "${CUDA_HOME:-}/bin/$name" "/usr/local/cuda/bin/$name" "$@"; do
    [ -n "$found" ] || { [ -x "$candidate" ] && found=$candidate; }
  done
  echo "$found"
}

# The short form of a GPU's name that results/<gpu> uses: "NVIDIA H200" -> h200,
# "NVIDIA H100 80GB HBM3" -> h100; a name without such a model number, lower-cased with
# underscores for spaces.
gpu_short_name() {
  local short
  short=$(echo "$1" | tr '[:upper:]' '[:lower:]' | grep -oE '\b[a-z][0-9]{2,4}[a-z]?\b' | head -n 1)
  [ -n "$short" ] || short=$(echo "$1" | tr '[:upper:] ' '[:lower:]_')
  echo "$short"
}

# The first GPU as nvidia-smi names it (gpu_name) and the short form results/<gpu> uses
# (gpu: h200, h100, ...). With no GPU visible: one sentence naming PROGRAM, exit 3. The
# scripts that need a GPU call it before they build or write anything.
#   detect_gpu PROGRAM
detect_gpu() {
  if ! gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null) || [ -z "$gpu_name" ]; then
    echo "$1: no NVIDIA GPU is visible (nvidia-smi found none); it runs on a GPU machine, and nothing was built" \
      "or written." >&2
    exit 3
  fi
  gpu_name=$(echo "$gpu_name" | head -n 1)
  # shellcheck disable=SC2034  # read by the scripts that call detect_gpu
  gpu=$(gpu_short_name "$gpu_name")
}
