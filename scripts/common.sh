# Shared by the scripts: configure and build the project into a build directory.
# Sourced, not run. Honours BUILD_DIR, CMAKE_ARGS (extra configure arguments), JOBS and
# PRESET (a configure preset of CMakePresets.json, such as ci: its settings and, unless
# BUILD_DIR says otherwise, its build directory).

repo_root() { cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd; }

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

# The one configure command of the scripts. Configures the build directory (BUILD_DIR,
# else the preset's, else ROOT/build) with PRESET's settings, or Ninja (when installed)
# and Release for a new directory; extra arguments, then CMAKE_ARGS, go to cmake. A
# configure that fails leaves no build directory that would break the next run: a
# directory it created is removed, and one without a build system loses its cache, so
# the next run configures afresh.
configure_build_dir() {
  local root build
  root=$(repo_root)
  build=$(build_dir) || return 2
  # A cache without a build system is what a failed configure leaves: start again.
  if [ -f "$build/CMakeCache.txt" ] && ! has_build_system "$build"; then
    rm -rf "${build:?}/CMakeCache.txt" "${build:?}/CMakeFiles"
  fi
  local configure=(cmake -S "$root" -B "$build")
  if [ -n "${PRESET:-}" ]; then
    configure+=(--preset "$PRESET")
  elif [ ! -f "$build/CMakeCache.txt" ]; then
    if command -v ninja >/dev/null 2>&1; then configure+=(-G Ninja); fi
    configure+=(-DCMAKE_BUILD_TYPE=Release)
  fi
  configure+=("$@")
  local existed=0
  [ -d "$build" ] && existed=1
  # shellcheck disable=SC2086
  if ! "${configure[@]}" ${CMAKE_ARGS:-}; then
    if [ "$existed" -eq 0 ]; then
      rm -rf "${build:?}"
    elif ! has_build_system "$build"; then
      rm -rf "${build:?}/CMakeCache.txt" "${build:?}/CMakeFiles"
    fi
    echo "$(basename "$0"): configuring $build failed (see above); nothing of it is kept that would stop the" \
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

# The configure of the device scripts (scripts/device_*.sh): no preset, code for the
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

# The first GPU as nvidia-smi names it (gpu_name) and the short form results/<gpu> uses
# (gpu: h200, h100, ...). With no GPU visible: one sentence naming PROGRAM, exit 3.
#   detect_gpu PROGRAM
detect_gpu() {
  if ! gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null) || [ -z "$gpu_name" ]; then
    echo "$1: no NVIDIA GPU is visible (nvidia-smi found none); it runs on a GPU machine." >&2
    exit 3
  fi
  gpu=$(echo "$gpu_name" | tr '[:upper:]' '[:lower:]' | grep -oE '\b[a-z][0-9]{2,4}[a-z]?\b' | head -n 1)
  [ -n "$gpu" ] || gpu=$(echo "$gpu_name" | tr '[:upper:] ' '[:lower:]_')
}
