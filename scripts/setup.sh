#!/usr/bin/env bash
# Installs what the course needs on Debian 12 / Ubuntu 24.04 with apt, and nothing when all is
# already there. Safe to run again. Used by the quick start, the tests, CI and the containers.
#
#   bash scripts/setup.sh              # build dependencies (+ slides' npm packages if npm exists)
#   bash scripts/setup.sh --profilers  # also perf, valgrind and heaptrack (lesson 01)
#   bash scripts/setup.sh --no-slides  # skip `npm ci` for the slides
#   bash scripts/setup.sh --quiet      # say nothing when nothing is missing
set -euo pipefail
cd "$(dirname "$0")/.."

profilers=0 slides=1 quiet=0
for arg in "$@"; do
  case "$arg" in
    --profilers) profilers=1 ;;
    --no-slides) slides=0 ;;
    --quiet) quiet=1 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option '$arg'" >&2; exit 2 ;;
  esac
done
say() { [ "$quiet" = 1 ] || echo "setup.sh: $*"; }

packages=(g++ cmake ninja-build pkg-config git libhdf5-dev hdf5-tools libgtest-dev libcli11-dev
          libpng-dev libgif-dev doxygen clang-format libopenmpi-dev openmpi-bin)
# Without the CUDA toolkit, lesson 03 builds against Debian's Thrust headers (OpenMP backend).
# (An nvcc that does not run, e.g. a wrapper left behind by a removed toolkit, counts as none.)
if ! nvcc --version >/dev/null 2>&1 && ! /usr/local/cuda/bin/nvcc --version >/dev/null 2>&1; then
  packages+=(libthrust-dev)
fi
if [ "$profilers" = 1 ]; then
  packages+=(valgrind heaptrack)
  if grep -qi debian /etc/os-release; then packages+=(linux-perf); else packages+=(linux-tools-common); fi
fi

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$package")
done

if [ "${#missing[@]}" -gt 0 ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup.sh: apt-get not found; install these yourself: ${missing[*]}" >&2
    exit 1
  fi
  sudo=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "setup.sh: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  say "installing ${missing[*]}"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  say "installed ${#missing[@]} package(s)"
else
  say "all build dependencies are installed"
fi

if [ "$slides" = 1 ] && [ -f slides/package-lock.json ]; then
  if command -v npm >/dev/null 2>&1; then
    if [ ! -x slides/node_modules/.bin/marp ]; then
      say "installing the slides' Marp CLI (npm ci in slides/)"
      (cd slides && npm ci --no-audit --no-fund --loglevel=error) \
        || say "warning: npm ci failed; the 'slides' target will not work until it succeeds"
    fi
  else
    say "node/npm not found: the 'slides' target needs them (sudo apt-get install nodejs npm)"
  fi
fi
