#!/usr/bin/env bash
# The compiler's own resource report (nvcc --resource-usage, the same as -Xptxas -v)
# for the occupancy kernels: above all the three builds of 02_resource_usage's SGEMM
# kernel (plain and __launch_bounds__ in 02_resource_usage.cu, --maxrregcount in
# sgemm_maxrregcount.cu, with the cap read from occupancy/CMakeLists.txt). Compiles
# each source to an object file in a temporary folder; needs nvcc, not a GPU.
#   scripts/resource_usage.sh            # sm_90
#   ARCH=sm_80 scripts/resource_usage.sh
# Prints the report per source, then one line per kernel: registers, spill stores and
# loads (bytes), stack frame and static shared memory (bytes). Writes nothing but its
# temporary folder.
# Exit codes: 0 done; 1 nvcc failed; 2 an argument (it takes none but --help), an ARCH
# this nvcc does not compile for, or no nvcc (one sentence).
set -euo pipefail
program=resource_usage.sh
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/common.sh
source scripts/common.sh
case "${1:-}" in -h | --help) script_help "${BASH_SOURCE[0]}" && exit 0 ;; esac
[ $# -eq 0 ] || refuse "$program" "it takes no arguments ('$1'); set ARCH (such as sm_80) or NVCC instead."
ARCH=${ARCH:-sm_90}
NVCC=${NVCC:-nvcc}
command -v "$NVCC" >/dev/null ||
  refuse "$program" "nvcc was not found as '$NVCC': add the CUDA toolkit's bin folder to PATH or set NVCC=/path/to/nvcc."
# The architectures this nvcc compiles for (sm_XX), as it lists them.
known=$("$NVCC" --list-gpu-code 2>/dev/null | grep -E '^sm_' | tr '\n' ' ' || true)
# (sm_90a and sm_100f, the variants of a listed one, are taken too.)
if ! [[ $ARCH =~ ^sm_[0-9]{2,3}[a-z]?$ ]] || { [ -n "$known" ] && [[ " $known" != *" ${ARCH%[a-z]} "* ]]; }; then
  refuse "$program" "ARCH '$ARCH' is not an architecture this nvcc compiles for (allowed: ${known% }, or one of" \
    "them with a, such as sm_90a)."
fi
limit=$(sed -n 's/^set(OCCUPANCY_MAXRREGCOUNT \([0-9][0-9]*\)).*/\1/p' occupancy/CMakeLists.txt)
[ -n "$limit" ] || { echo "resource_usage.sh: no set(OCCUPANCY_MAXRREGCOUNT NN) in occupancy/CMakeLists.txt" >&2; exit 1; }
demangle() { if command -v c++filt >/dev/null; then c++filt; else cat; fi; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/occupancy_resource_usage.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# source file, then extra nvcc flags
sources=(
  "occupancy/02_resource_usage.cu|"
  "occupancy/sgemm_maxrregcount.cu|--maxrregcount=$limit -DOCCUPANCY_MAXRREGCOUNT=$limit"
  "occupancy/01_thread_hierarchy.cu|"
  "occupancy/03_occupancy_sweep.cu|"
)
: >"$tmp/all.txt"
for entry in "${sources[@]}"; do
  src=${entry%%|*}
  flags=${entry#*|}
  echo "=== $src ($ARCH${flags:+, $flags})"
  # shellcheck disable=SC2086
  "$NVCC" -arch="$ARCH" -std=c++17 --resource-usage -Icommon -Ioccupancy $flags -c "$src" \
    -o "$tmp/$(basename "$src").o" 2>&1 | demangle | grep -v "Compile time" | tee -a "$tmp/all.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "resource_usage.sh: nvcc failed on $src" >&2; exit 1; }
  echo
done

echo "=== summary ($ARCH): one line per kernel"
printf '%-24s %5s %12s %11s %6s %6s\n' kernel regs spill-stores spill-loads stack smem
awk '
  /Function properties for / { sub(/.*Function properties for /, ""); name = $0; next }
  /bytes stack frame/ { stack = $1; stores = $5; loads = $9; next }
  /Used [0-9]+ registers/ {
    regs = $0; sub(/.*Used /, "", regs); sub(/ registers.*/, "", regs)
    smem = 0
    if (match($0, /[0-9]+ bytes smem/)) { smem = substr($0, RSTART, RLENGTH); sub(/ bytes smem/, "", smem) }
    short = name; sub(/\([^()]*\)$/, "", short); sub(/.*::/, "", short)
    printf "%-24s %5s %12s %11s %6s %6s\n", short, regs, stores, loads, stack, smem
  }' "$tmp/all.txt"
