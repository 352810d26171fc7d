#!/usr/bin/env bash
# compute-sanitizer's four tools (memcheck, racecheck, synccheck, initcheck) over the
# single-pass library's GPU programs: the two-file test (every path, for float, double,
# int32, int64 and uint32, from two source files) and the example client.
#   scripts/sanitize_library.sh RESULTS_DIR [--build DIR] [--timeout S]
# Writes RESULTS_DIR/sanitize_library.txt (one line per program and tool) and every run's
# full output in RESULTS_DIR/sanitize_library/. Exit codes: 0 every run clean; 1 a tool
# reported an error or hazard, a run failed or timed out, or its summary is missing;
# 2 bad usage or a missing program or compute-sanitizer; 3 no CUDA device.
set -uo pipefail

program=sanitize_library.sh
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/common.sh
source "$root/scripts/common.sh"

usage_error() { # the arguments, joined by spaces, are one sentence
  local sentence="$*"
  refuse "$program" "${sentence%.} (usage: scripts/$program RESULTS_DIR [--build DIR] [--timeout S])."
}

out=""
build="$root/build"
run_timeout=900
while [ $# -gt 0 ]; do
  case "$1" in
    --help | -h)
      sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    --build | --timeout)
      [ $# -ge 2 ] && [ -n "$2" ] || usage_error "$1 needs a value."
      if [ "$1" = --build ]; then build=$2; else run_timeout=$2; fi
      shift 2
      ;;
    -*) usage_error "unknown option '$1'." ;;
    *)
      [ -z "$out" ] || usage_error "one results folder only ('$out' and '$1' given)."
      out=$1
      shift
      ;;
  esac
done
[ -n "$out" ] || usage_error "give the results folder to write the logs into."
[[ $run_timeout =~ ^[0-9]{1,9}$ ]] && [ "$((10#$run_timeout))" -ge 1 ] ||
  usage_error "--timeout '$run_timeout' is not a whole number of seconds (at least 1)."
run_timeout=$((10#$run_timeout))
# Every check before anything is created: the folder is made only once the run starts.
sentence=$(python3 "$root/scripts/output_files.py" dir "the results folder" "$out") || usage_error "$sentence"
[ -d "$build" ] || usage_error "--build '$build' is not a directory: give the build directory that holds" \
  "tests/gpu_single_pass_two_files."

programs=("$build/tests/gpu_single_pass_two_files" "$build/single_pass/example/single_pass_example")
for p in "${programs[@]}"; do
  [ -x "$p" ] || {
    echo "$program: '$p' was not found; build the targets gpu_single_pass_two_files and single_pass_example" \
      "first, or pass --build DIR." >&2
    exit 2
  }
done
sanitizer=$(find_cuda_tool compute-sanitizer "${COMPUTE_SANITIZER:-}")
if [ -z "$sanitizer" ] || [ ! -x "$sanitizer" ]; then
  echo "$program: compute-sanitizer was not found (PATH, \$CUDA_HOME/bin, /usr/local/cuda/bin or" \
    "COMPUTE_SANITIZER); it comes with the CUDA toolkit." >&2
  exit 2
fi

# One plain run first: with no device every run would fail the same way.
"${programs[1]}" >/dev/null 2>&1
if [ $? -eq 77 ]; then
  echo "$program: no CUDA device was found, so nothing was checked." >&2
  exit 3
fi

mkdir -p -- "$out/sanitize_library" || exit 1
# The summary is written whole at the end (tee_atomic); until then it grows here.
summary=$(scratch_file sanitize_library) && remove_at_exit "$summary" || exit 1
{
  echo "# compute-sanitizer over the single-pass library: $(date -u +%Y-%m-%dT%H:%M:%SZ)," \
    "$("$sanitizer" --version 2>&1 | grep -m1 -i version)"
  printf '%-28s %-10s %7s  %s\n' program tool errors result
} >"$summary"
status=0
for p in "${programs[@]}"; do
  name=$(basename "$p")
  for tool in memcheck racecheck synccheck initcheck; do
    log="$out/sanitize_library/$name.$tool.log"
    extra=()
    [ "$tool" = racecheck ] && extra=(--racecheck-report all)
    timeout --kill-after=10 "$run_timeout" "$sanitizer" --tool "$tool" "${extra[@]}" --error-exitcode 99 "$p" \
      >"$log" 2>&1
    rc=$?
    errors=$({ grep -oE '(ERROR|RACECHECK) SUMMARY: [0-9]+' "$log" || true; } | grep -oE '[0-9]+$' |
      awk '{ s += $1 } END { print s + 0 }')
    if [ "$rc" -eq 0 ] && [ "$errors" -eq 0 ] && grep -qE '(ERROR|RACECHECK) SUMMARY' "$log"; then
      result=ok
    else
      status=1
      case "$rc" in
        0) result="FAIL (errors reported or no summary)" ;;
        99) result="FAIL (errors reported)" ;;
        124 | 137) result="FAIL (timed out after ${run_timeout}s)" ;;
        *) result="FAIL (exit $rc)" ;;
      esac
    fi
    printf '%-28s %-10s %7d  %s\n' "$name" "$tool" "$errors" "$result" | tee -a "$summary"
  done
done
[ "$status" -eq 0 ] && echo "# all runs clean" >>"$summary" || echo "# some runs failed: logs in $out/sanitize_library/" >>"$summary"
tee_atomic "$out/sanitize_library.txt" <"$summary" | tail -n 1
exit $status
