# Shared by the scripts: configure and build the project into a build directory.
# Sourced, not run. Honours BUILD_DIR, CMAKE_ARGS (extra configure arguments) and JOBS.

repo_root() { cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd; }

configure_and_build() {
  local root build
  root=$(repo_root)
  build=${BUILD_DIR:-$root/build}
  local generator=()
  if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
  if [ ! -f "$build/CMakeCache.txt" ]; then
    # shellcheck disable=SC2086
    cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DREDUCTION_BUILD_TESTS=ON ${CMAKE_ARGS:-}
  elif [ -n "${CMAKE_ARGS:-}" ]; then
    # shellcheck disable=SC2086
    cmake -S "$root" -B "$build" ${CMAKE_ARGS}
  fi
  cmake --build "$build" --parallel "${JOBS:-$(nproc 2>/dev/null || echo 2)}"
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
