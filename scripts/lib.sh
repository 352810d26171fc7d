# shellcheck shell=bash
# The helpers of scripts/device.sh, on top of scripts/common.sh (refuse, check_*,
# tee_atomic, configure_for_device, detect_gpu, find_cuda_tool). Sourced, not run.
#   DRY_RUN=1        nothing runs, nothing is built or written: each command is printed as
#                    "run: COMMAND" and each result file as "writes PATH" (a folder of
#                    files as "writes PATH/").
#   need_gpu P       the GPU (exit 3 with one sentence when there is none, before anything is
#                    built or written); sets gpu_name and gpu (h200, h100, ...). In a dry run:
#                    gpu=$DEVICE_GPU (default h200) and no GPU is looked for.
#   build_targets T  one configure of BUILD_DIR per call (configure_for_device, with the
#                    extra arguments in configure_extra), then cmake --build for the targets
#                    (all: every target; NAME?: only when CMake knows NAME).
#   run CMD          CMD, or its line in a dry run.
#   make_scratch     the scratch folder of this call ($scratch, in TMPDIR), removed at exit
#                    (the EXIT trap, which then packs, see pack).
#   writes PATH      announces a result file (dry run) and records it for PACK.
#   capture [-s] [-n] NAME CMD   CMD with --csv OUT/NAME.csv (not with -n), its output
#                    (stdout only with -s) into OUT/NAME.txt, written whole, after a first
#                    line '# commit: C' (run_commit); a failure sets status=1.
#   run_commit       the commit the results come from, by the programs' rule
#                    (common/output.cpp git_commit): REDUCTION_COMMIT, else git's HEAD here
#                    (12 digits, -dirty for changes to tracked files), else "unknown".
#   sanitize LOG TOOL [OPTION...] -- CMD   one compute-sanitizer run, the one sanitizer
#                    call of every step: the whole output into LOG, and a verdict file holding
#                    "rc errors hazards verdict" (verdict ok: exit 0, a summary line, no
#                    error and no hazard). sanitize_bg: the same in the background, at most
#                    SANITIZE_JOBS (8) at a time; sanitize_wait: until they are done.
# shellcheck disable=SC2034  # status, gpu_name and san_* are read by scripts/device.sh
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

DRY_RUN=${DRY_RUN:-0}
status=0
written=()
configure_extra=()
_configured=0

need_gpu() {
  if [ "$DRY_RUN" = 1 ]; then
    gpu=${DEVICE_GPU:-h200}
    gpu_name="(dry run: $gpu)"
    return 0
  fi
  detect_gpu "$1"
}

# Prints a command as one line, the way a reader would type it.
_line() {
  local word out=""
  for word in "$@"; do
    [[ $word =~ ^[A-Za-z0-9_./:,^=@%+-]+$ ]] || word="'$word'"
    out+="${out:+ }$word"
  done
  echo "$out"
}

run() {
  if [ "$DRY_RUN" = 1 ]; then
    echo "run: $(_line "$@")"
    return 0
  fi
  "$@"
}

writes() {
  written+=("$1")
  [ "$DRY_RUN" != 1 ] || echo "writes $1"
}

build_targets() {
  local log=${BUILD_LOG:-/dev/null} known t wanted=()
  if [ "$DRY_RUN" = 1 ]; then
    [ "$_configured" = 1 ] || echo "run: $(_line configure_for_device "${configure_extra[@]}") (BUILD_DIR=$BUILD_DIR)"
    _configured=1
    echo "run: $(_line cmake --build "$BUILD_DIR" --target "$@")"
    return 0
  fi
  if [ "$_configured" = 0 ]; then
    configure_for_device "${configure_extra[@]}" >>"$log" 2>&1 || {
      tail -40 "$log"
      return 1
    }
    _configured=1
  fi
  known=$(cmake --build "$BUILD_DIR" --target help 2>/dev/null)
  local every=0
  for t in "$@"; do
    case "$t" in
      all) every=1 ;;
      *\?) if grep -qE "(^|[ .:])${t%\?}(:|$| )" <<<"$known"; then wanted+=("${t%\?}"); fi ;;
      *) wanted+=("$t") ;;
    esac
  done
  local targets=()
  if [ "$every" = 0 ]; then
    [ ${#wanted[@]} -gt 0 ] || return 0 # only optional targets, none of which CMake knows
    targets=(--target "${wanted[@]}")
  fi
  cmake --build "$BUILD_DIR" --parallel "${JOBS:-$(nproc)}" "${targets[@]}" >>"$log" 2>&1 || {
    tail -40 "$log"
    return 1
  }
}

run_commit() {
  if [ -n "${REDUCTION_COMMIT:-}" ]; then
    echo "$REDUCTION_COMMIT"
    return
  fi
  local root head
  root=$(repo_root)
  head=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null) || {
    echo unknown
    return
  }
  [ -z "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ] || head+=-dirty
  echo "$head"
}

capture() {
  local stdout_only=0 csv=1
  while :; do
    case "$1" in
      -s) stdout_only=1 ;;
      -n) csv=0 ;;
      *) break ;;
    esac
    shift
  done
  local name=$1
  shift
  local cmd=("$@")
  [ "$csv" = 0 ] || cmd+=(--csv "$OUT/$name.csv")
  if [ "$DRY_RUN" = 1 ]; then
    echo "run: $(_line "${cmd[@]}") > $OUT/$name.txt"
  else
    {
      echo "# commit: $(run_commit)"
      if [ "$stdout_only" = 1 ]; then "${cmd[@]}"; else "${cmd[@]}" 2>&1; fi
    } | tee_atomic "$OUT/$name.txt"
    local rc=${PIPESTATUS[0]}
    [ "$rc" -eq 0 ] || {
      echo "FAILED: $name (exit $rc)"
      status=1
    }
  fi
  [ "$csv" = 0 ] || writes "$OUT/$name.csv"
  writes "$OUT/$name.txt"
}

# The compute-sanitizer: COMPUTE_SANITIZER or SANITIZER when set, else as common.sh finds it.
find_sanitizer() {
  sanitizer=$(find_cuda_tool compute-sanitizer "${COMPUTE_SANITIZER:-${SANITIZER:-}}")
  [ "$DRY_RUN" != 1 ] || sanitizer=${sanitizer:-compute-sanitizer}
  [ "$DRY_RUN" = 1 ] || { [ -n "$sanitizer" ] && [ -x "$sanitizer" ]; }
}

sanitize() {
  local log=$1 tool=$2 opts=()
  shift 2
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    opts+=("$1")
    shift
  done
  shift
  if [ "$DRY_RUN" = 1 ]; then
    echo "run: $(_line "${sanitizer:-compute-sanitizer}" --tool "$tool" "${opts[@]}" "$@")"
    return 0
  fi
  local rc=0 errors hazards verdict=ok
  timeout --kill-after=10 "${SANITIZE_TIMEOUT:-300}" "$sanitizer" --tool "$tool" "${opts[@]}" "$@" >"$log" 2>&1 || rc=$?
  errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9][0-9]*\) error.*/\1/p' "$log" | tail -1)
  hazards=$(sed -n 's/.*RACECHECK SUMMARY: \([0-9][0-9]*\) hazard.*/\1/p' "$log" | tail -1)
  # racecheck may print only its own summary: "N hazards displayed (E errors, W warnings)".
  [ -n "$errors" ] || errors=$(sed -n 's/.*RACECHECK SUMMARY:.*(\([0-9][0-9]*\) error.*/\1/p' "$log" | tail -1)
  if [ -z "$errors" ] || [ "$errors" -ne 0 ] || [ "${hazards:-0}" -ne 0 ] || [ "$rc" -ne 0 ]; then verdict=FAIL; fi
  echo "$rc ${errors:-?} ${hazards:-0} $verdict" >"$(_verdict_file "$log")"
  [ "$verdict" = ok ]
}

# The verdict of the run logged in LOG: a file in the scratch folder (never beside LOG,
# which may be in the results).
_verdict_file() { echo "$scratch/$(echo "$1" | tr '/' '_').verdict"; }

# verdict LOG: sets san_rc, san_errors, san_hazards, san_verdict from LOG's verdict file.
verdict() {
  if [ "$DRY_RUN" = 1 ]; then
    san_rc=0 san_errors=0 san_hazards=0 san_verdict=ok
    return 0
  fi
  read -r san_rc san_errors san_hazards san_verdict <"$(_verdict_file "$1")" 2>/dev/null ||
    { san_rc=missing san_errors='?' san_hazards=0 san_verdict=FAIL; }
}

sanitize_throttle() {
  [ "$DRY_RUN" = 1 ] && return 0
  while [ "$(jobs -rp | wc -l)" -ge "${SANITIZE_JOBS:-8}" ]; do wait -n || true; done
}
# sanitize_bg ARGS: sanitize ARGS in the background, at most SANITIZE_JOBS at a time (in a
# dry run, in the foreground, so the lines come in order); sanitize_wait: until all are done.
_san_jobs=()
sanitize_bg() {
  if [ "$DRY_RUN" = 1 ]; then
    sanitize "$@"
    return 0
  fi
  sanitize "$@" &
  _san_jobs+=($!)
  sanitize_throttle
}
sanitize_wait() {
  [ ${#_san_jobs[@]} -eq 0 ] || wait "${_san_jobs[@]}" 2>/dev/null
  _san_jobs=()
}

make_scratch() {
  scratch=$(mktemp -d "${TMPDIR:-/tmp}/device.XXXXXX") || exit 1
  trap '_lib_exit' EXIT
}
_lib_exit() {
  rm -rf -- "$scratch"
  pack
}

# pack: every file written so far into PACK/device_results.tgz (paths from the
# repository's root), when PACK names a folder; written whole.
pack() {
  [ -n "${PACK:-}" ] && [ "$DRY_RUN" != 1 ] || return 0
  local present=() f
  for f in "${written[@]}"; do [ -e "$f" ] && present+=("$f"); done
  [ ${#present[@]} -gt 0 ] || return 0
  mkdir -p "$PACK" && tar -czf "$PACK/device_results.tgz.part" "${present[@]}" &&
    mv "$PACK/device_results.tgz.part" "$PACK/device_results.tgz"
}
