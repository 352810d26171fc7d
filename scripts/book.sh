#!/usr/bin/env bash
# Builds the tutorial as a website into build/book/: the chapters in reading order with
# previous and next links, the README (stage table and list of chapters) as the front
# page, search, the figures and result plots, highlighted code, and a page for each source
# or result file the text links to. Open build/book/index.html in a browser, or serve it
# (the search works only when the site is served):
#   scripts/book.sh            build into build/book/
#   scripts/book.sh --serve    build, then serve it on http://127.0.0.1:PORT/ until Ctrl-C
#   scripts/book.sh --setup    only install what the build needs (CI does this first)
#   scripts/book.sh --help
#
# The pages are the repository's own Markdown, the same files scripts/update_docs.py
# fills: scripts/book.py stages them into build/book-src/ (README.md as index.md, the
# files the text links to beside them, link targets rewritten only where a staged name
# differs) and MkDocs builds the site from there, in strict mode, so a link or anchor
# that leads nowhere fails the build. mkdocs.yml holds the site's settings.
#
# It sets itself up first. MkDocs with the Material theme (mkdocs-material 9.8.2, from
# PyPI: Debian's own package is too old for the previous/next links) is installed into
# a virtual environment, build/book-venv, made by the python3 on PATH. Where python3
# cannot make one (Debian's needs python3-venv), apt-get installs python3-venv when the
# script runs as root or has passwordless sudo. REDUCTION_NO_INSTALL=1 installs nothing.
# When it cannot be set up it stops (exit 2) with one sentence naming what is missing,
# why, and the command that installs it; nothing is built.
# Environment: PORT (for --serve; default 8000), REDUCTION_NO_INSTALL.
# Exit codes: 0 built (or served until interrupted); 1 the build failed (MkDocs says
# why above); 2 bad usage, or MkDocs could not be set up.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
program=book.sh
root=$(repo_root)
material_version=9.8.2

mode=build
[ $# -le 1 ] || refuse "$program" "takes one option at most (--serve, --setup or --help), not $#."
case "${1:-}" in
  "") ;;
  -h | --help)
    script_help "${BASH_SOURCE[0]}"
    exit 0
    ;;
  --serve) mode=serve ;;
  --setup) mode=setup ;;
  *) refuse "$program" "unknown option '$1' (it takes --serve, --setup or --help)." ;;
esac
port=${PORT:-8000}
[ "$mode" != serve ] || check_whole_number "$program" PORT "$port" 1 65535
check_output_dir "$program" "the build folder" "$root/build"

venv=$root/build/book-venv
python=$(command -v python3 || true)
[ -n "$python" ] || refuse "$program" "there is no python3 on PATH; install Python 3 (on Debian: 'sudo apt-get install python3')."
installed() {
  "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('mkdocs-material') != '$material_version')" \
    >/dev/null 2>&1
}

if ! installed; then
  if [ -n "${REDUCTION_NO_INSTALL:-}" ]; then
    refuse "$program" "MkDocs with mkdocs-material $material_version is not installed in $venv and REDUCTION_NO_INSTALL" \
      "is set: run scripts/book.sh --setup without it."
  fi
  # A virtual environment python3 can make: Debian's python3 needs python3-venv for it.
  probe=$(mktemp -d "${TMPDIR:-/tmp}/book_venv.XXXXXX")
  if ! "$python" -m venv "$probe/v" >/dev/null 2>&1; then
    sudo_prefix=none
    if [ "$(id -u)" = 0 ]; then
      sudo_prefix=""
    elif command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
      sudo_prefix=sudo
    fi
    if [ "$sudo_prefix" = none ] || ! command -v apt-get >/dev/null 2>&1; then
      rm -rf "$probe"
      refuse "$program" "$python cannot make a virtual environment and python3-venv cannot be installed here (no" \
        "apt-get, or not root): install it with 'sudo apt-get install python3-venv', then run scripts/book.sh again."
    fi
    echo "$program: installing python3-venv (apt-get)" >&2
    if ! { $sudo_prefix env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 &&
      $sudo_prefix env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >&2; }; then
      echo "$program: apt-get install python3-venv failed (see above)" >&2
    fi
  fi
  rm -rf "$probe"
  rm -rf "$venv"
  echo "$program: installing mkdocs-material $material_version into $venv (pip)" >&2
  if ! { "$python" -m venv "$venv" >&2 &&
    "$venv/bin/python" -m pip install --quiet --retries 1 --timeout 30 "mkdocs-material==$material_version" >&2; } ||
    ! installed; then
    rm -rf "$venv"
    refuse "$program" "mkdocs-material $material_version could not be installed into $venv (see pip's message above;" \
      "PyPI must be reachable): run scripts/book.sh --setup where it is."
  fi
fi
[ "$mode" != setup ] || exit 0

cd "$root"
"$venv/bin/python" scripts/book.py build/book-src
NO_MKDOCS_2_WARNING=1 "$venv/bin/mkdocs" build --config-file mkdocs.yml || {
  echo "$program: MkDocs could not build the site (see above)." >&2
  exit 1
}
echo "$program: the site is in build/book/ (open build/book/index.html, or run scripts/book.sh --serve)"
if [ "$mode" = serve ]; then
  echo "$program: serving build/book/ on http://127.0.0.1:$port/ (Ctrl-C stops it)"
  exec "$venv/bin/python" -m http.server --bind 127.0.0.1 --directory build/book "$port"
fi
