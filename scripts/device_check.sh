#!/usr/bin/env bash
# One call on a GPU machine: build, run the GPU tests, print the tables, and write
# the result files. Steps (any subset, in this order): build test table sweep sanitize
# profile flush lab arch ab ("experiments", the lab step's former name, still works).
#   arch: for each architecture in ARCHS (default "80 80-virtual"), a build of the GPU
#         tests for it alone into /tmp/build-arch-<arch>, run on this GPU: what a reader's
#         older build runs here (paths chosen by the kernel image) -> ctest_gpu_arch_<arch>.txt
#   ab:   the stages of this tree against those of AB_BASE (a copy of an older tree, e.g.
#         from git archive, at commit AB_BASE_COMMIT), AB_ROUNDS rounds (default 3)
#         alternating the two programs,
#         AB_STAGES (default 07-18,cub) over AB_SWEEP (default 2^16:2^28:4), into
#         history/ab_<AB_TAG>.csv (columns: round, build, then reduce's own).
#   scripts/device_check.sh build test table
# Environment: OUT (where result files go, default results/<gpu>, from the GPU's name:
# h200, h100, ...), BUILD_DIR (default /tmp/build-gpu), TABLE_SIZES (default "24 28"),
# SWEEP (default 2^10:2^30), SWEEP_STAGES (default: every stage from 12 on, as reduce
# --list has them, and cub), PROFILE_N (default 2^24), LAB_EXPERIMENTS (default: every lab
# experiment, as CMake lists them in $BUILD_DIR/lab/list.txt; EXPERIMENTS, its former name,
# is read when it is unset), ARCHS, AB_BASE,
# AB_TAG, AB_ROUNDS, AB_STAGES, AB_SWEEP (above), and CMAKE_PREFIX_PATH if Catch2 lives
# somewhere unusual (a .deps/ folder in the repository is used automatically).
# Exit codes: 0 every step passed; 1 a step failed; 2 an unknown step or a bad value of
# the environment (one sentence, nothing written); 3 no GPU (checked before anything is
# built or written).
set -uo pipefail
program=device_check.sh
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
# shellcheck source=scripts/common.sh
source scripts/common.sh
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(build test table)
BUILD_DIR=${BUILD_DIR:-/tmp/build-gpu}
LAB_EXPERIMENTS=${LAB_EXPERIMENTS:-${EXPERIMENTS:-}}

# Every value checked before anything else: one sentence and exit 2, nothing written.
for step in "${steps[@]}"; do
  case "$step" in
    build | test | table | sweep | sanitize | profile | flush | lab | experiments | arch | ab) ;;
    -h | --help)
      script_help "${BASH_SOURCE[0]}"
      exit 0
      ;;
    *) refuse "$program" "unknown step '$step' (allowed: build test table sweep sanitize profile flush lab" \
      "arch ab)." ;;
  esac
done
for k in ${TABLE_SIZES:-24 28}; do check_whole_number "$program" "TABLE_SIZES item" "$k" 1 40; done
for arch in ${ARCHS:-80 80-virtual}; do
  [[ $arch =~ ^([0-9]{2,3}[a-z]?(-real|-virtual)?|all|all-major|native)$ ]] ||
    refuse "$program" "ARCHS item '$arch' is not a CUDA architecture such as 80, 90a, 80-virtual or native."
done
for e in $LAB_EXPERIMENTS; do
  [[ $e =~ ^[A-Za-z0-9_]+$ ]] || refuse "$program" "LAB_EXPERIMENTS item '$e' is not an experiment's name (letters," \
    "digits and underscores, as in $BUILD_DIR/lab/list.txt)."
done
if [[ " ${steps[*]} " == *" ab "* ]]; then
  [ -n "${AB_BASE:-}" ] && [ -f "${AB_BASE}/CMakeLists.txt" ] ||
    refuse "$program" "ab: AB_BASE '${AB_BASE:-}' is not the folder of an older tree (one with a CMakeLists.txt)."
  check_whole_number "$program" AB_ROUNDS "${AB_ROUNDS:-3}" 1 100
  [[ ${AB_TAG:-base} =~ ^[A-Za-z0-9._-]+$ ]] ||
    refuse "$program" "AB_TAG '${AB_TAG:-}' is not a name for history/ab_<AB_TAG>.csv (letters, digits, . _ -)."
fi
PRESET="" check_build_env "$program"
[ -z "${OUT:-}" ] || check_output_dir "$program" OUT "$OUT"

# A GPU, before anything is built or written; the results go to its folder.
detect_gpu "$program"
OUT=${OUT:-results/$gpu}
check_output_dir "$program" OUT "$OUT"
mkdir -p "$OUT"
status=0

# The stages the sweep and the write-flush tables compare: every stage from 12 on, read
# from the registry (reduce --list), so a new stage needs no edit here; then cub.
stages_from_12() {
  "$BUILD_DIR/reduction/reduce" --list --format csv | awk -F, '$3 == "stage" && $1 + 0 >= 12 { printf "%s,", $1 }'
  echo cub
}

for step in "${steps[@]}"; do
  echo "=== $step ==="
  case "$step" in
    build)
      configure_for_device >"$OUT/build.log" 2>&1 &&
        cmake --build "$BUILD_DIR" --parallel "$(nproc)" >>"$OUT/build.log" 2>&1 || {
        tail -40 "$OUT/build.log"
        exit 1
      }
      ;;
    test)
      ctest --test-dir "$BUILD_DIR" --output-on-failure 2>&1 | tee_atomic "$OUT/ctest.txt" | tail -25
      [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
      ;;
    table)
      for k in ${TABLE_SIZES:-24 28}; do
        "$BUILD_DIR/reduction/reduce" --n "2^$k" --csv "$OUT/reduce_2p$k.csv" 2>&1 | tee_atomic "$OUT/reduce_2p$k.txt"
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
      done
      ;;
    sweep)
      "$BUILD_DIR/reduction/reduce" --sweep "${SWEEP:-2^10:2^30}" --stages "${SWEEP_STAGES:-$(stages_from_12)}" \
        --csv "$OUT/sweep.csv" 2>&1 | tee_atomic "$OUT/sweep.txt"
      [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
      ;;
    sanitize)
      scripts/sanitize.sh --build "$BUILD_DIR" --out "$OUT/sanitize.txt" || status=1
      ;;
    profile)
      # Nsight Compute over every stage and baseline, every mixed-precision variant and
      # a few occupancy configurations; reports and exports stay in $OUT/profile.
      scripts/profile.sh --build "$BUILD_DIR" --out "$OUT/profile" --n "${PROFILE_N:-2^24}" || status=1
      scripts/profile.sh --program mixed_precision --build "$BUILD_DIR" --out "$OUT/profile" \
        --n "${PROFILE_N:-2^24}" || status=1
      scripts/profile.sh --program occupancy --build "$BUILD_DIR" --out "$OUT/profile" || status=1
      for t in ncu_metrics ncu_metrics_mixed_precision ncu_metrics_occupancy; do
        for ext in csv txt; do [ -f "$OUT/profile/$t.$ext" ] && cp "$OUT/profile/$t.$ext" "$OUT/"; done
      done
      ;;
    flush)
      # The same stages with the old flush (a memset, which leaves dirty lines in L2),
      # to compare with the tables above (chapter 00, "How we time").
      for k in 28 30; do
        "$BUILD_DIR/reduction/reduce" --n "2^$k" --stages "$(stages_from_12)" --flush write \
          --csv "$OUT/reduce_2p${k}_write_flush.csv" 2>&1 | tee_atomic "$OUT/reduce_2p${k}_write_flush.txt"
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
      done
      ;;
    lab | experiments)
      list="$BUILD_DIR/lab/list.txt"
      if [ -z "$LAB_EXPERIMENTS" ] && [ ! -f "$list" ]; then
        echo "lab: $list is missing; configure $BUILD_DIR first (the build step does)" >&2
        status=1
        continue
      fi
      for e in ${LAB_EXPERIMENTS:-$(cat "$list")}; do
        "$BUILD_DIR/lab/$e" --csv "$OUT/experiment_$e.csv" 2>&1 |
          tee_atomic "$OUT/experiment_$e.txt"
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
      done
      ;;
    arch)
      for arch in ${ARCHS:-80 80-virtual}; do
        dir=/tmp/build-arch-$arch
        if PRESET="" BUILD_DIR=$dir configure_build_dir -DCMAKE_CUDA_ARCHITECTURES="$arch" -DREDUCTION_BUILD_TESTS=ON \
          ${CMAKE_PREFIX_PATH:+-DCMAKE_PREFIX_PATH="$CMAKE_PREFIX_PATH"} >"$OUT/build_arch_$arch.log" 2>&1 &&
          cmake --build "$dir" --parallel "$(nproc)" >>"$OUT/build_arch_$arch.log" 2>&1; then
          ctest --test-dir "$dir" -L gpu --output-on-failure 2>&1 | tee_atomic "$OUT/ctest_gpu_arch_$arch.txt" |
            tail -15
          [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
        else
          tail -30 "$OUT/build_arch_$arch.log"
          status=1
        fi
      done
      ;;
    ab)
      base=${AB_BASE:?ab: set AB_BASE to the folder of the older tree}
      tag=${AB_TAG:-base}
      if ! { cmake -S "$base" -B /tmp/build-ab-base -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_CUDA_ARCHITECTURES=90 -DREDUCTION_BUILD_TESTS=OFF &&
        cmake --build /tmp/build-ab-base --parallel "$(nproc)" --target reduce; } >"$OUT/build_ab.log" 2>&1; then
        tail -30 "$OUT/build_ab.log"
        status=1
        continue
      fi
      mkdir -p "$OUT/history" /tmp/ab
      for r in $(seq 1 "${AB_ROUNDS:-3}"); do
        for which in this base; do
          prog=$BUILD_DIR/reduction/reduce
          [ "$which" = base ] && prog=/tmp/build-ab-base/reduction/reduce
          commit=${REDUCTION_COMMIT:-}
          [ "$which" = base ] && commit=${AB_BASE_COMMIT:-base}
          REDUCTION_COMMIT=$commit "$prog" --sweep "${AB_SWEEP:-2^16:2^28:4}" --stages "${AB_STAGES:-07-18,cub}" \
            --reps 50 --csv "/tmp/ab/$which-$r.csv" >"/tmp/ab/$which-$r.txt" 2>&1 || status=1
          echo "ab round $r $which: $(tail -1 "/tmp/ab/$which-$r.txt")"
        done
      done
      AB_THIS=${REDUCTION_COMMIT:-unknown} AB_THAT=${AB_BASE_COMMIT:-base} \
        python3 - "$OUT/history/ab_$tag.csv" /tmp/ab <<'PY' || status=1
import csv, glob, os, sys
out, folder = sys.argv[1], sys.argv[2]
rows, header, meta = [], None, []
for path in sorted(glob.glob(os.path.join(folder, "*.csv"))):
    which, r = os.path.basename(path)[:-4].split("-")
    with open(path) as f:
        lines = f.read().splitlines()
    data = [l for l in lines if not l.startswith("#")]
    if not meta:
        meta = [l for l in lines if l.startswith("#") and not l.startswith("# commit")]
    header = ["round", "build"] + data[0].split(",")
    for line in data[1:]:
        rows.append([r, which] + next(csv.reader([line])))
with open(out, "w", newline="") as f:
    for m in meta:
        f.write(m + "\n")
    f.write(f"# builds: this = commit {os.environ['AB_THIS']}, base = commit {os.environ['AB_THAT']}; "
            "the two programs alternate, one process per run\n")
    w = csv.writer(f)
    w.writerow(header)
    w.writerows(rows)
print(f"wrote {out}: {len(rows)} rows")
PY
      ;;
    *)
      echo "unknown step '$step' (allowed: build test table sweep sanitize profile flush lab arch ab)" >&2
      exit 2
      ;;
  esac
done
exit $status
