#!/usr/bin/env bash
# Builds every target with a CUDA 12 toolkit and runs the host tests: the check behind
# the oldest CUDA version the README names (12.4). Nothing is installed into the system
# or into Python:
#   - Debian's CUDA 12.4 (nvidia-cuda-toolkit, nvidia-cuda-dev, libcudart12, libnvvm4
#     from the non-free component of Debian 13, trixie) is fetched with apt-get download
#     through an apt configuration of its own (.deps/cuda12/apt, not the system's
#     sources), unpacked with dpkg-deb -x into .deps/cuda12/root and laid out as a
#     toolkit (bin/, nvvm/, include/, lib64/) in .deps/cuda12/toolkit;
#   - CCCL (CUB, Thrust, libcu++) comes from the nvidia-cuda-cccl-cu12 wheel of the same
#     release and NCCL from the nvidia-nccl-cu12 wheel (pip download; only their
#     headers and libraries are unpacked, by scripts/unpack_wheel.py);
#   - the project is configured with that nvcc into build-cuda12/ (warnings are errors,
#     tests on), every target is built, and ctest -L host runs there.
# About 1.3 GB is downloaded once into .deps/cuda12 (git-ignored; 3.5 GB unpacked).
#   scripts/cuda12_build.sh
# Environment: CUDA12_ARCHS (default "80-real;90", the build a machine without a GPU
# gets; CUDA 12.4 knows architectures up to sm_90), BUILD_DIR (default build-cuda12),
# JOBS, CUDA12_LOG (default results/build/cuda12_build.txt: the whole output, headed by
# the commit built, the packages and the toolkit's version), CUDA12_CCCL_WHEEL and
# CUDA12_NCCL_WHEEL (pip requirements; defaults nvidia-cuda-cccl-cu12==12.4.127.post1
# and nvidia-nccl-cu12==2.20.5).
# Exit codes: 0 every target built and every host test passed; 1 a download, the
# unpacking, the build or a test failed (the log says which); 2 bad usage.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
program=cuda12_build.sh
if [ $# -gt 0 ]; then
  case "$1" in
    -h | --help)
      script_help "${BASH_SOURCE[0]}"
      exit 0
      ;;
    *) refuse "$program" "'$1' is not an option; it takes none (see scripts/cuda12_build.sh --help)." ;;
  esac
fi
root=$(repo_root)
cd "$root"
archs=${CUDA12_ARCHS:-80-real;90}
[[ $archs =~ ^[0-9]{2,3}(-real|-virtual)?(\;[0-9]{2,3}(-real|-virtual)?)*$ ]] ||
  refuse "$program" "CUDA12_ARCHS '$archs' is not a CMake architecture list such as 75-real;80-real;90."
export BUILD_DIR=${BUILD_DIR:-$root/build-cuda12}
unset PRESET
check_build_env "$program"
log=${CUDA12_LOG:-results/build/cuda12_build.txt}
[ -n "${CUDA12_LOG:-}" ] || mkdir -p results/build
check_output_file "$program" CUDA12_LOG "$log"
for tool in apt-get dpkg-deb python3 cmake git; do
  command -v "$tool" >/dev/null 2>&1 || refuse "$program" "it needs $tool, which is not on PATH."
done
python3 -m pip --version >/dev/null 2>&1 ||
  refuse "$program" "it needs pip for python3 to download the CCCL and NCCL wheels (Debian: apt-get install python3-pip)."
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -f "$keyring" ] || refuse "$program" "it needs Debian's archive keyring $keyring (apt-get install debian-archive-keyring)."

log_to "$log"
fail() {
  echo "$program: $*"
  exit 1
}

deps=$root/.deps/cuda12
packages=(nvidia-cuda-toolkit nvidia-cuda-dev libcudart12 libnvvm4)
cccl_wheel=${CUDA12_CCCL_WHEEL:-nvidia-cuda-cccl-cu12==12.4.127.post1}
nccl_wheel=${CUDA12_NCCL_WHEEL:-nvidia-nccl-cu12==2.20.5}
commit=$(git rev-parse HEAD)
echo "$program: the build of commit $commit ($(git log -1 --format=%s | cut -c1-80))"
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "$program: the working tree differs from that commit in: $(git status --porcelain --untracked-files=no |
    awk '{print $2}' | tr '\n' ' ')"
fi
echo "$program: started $(date -u '+%Y-%m-%d %H:%M UTC') on $(. /etc/os-release && echo "$PRETTY_NAME"), $(nproc) cores"

# 1. The Debian packages, through an apt configuration of our own.
apt_dir=$deps/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/sources.list.d" "$deps/debs"
echo "deb [signed-by=$keyring] http://deb.debian.org/debian trixie contrib non-free" >"$apt_dir/sources.list"
apt_options=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o "Dir::Etc::sourceparts=$apt_dir/sources.list.d"
  -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o Debug::NoLocking=1
  -o Acquire::Languages=none -o APT::Sandbox::User=root)
have_debs=1
for p in "${packages[@]}"; do compgen -G "$deps/debs/${p}_*.deb" >/dev/null || have_debs=0; done
if [ "$have_debs" -eq 0 ]; then
  echo "$program: downloading ${packages[*]} from Debian trixie non-free (apt-get download)"
  apt-get "${apt_options[@]}" -qq update || fail "apt-get update of Debian trixie (contrib, non-free) failed (above)."
  (cd "$deps/debs" && apt-get "${apt_options[@]}" -qq download "${packages[@]}") ||
    fail "apt-get download ${packages[*]} failed (above)."
fi
for p in "${packages[@]}"; do
  deb=$(ls "$deps/debs/${p}"_*.deb | tail -n 1)
  echo "$program: package $p $(dpkg-deb -f "$deb" Version)"
done

# 2. Unpacked once (a stamp names the packages unpacked), then laid out as a toolkit.
stamp=$deps/root/.unpacked
wanted=$(cd "$deps/debs" && ls ./*.deb | sort)
if [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
  echo "$program: unpacking the packages into $deps/root (dpkg-deb -x)"
  rm -rf "$deps/root"
  mkdir -p "$deps/root"
  for deb in "$deps"/debs/*.deb; do dpkg-deb -x "$deb" "$deps/root" || fail "dpkg-deb -x $deb failed."; done
  printf '%s\n' "$wanted" >"$stamp"
fi
usr=$deps/root/usr
tk=$deps/toolkit
rm -rf "$tk"
mkdir -p "$tk/bin" "$tk/nvvm/bin" "$tk/nvvm/libdevice" "$tk/lib64/stubs" "$tk/include"
# nvcc reads nvcc.profile beside its own file, so it is a copy, not a link.
cp "$usr/lib/nvidia-cuda-toolkit/bin/nvcc" "$tk/bin/nvcc"
ln -s "$usr/lib/nvidia-cuda-toolkit/bin/crt" "$tk/bin/crt"
ln -s "$usr/lib/nvidia-cuda-toolkit/bin/cicc" "$tk/nvvm/bin/cicc"
for b in ptxas fatbinary nvlink cudafe++ bin2c cuobjdump nvdisasm nvprune cu++filt; do ln -s "$usr/bin/$b" "$tk/bin/$b"; done
ln -s "$usr/lib/nvidia-cuda-toolkit/libdevice/libdevice.10.bc" "$tk/nvvm/libdevice/"
for l in "$usr"/lib/x86_64-linux-gnu/libcudart* "$usr"/lib/x86_64-linux-gnu/libnvvm*; do ln -s "$l" "$tk/lib64/"; done
ln -s "$usr/lib/x86_64-linux-gnu/stubs/libcuda.so" "$tk/lib64/stubs/"
for e in "$usr"/include/*; do ln -s "$e" "$tk/include/"; done
cat >"$tk/bin/nvcc.profile" <<'EOF'
TOP              = $(_HERE_)/..
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice
LD_LIBRARY_PATH += $(TOP)/lib64:
PATH            += $(TOP)/nvvm/bin:$(_HERE_):
INCLUDES        +=  "-I$(TOP)/include" $(_SPACE_)
LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/lib64/stubs" "-L$(TOP)/lib64"
CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
EOF

# 3. CCCL's headers into the toolkit's include/, NCCL beside it, from their wheels.
wheel_folder() { # NAME SPEC HOLDING: unpacks the folder of wheel SPEC that holds HOLDING into $deps/NAME
  local name=$1 spec=$2 holding=$3
  if [ "$(cat "$deps/$name/WHEEL_SPEC" 2>/dev/null)" = "$spec" ]; then return 0; fi
  local work
  work=$(mktemp -d "${TMPDIR:-/tmp}/cuda12_wheel.XXXXXX")
  echo "$program: downloading $spec (pip download)"
  python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$work" "$spec" ||
    fail "pip could not download $spec (is PyPI reachable?)."
  rm -rf "${deps:?}/$name"
  python3 scripts/unpack_wheel.py "$work"/*.whl "$deps/$name" --holding "$holding" || fail "unpacking $spec failed."
  echo "$spec" >"$deps/$name/WHEEL_SPEC"
  rm -rf "$work"
}
wheel_folder cccl "$cccl_wheel" cub/device/device_reduce.cuh
wheel_folder nccl "$nccl_wheel" include/nccl.h
for e in cub cuda nv thrust; do ln -s "$deps/cccl/$e" "$tk/include/$e"; done
ln -sf libnccl.so.2 "$deps/nccl/lib/libnccl.so"
echo "$program: CCCL $(sed -n 's/^#define CCCL_VERSION \([0-9]*\).*/\1/p' \
  "$deps/cccl/cuda/std/detail/libcxx/include/__cccl/version.h" "$deps/cccl/cuda/std/__cccl/version.h" 2>/dev/null |
  head -n 1) from $cccl_wheel; NCCL from $nccl_wheel"

nvcc=$tk/bin/nvcc
version=$("$nvcc" --version) || fail "the assembled nvcc does not run (above)."
echo "$version"
[[ $version == *"release 12."* ]] || fail "the assembled nvcc is not CUDA 12."
echo "$program: host compiler $(c++ --version | head -n 1)"

# 4. Configure (warnings are errors), build every target, run the host tests. The
# tests that configure the project themselves find this nvcc through CUDACXX and PATH,
# and a program linked with the shared CUDA runtime (the single_pass package's example)
# finds libcudart.so.12 through LD_LIBRARY_PATH, as with any toolkit outside the system's
# library folders.
export CUDACXX=$nvcc CUDA_HOME=$tk PATH="$tk/bin:$PATH" LD_LIBRARY_PATH="$tk/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export REDUCTION_CUDA12_LOG_PENDING=1
echo "$program: building every target for $archs into $BUILD_DIR"
start=$(date +%s)
configure_and_build -DREDUCTION_BUILD_TESTS=ON -DREDUCTION_WARNINGS_AS_ERRORS=ON "-DCMAKE_CUDA_COMPILER=$nvcc" \
  "-DCMAKE_CUDA_ARCHITECTURES=$archs" "-DREDUCTION_NCCL_ROOT=$deps/nccl" || fail "the build failed (above)."
built=$(($(date +%s) - start))
echo "$program: every target built in $((built / 60)) min $((built % 60)) s"
cd "$BUILD_DIR"
ctest --output-on-failure --no-tests=error -L host || fail "a host test failed (above)."
echo "$program: CUDA $(echo "$version" | sed -n 's/.*release \([0-9.]*\),.*/\1/p') built every target for $archs" \
  "in $((built / 60)) min with warnings as errors, and every host test passed."
