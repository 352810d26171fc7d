#!/usr/bin/env bash
# The memory access-pattern programs (access_patterns/) on a GPU machine, in one call:
#   1. configure and build (Release, sm_90) the programs and their tests in BUILD_DIR,
#      or only bring an existing build of them up to date;
#   2. run the host and GPU tests and the command-line refusals;
#   3. run every program at its default size and write
#        OUT/access_NN_name.csv   every row, with the run's metadata
#        OUT/access_NN_name.txt   the table as printed
#   4. Nsight Compute (--clock-control none): one --run-once pass per program, each
#      row's launch in its own NVTX range, for sectors per request, DRAM traffic and
#      shared-memory wavefronts per instruction (scripts/access_ncu.py):
#        OUT/access_ncu.csv, OUT/access_ncu.txt
#   5. the SASS of 04's kernel with a 32-bit and with a 64-bit index (cuobjdump -sass),
#      with a count of each opcode in both: OUT/access_sass_index.txt
#   6. compute-sanitizer: memcheck and initcheck on every program, racecheck and
#      synccheck on those whose kernels use shared memory or warp-synchronous
#      instructions, all with --run-once at small sizes;
#   7. the figures OUT/access_stride.png and OUT/access_banks.png (scripts/plot_access.py).
# Everything printed also goes to OUT/access_device.txt (written whole when the run
# ends). Every step runs under a timeout. The steps after a failed one still run.
#   scripts/device_access_patterns.sh [OUT]   (default: $OUT, else results/<gpu>, from
#                                             the GPU's name: h200, h100, ...)
# Environment: BUILD_DIR (default /tmp/build-access), NCU, CUOBJDUMP, SANITIZER (tool
# paths; default: found as scripts/common.sh finds them), REDUCTION_COMMIT (the commit
# recorded when the tree has no .git).
# Exit codes: 0 every step passed; 1 a step failed; 2 a bad argument or value of the
# environment (one sentence, nothing written); 3 no GPU (checked before anything is
# built or written).
set -uo pipefail
program=device_access_patterns.sh
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
# shellcheck source=scripts/common.sh
source scripts/common.sh
case "${1:-}" in -h | --help) script_help "${BASH_SOURCE[0]}" && exit 0 ;; esac
[ $# -le 1 ] || refuse "$program" "it takes one argument at most, the results folder ('$1' and '$2' given)."
[ $# -eq 0 ] || OUT=$1
BUILD_DIR=${BUILD_DIR:-/tmp/build-access}
PRESET="" check_build_env "$program"
[ -z "${OUT:-}" ] || check_output_dir "$program" OUT "$OUT"
detect_gpu "$program"
OUT=${OUT:-results/$gpu}
check_output_dir "$program" OUT "$OUT"
mkdir -p "$OUT" || exit 1
log_to "$OUT/access_device.txt"
status=0
start=$SECONDS
bin=$BUILD_DIR/access_patterns
work=$(mktemp -d)
commit=${REDUCTION_COMMIT:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
[ -n "${REDUCTION_COMMIT:-}" ] || [ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] ||
  commit=$commit-dirty
fail() {
  echo "FAILED: $*"
  status=1
}

# The programs are the numbered sources; each builds build/access_patterns/NN_name.
programs=()
for f in access_patterns/[0-9][0-9]_*.cu; do programs+=("$(basename "$f" .cu)"); done

# A small run for the sanitizers, and the size of the profiled run.
sanitize_args() {
  case $1 in
    02_*) echo "--n 33000 --terms 33" ;;
    05_*) echo "--n 1" ;; # one block: its 66 rows are 66 launches
    *) echo "--n 100003" ;;
  esac
}
profile_args() {
  case $1 in
    01_*) echo "--n 2^25" ;; # 128 MiB: the random row's reads do not fit in the L2
    03_* | 05_*) echo "" ;;  # their defaults
    *) echo "--n 2^24" ;;
  esac
}

echo "=== build ($BUILD_DIR)"
log=$(scratch_file device_access_patterns_build) && remove_at_exit "$log" || exit 1
targets=(access_host_tests access_gpu_tests)
for p in "${programs[@]}"; do targets+=("access_$p"); done
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  BUILD_DIR=$BUILD_DIR timeout 300 bash -c 'source scripts/common.sh && configure_for_device' >"$log" 2>&1 || {
    tail -40 "$log"
    exit 1
  }
fi
timeout 900 cmake --build "$BUILD_DIR" --parallel "$(nproc)" --target "${targets[@]}" >>"$log" 2>&1 || {
  tail -40 "$log"
  exit 1
}
if grep -iE "warning" "$log" | grep -qE "access_patterns|test_access|ptxas"; then
  echo "build warnings:"
  grep -iE -A3 "warning" "$log" | head -40
  status=1
fi
echo "built in $((SECONDS - start)) s"

echo "=== tests"
for t in access_host_tests access_gpu_tests; do
  timeout 600 "$BUILD_DIR/tests/$t" 2>&1 | tail -4
  rc=${PIPESTATUS[0]}
  # 77 means no GPU was found: on this machine that is a failure, not a skip.
  [ "$rc" -eq 0 ] || fail "$t: exit code $rc"
done
timeout 120 ctest --test-dir "$BUILD_DIR" -R '^access_cli_' 2>&1 | tail -3
[ "${PIPESTATUS[0]}" -eq 0 ] || fail "the command-line refusals (ctest -R access_cli_)"

echo "=== programs"
for p in "${programs[@]}"; do
  echo "--- $p"
  timeout 600 "$bin/$p" --csv "$OUT/access_$p.csv" | tee_atomic "$OUT/access_$p.txt"
  rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || fail "$p: exit code $rc"
done

echo "=== Nsight Compute"
ncu=$(find_cuda_tool ncu "${NCU:-}" /opt/nvidia/nsight-compute/*/ncu)
if [ -z "$ncu" ] || [ ! -x "$ncu" ]; then
  fail "ncu was not found (PATH, \$CUDA_HOME/bin, /usr/local/cuda/bin, /opt/nvidia/nsight-compute; or set NCU)"
else
  metrics=$(python3 scripts/access_ncu.py --metrics)
  inputs=()
  sizes=()
  for p in "${programs[@]}"; do
    # shellcheck disable=SC2046
    set -- $(profile_args "$p")
    "$bin/$p" "$@" --list >"$work/$p.keys" || {
      fail "$p --list"
      continue
    }
    t0=$SECONDS
    timeout 600 "$ncu" --clock-control none --nvtx --metrics "$metrics" -f -o "$work/$p" \
      "$bin/$p" "$@" --run-once >"$work/$p.ncu.log" 2>&1
    rc=$?
    if [ "$rc" -ne 0 ] || [ ! -f "$work/$p.ncu-rep" ]; then
      fail "ncu on $p (exit $rc); the end of its log:"
      tail -15 "$work/$p.ncu.log"
      continue
    fi
    timeout 300 "$ncu" --import "$work/$p.ncu-rep" --csv --page raw --print-units base --print-nvtx-rename kernel \
      --metrics "$metrics" >"$work/$p.csv" 2>"$work/$p.export.log" || {
      fail "exporting $p's report"
      tail -5 "$work/$p.export.log"
      continue
    }
    echo "$p profiled in $((SECONDS - t0)) s"
    inputs+=("$p=$work/$p.keys:$work/$p.csv")
    sizes+=("$p ${*:-(default n)}")
  done
  if [ ${#inputs[@]} -gt 0 ]; then
    device=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
    joined=$(printf '%s; ' "${sizes[@]}")
    python3 scripts/access_ncu.py --out "$OUT/access_ncu.csv" --meta "device=${device:-unknown}" \
      --meta "ncu=$("$ncu" --version 2>&1 | grep -m1 -i version)" --meta "clock_control=none" \
      --meta "cache_control=all (caches flushed before each profiled pass)" --meta "sizes=${joined%; }" \
      --meta "commit=$commit" --meta "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
      --meta "command=scripts/device_access_patterns.sh: ncu --clock-control none --nvtx, each program --run-once" \
      "${inputs[@]}" | tee_atomic "$OUT/access_ncu.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || fail "scripts/access_ncu.py"
  fi
fi

echo "=== SASS of the 32- and 64-bit index (04_vector_width_index)"
cuobjdump=$(find_cuda_tool cuobjdump "${CUOBJDUMP:-}")
if [ -z "$cuobjdump" ] || [ ! -x "$cuobjdump" ]; then
  fail "cuobjdump was not found (PATH, \$CUDA_HOME/bin, /usr/local/cuda/bin; or set CUOBJDUMP)"
else
  timeout 120 "$cuobjdump" -sass "$bin/04_vector_width_index" >"$work/sass.txt" 2>&1 || fail "cuobjdump -sass"
  # The instructions of the kernel whose mangled name contains $1, one per line.
  kernel_sass() {
    awk -v pat="$1" '
      /Function :/ { on = index($0, pat) > 0; next }
      on && /^[[:space:]]*\/\*[0-9a-f][0-9a-f][0-9a-f][0-9a-f]\*\// {
        sub(/;.*/, ";"); gsub(/[[:space:]]+/, " "); sub(/^ /, ""); print
      }' "$work/sass.txt"
  }
  # Opcode counts: the first word after the address, past a predicate (@P0); the NOPs
  # that pad a kernel's end are left out.
  opcodes() {
    awk '{ op = $2; if (op ~ /^@/) op = $3; sub(/;$/, "", op); if (op != "NOP") n[op]++ }
         END { for (o in n) print o, n[o] }'
  }
  count() { opcodes <"$1" | awk '{ s += $2 } END { print s }'; }
  kernel_sass scale_kernelIfjE >"$work/i32.txt"
  kernel_sass scale_kernelIfmE >"$work/i64.txt"
  if [ ! -s "$work/i32.txt" ] || [ ! -s "$work/i64.txt" ]; then
    fail "scale_kernel<float, unsigned int> or <float, unsigned long> is not in the cuobjdump output"
  else
    {
      echo "# cuobjdump -sass of $bin/04_vector_width_index: scale_kernel<float, Index> with"
      echo "# Index = unsigned int (32-bit) and unsigned long (64-bit); commit $commit, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
      echo "== instructions (NOP padding left out): 32-bit index $(count "$work/i32.txt"), 64-bit index $(count "$work/i64.txt")"
      echo "== opcodes whose count differs (opcode, count with the 32-bit index, count with the 64-bit index)"
      join -a1 -a2 -e0 -o 0,1.2,2.2 <(opcodes <"$work/i32.txt" | sort) <(opcodes <"$work/i64.txt" | sort) |
        awk '$2 != $3 { printf "%-28s %3d %3d\n", $1, $2, $3 }'
      echo "== scale_kernel<float, unsigned int>"
      cat "$work/i32.txt"
      echo "== scale_kernel<float, unsigned long>"
      cat "$work/i64.txt"
    } | tee_atomic "$OUT/access_sass_index.txt" >/dev/null
    grep -v '^/\*' "$OUT/access_sass_index.txt"
  fi
fi

echo "=== compute-sanitizer"
sanitizer=$(find_cuda_tool compute-sanitizer "${SANITIZER:-}")
if [ -z "$sanitizer" ] || [ ! -x "$sanitizer" ]; then
  fail "compute-sanitizer was not found (PATH, \$CUDA_HOME/bin, /usr/local/cuda/bin; or set SANITIZER)"
else
  sanitize_one() { # program tool: one line with the error count, the log's end on failure
    local p=$1 tool=$2 text rc errors verdict=ok
    # shellcheck disable=SC2046
    text=$(timeout 300 "$sanitizer" --tool "$tool" --error-exitcode 99 "$bin/$p" $(sanitize_args "$p") --run-once 2>&1)
    rc=$?
    errors=$(printf '%s\n' "$text" | sed -n 's/.*ERROR SUMMARY: \([0-9][0-9]*\) error.*/\1/p' | tail -1)
    [ -n "$errors" ] || errors=$(printf '%s\n' "$text" | sed -n 's/.*RACECHECK SUMMARY: \([0-9][0-9]*\) hazard.*/\1/p' | tail -1)
    if [ -z "$errors" ] || [ "$errors" -ne 0 ] || [ "$rc" -ne 0 ]; then verdict=FAIL; fi
    printf 'sanitize %-22s %-9s errors=%-3s exit=%-3s %s\n' "$p" "$tool" "${errors:-?}" "$rc" "$verdict"
    [ "$verdict" = ok ] || printf '%s\n' "$text" | tail -30
  }
  jobs_run=()
  for p in "${programs[@]}"; do
    tools=(memcheck initcheck)
    grep -qE '__shared__|_sync\(' "access_patterns/$p.cu" && tools+=(racecheck synccheck)
    for tool in "${tools[@]}"; do
      sanitize_one "$p" "$tool" >"$work/sanitize.$p.$tool.txt" &
      jobs_run+=($!)
      if [ ${#jobs_run[@]} -ge 8 ]; then
        wait "${jobs_run[@]}"
        jobs_run=()
      fi
    done
  done
  [ ${#jobs_run[@]} -eq 0 ] || wait "${jobs_run[@]}"
  cat "$work"/sanitize.*.txt
  if grep -q "FAIL" "$work"/sanitize.*.txt; then fail "compute-sanitizer found errors"; fi
fi

echo "=== figures"
timeout 120 python3 scripts/plot_access.py --results "$OUT" --out "$OUT" || fail "scripts/plot_access.py"

rm -rf "$work"
echo "=== done in $((SECONDS - start)) s: $([ $status -eq 0 ] && echo all passed || echo FAILURES above)"
exit $status
