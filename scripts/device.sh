#!/usr/bin/env bash
# One call on a GPU machine: one build of the targets the chosen steps need, then the
# steps, in the order given, each running its programs and writing its result files (the
# names below) into OUT (default results/<gpu>, from the GPU's name: h200, h100, ...).
#   scripts/device.sh [--dry-run] STEP...        (no STEP: build test table)
# Steps:
#   build            every target; the build's log -> build.log
#   test             ctest over the whole build -> ctest.txt
#   table            reduce --n 2^K for K in TABLE_SIZES -> reduce_2pK.csv/.txt
#   sweep            reduce --sweep SWEEP --stages SWEEP_STAGES -> sweep.csv/.txt
#   sanitize         compute-sanitizer's four tools over the stages reduce --stages
#                    SANITIZE_STAGES --list names, at 1, 33, 4097, 2^20+7 -> sanitize.txt
#   profile          scripts/profile.sh (reduce, mixed_precision, occupancy) -> profile/,
#                    ncu_metrics{,_mixed_precision,_occupancy}.csv/.txt
#   flush            the stages from 12 on with --flush write at 2^28 and 2^30
#                    -> reduce_2pK_write_flush.csv/.txt
#   lab              every lab experiment (LAB_EXPERIMENTS, default build/lab/list.txt)
#                    -> experiment_NAME.csv/.txt
#   arch             the GPU tests built for each of ARCHS alone (/tmp/build-arch-<arch>)
#                    -> build_arch_<arch>.log, ctest_gpu_arch_<arch>.txt
#   ab               this tree's stages against AB_BASE's -> build_ab.log, history/ab_<AB_TAG>.csv
#   peers            peers/ceiling, peers/cub_modes (CCCL 3.5 headers), torch and CuPy
#                    -> peers_{ceiling,cub_modes,torch_cupy}.csv/.txt
#   library          the single-pass library: STEPS (default "test sanitize sweep")
#                    -> library_ctest.txt, sanitize_library.txt, sanitize_library/, library_sweep.csv/.txt
#   mixed_precision  tests, the table at TABLE_SIZES, the sanitizer over every variant
#                    -> mixed_precision_2pK.csv, mixed_precision_device.txt
#   occupancy        tests, refusals, the sanitizer, the three programs
#                    -> occupancy_01_summary.txt, occupancy_0{2,3}_*.csv/.txt, occupancy_device.txt
#   warp_tools       lab/warp_tools, racecheck over lab/volatile_last_warp
#                    -> experiment_warp_tools.csv/.txt, racecheck_volatile_warp.csv/.txt
#   access           access_patterns/: tests, every program, Nsight Compute, the SASS of the
#                    index, the sanitizer, the figures -> access_*.csv/.txt/.png, access_device.txt
#   histogram        tests, the sweeps at 256 and 4096 bins, torch.bincount, the sanitizer
#                    -> histogram_{256,4096,torch}.csv/.txt, histogram_sanitize.txt, histogram_device.txt
#   scan             tests, the three sweeps, torch.cumsum, the sanitizer
#                    -> scan_tests.txt, scan_<type>_<kind>.csv/.txt, scan_bounds_int_<kind>.csv/.txt,
#                    scan_torch.csv/.txt, scan_sanitize.txt
#   multi_gpu        every GPU: topology, NCCL and MPI runs, tests, the sanitizer, into
#                    RESULTS_DIR (default results/<gpu>x<N>, or OUT with the suffix _1gpu on
#                    one GPU) -> topology.txt, multi_gpu*.csv/.txt, nccl_transports.txt, ...
# --dry-run needs no GPU and builds nothing: it prints each command a step would run
# ("run: ...") and each file it would write ("writes PATH"; a folder as "writes PATH/"),
# with <gpu> = DEVICE_GPU (default h200) and DEVICE_GPUS GPUs (default 1).
# Environment: OUT, BUILD_DIR (default /tmp/build-device), JOBS, PACK (a folder: every file
# written is also packed into PACK/device_results.tgz, paths from the repository root),
# COMPUTE_SANITIZER or SANITIZER, NCU, CUOBJDUMP, REDUCTION_COMMIT; and per step:
# TABLE_SIZES ("24 28"), SWEEP (2^10:2^30, also peers' and library's), SWEEP_STAGES,
# SANITIZE_STAGES (all), PROFILE_N (2^24), LAB_EXPERIMENTS, ARCHS ("80 80-virtual"),
# AB_BASE, AB_BASE_COMMIT, AB_TAG, AB_ROUNDS, AB_STAGES, AB_SWEEP, STEPS (library),
# SANITIZE_SIZES (mixed_precision: "1025 1048579"), REPS (30) and BUDGET_MS (300)
# (histogram), SCAN_SIZES, BOUND_SIZES, TORCH_SWEEP (scan), RESULTS_DIR, MULTI_GPU_SWEEP (n per GPU,
# 2^20:2^28:4), GPU_COUNTS, BUDGET_S (450) (multi_gpu).
# Exit codes: 0 every step passed; 1 a step failed (the later steps still run); 2 an
# unknown step or a bad value of the environment (one sentence, nothing written); 3 no GPU
# (checked before anything is built or written).
set -uo pipefail
program=device.sh
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
root=$PWD
# shellcheck source=scripts/lib.sh
source scripts/lib.sh

all_steps="build test table sweep sanitize profile flush lab arch ab peers library mixed_precision occupancy"
all_steps+=" warp_tools access histogram scan multi_gpu"
steps=()
for arg in "$@"; do
  case "$arg" in
    -h | --help)
      script_help "${BASH_SOURCE[0]}"
      exit 0
      ;;
    --dry-run) DRY_RUN=1 ;;
    *)
      [[ " $all_steps " == *" $arg "* ]] || refuse "$program" "unknown step '$arg' (allowed: $all_steps)."
      steps+=("$arg")
      ;;
  esac
done
[ ${#steps[@]} -gt 0 ] || steps=(build test table)
chose() { [[ " ${steps[*]} " == *" $1 "* ]]; }
BUILD_DIR=${BUILD_DIR:-/tmp/build-device}
LAB_EXPERIMENTS=${LAB_EXPERIMENTS:-${EXPERIMENTS:-}}
B=$BUILD_DIR

# Every value checked before anything else: one sentence and exit 2, nothing written.
for k in ${TABLE_SIZES:-24 28}; do check_whole_number "$program" "TABLE_SIZES item" "$k" 1 40; done
for n in ${SANITIZE_SIZES:-1025 1048579}; do check_whole_number "$program" "SANITIZE_SIZES item" "$n" 1 1073741824; done
for arch in ${ARCHS:-80 80-virtual}; do
  [[ $arch =~ ^([0-9]{2,3}[a-z]?(-real|-virtual)?|all|all-major|native)$ ]] ||
    refuse "$program" "ARCHS item '$arch' is not a CUDA architecture such as 80, 90a, 80-virtual or native."
done
for e in $LAB_EXPERIMENTS; do
  [[ $e =~ ^[A-Za-z0-9_]+$ ]] || refuse "$program" "LAB_EXPERIMENTS item '$e' is not an experiment's name (letters," \
    "digits and underscores, as in $BUILD_DIR/lab/list.txt)."
done
if chose ab; then
  [ -f "${AB_BASE:-/nonexistent}/CMakeLists.txt" ] ||
    refuse "$program" "ab: AB_BASE '${AB_BASE:-}' is not the folder of an older tree (one with a CMakeLists.txt)."
  check_whole_number "$program" AB_ROUNDS "${AB_ROUNDS:-3}" 1 100
  [[ ${AB_TAG:-base} =~ ^[A-Za-z0-9._-]+$ ]] ||
    refuse "$program" "AB_TAG '${AB_TAG:-}' is not a name for history/ab_<AB_TAG>.csv (letters, digits, . _ -)."
fi
for s in ${STEPS:-test sanitize sweep}; do
  [[ " test sanitize sweep build " == *" $s "* ]] ||
    refuse "$program" "STEPS: unknown library step '$s' (allowed: test sanitize sweep)."
done
check_whole_number "$program" REPS "${REPS:-30}" 3 100000
check_whole_number "$program" BUDGET_MS "${BUDGET_MS:-300}" 1 1000000
check_whole_number "$program" BUDGET_S "${BUDGET_S:-450}" 1 100000
powers=""
for k in $(seq 10 30); do powers+="2^$k,"; done
SCAN_SIZES=${SCAN_SIZES:-${powers}1000,1000003,10000019}
[[ $SCAN_SIZES =~ ^[0-9^KMG,]+$ ]] || refuse "$program" "SCAN_SIZES '$SCAN_SIZES' is not a comma-separated list of sizes."
[[ ${BOUND_SIZES:-2^20} =~ ^[0-9^KMG,]+$ ]] ||
  refuse "$program" "BOUND_SIZES '$BOUND_SIZES' is not a comma-separated list of sizes."
[[ ${TORCH_SWEEP:-2^10:2^28} =~ ^[0-9^KMG]+:[0-9^KMG]+(:[0-9]+)?$ ]] ||
  refuse "$program" "TORCH_SWEEP '${TORCH_SWEEP:-}' is not a sweep such as 2^10:2^30."
# SANITIZE_STAGES: items as reduce --stages takes them, checked against the committed registry.
known=" all stages baselines $(awk -F, 'NR > 2 { printf "%s %s ", $1, $2 } $3 == "stage" { printf "%d ", $1 }' \
  results/registry.csv)"
IFS=, read -r -a items <<<"${SANITIZE_STAGES:-all}"
for s in "${items[@]}"; do
  [[ $s =~ ^[0-9]+-[0-9]+$ || ($s =~ ^[a-z0-9_]+$ && $known == *" $s "*) ]] ||
    [[ $s =~ ^[0-9]{1,4}$ && $known == *" $((10#$s)) "* ]] ||
    refuse "$program" "SANITIZE_STAGES item '$s' is not a stage: a key or id of results/registry.csv, all, stages," \
      "baselines or a range such as 11-17."
done
[ -z "${GPU_COUNTS:-}" ] || [[ $GPU_COUNTS =~ ^[0-9]+(,[0-9]+)*$ ]] ||
  refuse "$program" "GPU_COUNTS '$GPU_COUNTS' is not a comma-separated list of GPU counts such as 1,2,4."
[[ ${DEVICE_GPU:-h200} =~ ^[a-z0-9_]+$ ]] ||
  refuse "$program" "DEVICE_GPU '${DEVICE_GPU:-}' is not a GPU's short name such as h200 or h100."
check_whole_number "$program" DEVICE_GPUS "${DEVICE_GPUS:-1}" 1 64
[ "$DRY_RUN" = 1 ] || PRESET="" check_build_env "$program"
for v in OUT RESULTS_DIR PACK; do
  [ -z "${!v:-}" ] || check_output_dir "$program" "$v" "${!v}"
done

# A GPU, before anything is built or written; the results go to its folder.
need_gpu "$program"
OUT=${OUT:-results/$gpu}
[ "$DRY_RUN" = 1 ] || { check_output_dir "$program" OUT "$OUT" && mkdir -p "$OUT" && make_scratch; } || exit 1
scratch=${scratch:-/nonexistent}
BUILD_LOG=$scratch/build.log
if chose build; then
  BUILD_LOG=$OUT/build.log
  writes "$BUILD_LOG"
fi
[ "$DRY_RUN" = 1 ] || : >"$BUILD_LOG"
start=$SECONDS
echo "device.sh on $gpu_name: steps ${steps[*]}; results into $OUT; build in $BUILD_DIR"

# ---- what the configure needs: CCCL's headers (peers), NCCL and MPI (multi_gpu) ----------
if chose peers; then
  cccl=.deps/cccl/include
  if [ ! -f "$cccl/cub/device/device_reduce.cuh" ]; then
    run timeout 30 scripts/get_cccl.sh || echo "$program: no CCCL headers (carry .deps/cccl or run" \
      "scripts/get_cccl.sh where PyPI is reachable); cub_modes is skipped."
  fi
  [ ! -f "$cccl/cub/device/device_reduce.cuh" ] && [ "$DRY_RUN" != 1 ] ||
    configure_extra+=(-DREDUCTION_CCCL_INCLUDE="$root/$cccl")
fi
mpirun="" no_nccl=0
if chose multi_gpu; then
  export NCCL_NVLS_ENABLE=0 # NVLink multicast off, for every step and rank
  cuda_root=$(dirname "$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")")
  if [ -f "$cuda_root/include/nccl.h" ]; then
    echo "NCCL from the CUDA toolkit ($cuda_root)"
  elif [ -n "${NCCL_ROOT:-}" ]; then
    echo "NCCL from NCCL_ROOT ($NCCL_ROOT)"
  elif wheel=$(timeout 20 python3 -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null) &&
    [ -f "$wheel/include/nccl.h" ]; then
    echo "NCCL from Python's wheel ($wheel)"
    configure_extra+=(-DREDUCTION_NCCL_ROOT="$wheel")
    export LD_LIBRARY_PATH="$wheel/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  else
    no_nccl=1
    echo "$program: no NCCL: not in the CUDA toolkit ($cuda_root), NCCL_ROOT is not set and Python has no" \
      "nvidia-nccl-cu13 wheel (pip install nvidia-nccl-cu13); the multi_gpu step fails."
  fi
  if [ -x "$root/.deps/mpi/bin/mpirun" ]; then
    export PATH="$root/.deps/mpi/bin:$PATH"
    configure_extra+=(-DMPI_HOME="$root/.deps/mpi")
    mpirun=$root/.deps/mpi/bin/mpirun
  elif command -v mpirun >/dev/null 2>&1; then
    mpirun=$(command -v mpirun)
  fi
  [ "$DRY_RUN" != 1 ] || mpirun=${mpirun:-mpirun}
  if [ -n "$mpirun" ] && mpi_version=$(run timeout 20 "$mpirun" --version 2>&1 | head -n 1); then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    if [[ "$mpi_version" == *"Open MPI) 5."* ]]; then export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,sm OMPI_MCA_osc=^ucx; fi
  else
    mpirun=""
    echo "$program: no MPI runtime (run scripts/get_mpi.sh where there is a network and carry .deps/mpi): the" \
      "MPI parts of multi_gpu are skipped."
  fi
fi

# ---- one build --------------------------------------------------------------------------------
access_programs=()
for f in access_patterns/[0-9][0-9]_*.cu; do access_programs+=("$(basename "$f" .cu)"); done
targets_of() {
  case "$1" in
    build | test | profile) echo all ;;
    ab) echo reduce ;; # the other tree's runner is built by the step itself
    table | sweep | sanitize | flush) echo reduce ;;
    lab)
      # shellcheck disable=SC2086  # one name per word
      if [ -n "$LAB_EXPERIMENTS" ]; then printf 'experiment_%s ' $LAB_EXPERIMENTS; else echo all; fi
      ;;
    arch) ;;
    peers) echo "ceiling cub_modes?" ;;
    library) echo "gpu_generic_tests gpu_single_pass_two_files gpu_single_pass_large single_pass_example reduce" ;;
    mixed_precision) echo "mixed_precision mp_host_tests mp_gpu_tests" ;;
    occupancy) echo "01_thread_hierarchy 02_resource_usage 03_occupancy_sweep occupancy_host_tests occupancy_gpu_tests" ;;
    warp_tools) echo "experiment_warp_tools experiment_volatile_last_warp gpu_warp_tools_tests?" ;;
    access) echo "access_host_tests access_gpu_tests" && printf 'access_%s ' "${access_programs[@]}" ;;
    histogram) echo "histogram histogram_host_tests histogram_gpu_tests" ;;
    scan) echo "scan scan_host_tests scan_gpu_tests" ;;
    multi_gpu) echo "multi_gpu_sum? gpu_multi_gpu_tests? multi_gpu_mpi?" ;; # without NCCL the step fails, saying so
  esac
}
targets=()
for step in "${steps[@]}"; do
  for t in $(targets_of "$step"); do [[ " ${targets[*]} " == *" $t "* ]] || targets+=("$t"); done
done
[[ " ${targets[*]} " != *" all "* ]] || targets=(all)
if [ ${#targets[@]} -gt 0 ]; then
  echo "=== build (${targets[*]})"
  build_targets "${targets[@]}" || {
    echo "$program: the build failed (log above); no step ran."
    exit 1
  }
  echo "built in $((SECONDS - start)) s"
fi

# build_warnings REGEX: a warning from this part of the project in the build's log fails it.
# shellcheck disable=SC2317  # called from the steps that logged runs
build_warnings() {
  [ "$DRY_RUN" != 1 ] || return 0
  if grep -iE "warning" "$BUILD_LOG" | grep -qE "$1"; then
    echo "build warnings:"
    grep -iE -A3 "warning" "$BUILD_LOG" | head -40
    status=1
  fi
}
# test_programs TAIL PROGRAM...: the Catch2 programs of a step; 77 (no GPU) is a failure here.
# shellcheck disable=SC2317  # called from the steps that logged runs
test_programs() {
  local lines=$1 t rc
  shift
  for t in "$@"; do
    run timeout 600 "$B/tests/$t" 2>&1 | tail -"$lines"
    rc=${PIPESTATUS[0]}
    [ "$rc" -eq 0 ] || {
      echo "FAILED: $t: exit code $rc"
      status=1
    }
  done
}
# logged FILE FUNCTION: runs FUNCTION with everything it prints also in FILE (written whole).
logged() {
  writes "$1"
  if [ "$DRY_RUN" = 1 ]; then
    "$2"
    return
  fi
  (
    echo "# commit: $(run_commit)"
    "$2"
    printf '%s\n' "${written[@]}" >"$scratch/written"
    exit "$status"
  ) 2>&1 | tee_atomic "$1"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  mapfile -t written <"$scratch/written"
}
# sink FILE: FILE, or the console in a dry run (which has no scratch folder).
sink() { if [ "$DRY_RUN" = 1 ]; then echo /dev/stdout; else echo "$1"; fi; }
# The stages from 12 on, read from the registry (reduce --list), then cub.
stages_from_12() {
  if [ "$DRY_RUN" = 1 ]; then
    echo "STAGES_FROM_12,cub"
    return
  fi
  "$B/reduction/reduce" --list --format csv | awk -F, '$3 == "stage" && $1 + 0 >= 12 { printf "%s,", $1 }'
  echo cub
}

# ---- the steps ----------------------------------------------------------------------------------
step_build() { :; } # the build above
step_test() { capture -n ctest ctest --test-dir "$B" --output-on-failure; }
step_table() {
  for k in ${TABLE_SIZES:-24 28}; do capture "reduce_2p$k" "$B/reduction/reduce" --n "2^$k"; done
}
step_sweep() {
  capture sweep "$B/reduction/reduce" --sweep "${SWEEP:-2^10:2^30}" --stages "${SWEEP_STAGES:-$(stages_from_12)}"
}
step_flush() {
  local k stages
  stages=$(stages_from_12)
  for k in 28 30; do
    capture "reduce_2p${k}_write_flush" "$B/reduction/reduce" --n "2^$k" --stages "$stages" --flush write
  done
}

# The registered stages, the four tools, four sizes; one line per stage and tool.
step_sanitize() {
  local reduce=$B/reduction/reduce sizes=(1 33 4097 1048583) tools=(memcheck racecheck synccheck initcheck)
  local keys key tool n lines=() errors hazards problems result runs=0 bad=0
  writes "$OUT/sanitize.txt"
  find_sanitizer || {
    echo "FAILED: compute-sanitizer was not found (PATH, \$CUDA_HOME/bin, /usr/local/cuda/bin; or set COMPUTE_SANITIZER)"
    status=1
    return
  }
  if [ "$DRY_RUN" = 1 ]; then
    keys=KEY
    echo "run: $reduce --stages ${SANITIZE_STAGES:-all} --list (the stages: KEY)"
  else
    keys=$("$reduce" --stages "${SANITIZE_STAGES:-all}" --list | cut -f1) || {
      echo "FAILED: $reduce --stages ${SANITIZE_STAGES:-all} --list"
      status=1
      return
    }
  fi
  for key in $keys; do
    for tool in "${tools[@]}"; do
      for n in "${sizes[@]}"; do
        sanitize_bg "$scratch/sanitize.$key.$tool.$n" "$tool" --error-exitcode 99 -- \
          "$reduce" --stages "$key" --n "$n" --run-once
      done
    done
  done
  sanitize_wait
  lines+=("# compute-sanitizer over the registered stages: $(date -u +%Y-%m-%dT%H:%M:%SZ),\
 $("$sanitizer" --version 2>/dev/null | grep -m1 -i version)")
  lines+=("# runner: $reduce; sizes: ${sizes[*]}; tools: ${tools[*]}")
  lines+=("$(printf '%-20s %-10s %7s %8s  %s' stage tool errors hazards result)")
  for key in $keys; do
    for tool in "${tools[@]}"; do
      errors=0 hazards=0 problems=""
      for n in "${sizes[@]}"; do
        verdict "$scratch/sanitize.$key.$tool.$n"
        runs=$((runs + 1))
        [ "$san_errors" = "?" ] || errors=$((errors + san_errors))
        hazards=$((hazards + san_hazards))
        if [ "$san_verdict" != ok ]; then
          problems+="${problems:+; }n=$n exit $san_rc, errors ${san_errors}"
          bad=$((bad + 1))
        fi
      done
      result=ok
      [ -z "$problems" ] || result="FAIL ($problems)"
      [ "$tool" = racecheck ] || hazards=-
      lines+=("$(printf '%-20s %-10s %7d %8s  %s' "$key" "$tool" "$errors" "$hazards" "$result")")
    done
  done
  if [ "$bad" -eq 0 ]; then lines+=("# all $runs runs clean"); else lines+=("# $bad of $runs runs failed"); fi
  [ "$bad" -eq 0 ] || status=1
  [ "$DRY_RUN" = 1 ] || printf '%s\n' "${lines[@]}" | tee_atomic "$OUT/sanitize.txt"
}

step_profile() {
  local n=${PROFILE_N:-2^24} t ext
  writes "$OUT/profile/"
  run scripts/profile.sh --build "$B" --out "$OUT/profile" --n "$n" || status=1
  run scripts/profile.sh --program mixed_precision --build "$B" --out "$OUT/profile" --n "$n" || status=1
  run scripts/profile.sh --program occupancy --build "$B" --out "$OUT/profile" || status=1
  for t in ncu_metrics ncu_metrics_mixed_precision ncu_metrics_occupancy; do
    for ext in csv txt; do
      writes "$OUT/$t.$ext"
      [ "$DRY_RUN" = 1 ] || [ ! -f "$OUT/profile/$t.$ext" ] ||
        tee_atomic "$OUT/$t.$ext" <"$OUT/profile/$t.$ext" >/dev/null || status=1
    done
  done
}

step_lab() {
  local list=$B/lab/list.txt names=$LAB_EXPERIMENTS e
  if [ -z "$names" ] && [ -f "$list" ]; then names=$(cat "$list"); fi
  if [ -z "$names" ] && [ "$DRY_RUN" = 1 ]; then
    # A dry run has no build: the experiments lab/CMakeLists.txt adds (what list.txt will hold).
    names=$(sed -n 's/^add_experiment(\([A-Za-z0-9_]*\))$/\1/p' lab/CMakeLists.txt)
  fi
  if [ -z "$names" ]; then
    echo "FAILED: lab: $list is missing; configure $B first (the build does)"
    status=1
    return
  fi
  for e in $names; do capture "experiment_$e" "$B/lab/$e"; done
}

step_arch() {
  local arch dir
  for arch in ${ARCHS:-80 80-virtual}; do
    dir=/tmp/build-arch-$arch
    writes "$OUT/build_arch_$arch.log"
    if [ "$DRY_RUN" = 1 ]; then
      echo "run: configure_build_dir (BUILD_DIR=$dir) -DCMAKE_CUDA_ARCHITECTURES=$arch -DREDUCTION_BUILD_TESTS=ON;" \
        "cmake --build $dir"
    elif ! { PRESET="" BUILD_DIR=$dir configure_build_dir -DCMAKE_CUDA_ARCHITECTURES="$arch" \
      -DREDUCTION_BUILD_TESTS=ON ${CMAKE_PREFIX_PATH:+-DCMAKE_PREFIX_PATH="$CMAKE_PREFIX_PATH"} &&
      cmake --build "$dir" --parallel "$(nproc)"; } >"$OUT/build_arch_$arch.log" 2>&1; then
      tail -30 "$OUT/build_arch_$arch.log"
      status=1
      continue
    fi
    capture -n "ctest_gpu_arch_$arch" ctest --test-dir "$dir" -L gpu --output-on-failure
  done
}

step_ab() {
  local base=$AB_BASE tag=${AB_TAG:-base} r which prog commit
  writes "$OUT/build_ab.log"
  writes "$OUT/history/ab_$tag.csv"
  if [ "$DRY_RUN" = 1 ]; then
    echo "run: cmake -S $base -B /tmp/build-ab-base ... --target reduce; ${AB_ROUNDS:-3} rounds of reduce --sweep" \
      "${AB_SWEEP:-2^16:2^28:4} --stages ${AB_STAGES:-07-18,cub} --reps 50, this tree and the base alternating"
    return
  fi
  if ! { cmake -S "$base" -B /tmp/build-ab-base -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DREDUCTION_BUILD_TESTS=OFF && cmake --build /tmp/build-ab-base --parallel "$(nproc)" --target reduce; } \
    >"$OUT/build_ab.log" 2>&1; then
    tail -30 "$OUT/build_ab.log"
    status=1
    return
  fi
  mkdir -p "$OUT/history" "$scratch/ab"
  for r in $(seq 1 "${AB_ROUNDS:-3}"); do
    for which in this base; do
      prog=$B/reduction/reduce commit=${REDUCTION_COMMIT:-}
      [ "$which" = this ] || prog=/tmp/build-ab-base/reduction/reduce commit=${AB_BASE_COMMIT:-base}
      REDUCTION_COMMIT=$commit "$prog" --sweep "${AB_SWEEP:-2^16:2^28:4}" --stages "${AB_STAGES:-07-18,cub}" \
        --reps 50 --csv "$scratch/ab/$which-$r.csv" >"$scratch/ab/$which-$r.txt" 2>&1 || status=1
      echo "ab round $r $which: $(tail -1 "$scratch/ab/$which-$r.txt")"
    done
  done
  AB_THIS=${REDUCTION_COMMIT:-unknown} AB_THAT=${AB_BASE_COMMIT:-base} \
    python3 - "$OUT/history/ab_$tag.csv" "$scratch/ab" <<'PY' || status=1
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
with open(out + ".part", "w", newline="") as f:
    for m in meta:
        f.write(m + "\n")
    f.write(f"# builds: this = commit {os.environ['AB_THIS']}, base = commit {os.environ['AB_THAT']}; "
            "the two programs alternate, one process per run\n")
    w = csv.writer(f)
    w.writerow(header)
    w.writerows(rows)
os.replace(out + ".part", out)
print(f"wrote {out}: {len(rows)} rows")
PY
}

step_peers() {
  local sweep=${SWEEP:-2^10:2^30}
  capture peers_ceiling timeout 40 "$B/peers/ceiling" --sweep "$sweep"
  if [ "$DRY_RUN" = 1 ] || { [ -x "$B/peers/cub_modes" ] && [[ " ${configure_extra[*]} " == *CCCL* ]]; }; then
    capture peers_cub_modes timeout 60 "$B/peers/cub_modes" --sweep "$sweep"
  fi
  capture peers_torch_cupy timeout 90 python3 scripts/time_torch_cupy.py --sweep "$sweep"
}

step_library() {
  local s p name tool log errors result programs
  programs=("$B/tests/gpu_single_pass_two_files" "$B/single_pass/example/single_pass_example")
  for s in ${STEPS:-test sanitize sweep}; do
    echo "--- library: $s"
    case "$s" in
      build) ;; # the build above
      test)
        capture -n library_ctest timeout 1800 ctest --test-dir "$B" --output-on-failure --timeout 600 \
          -R '^(gpu_generic_tests|gpu_single_pass_two_files|gpu_single_pass_large|single_pass_example)$'
        ;;
      sanitize)
        writes "$OUT/sanitize_library.txt"
        writes "$OUT/sanitize_library/"
        find_sanitizer || {
          echo "FAILED: compute-sanitizer was not found"
          status=1
          continue
        }
        [ "$DRY_RUN" = 1 ] || mkdir -p "$OUT/sanitize_library"
        local lines=("# compute-sanitizer over the single-pass library: $(date -u +%Y-%m-%dT%H:%M:%SZ),\
 $("$sanitizer" --version 2>/dev/null | grep -m1 -i version)")
        lines+=("$(printf '%-28s %-10s %7s  %s' program tool errors result)")
        local bad=0
        for p in "${programs[@]}"; do
          name=$(basename "$p")
          for tool in memcheck racecheck synccheck initcheck; do
            log=$OUT/sanitize_library/$name.$tool.log
            local extra=()
            [ "$tool" = racecheck ] && extra=(--racecheck-report all)
            SANITIZE_TIMEOUT=900 sanitize "$log" "$tool" "${extra[@]}" --error-exitcode 99 -- "$p"
            verdict "$log"
            errors=$san_errors
            [ "$errors" = "?" ] && errors=0
            [ "$tool" != racecheck ] || errors=$((errors + san_hazards))
            result=ok
            if [ "$san_verdict" != ok ]; then
              bad=1
              case "$san_rc" in
                0) result="FAIL (errors reported or no summary)" ;;
                99) result="FAIL (errors reported)" ;;
                124 | 137) result="FAIL (timed out after 900s)" ;;
                *) result="FAIL (exit $san_rc)" ;;
              esac
            fi
            lines+=("$(printf '%-28s %-10s %7d  %s' "$name" "$tool" "$errors" "$result")")
            [ "$DRY_RUN" = 1 ] || echo "${lines[-1]}"
          done
        done
        if [ "$bad" -eq 0 ]; then
          lines+=("# all runs clean")
        else
          lines+=("# some runs failed: logs in $OUT/sanitize_library/")
          status=1
        fi
        [ "$DRY_RUN" = 1 ] || printf '%s\n' "${lines[@]}" | tee_atomic "$OUT/sanitize_library.txt" | tail -n 1
        ;;
      sweep)
        capture library_sweep timeout 900 "$B/reduction/reduce" --sweep "${SWEEP:-2^10:2^30}" --stages library,cub
        ;;
    esac
  done
}

# shellcheck disable=SC2317  # run through logged
mixed_precision_body() {
  local runner=$B/mixed_precision/mixed_precision k n key id entry tool extra variants=()
  # The per-variant programs are named after their source files (mixed_precision --list).
  if [ "$DRY_RUN" = 1 ]; then
    variants=(mixed_precision_NN_VARIANT)
  else
    while IFS=$'\t' read -r _ _ _ _ _ source _; do
      variants+=("mixed_precision_$(basename "$source" .cu)")
    done < <("$runner" --list)
  fi
  build_targets "${variants[@]}" || status=1
  build_warnings "mixed_precision|test_mp_|ptxas"
  if [ "$DRY_RUN" != 1 ] && command -v cuobjdump >/dev/null 2>&1; then
    cuobjdump --dump-resource-usage "$B/mixed_precision/libmixed_precision_variants.a" 2>/dev/null |
      grep -A1 "dot_product" | grep -E "Function|REG" | sed -e 's/^[[:space:]]*//' | cut -c1-160
  fi
  echo "=== tests"
  test_programs 4 mp_host_tests mp_gpu_tests
  echo "=== table"
  for k in ${TABLE_SIZES:-24 28}; do
    writes "$OUT/mixed_precision_2p$k.csv"
    run "$runner" --n "2^$k" --csv "$OUT/mixed_precision_2p$k.csv" || status=1
    echo
  done
  echo "=== compute-sanitizer"
  find_sanitizer || {
    echo "compute-sanitizer was not found: the sanitizer step cannot run."
    status=1
    return
  }
  local keys=()
  if [ "$DRY_RUN" = 1 ]; then keys=($'KEY\tID'); else mapfile -t keys < <("$runner" --list | cut -f1,2); fi
  for n in ${SANITIZE_SIZES:-1025 1048579}; do
    for entry in "${keys[@]}"; do
      for tool in memcheck racecheck synccheck initcheck; do
        extra=()
        [ "$tool" = memcheck ] && extra=(--leak-check full)
        sanitize_bg "$scratch/mp.$n.${entry%%$'\t'*}.$tool" "$tool" --error-exitcode 99 "${extra[@]}" -- \
          "$runner" --run-once --variants "${entry%%$'\t'*}" --n "$n"
      done
    done
  done
  sanitize_wait
  [ "$DRY_RUN" != 1 ] || return 0
  for n in ${SANITIZE_SIZES:-1025 1048579}; do
    for entry in "${keys[@]}"; do
      key=${entry%%$'\t'*} id=${entry#*$'\t'}
      for tool in memcheck racecheck synccheck initcheck; do
        verdict "$scratch/mp.$n.$key.$tool"
        printf 'sanitize %s %-22s n=%-8s %-9s errors=%-3s exit=%-3s %s\n' "$key" "$id" "$n" "$tool" "$san_errors" \
          "$san_rc" "$san_verdict"
        [ "$san_verdict" = ok ] || {
          tail -30 "$scratch/mp.$n.$key.$tool"
          status=1
        }
      done
    done
  done
}
step_mixed_precision() { logged "$OUT/mixed_precision_device.txt" mixed_precision_body; }

# shellcheck disable=SC2317  # run through logged
occupancy_body() {
  local bin=$B/occupancy args small02 small03
  build_warnings "occupancy|test_occ_|ptxas"
  echo "=== tests"
  test_programs 4 occupancy_host_tests occupancy_gpu_tests
  run ctest --test-dir "$B" -R '^occupancy_cli_' 2>&1 | tail -3
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  # Refusals that need the device's limits: exit code 2, one sentence, no output file.
  expect_usage_error() {
    local csv=$scratch/refused.csv rc
    if [ "$DRY_RUN" = 1 ]; then
      echo "run: $(_line "$@") --csv REFUSED.csv (expects exit 2 and no file)"
      return
    fi
    rm -f "$csv"
    "$@" --csv "$csv" >/dev/null 2>"$scratch/refused.err"
    rc=$?
    if [ "$rc" -eq 2 ] && [ ! -e "$csv" ]; then
      echo "refused as expected: $(basename "$1") ${*:2} -> $(head -1 "$scratch/refused.err")"
    else
      echo "NOT refused properly (exit $rc): $*"
      status=1
    fi
  }
  expect_usage_error "$bin/01_thread_hierarchy" --block 2048
  expect_usage_error "$bin/01_thread_hierarchy" --grid 20000 --block 1024
  expect_usage_error "$bin/03_occupancy_sweep" --blocks 2048
  expect_usage_error "$bin/03_occupancy_sweep" --per-sm 64
  expect_usage_error "$bin/03_occupancy_sweep" --n 2^36
  echo "=== compute-sanitizer"
  find_sanitizer || {
    echo "FAILED: compute-sanitizer was not found"
    status=1
  }
  small02=(--size 200 --check-size 70 --samples 64 --reps 2 --warm-l2)
  small03=(--n 1000003 --blocks "32,1024" --per-sm "1,2" --reps 2 --warm-l2)
  local i=0 runs=("memcheck 01_thread_hierarchy --grid 5 --block 100")
  for tool in memcheck racecheck synccheck; do
    runs+=("$tool 02_resource_usage ${small02[*]}" "$tool 03_occupancy_sweep ${small03[*]}")
  done
  for args in "${runs[@]}"; do
    # shellcheck disable=SC2086
    set -- $args
    i=$((i + 1))
    [ -z "${sanitizer:-}" ] && continue
    sanitize "$scratch/occ.$i" "$1" --error-exitcode 99 -- "$bin/$2" "${@:3}"
    verdict "$scratch/occ.$i"
    [ "$DRY_RUN" = 1 ] && continue
    printf 'sanitize %-9s errors=%-3s exit=%-2s %-4s %s\n' "$1" "$san_errors" "$san_rc" "$san_verdict" "${*:2}"
    [ "$san_verdict" = ok ] || {
      tail -30 "$scratch/occ.$i"
      status=1
    }
  done
  echo "=== 01_thread_hierarchy"
  writes "$OUT/occupancy_01_summary.txt"
  if [ "$DRY_RUN" = 1 ]; then
    echo "run: $bin/01_thread_hierarchy --grid 264 --block 256; --grid 1056 --block 1024 > $OUT/occupancy_01_summary.txt"
  else
    {
      rc=0
      for args in "--grid 264 --block 256" "--grid 1056 --block 1024"; do
        echo "\$ 01_thread_hierarchy $args"
        # shellcheck disable=SC2086
        "$bin/01_thread_hierarchy" $args || rc=1
        echo
      done
      exit "$rc"
    } | tee_atomic "$OUT/occupancy_01_summary.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  fi
  echo "=== 02_resource_usage"
  capture -s occupancy_02_resource_usage "$bin/02_resource_usage"
  echo "=== 03_occupancy_sweep"
  # Progress lines go to stderr (the log only); the table and the verdict to the .txt.
  capture -s occupancy_03_sweep "$bin/03_occupancy_sweep"
}
step_occupancy() { logged "$OUT/occupancy_device.txt" occupancy_body; }

step_warp_tools() {
  local last_warp=$B/lab/volatile_last_warp variant log summary hazards errors warnings sum_check
  local summaries=() csv_rows=() device commit date driver sanitizer_version
  echo "=== GPU test of the warp-step designs"
  if [ "$DRY_RUN" = 1 ] || [ -x "$B/tests/gpu_warp_tools_tests" ]; then
    run "$B/tests/gpu_warp_tools_tests" || status=1
  else
    echo "($B/tests/gpu_warp_tools_tests is not built: skipped)"
  fi
  echo "=== warp_tools"
  capture experiment_warp_tools "$B/lab/warp_tools"
  echo "=== racecheck over volatile_last_warp"
  writes "$OUT/racecheck_volatile_warp.txt"
  writes "$OUT/racecheck_volatile_warp.csv"
  find_sanitizer || {
    echo "FAILED: compute-sanitizer was not found"
    status=1
    return
  }
  for variant in volatile syncwarp shuffle; do
    log=$scratch/race.$variant
    # No --error-exitcode: the exit code is a column of the CSV, recorded as the tool gives it.
    sanitize "$log" racecheck -- "$last_warp" --variant "$variant"
    [ "$DRY_RUN" = 1 ] && continue
    verdict "$log"
    {
      echo "$ $sanitizer --tool racecheck $last_warp --variant $variant"
      cat "$log"
      echo "(exit code $san_rc)"
    } >"$log.section"
    summary=$(grep -oE 'RACECHECK SUMMARY: .*' "$log" | tail -1)
    hazards=$(grep -oE "[0-9]+ hazard" <<<"$summary" | grep -oE '^[0-9]+')
    errors=$(grep -oE "[0-9]+ error" <<<"$summary" | grep -oE '^[0-9]+')
    warnings=$(grep -oE "[0-9]+ warning" <<<"$summary" | grep -oE '^[0-9]+')
    sum_check=FAIL
    grep -qE "^$variant: sum .*, ok$" "$log" && sum_check=ok
    if [ -z "$summary" ] || [ -z "$hazards" ]; then
      summaries+=("# $variant: no RACECHECK SUMMARY line (exit code $san_rc)")
      tail -n 20 "$log"
      status=1
    else
      summaries+=("# $variant: $summary")
      csv_rows+=("$variant,$hazards,$errors,$warnings,$sum_check,$san_rc")
      if [ "$variant" != volatile ] && { [ "$hazards" -ne 0 ] || [ "$san_rc" -ne 0 ]; }; then
        echo "FAILED: the corrected $variant variant must give 0 hazards and exit 0: '$summary' (exit $san_rc)."
        status=1
      fi
    fi
    if [ "$variant" != volatile ] && [ "$sum_check" != ok ]; then
      echo "FAILED: the $variant variant's sum did not verify."
      status=1
    fi
    echo "${summaries[-1]} (sum: $sum_check)"
  done
  [ "$DRY_RUN" != 1 ] || return 0
  device=$("$last_warp" --variant shuffle 2>&1 | sed -n 's/^volatile_last_warp on \(.*\) (compute capability.*/\1/p')
  driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0 2>/dev/null | head -1 || true)
  sanitizer_version=$("$sanitizer" --version 2>&1 | grep -m1 -i version || true)
  commit=$(run_commit)
  date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  {
    echo "# compute-sanitizer --tool racecheck over build/lab/volatile_last_warp (lab/volatile_last_warp.cu)"
    echo "# device: ${device:-unknown}; ${sanitizer_version:-compute-sanitizer version unknown}; commit $commit; $date"
    printf '%s\n' "${summaries[@]}"
    for variant in volatile syncwarp shuffle; do
      echo
      cat "$scratch/race.$variant.section"
    done
  } | tee_atomic "$OUT/racecheck_volatile_warp.txt" >/dev/null || status=1
  {
    echo "# device: ${device:-unknown}"
    [ -z "$driver" ] || echo "# driver: $driver"
    echo "# tool: ${sanitizer_version:-compute-sanitizer}"
    echo "# commit: $commit"
    echo "# date: $date"
    echo "key,hazards,errors,warnings,sum_check,exit_code"
    printf '%s\n' "${csv_rows[@]}"
  } | tee_atomic "$OUT/racecheck_volatile_warp.csv" >/dev/null || status=1
}

# shellcheck disable=SC2317  # run through logged
access_body() {
  local bin=$B/access_patterns p tool commit ncu metrics inputs=() sizes=() rc t0 cuobjdump
  commit=$(run_commit)
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
  build_warnings "access_patterns|test_access|ptxas"
  echo "=== tests"
  test_programs 4 access_host_tests access_gpu_tests
  run timeout 120 ctest --test-dir "$B" -R '^access_cli_' 2>&1 | tail -3
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  echo "=== programs"
  for p in "${access_programs[@]}"; do capture -s "access_$p" timeout 600 "$bin/$p"; done

  echo "=== Nsight Compute"
  writes "$OUT/access_ncu.csv"
  writes "$OUT/access_ncu.txt"
  ncu=$(find_cuda_tool ncu "${NCU:-}" /opt/nvidia/nsight-compute/*/ncu)
  [ "$DRY_RUN" != 1 ] || ncu=${ncu:-ncu}
  if [ -z "$ncu" ] || { [ ! -x "$ncu" ] && [ "$DRY_RUN" != 1 ]; }; then
    echo "FAILED: ncu was not found (PATH, \$CUDA_HOME/bin, /usr/local/cuda/bin, /opt/nvidia/nsight-compute; or set NCU)"
    status=1
  else
    metrics=$(python3 scripts/access_ncu.py --metrics)
    for p in "${access_programs[@]}"; do
      # shellcheck disable=SC2046
      set -- $(profile_args "$p")
      if [ "$DRY_RUN" = 1 ]; then
        echo "run: $ncu --clock-control none --nvtx --metrics METRICS -o $p $bin/$p $* --run-once"
        continue
      fi
      "$bin/$p" "$@" --list >"$scratch/$p.keys" || {
        echo "FAILED: $p --list"
        status=1
        continue
      }
      t0=$SECONDS
      timeout 600 "$ncu" --clock-control none --nvtx --metrics "$metrics" -f -o "$scratch/$p" \
        "$bin/$p" "$@" --run-once >"$scratch/$p.ncu.log" 2>&1
      rc=$?
      if [ "$rc" -ne 0 ] || [ ! -f "$scratch/$p.ncu-rep" ]; then
        echo "FAILED: ncu on $p (exit $rc); the end of its log:"
        tail -15 "$scratch/$p.ncu.log"
        status=1
        continue
      fi
      timeout 300 "$ncu" --import "$scratch/$p.ncu-rep" --csv --page raw --print-units base \
        --print-nvtx-rename kernel --metrics "$metrics" >"$scratch/$p.csv" 2>"$scratch/$p.export.log" || {
        echo "FAILED: exporting $p's report"
        tail -5 "$scratch/$p.export.log"
        status=1
        continue
      }
      echo "$p profiled in $((SECONDS - t0)) s"
      inputs+=("$p=$scratch/$p.keys:$scratch/$p.csv")
      sizes+=("$p ${*:-(default n)}")
    done
    if [ ${#inputs[@]} -gt 0 ]; then
      local device joined
      device=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
      joined=$(printf '%s; ' "${sizes[@]}")
      python3 scripts/access_ncu.py --out "$OUT/access_ncu.csv" --meta "device=${device:-unknown}" \
        --meta "ncu=$("$ncu" --version 2>&1 | grep -m1 -i version)" --meta "clock_control=none" \
        --meta "cache_control=all (caches flushed before each profiled pass)" --meta "sizes=${joined%; }" \
        --meta "commit=$commit" --meta "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
        --meta "command=scripts/device.sh access: ncu --clock-control none --nvtx, each program --run-once" \
        "${inputs[@]}" | tee_atomic "$OUT/access_ncu.txt"
      [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    fi
  fi

  echo "=== SASS of the 32- and 64-bit index (04_vector_width_index)"
  writes "$OUT/access_sass_index.txt"
  cuobjdump=$(find_cuda_tool cuobjdump "${CUOBJDUMP:-}")
  if [ "$DRY_RUN" = 1 ]; then
    echo "run: ${cuobjdump:-cuobjdump} -sass $bin/04_vector_width_index (scale_kernel with a 32- and a 64-bit index)"
  elif [ -z "$cuobjdump" ] || [ ! -x "$cuobjdump" ]; then
    echo "FAILED: cuobjdump was not found (PATH, \$CUDA_HOME/bin, /usr/local/cuda/bin; or set CUOBJDUMP)"
    status=1
  else
    local sass=$scratch/sass.txt
    timeout 120 "$cuobjdump" -sass "$bin/04_vector_width_index" >"$sass" 2>&1 || status=1
    kernel_sass() {
      awk -v pat="$1" '
        /Function :/ { on = index($0, pat) > 0; next }
        on && /^[[:space:]]*\/\*[0-9a-f][0-9a-f][0-9a-f][0-9a-f]\*\// {
          sub(/;.*/, ";"); gsub(/[[:space:]]+/, " "); sub(/^ /, ""); print
        }' "$sass"
    }
    # Opcode counts: the first word after the address, past a predicate (@P0); NOP padding left out.
    opcodes() {
      awk '{ op = $2; if (op ~ /^@/) op = $3; sub(/;$/, "", op); if (op != "NOP") n[op]++ }
           END { for (o in n) print o, n[o] }'
    }
    count() { opcodes <"$1" | awk '{ s += $2 } END { print s }'; }
    kernel_sass scale_kernelIfjE >"$scratch/i32.txt"
    kernel_sass scale_kernelIfmE >"$scratch/i64.txt"
    if [ ! -s "$scratch/i32.txt" ] || [ ! -s "$scratch/i64.txt" ]; then
      echo "FAILED: scale_kernel<float, unsigned int> or <float, unsigned long> is not in the cuobjdump output"
      status=1
    else
      {
        echo "# cuobjdump -sass of $bin/04_vector_width_index: scale_kernel<float, Index> with"
        echo "# Index = unsigned int (32-bit) and unsigned long (64-bit); commit $commit, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "== instructions (NOP padding left out): 32-bit index $(count "$scratch/i32.txt")," \
          "64-bit index $(count "$scratch/i64.txt")"
        echo "== opcodes whose count differs (opcode, count with the 32-bit index, count with the 64-bit index)"
        join -a1 -a2 -e0 -o 0,1.2,2.2 <(opcodes <"$scratch/i32.txt" | sort) <(opcodes <"$scratch/i64.txt" | sort) |
          awk '$2 != $3 { printf "%-28s %3d %3d\n", $1, $2, $3 }'
        echo "== scale_kernel<float, unsigned int>"
        cat "$scratch/i32.txt"
        echo "== scale_kernel<float, unsigned long>"
        cat "$scratch/i64.txt"
      } | tee_atomic "$OUT/access_sass_index.txt" >/dev/null
      grep -v '^/\*' "$OUT/access_sass_index.txt"
    fi
  fi

  echo "=== compute-sanitizer"
  if ! find_sanitizer; then
    echo "FAILED: compute-sanitizer was not found (PATH, \$CUDA_HOME/bin, /usr/local/cuda/bin; or set SANITIZER)"
    status=1
  else
    local tools
    for p in "${access_programs[@]}"; do
      tools=(memcheck initcheck)
      grep -qE '__shared__|_sync\(' "access_patterns/$p.cu" && tools+=(racecheck synccheck)
      for tool in "${tools[@]}"; do
        # shellcheck disable=SC2046
        sanitize_bg "$scratch/access.$p.$tool" "$tool" --error-exitcode 99 -- "$bin/$p" $(sanitize_args "$p") --run-once
      done
    done
    sanitize_wait
    if [ "$DRY_RUN" != 1 ]; then
      for p in "${access_programs[@]}"; do
        for tool in memcheck initcheck racecheck synccheck; do
          [ -f "$scratch/access.$p.$tool" ] || continue
          verdict "$scratch/access.$p.$tool"
          printf 'sanitize %-22s %-9s errors=%-3s exit=%-3s %s\n' "$p" "$tool" "$san_errors" "$san_rc" "$san_verdict"
          [ "$san_verdict" = ok ] || {
            tail -30 "$scratch/access.$p.$tool"
            status=1
          }
        done
      done
    fi
  fi

  echo "=== figures"
  writes "$OUT/access_stride.png"
  writes "$OUT/access_banks.png"
  run timeout 120 python3 scripts/plot_access.py --results "$OUT" --out "$OUT" || status=1
}
step_access() { logged "$OUT/access_device.txt" access_body; }

# shellcheck disable=SC2317  # run through logged
histogram_body() {
  local bin=$B/histogram/histogram timing tool bins stages args
  # Every power of two from LO to HI, then the odd sizes, comma-separated.
  sizes() {
    local out="" k
    for ((k = $1; k <= $2; k++)); do out+="2^$k,"; done
    echo "$out$3"
  }
  build_warnings "histogram|ptxas"
  echo "=== tests"
  test_programs 3 histogram_host_tests histogram_gpu_tests
  run timeout 120 ctest --test-dir "$B" -R '^histogram_cli_' 2>&1 | tail -2
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  # --min-reps 1: a row slower than the budget (stage 01 on one value at 2^30) is timed once.
  timing=(--reps "${REPS:-30}" --min-reps 1 --budget-ms "${BUDGET_MS:-300}")
  echo "=== sweep: 256 bins, uniform, skewed and one value"
  capture -s histogram_256 timeout 600 "$bin" --n "$(sizes 10 30 1000003,16777259,100000007)" \
    --input uniform,skewed,one --bins 256 "${timing[@]}"
  pack
  echo "=== sweep: 4096 bins, uniform"
  capture -s histogram_4096 timeout 300 "$bin" --n "$(sizes 9 29 500001,50000017)" --input uniform --bins 4096 \
    "${timing[@]}"
  pack
  echo "=== torch.bincount"
  if [ "$DRY_RUN" = 1 ] || python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
    capture -s histogram_torch timeout 300 python3 scripts/time_torch_histogram.py \
      --n "$(sizes 10 30 1000003,16777259,100000007)" --input uniform,skewed,one "${timing[@]}"
  else
    echo "torch with CUDA is not installed here: no torch.bincount rows."
  fi
  pack
  echo "=== compute-sanitizer"
  writes "$OUT/histogram_sanitize.txt"
  if ! find_sanitizer; then
    echo "FAILED: compute-sanitizer was not found (PATH, \$CUDA_HOME/bin, /usr/local/cuda/bin; or set SANITIZER)"
    status=1
    return
  fi
  {
    for tool in memcheck racecheck synccheck; do
      for bins in 256 4096; do
        # Small sizes, one of them odd, and an input 6 bytes past a 16-byte boundary.
        stages=1-6
        [ "$tool" != memcheck ] || stages=all # CUB's own kernels under memcheck only
        args=(--run-once --n "1,4099,100003" --input "uniform,skewed,one" --bins "$bins" --offset 6 --stages "$stages")
        sanitize "$scratch/hist.$tool.$bins" "$tool" --error-exitcode 99 -- "$bin" "${args[@]}"
        [ "$DRY_RUN" = 1 ] && continue
        verdict "$scratch/hist.$tool.$bins"
        echo "--- $tool, $bins bins: exit code $san_rc"
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY|FAIL" "$scratch/hist.$tool.$bins" || true
        [ "$san_rc" -eq 0 ] || echo "FAILED: compute-sanitizer --tool $tool, $bins bins (exit code $san_rc)"
      done
    done
  } >"$(sink "$scratch/histogram_sanitize.txt")"
  [ "$DRY_RUN" = 1 ] && return
  tee_atomic "$OUT/histogram_sanitize.txt" <"$scratch/histogram_sanitize.txt"
  ! grep -q "^FAILED" "$scratch/histogram_sanitize.txt" || status=1
}
step_histogram() { logged "$OUT/histogram_device.txt" histogram_body; }

step_scan() {
  local bin=$B/scan/scan config type kind tool
  writes "$OUT/scan_tests.txt"
  if [ "$DRY_RUN" = 1 ]; then
    echo "run: $B/tests/scan_host_tests; $B/tests/scan_gpu_tests; python3 tests/host/test_scan_cli.py $bin" \
      "scripts/time_torch_scan.py > $OUT/scan_tests.txt"
  else
    {
      for t in scan_host_tests scan_gpu_tests; do
        echo "--- $t"
        timeout 600 "$B/tests/$t" 2>&1 | tail -60
        rc=${PIPESTATUS[0]}
        # 77 means no GPU was found: on this machine that is a failure, not a skip.
        [ "$rc" -eq 0 ] || echo "FAILED: $t: exit code $rc"
      done
      echo "--- test_scan_cli.py"
      python3 tests/host/test_scan_cli.py "$bin" scripts/time_torch_scan.py 2>&1 | tail -4
      [ "${PIPESTATUS[0]}" -eq 0 ] || echo "FAILED: test_scan_cli.py"
    } | tee_atomic "$OUT/scan_tests.txt"
    ! grep -q "^FAILED" "$OUT/scan_tests.txt" || status=1
  fi
  for config in "int inclusive" "int exclusive" "float inclusive"; do
    read -r type kind <<<"$config"
    echo "=== sweep: $type $kind"
    capture "scan_${type}_$kind" timeout 900 "$bin" --n "$SCAN_SIZES" --type "$type" --kind "$kind" --reps 50 \
      --budget-ms 150
  done
  for kind in exclusive inclusive; do
    echo "=== bounds: int $kind (stage 06's shape as copies)"
    capture "scan_bounds_int_$kind" timeout 300 "$bin" --bounds --stages 6 --n "${BOUND_SIZES:-2^20,2^24,2^26,2^28,2^30}" \
      --type int --kind "$kind"
  done
  echo "=== torch.cumsum"
  if [ "$DRY_RUN" = 1 ] || python3 -c "import torch, numpy" 2>/dev/null; then
    capture scan_torch timeout 600 python3 scripts/time_torch_scan.py --sweep "${TORCH_SWEEP:-2^10:2^28}" --reps 50 \
      --budget-ms 150
  else
    echo "torch or numpy is not installed here: torch.cumsum is not timed"
  fi
  echo "=== compute-sanitizer"
  writes "$OUT/scan_sanitize.txt"
  if ! find_sanitizer; then
    echo "FAILED: compute-sanitizer was not found (PATH, \$CUDA_HOME/bin, /usr/local/cuda/bin; or set SANITIZER)"
    status=1
    return
  fi
  {
    for tool in memcheck racecheck synccheck; do
      for config in "int inclusive" "float exclusive"; do
        read -r type kind <<<"$config"
        SANITIZE_TIMEOUT=600 sanitize "$scratch/scan.$tool.$type" "$tool" --error-exitcode 9 -- \
          "$bin" --run-once --bounds --n 1,33,4097,70001 --type "$type" --kind "$kind"
        [ "$DRY_RUN" = 1 ] && continue
        verdict "$scratch/scan.$tool.$type"
        echo "--- $tool, $type $kind"
        tail -25 "$scratch/scan.$tool.$type"
        [ "$san_rc" -eq 0 ] || echo "FAILED: $tool $type $kind: exit code $san_rc"
      done
    done
  } >"$(sink "$scratch/scan_sanitize.txt")"
  [ "$DRY_RUN" = 1 ] && return
  tee_atomic "$OUT/scan_sanitize.txt" <"$scratch/scan_sanitize.txt"
  ! grep -q "^FAILED" "$scratch/scan_sanitize.txt" || status=1
}

step_multi_gpu() {
  local gpu_names present dir sfx counts most started=$SECONDS sweep=${MULTI_GPU_SWEEP:-2^20:2^28:4}
  local sum_bin=$B/multi_gpu/multi_gpu_sum mpi_bin=$B/multi_gpu/multi_gpu_mpi test_bin=$B/tests/gpu_multi_gpu_tests
  if [ "$no_nccl" = 1 ]; then
    echo "FAILED: multi_gpu: no NCCL (see above)."
    status=1
    return
  fi
  if [ "$DRY_RUN" = 1 ]; then
    present=${DEVICE_GPUS:-1}
  else
    gpu_names=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null)
    present=$(echo "$gpu_names" | grep -c .)
  fi
  if [ "$present" -gt 1 ]; then
    dir=${RESULTS_DIR:-results/${gpu}x$present} sfx=""
  else
    dir=${RESULTS_DIR:-$OUT} sfx=_1gpu
  fi
  counts=${GPU_COUNTS:-$(for c in 1 2 4 "$present"; do [ "$c" -le "$present" ] && echo "$c"; done | sort -n | uniq |
    paste -sd,)}
  most=${counts##*,}
  [ "$DRY_RUN" = 1 ] || mkdir -p "$dir" || return
  local OUT=$dir # capture writes into OUT
  # The seconds the next part may take: CAP, or what is left of BUDGET_S less 15 s.
  allow() {
    local rest=$((${BUDGET_S:-450} - (SECONDS - started) - 15))
    if [ "$rest" -lt "$1" ]; then echo "$rest"; else echo "$1"; fi
  }
  enough() { [ "$(allow 100000)" -ge "$2" ] || {
    echo "FAILED: $1 skipped: under $2 s left of BUDGET_S=${BUDGET_S:-450}"
    status=1
    return 1
  }; }
  echo "multi_gpu on $present GPUs: results into $dir, GPU counts $counts, sweep $sweep"

  writes "$dir/topology.txt"
  if [ "$DRY_RUN" = 1 ]; then
    echo "run: nvidia-smi topo -m; nvidia-smi topo -p2p r; nvidia-smi nvlink -s > $dir/topology.txt"
  else
    {
      echo "# device: $(echo "$gpu_names" | head -n 1)"
      echo "# gpus: $present"
      echo "# driver: $(timeout 20 nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0 2>/dev/null)"
      echo "# commit: $(run_commit)"
      echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
      echo "# nvidia-smi topo -m"
      timeout 20 nvidia-smi topo -m 2>&1
      if [ "$present" -gt 1 ]; then
        echo
        echo "# nvidia-smi topo -p2p r (peer-to-peer reads between each pair: OK where allowed)"
        timeout 20 nvidia-smi topo -p2p r 2>&1
        echo
        echo "# nvidia-smi nvlink -s (per-link speed; empty when the GPUs have no NVLink)"
        timeout 20 nvidia-smi nvlink -s 2>&1
      fi
    } 2>&1 | sed 's/\x1b\[[0-9;]*m//g' | tee_atomic "$dir/topology.txt" | head -n 8
  fi

  # NCCL_DEBUG=INFO into files of our own, for the transports NCCL chose in each run.
  local nccl_logs=$scratch/nccl transports=$dir/nccl_transports$sfx.txt
  writes "$transports"
  [ "$DRY_RUN" = 1 ] || {
    mkdir -p "$nccl_logs"
    echo "# The transports NCCL chose (NCCL_DEBUG=INFO lines naming 'via'), per run: count and line" \
      >"$scratch/transports.txt"
    tee_atomic "$transports" <"$scratch/transports.txt" >/dev/null
  }
  collect_transports() {
    [ "$DRY_RUN" != 1 ] || return 0
    {
      echo
      echo "## $1"
      cat "$nccl_logs"/*.log 2>/dev/null | grep -E " via " | sed -E 's/^.*NCCL INFO //; s/^Channel [0-9]+\/[0-9]+ : //' |
        sed -E 's/[0-9]+\[[0-9]+\] -> [0-9]+\[[0-9]+\]/r[g] -> r[g]/' | sort | uniq -c | sort -rn | head -n 20
    } >>"$scratch/transports.txt"
    rm -f "$nccl_logs"/*.log
    tee_atomic "$transports" <"$scratch/transports.txt" >/dev/null
  }
  # NCCL_DEBUG=INFO into files of our own (%h.%p: one per process) while COMMAND runs.
  with_nccl_log() {
    export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET NCCL_DEBUG_FILE="$nccl_logs/%h.%p.log"
    "$@"
    unset NCCL_DEBUG NCCL_DEBUG_SUBSYS NCCL_DEBUG_FILE
  }
  # mpirun under timeout, one rank per GPU, not bound to a core, the NCCL settings passed on.
  # shellcheck disable=SC2317  # run through with_nccl_log and capture
  mpi_launch() {
    local seconds=$1 ranks=$2 forward=() v
    shift 2
    for v in NCCL_NVLS_ENABLE NCCL_P2P_DISABLE NCCL_SHM_DISABLE NCCL_DEBUG NCCL_DEBUG_SUBSYS NCCL_DEBUG_FILE \
      NCCL_SOCKET_IFNAME LD_LIBRARY_PATH PATH; do
      [ -n "${!v:-}" ] && forward+=(-x "$v")
    done
    timeout "$seconds" "$mpirun" -np "$ranks" --oversubscribe --bind-to none "${forward[@]}" "$@"
  }
  [ "$DRY_RUN" = 1 ] || [ -x "$mpi_bin" ] || mpirun=""

  echo "=== GPU test"
  if [ "$DRY_RUN" != 1 ] && [ ! -x "$test_bin" ]; then
    echo "FAILED: GPU test skipped: not built (no Catch2; scripts/test.sh installs it)"
    status=1
  elif enough "GPU test" 30; then
    capture -n "multi_gpu_test$sfx" timeout "$(allow 180)" "$test_bin" --durations yes
  fi
  pack

  echo "=== multi_gpu_sum --gpus $counts --sweep $sweep"
  if enough multi_gpu_sum 60; then
    with_nccl_log capture "multi_gpu$sfx" timeout "$(allow 200)" "$sum_bin" --gpus "$counts" --sweep "$sweep"
    collect_transports "multi_gpu_sum --gpus $counts (one process, NCCL_P2P and SHM allowed)"
  fi
  pack

  local run_kind name methods cap
  for run_kind in nvlink net; do
    if [ "$run_kind" = nvlink ]; then
      name=multi_gpu_mpi$sfx methods=() cap=200
    else
      name=multi_gpu_mpi_net$sfx cap=150
      methods=(--methods "shard_then_one_float,shard_then_fixed_order,allreduce_one_float")
    fi
    echo "=== $name: mpirun -np $most --gpus $counts"
    if [ -z "$mpirun" ]; then
      echo "FAILED: $name skipped: no MPI runtime or multi_gpu_mpi was not built"
      status=1
      continue
    fi
    enough "$name" 40 || continue
    # NCCL's peer-to-peer and shared-memory transports off: its network transport, as between nodes.
    [ "$run_kind" = net ] && export NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1
    if [ "$DRY_RUN" = 1 ]; then
      capture "$name" mpirun -np "$most" "$mpi_bin" --gpus "$counts" --sweep "$sweep" "${methods[@]}"
    else
      with_nccl_log capture "$name" mpi_launch "$(allow "$cap")" "$most" "$mpi_bin" --gpus "$counts" --sweep "$sweep" \
        "${methods[@]}"
    fi
    unset NCCL_P2P_DISABLE NCCL_SHM_DISABLE
    collect_transports "$name: mpirun -np $most --gpus $counts$([ "$run_kind" = net ] &&
      echo ", NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1")"
    pack
  done

  echo "=== MPI GPU test"
  if [ -z "$mpirun" ]; then
    echo "FAILED: MPI GPU test skipped: no MPI runtime or multi_gpu_mpi was not built"
    status=1
  elif enough "MPI GPU test" 40; then
    capture -n "multi_gpu_mpi_test$sfx" timeout "$(allow 150)" python3 tests/gpu/test_multi_gpu_mpi.py "$mpirun" \
      "$mpi_bin" "$sum_bin" 1,2,4
  fi
  pack

  echo "=== compute-sanitizer over the peer-store kernels"
  local out=$dir/multi_gpu_sanitize$sfx.txt tool t
  writes "$out"
  if ! find_sanitizer || { [ "$DRY_RUN" != 1 ] && [ ! -x "$test_bin" ]; }; then
    echo "FAILED: compute-sanitizer skipped: no GPU test binary or no compute-sanitizer"
    status=1
  elif enough compute-sanitizer 30; then
    : >"$scratch/mg_sanitize.txt"
    for tool in memcheck racecheck synccheck initcheck; do
      t=$(allow 60)
      [ "$t" -ge 15 ] || {
        echo "FAILED: $tool skipped (budget)"
        status=1
        continue
      }
      # exit 99: the tool found an error; another non-zero exit: a test case failed.
      SANITIZE_TIMEOUT=$t sanitize "$scratch/mg.$tool" "$tool" --error-exitcode 99 -- "$test_bin" "[peer_sanitize]"
      [ "$DRY_RUN" = 1 ] && continue
      verdict "$scratch/mg.$tool"
      {
        echo "# compute-sanitizer --tool $tool gpu_multi_gpu_tests [peer_sanitize]: exit $san_rc"
        cat "$scratch/mg.$tool"
        echo
      } >>"$scratch/mg_sanitize.txt"
      echo "$tool (exit $san_rc): $(grep -E "(ERROR|RACECHECK) SUMMARY|All tests passed|test cases?:" \
        "$scratch/mg.$tool" | tr '\n' ' ')"
      [ "$san_rc" -eq 0 ] || status=1
    done
    [ "$DRY_RUN" = 1 ] || tee_atomic "$out" <"$scratch/mg_sanitize.txt" >/dev/null
  fi
  pack
}

for step in "${steps[@]}"; do
  echo "=== $step ($((SECONDS - start)) s)"
  before=$status
  status=0
  case "$step" in
    build) step_build ;;
    test) step_test ;;
    table) step_table ;;
    sweep) step_sweep ;;
    sanitize) step_sanitize ;;
    profile) step_profile ;;
    flush) step_flush ;;
    lab) step_lab ;;
    arch) step_arch ;;
    ab) step_ab ;;
    peers) step_peers ;;
    library) step_library ;;
    mixed_precision) step_mixed_precision ;;
    occupancy) step_occupancy ;;
    warp_tools) step_warp_tools ;;
    access) step_access ;;
    histogram) step_histogram ;;
    scan) step_scan ;;
    multi_gpu) step_multi_gpu ;;
  esac
  [ "$status" -eq 0 ] || echo "=== $step FAILED"
  [ "$before" -eq 0 ] || status=$before
  pack
done
echo "=== done in $((SECONDS - start)) s: $([ "$status" -eq 0 ] && echo 'every step passed' || echo 'a step FAILED')"
exit "$status"
