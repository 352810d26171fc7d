#!/usr/bin/env bash
# Profiles registered stages with Nsight Compute, one stage per ncu run, and prints
# one table row per stage with the metrics that explain the timings (DRAM throughput,
# occupancy, branch uniformity, bank conflicts, memory stalls), each column named
# with the nvprof metric it replaces.
#   scripts/profile.sh [ITEM...] [--program reduce|mixed_precision|occupancy|access_NN_name]
#                      [--n N] [--out DIR] [--build DIR] [--block B]
# The stage list comes from the runner's --list, never from this file. See --help.
set -euo pipefail

program=profile.sh
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/common.sh
source "$root/scripts/common.sh"

usage() {
  cat <<EOF
usage: scripts/$program [ITEM...] [options]

Runs Nsight Compute on each selected stage alone, through the runner's --run-once
mode (one checked launch, nothing timed), with the card's clocks left alone:
  ncu --clock-control none --metrics ... --nvtx --nvtx-include "ID/" \\
      -o OUT/reduce_KEY BUILD/reduction/reduce --stages KEY --n N --run-once
The NVTX range the runner opens around each stage's launch (named after the stage
id) keeps everything else out of the profile. Each report is kept as a .ncu-rep
(open it in the Nsight Compute UI), its metrics are exported as CSV, and the
stages are summed into one table (scripts/ncu_table.py), printed and written to
OUT/ncu_metrics.csv and OUT/ncu_metrics.txt.

ITEM (default: all):
  --program reduce            stages as reduce --stages takes them: 5, 05, ids,
                              ranges (1-11), all, stages, baselines
  --program mixed_precision   variants as mixed_precision --variants takes them
  --program occupancy         configurations BLOCKxPER_SM of occupancy/03 (such as
                              256x8); default: 32x32 128x16 256x1 256x2 256x4 256x8
                              1024x2. Only the first launch of its grid-stride
                              kernel is profiled (kernel filter, not NVTX).
  --program access_NN_name    rows of build/access_patterns/NN_name as its --only
                              takes them (access_01_stride_offset stride-32, say);
                              --n defaults to the program's own

options:
  --program P   reduce (default), mixed_precision, occupancy or access_NN_name
  --n N         elements, in any form the runner's --n takes (default 2^24; 2^26
                for occupancy, which is that program's own default)
  --out DIR     where the reports, exports and the table go (default: BUILD/profile)
  --build DIR   build directory with the programs (default: $root/build)
  --block B     threads per block, passed to reduce (stages that take one)
  --help        print this and exit

environment:
  NCU           path of the ncu executable (default: the one on PATH, else
                \$CUDA_HOME/bin, /usr/local/cuda/bin or /opt/nvidia/nsight-compute/*/)
  REDUCTION_COMMIT   the commit recorded in the CSV when the tree has no .git

Outputs for --program reduce: OUT/reduce_KEY.ncu-rep and OUT/reduce_KEY.csv per
stage, OUT/ncu_metrics.csv and OUT/ncu_metrics.txt; the other programs write
mixed_precision_KEY.* / occupancy_BxP.* and ncu_metrics_<program>.csv/.txt.

exit codes: 0 every item profiled, 1 a profiled run failed, 2 bad usage or a
missing ncu or program, 3 no CUDA device or no permission to read the GPU's
performance counters.
EOF
}

usage_error() { # one sentence, then exit 2
  local sentence=$1
  refuse "$program" "${sentence%.} (see scripts/$program --help)."
}

# --- options -----------------------------------------------------------------

prog=reduce
n=""
out=""
build="$root/build"
block=""
items=()
while [ $# -gt 0 ]; do
  option=$1
  value=""
  has_value=0
  case "$option" in
    --help | -h)
      usage
      exit 0
      ;;
    --*=*)
      value=${option#*=}
      option=${option%%=*}
      has_value=1
      ;;
  esac
  case "$option" in
    --program | --n | --out | --build | --block)
      if [ "$has_value" -eq 0 ]; then
        [ $# -ge 2 ] || usage_error "$option needs a value."
        value=$2
        shift
      fi
      [ -n "$value" ] || usage_error "$option needs a non-empty value."
      ;;
    --*) usage_error "unknown option '$option'." ;;
    *) items+=("$option") ;;
  esac
  case "$option" in
    --program) prog=$value ;;
    --n) n=$value ;;
    --out) out=$value ;;
    --build) build=$value ;;
    --block) block=$value ;;
  esac
  shift
done

case "$prog" in
  reduce) runner=$build/reduction/reduce table=ncu_metrics ;;
  mixed_precision) runner=$build/mixed_precision/mixed_precision table=ncu_metrics_mixed_precision ;;
  occupancy) runner=$build/occupancy/03_occupancy_sweep table=ncu_metrics_occupancy ;;
  access_[0-9][0-9]_*) runner=$build/access_patterns/${prog#access_} table=ncu_metrics_$prog ;;
  *) usage_error "--program '$prog' is not one of: reduce, mixed_precision, occupancy, access_NN_name." ;;
esac
[ -z "$block" ] || [ "$prog" = reduce ] || usage_error "--block applies to --program reduce only."
if [ ! -x "$runner" ]; then
  echo "$program: $runner was not found; build the project first (scripts/run_all.sh or cmake --build)," \
    "or name the build directory with --build." >&2
  exit 2
fi
[[ $prog == access_* ]] || [ -n "$n" ] || { [ "$prog" = occupancy ] && n="2^26"; } || n="2^24"
out=${out:-$build/profile}
sentence=$(python3 "$root/scripts/output_files.py" dir --out "$out") || usage_error "$sentence"

# --- what to profile: KEY<TAB>NVTX-ID per item, from the runner itself -------------

join_items() {
  local IFS=,
  echo "$*"
}
selection=$(join_items "${items[@]:-all}")
targets=() # "key<TAB>nvtx range<TAB>runner arguments"
case "$prog" in
  reduce | mixed_precision | access_*)
    flag=--stages
    [ "$prog" = mixed_precision ] && flag=--variants
    [[ $prog == access_* ]] && flag=--only
    extra=()
    [ -n "$n" ] && extra=(--n "$n")
    [ -n "$block" ] && extra+=(--block "$block")
    if ! listing=$("$runner" "$flag" "$selection" "${extra[@]}" --list 2>&1); then
      usage_error "${listing#*: }"
    fi
    while IFS=$'\t' read -r key id _; do
      [[ $prog == access_* ]] && id=$key # an access row's NVTX range is named after its key
      [ -n "$key" ] && targets+=("$key"$'\t'"$id"$'\t'"$flag $key ${extra[*]} --run-once")
    done <<<"$listing"
    ;;
  occupancy)
    [ ${#items[@]} -gt 0 ] || items=(32x32 128x16 256x1 256x2 256x4 256x8 1024x2)
    for item in "${items[@]}"; do
      [[ $item =~ ^([0-9]+)x([0-9]+)$ ]] || usage_error "'$item' is not a configuration BLOCKxPER_SM such as 256x8."
      args="--blocks ${BASH_REMATCH[1]} --per-sm ${BASH_REMATCH[2]} --n $n --reps 1 --budget-ms 1 --warm-l2"
      targets+=("$item"$'\t'-$'\t'"$args")
    done
    ;;
esac
[ ${#targets[@]} -gt 0 ] || usage_error "nothing selected."

# --- Nsight Compute ---------------------------------------------------------------

ncu=$(find_cuda_tool ncu "${NCU:-}" /opt/nvidia/nsight-compute/*/ncu)
if [ -z "$ncu" ] || [ ! -x "$ncu" ]; then
  echo "$program: Nsight Compute's ncu was not found (looked on PATH, in \$CUDA_HOME/bin," \
    "/usr/local/cuda/bin and /opt/nvidia/nsight-compute${NCU:+, and at NCU=$NCU}); it comes with the CUDA" \
    "toolkit or as its own download: add its directory to PATH or set NCU." >&2
  exit 2
fi
ncu_version=$("$ncu" --version 2>&1 | grep -m1 -iE 'version' || echo unknown)
metrics=$(python3 "$root/scripts/ncu_table.py" --metrics)

# A GPU before anything is written (the reports' folder included).
detect_gpu "$program"
mkdir -p -- "$out" 2>/dev/null || usage_error "--out '$out': cannot create that directory."
limit=()
if command -v timeout >/dev/null 2>&1; then limit=(timeout --kill-after=10 600); fi

permission_help() {
  echo "$program: ncu may not read this GPU's performance counters (ERR_NVGPUCTRPERM). Run as root, or let" \
    "every user read them: load the nvidia module with NVreg_RestrictProfilingToAdminUsers=0 (see" \
    "https://developer.nvidia.com/ERR_NVGPUCTRPERM)." >&2
  exit 3
}

exports=()
failed=()
count=${#targets[@]}
i=0
for target in "${targets[@]}"; do
  IFS=$'\t' read -r key nvtx args <<<"$target"
  i=$((i + 1))
  name=${prog}_$key
  filter=(--nvtx --nvtx-include "$nvtx/")
  [ "$prog" = occupancy ] && filter=(-k regex:grid_stride_sum --launch-count 1)
  log=$out/$name.log
  start=$SECONDS
  printf '[%d/%d] %s ... ' "$i" "$count" "$key" >&2
  rc=0
  # shellcheck disable=SC2086
  "${limit[@]}" "$ncu" --clock-control none --metrics "$metrics" "${filter[@]}" -f -o "$out/$name" \
    "$runner" $args >"$log" 2>&1 || rc=$?
  if grep -q 'ERR_NVGPUCTRPERM' "$log"; then
    echo "no permission" >&2
    permission_help
  fi
  if grep -qiE 'no CUDA device|no CUDA-capable device' "$log"; then
    echo "no GPU" >&2
    echo "$program: $(grep -m1 -iE 'no CUDA device|no CUDA-capable device' "$log")" >&2
    exit 3
  fi
  if [ "$rc" -ne 0 ] || [ ! -f "$out/$name.ncu-rep" ] || grep -q 'No kernels were profiled' "$log"; then
    echo "FAILED (exit $rc, $((SECONDS - start)) s); the last lines of $log:" >&2
    tail -15 "$log" >&2
    failed+=("$key")
    continue
  fi
  if ! "$ncu" --import "$out/$name.ncu-rep" --csv --page raw --print-units base --metrics "$metrics" \
    >"$out/$name.csv" 2>"$out/$name.export.log"; then
    echo "FAILED to export the report:" >&2
    tail -5 "$out/$name.export.log" >&2
    failed+=("$key")
    continue
  fi
  echo "done in $((SECONDS - start)) s" >&2
  exports+=("$key=$out/$name.csv")
done

# --- the table --------------------------------------------------------------------

commit=${REDUCTION_COMMIT:-$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
device=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 || true)
meta=(--meta "program=$prog" --meta "n=${n:-program default}" --meta "device=${device:-unknown}" --meta "ncu=$ncu_version"
  --meta "clock_control=none" --meta "commit=$commit" --meta "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  --meta "command=scripts/profile.sh --program $prog ${n:+--n $n }${block:+--block $block }$(join_items "${items[@]:-all}")")
if [ ${#exports[@]} -gt 0 ]; then
  python3 "$root/scripts/ncu_table.py" --out "$out/$table.csv" "${meta[@]}" "${exports[@]}" | tee "$out/$table.txt"
  echo "wrote $out/$table.csv and $out/$table.txt" >&2
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "$program: ${#failed[@]} of $count failed: ${failed[*]}" >&2
  exit 1
fi
