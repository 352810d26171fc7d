#!/usr/bin/env bash
# Installs the headers of a newer CCCL (CUB, Thrust, libcu++) than the CUDA toolkit's,
# for the opt-in peer program peers/cub_modes: pip downloads NVIDIA's nvidia-cuda-cccl
# wheel (13.x carries CCCL 3.5) and only its include directory is unpacked, into
# .deps/cccl/include (git-ignored). Nothing is installed into Python.
#   scripts/get_cccl.sh                     the newest 13.x wheel
#   CCCL_WHEEL_VERSION=13.3.5.0.6 scripts/get_cccl.sh
# Then configure with -DREDUCTION_CCCL_INCLUDE="$PWD/.deps/cccl/include". When that
# directory already holds the headers (carried from another machine), nothing is
# downloaded. Exit codes: 0 done, 1 the download or the unpacking failed, 2 bad usage.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ $# -gt 0 ]; then
  case "$1" in
    -h | --help)
      sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "get_cccl.sh: '$1' is not an option; it takes none (set CCCL_WHEEL_VERSION to pick a wheel)." >&2
      exit 2
      ;;
  esac
fi
version=${CCCL_WHEEL_VERSION:-}
if [ -n "$version" ] && ! [[ "$version" =~ ^13(\.[0-9]+)+$ ]]; then
  echo "get_cccl.sh: CCCL_WHEEL_VERSION '$version' is not a 13.x version such as 13.3.5.0.6." >&2
  exit 2
fi
dest=.deps/cccl
header=$dest/include/cuda/std/__cccl/version.h
if [ -f "$header" ] && [ -f "$dest/include/cub/device/device_reduce.cuh" ]; then
  echo "get_cccl.sh: $dest/include already holds CCCL $(sed -n 's/^#define CCCL_VERSION \([0-9]*\).*/\1/p' "$header"); nothing downloaded."
  exit 0
fi
spec="nvidia-cuda-cccl>=13,<14"
[ -z "$version" ] || spec="nvidia-cuda-cccl==$version"
python=$(command -v python3 || true)
if [ -z "$python" ] || ! "$python" -m pip --version >/dev/null 2>&1; then
  echo "get_cccl.sh: python3 with pip is needed to download the nvidia-cuda-cccl wheel (Debian/Ubuntu: sudo apt-get install python3-pip)." >&2
  exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/cccl_wheel.XXXXXX")
trap 'rm -rf "$work"' EXIT
if ! "$python" -m pip download --quiet --no-deps --only-binary=:all: --dest "$work" "$spec"; then
  echo "get_cccl.sh: pip could not download $spec (is PyPI reachable?)." >&2
  exit 1
fi
wheel=$(ls "$work"/nvidia_cuda_cccl-*.whl 2>/dev/null | head -n 1)
if [ -z "$wheel" ]; then
  echo "get_cccl.sh: pip downloaded no nvidia_cuda_cccl wheel into $work." >&2
  exit 1
fi
# The wheel keeps the headers under nvidia/cu13/include/cccl/ (cub, cuda, nv, thrust);
# find that directory rather than trusting the layout, then copy only it.
if ! "$python" scripts/unpack_wheel.py "$wheel" "$work/include" --holding cub/device/device_reduce.cuh; then
  echo "get_cccl.sh: the nvidia-cuda-cccl wheel could not be unpacked (above)." >&2
  exit 1
fi
[ -f "$work/include/cuda/std/__cccl/version.h" ] || {
  echo "get_cccl.sh: the wheel's include directory has no cuda/std/__cccl/version.h." >&2
  exit 1
}
rm -rf "$dest"
mkdir -p "$dest"
mv "$work/include" "$dest/include"
basename "$wheel" >"$dest/WHEEL"
echo "get_cccl.sh: CCCL $(sed -n 's/^#define CCCL_VERSION \([0-9]*\).*/\1/p' "$header") in $dest/include; configure with -DREDUCTION_CCCL_INCLUDE=$PWD/$dest/include"
