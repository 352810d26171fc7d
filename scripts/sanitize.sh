#!/usr/bin/env bash
# Runs NVIDIA compute-sanitizer over every registered stage and baseline: each of
# the memcheck, racecheck, synccheck and initcheck tools, at several sizes, through
# the runner's --run-once mode (one checked launch, nothing timed). The stage list
# comes from `reduce --list`, never from this file.
#   scripts/sanitize.sh [STAGE...] [--build DIR] [--sizes LIST] [--stages LIST] [--out FILE]
# Prints one line per stage and tool with the errors found over all sizes; exits 0
# when every run was clean, 1 when a tool reported an error or a run failed, 2 for
# bad usage or a missing compute-sanitizer or reduce binary, 3 with no CUDA device.
set -euo pipefail

program=sanitize.sh
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/common.sh
source "$root/scripts/common.sh"
all_tools=(memcheck racecheck synccheck initcheck)

usage() {
  cat <<EOF
usage: scripts/$program [STAGE...] [options]

Runs compute-sanitizer (memcheck, racecheck, synccheck, initcheck) over every
registered stage and baseline at each size, one run per stage, tool and size:
  compute-sanitizer --tool TOOL --error-exitcode 99 BUILD/reduction/reduce \\
      --stages KEY --n N --run-once
and prints one line per stage and tool with the number of errors over all sizes
(and, for racecheck, the hazards). A run fails when the tool reports an error or
hazard, when its summary line is missing, or when the runner itself fails (its
sum does not verify, a CUDA error, a crash or a time-out).

STAGE (default: all): stages as --stages takes them, as arguments (scripts/$program 13 15
is scripts/$program --stages 13,15), like scripts/profile.sh.

options:
  --build DIR     build directory holding reduction/reduce (default: $root/build)
  --sizes LIST    comma-separated element counts, in any form reduce's --n takes
                  (default: 1,33,4097,1048583, the last being 2^20+7)
  --stages LIST   comma-separated stages: keys (5, 05), ids, baseline ids, ranges
                  of stage numbers (1-11), all, stages, baselines (default: all)
  --tools LIST    comma-separated subset of: ${all_tools[*]} (default: all four)
  --out FILE      also write the lines to FILE (written once, at the end)
  --jobs J        sanitizer runs at a time on the GPU (default: the CPU count, at most 8)
  --timeout S     seconds one run may take before it counts as failed (default: 300)
  --logs DIR      keep every run's full output in DIR (default: kept only until exit)
  --help          print this and exit

environment:
  COMPUTE_SANITIZER   path of the compute-sanitizer executable (default: the one on
                      PATH, else \$CUDA_HOME/bin or /usr/local/cuda/bin)

exit codes: 0 every run clean, 1 an error, hazard or failed run, 2 bad usage or a
missing tool, 3 no CUDA device.
EOF
}

usage_error() { # one sentence, then exit 2
  local sentence=$1
  refuse "$program" "${sentence%.} (see scripts/$program --help)."
}

# --- options -----------------------------------------------------------------

build="$root/build"
sizes_arg="1,33,4097,1048583"
stages_arg=""
positional=()
tools_arg=$(
  IFS=,
  echo "${all_tools[*]}"
)
out=""
jobs=$(nproc 2>/dev/null || echo 4)
[ "$jobs" -le 8 ] || jobs=8
run_timeout=300
logs=""

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
    --build | --sizes | --stages | --tools | --out | --jobs | --timeout | --logs)
      if [ "$has_value" -eq 0 ]; then
        [ $# -ge 2 ] || usage_error "$option needs a value."
        value=$2
        shift
      fi
      [ -n "$value" ] || usage_error "$option needs a non-empty value."
      ;;
    --*)
      usage_error "unknown option '$option'."
      ;;
    *)
      positional+=("$option")
      shift
      continue
      ;;
  esac
  case "$option" in
    --build) build=$value ;;
    --sizes) sizes_arg=$value ;;
    --stages) stages_arg=$value ;;
    --tools) tools_arg=$value ;;
    --out) out=$value ;;
    --jobs) jobs=$value ;;
    --timeout) run_timeout=$value ;;
    --logs) logs=$value ;;
  esac
  shift
done

# Stages named as arguments join those of --stages; neither means all.
if [ ${#positional[@]} -gt 0 ]; then
  stages_arg+=${stages_arg:+,}$(
    IFS=,
    echo "${positional[*]}"
  )
fi
stages_arg=${stages_arg:-all}

is_count() { [[ $1 =~ ^[0-9]+$ ]] && [ "$((10#$1))" -ge 1 ]; }
if ! is_count "$jobs" || [ "$((10#$jobs))" -gt 64 ]; then
  usage_error "--jobs '$jobs' is not a whole number from 1 to 64."
fi
is_count "$run_timeout" || usage_error "--timeout '$run_timeout' is not a whole number of seconds (at least 1)."
jobs=$((10#$jobs))
run_timeout=$((10#$run_timeout))

split_list() { # the comma-separated items of $1, one per line, blanks dropped
  local item items
  IFS=, read -r -a items <<<"$1"
  for item in "${items[@]}"; do
    item=${item// /}
    if [ -n "$item" ]; then echo "$item"; fi
  done
}

mapfile -t tools < <(split_list "$tools_arg")
[ ${#tools[@]} -gt 0 ] || usage_error "--tools '$tools_arg' names no tool (allowed: ${all_tools[*]})."
for tool in "${tools[@]}"; do
  case " ${all_tools[*]} " in
    *" $tool "*) ;;
    *) usage_error "--tools: unknown tool '$tool' (allowed: ${all_tools[*]})." ;;
  esac
done

# Checked now, written (or created) only once the runs start.
if [ -n "$out" ]; then
  sentence=$(python3 "$root/scripts/output_files.py" file --out "$out") || usage_error "$sentence"
fi
if [ -n "$logs" ]; then
  sentence=$(python3 "$root/scripts/output_files.py" dir --logs "$logs") || usage_error "$sentence"
fi

# --- the runner and the stage list --------------------------------------------

reduce="$build/reduction/reduce"
if [ ! -x "$reduce" ]; then
  echo "$program: the runner '$reduce' was not found; build the project first" \
    "(cmake -S . -B build && cmake --build build) or pass --build DIR." >&2
  exit 2
fi

listing=$("$reduce" --list) || {
  echo "$program: '$reduce --list' failed." >&2
  exit 2
}
keys=()
ids=()
kinds=()
while IFS=$'\t' read -r key id kind _; do
  [ -n "$key" ] || continue
  keys+=("$key")
  ids+=("$id")
  kinds+=("$kind")
done <<<"$listing"
[ ${#keys[@]} -gt 0 ] || {
  echo "$program: '$reduce --list' printed no stages." >&2
  exit 2
}

join_by() { # join_by SEPARATOR ITEMS...
  local separator=$1 joined=""
  shift
  for item in "$@"; do joined+="${joined:+$separator}$item"; done
  echo "$joined"
}

selected=()
select_index() { # adds registry entry $1 once
  local s
  for s in "${selected[@]}"; do [ "$s" -eq "$1" ] && return 0; done
  selected+=("$1")
}
stage_number() { # the number of entry $1, or nothing for a baseline
  [ "${kinds[$1]}" = stage ] && echo "$((10#${keys[$1]}))"
  return 0
}

mapfile -t stage_items < <(split_list "$stages_arg")
[ ${#stage_items[@]} -gt 0 ] || usage_error "--stages '$stages_arg' names no stage."
for item in "${stage_items[@]}"; do
  found=0
  if [[ $item =~ ^([0-9]+)-([0-9]+)$ ]]; then
    lo=$((10#${BASH_REMATCH[1]}))
    hi=$((10#${BASH_REMATCH[2]}))
    [ "$lo" -le "$hi" ] || usage_error "--stages: '$item' is not a range (the start is larger than the end)."
    for i in "${!keys[@]}"; do
      number=$(stage_number "$i")
      if [ -n "$number" ] && [ "$number" -ge "$lo" ] && [ "$number" -le "$hi" ]; then
        select_index "$i"
        found=1
      fi
    done
  else
    for i in "${!keys[@]}"; do
      number=$(stage_number "$i")
      if [ "$item" = all ] || [ "$item" = "${keys[$i]}" ] || [ "$item" = "${ids[$i]}" ] ||
        { [ "$item" = stages ] && [ "${kinds[$i]}" = stage ]; } ||
        { [ "$item" = baselines ] && [ "${kinds[$i]}" = baseline ]; } ||
        { [[ $item =~ ^[0-9]+$ ]] && [ -n "$number" ] && [ "$((10#$item))" -eq "$number" ]; }; then
        select_index "$i"
        found=1
      fi
    done
  fi
  [ "$found" -eq 1 ] || usage_error "--stages: unknown stage '$item' (known: $(join_by ', ' "${keys[@]}"), or all, stages, baselines, or a range such as 1-11)."
done
# Registry order, whatever order they were named in.
mapfile -t selected < <(printf '%s\n' "${selected[@]}" | sort -n)

mapfile -t sizes < <(split_list "$sizes_arg")
[ ${#sizes[@]} -gt 0 ] || usage_error "--sizes '$sizes_arg' names no size."
for size in "${sizes[@]}"; do
  # The runner's own parser decides what a size is; --list stops before any GPU work.
  if ! message=$("$reduce" --n "$size" --list 2>&1 >/dev/null); then
    usage_error "--sizes: the runner refuses size '$size': ${message#reduce: }"
  fi
done

# --- compute-sanitizer ----------------------------------------------------------

sanitizer=$(find_cuda_tool compute-sanitizer "${COMPUTE_SANITIZER:-}")
if [ -z "$sanitizer" ] || [ ! -x "$sanitizer" ]; then
  echo "$program: compute-sanitizer was not found (looked on PATH, in \$CUDA_HOME/bin and" \
    "/usr/local/cuda/bin${COMPUTE_SANITIZER:+, and at COMPUTE_SANITIZER=$COMPUTE_SANITIZER});" \
    "it comes with the CUDA toolkit: add its bin directory to PATH or set COMPUTE_SANITIZER." >&2
  exit 2
fi
sanitizer_version=$("$sanitizer" --version 2>&1 | grep -m1 -i version || true)

# One plain run first: with no GPU every sanitizer run would fail the same way.
set +e
preflight=$("$reduce" --stages "${keys[${selected[0]}]}" --n 1 --run-once 2>&1)
preflight_rc=$?
set -e
if [ "$preflight_rc" -eq 3 ]; then
  echo "$program: ${preflight#reduce: }" >&2
  exit 3
fi

# --- the runs -------------------------------------------------------------------

[ -z "$logs" ] || mkdir -p -- "$logs" || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/sanitize.XXXXXX")
trap 'rm -rf -- "$work"' EXIT
log_dir=${logs:-$work}

limit=()
if command -v timeout >/dev/null 2>&1; then limit=(timeout --kill-after=10 "$run_timeout"); fi

log_name() { echo "$log_dir/$1.$2.n$3.log"; } # key tool size

run_one() { # key tool size: one sanitizer run, its output and exit status in files
  local log rc=0
  log=$(log_name "$1" "$2" "$3")
  "${limit[@]}" "$sanitizer" --tool "$2" --error-exitcode 99 \
    "$reduce" --stages "$1" --n "$3" --run-once >"$log" 2>&1 || rc=$?
  echo "$rc" >"$log.rc"
}

# Sums the number in every match of $2 in file $1 (0 when nothing matches).
sum_matches() {
  { grep -oE "$2" "$1" || true; } | { grep -oE '[0-9]+' || true; } | awk '{ s += $1 } END { print s + 0 }'
}

describe_rc() {
  case "$1" in
    99) echo "errors reported" ;;
    1) echo "exit 1: the sum did not verify or a CUDA error occurred" ;;
    2) echo "exit 2: the runner refused its arguments" ;;
    3) echo "exit 3: no CUDA device" ;;
    124 | 137) echo "timed out after ${run_timeout}s" ;;
    missing) echo "did not finish" ;;
    *) echo "exit $1" ;;
  esac
}

lines=()
emit() {
  lines+=("$1")
  echo "$1"
}

failed_logs=()
total_errors=0
total_hazards=0
runs=0
bad_runs=0

emit "# compute-sanitizer over the registered stages: $(date -u +%Y-%m-%dT%H:%M:%SZ), ${sanitizer_version:-version unknown}"
emit "# runner: $reduce; sizes: ${sizes[*]}; tools: ${tools[*]}"
emit "$(printf '%-20s %-10s %7s %8s  %s' stage tool errors hazards result)"

for index in "${selected[@]}"; do
  key=${keys[$index]}
  # All runs of one stage, a few at a time; then its lines.
  running=0
  for tool in "${tools[@]}"; do
    for size in "${sizes[@]}"; do
      run_one "$key" "$tool" "$size" &
      running=$((running + 1))
      if [ "$running" -ge "$jobs" ]; then
        wait -n || true
        running=$((running - 1))
      fi
    done
  done
  wait

  for tool in "${tools[@]}"; do
    errors=0
    hazards=0
    problems=()
    for size in "${sizes[@]}"; do
      log=$(log_name "$key" "$tool" "$size")
      rc=$(cat "$log.rc" 2>/dev/null || echo missing)
      runs=$((runs + 1))
      e=$(sum_matches "$log" 'ERROR SUMMARY: [0-9]+ error')
      h=$(sum_matches "$log" 'RACECHECK SUMMARY: [0-9]+ hazard')
      # racecheck's own summary splits its hazards into errors and warnings.
      if [ "$tool" = racecheck ] && grep -q 'RACECHECK SUMMARY' "$log"; then
        e=$(grep -oE 'RACECHECK SUMMARY: .*' "$log" | { grep -oE '\([0-9]+ error' || true; } | tr -d '(' |
          awk '{ s += $1 } END { print s + 0 }')
      fi
      errors=$((errors + e))
      hazards=$((hazards + h))
      problem=""
      if [ "$rc" != 0 ]; then
        problem="n=$size $(describe_rc "$rc")"
      elif ! grep -qE 'ERROR SUMMARY|RACECHECK SUMMARY' "$log"; then
        problem="n=$size no summary from the tool"
      elif [ "$e" -gt 0 ] || [ "$h" -gt 0 ]; then
        problem="n=$size errors reported"
      fi
      if [ -n "$problem" ]; then
        problems+=("$problem")
        failed_logs+=("$log")
        bad_runs=$((bad_runs + 1))
      fi
    done
    total_errors=$((total_errors + errors))
    total_hazards=$((total_hazards + hazards))
    hazard_text=-
    [ "$tool" = racecheck ] && hazard_text=$hazards
    if [ ${#problems[@]} -eq 0 ]; then
      result=ok
    else
      result="FAIL ($(join_by '; ' "${problems[@]}"))"
    fi
    emit "$(printf '%-20s %-10s %7d %8s  %s' "$key" "$tool" "$errors" "$hazard_text" "$result")"
  done
done

if [ "$bad_runs" -eq 0 ]; then
  emit "# all $runs runs clean"
else
  emit "# $bad_runs of $runs runs failed: $total_errors errors, $total_hazards racecheck hazards"
fi

if [ -n "$out" ]; then
  printf '%s\n' "${lines[@]}" | tee_atomic "$out" >/dev/null
fi

if [ ${#failed_logs[@]} -gt 0 ]; then
  shown=0
  for log in "${failed_logs[@]}"; do
    [ "$shown" -lt 8 ] || break
    shown=$((shown + 1))
    echo "--- last lines of $(basename "$log" .log) ---" >&2
    tail -n 15 "$log" >&2
  done
  [ ${#failed_logs[@]} -le 8 ] ||
    echo "--- and $((${#failed_logs[@]} - 8)) more failed runs${logs:+ (every log is in $logs)}" >&2
  exit 1
fi
exit 0
