#!/usr/bin/env bash
# Installs what the course needs on Debian 12 / Ubuntu 24.04 with apt, and nothing when all is
# already there. Safe to run again. Used by the quick start, the tests, grading, CI and the
# containers.
#
#   bash scripts/setup.sh              # build dependencies and tools (+ slides' npm packages)
#   bash scripts/setup.sh --build-only # only what building and testing needs (what grade.sh asks)
#   bash scripts/setup.sh --check      # say what is missing, install nothing (exit 1 if any)
#   bash scripts/setup.sh --profilers  # also perf, valgrind and heaptrack (lesson 01)
#   bash scripts/setup.sh --no-slides  # skip `npm ci` for the slides
#   bash scripts/setup.sh --quiet      # say nothing when nothing is missing
#   bash scripts/setup.sh --no-python  # skip Python: lesson 10's module (pybind11, pytest) and the
#                                      # tools' NumPy, h5py, matplotlib (charts, Python peers), the
#                                      # notebooks' Jupyter (ipykernel, nbclient, nbconvert)
#   bash scripts/setup.sh --slurm      # also Slurm and munge, for lesson 08's one-node Slurm test
#                                      # (tests/slurm/test_slurm.sh) and its job script
#
# Each need is checked by what it provides (a command on PATH, a header on the include path,
# CMake's version), not by a package name: tools installed another way (a CUDA toolkit in
# /usr/local/cuda, CMake from a tarball, a runner image's own compilers) count, and apt, which
# needs root or sudo, is called only for what is really missing.
set -euo pipefail
cd "$(dirname "$0")/.."

profilers=0 slides=1 quiet=0 build_only=0 check=0 python=1 slurm=0
for arg in "$@"; do
  case "$arg" in
    --profilers) profilers=1 ;;
    --no-slides) slides=0 ;;
    --build-only) build_only=1 slides=0 ;;
    --check) check=1 ;;
    --quiet) quiet=1 ;;
    --no-python) python=0 ;;
    --slurm) slurm=1 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option '$arg'" >&2; exit 2 ;;
  esac
done
say() { [ "$quiet" = 1 ] || echo "setup.sh: $*"; }

have_command() { command -v "$1" >/dev/null 2>&1; }
# A daemon in /usr/sbin, which a normal user's PATH often leaves out.
have_daemon() { have_command "$1" || [ -x "/usr/sbin/$1" ]; }
# A header in the compiler's usual places, the include paths the environment adds, or Debian's
# HDF5 folder.
have_header() {
  local dir cpath=${CPATH:-} cxxpath=${CPLUS_INCLUDE_PATH:-}
  for dir in ${cpath//:/ } ${cxxpath//:/ } /usr/local/include /usr/include \
             /usr/include/hdf5/serial; do
    [ -f "$dir/$1" ] && return 0
  done
  return 1
}
have_cmake() {  # 3.24 or newer (CMakePresets.json version 4, cmake_minimum_required)
  local version
  version=$(cmake --version 2>/dev/null | sed -n 's/^cmake version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
  [ -n "$version" ] && set -- $version && { [ "$1" -gt 3 ] || { [ "$1" -eq 3 ] && [ "$2" -ge 24 ]; }; }
}
have_nvcc() {  # an nvcc that runs (a wrapper left behind by a removed toolkit counts as none)
  local nvcc
  for nvcc in "${CUDACXX:-}" nvcc /usr/local/cuda/bin/nvcc; do
    [ -n "$nvcc" ] && "$nvcc" --version >/dev/null 2>&1 && return 0
  done
  return 1
}
# A module in the Python scripts/python.sh would run the tools with (the system's, or python3 on
# PATH, or $PYTHON).
have_python_module() { bash scripts/python.sh --print --needs "$1" > /dev/null 2>&1; }
have_clang_format_14() {  # the version scripts/format.sh pins
  have_command clang-format-14 \
    || clang-format --version 2>/dev/null | grep -qE 'version 14\.'
}

missing=()
need() {  # need PACKAGE CHECK...: the Debian package that provides what CHECK looks for
  local package=$1
  shift
  "$@" || missing+=("$package")
}
need g++ have_command g++
need cmake have_cmake
need ninja-build have_command ninja
need git have_command git
need python3 have_command python3              # scripts/grade.sh reads CTest's JUnit with it
need libhdf5-dev have_header hdf5.h
need libgtest-dev have_header gtest/gtest.h
need libcli11-dev have_header CLI/CLI.hpp
need nlohmann-json3-dev have_header nlohmann/json.hpp  # the --json report line
need libpng-dev have_header png.h
need libgif-dev have_header gif_lib.h             # gs_render's animated GIF
need libopenmpi-dev have_command mpicxx           # several GPUs (MPI)
need openmpi-bin have_command mpirun
need bubblewrap have_command bwrap             # scripts/grade.sh: the sandbox of the learner's code
# Lesson 10's Python module and its tests, for the Python CMake builds it for: Debian's
# /usr/bin/python3 where it exists. dlpack.h is optional (GPU arrays also come in through the
# CUDA array interface): asked for only where the distribution has the package.
if [ "$python" = 1 ]; then
  python_for_module=/usr/bin/python3
  [ -x "$python_for_module" ] || python_for_module=python3
  module_python_has() { "$python_for_module" -c "import $1" >/dev/null 2>&1; }
  have_python_headers() {
    "$python_for_module" -c 'import os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
      >/dev/null 2>&1
  }
  need python3-dev have_python_headers
  need pybind11-dev have_header pybind11/pybind11.h
  need python3-numpy module_python_has numpy
  need python3-pytest module_python_has pytest
  need python3-yaml module_python_has yaml       # scripts/check_classroom.py reads the workflow
  if ! have_header dlpack/dlpack.h && apt-cache show libdlpack-dev >/dev/null 2>&1; then
    missing+=(libdlpack-dev)
  fi
fi
# Without the CUDA toolkit, lesson 03 builds against Debian's Thrust headers (OpenMP backend).
have_nvcc || need libthrust-dev have_header thrust/version.h
if [ "$build_only" = 0 ]; then
  need pkg-config have_command pkg-config
  need hdf5-tools have_command h5dump           # to look into output files
  need doxygen have_command doxygen             # the `docs` target
  need clang-format-14 have_clang_format_14     # scripts/format.sh
fi
if [ "$build_only" = 0 ] && [ "$python" = 1 ]; then
  # tools/charts.py and make_figures.sh (matplotlib), the Python peers (NumPy, h5py).
  need python3-numpy have_python_module numpy
  need python3-h5py have_python_module h5py
  need python3-matplotlib have_python_module matplotlib
  # The notebooks (notebooks/, scripts/run_notebooks.sh): Jupyter's kernel and executor for the
  # system's Python, which the course's module is built for.
  need python3-ipykernel module_python_has ipykernel
  need python3-nbclient module_python_has nbclient
  need jupyter-nbconvert have_command jupyter-nbconvert
fi
if [ "$profilers" = 1 ]; then
  need valgrind have_command valgrind
  need heaptrack have_command heaptrack
  if grep -qi debian /etc/os-release 2>/dev/null; then
    need linux-perf have_command perf
  else
    need linux-tools-common have_command perf
  fi
fi
if [ "$slurm" = 1 ]; then
  # A one-node Slurm cluster on this machine (tests/slurm/test_slurm.sh): the controller, the
  # node daemon, the commands (srun, sbatch, squeue) and munge, which signs their messages.
  # Debian's slurmd brings the plugins, pmix among them (srun --mpi=pmix).
  need slurmctld have_daemon slurmctld
  need slurmd have_daemon slurmd
  need slurm-client have_command sbatch
  need munge have_daemon munged
  need hdf5-tools have_command h5diff        # the test compares the jobs' output files
fi

if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$check" = 1 ]; then
    echo "setup.sh: missing: ${missing[*]} (Debian/Ubuntu packages)" >&2
    exit 1
  fi
  if ! have_command apt-get; then
    echo "setup.sh: apt-get not found; install these yourself: ${missing[*]}" >&2
    exit 1
  fi
  sudo=""
  if [ "$(id -u)" != 0 ]; then
    have_command sudo || { echo "setup.sh: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  say "installing ${missing[*]}"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  say "installed ${#missing[@]} package(s)"
else
  say "all $([ "$build_only" = 1 ] && echo "build " || echo "")dependencies are there"
fi

if [ "$slides" = 1 ] && [ "$check" = 0 ] && [ -f slides/package-lock.json ]; then
  if have_command npm; then
    if [ ! -x slides/node_modules/.bin/marp ]; then
      say "installing the slides' Marp CLI (npm ci in slides/)"
      (cd slides && npm ci --no-audit --no-fund --loglevel=error) \
        || say "warning: npm ci failed; the 'slides' target will not work until it succeeds"
    fi
  else
    say "node/npm not found: the 'slides' target needs them (sudo apt-get install nodejs npm)"
  fi
fi
