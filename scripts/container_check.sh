#!/usr/bin/env bash
# Builds the course's container image from docker/Dockerfile and runs the course inside it: the
# README's test command (bash scripts/test.sh), the quick start's demo (bash scripts/quickstart.sh)
# and lesson 07's chart command; checks the demo's outputs (the HDF5 file, the GIF, the PNG
# frames); saves the image as the archive docker/gray-scott.def builds from (and builds and runs
# the Apptainer image where apptainer is installed); and ends by saying what it proved and what
# it did not.
#
#   bash scripts/container_check.sh      # on Debian 12 without CUDA: the CPU lessons
#   GS_CONTAINER_BASE=nvidia/cuda:13.0.2-devel-ubuntu24.04 bash scripts/container_check.sh
#
# Needs root, buildah and podman (Debian/Ubuntu: apt-get install buildah podman), and mmdebstrap
# when the default base is missing: it is then made from the Debian mirror
# (mmdebstrap --variant=minbase bookworm, imported as localhost/debian:bookworm), so no image
# registry is needed. buildah builds and runs with chroot isolation, which needs no user
# namespaces (it works in sandboxes where `podman run` does not). The build runs under nice with
# GS_CONTAINER_JOBS compile jobs (2); its layers are cached, so a second run rebuilds only what
# changed: the course after an edit, the dependency layer only when setup.sh changes. Logs, the
# image archive and the demo's pictures go to GS_CONTAINER_WORK (default: a new private folder).
#
#   bash scripts/container_check.sh --static   # only the checks that need no container tools
#
# The static checks (CI runs them; they take a second): the files the Dockerfile copies for its
# dependency layer exist and include every script setup.sh runs; .dockerignore keeps out what
# .gitignore ignores; gray-scott.def uses the Dockerfile's paths and smoke run.
# Exit status: 0 when everything it ran passed, 1 when something failed, 2 when a tool is missing.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

static_checks() {
  local status=0 copied pattern script smoke
  # The dependency layer is built from the files its COPY names, before the rest of the course.
  copied=$(sed -n 's|^COPY \(scripts/[^ ]*\( scripts/[^ ]*\)*\) scripts/$|\1|p' docker/Dockerfile)
  [ -n "$copied" ] || { echo "FAIL docker/Dockerfile: no 'COPY scripts/... scripts/' dependency layer"; status=1; }
  for script in $copied; do
    [ -f "$script" ] || { echo "FAIL docker/Dockerfile copies $script, which does not exist"; status=1; }
  done
  for script in $(grep -v '^ *#' scripts/setup.sh | grep -o 'bash scripts/[A-Za-z0-9_]*\.sh' | sed 's/^bash //' | sort -u); do
    [[ " $copied " == *" $script "* ]] \
      || { echo "FAIL scripts/setup.sh runs $script, which the Dockerfile's dependency layer does not copy"; status=1; }
  done
  # What git ignores (build trees, output files) stays out of the build context too.
  for pattern in 'build*/' '**/*.h5' '**/node_modules' '.git' 'demo/' 'benchmarks/results/' '*.sif' 'gray-scott-school*.tar'; do
    grep -qxF -- "$pattern" .dockerignore || { echo "FAIL .dockerignore does not list $pattern"; status=1; }
  done
  # gray-scott.def converts the image: its paths and smoke run are the Dockerfile's.
  grep -q '^WORKDIR /opt/gray-scott-school$' docker/Dockerfile \
    || { echo "FAIL docker/Dockerfile: WORKDIR is not /opt/gray-scott-school"; status=1; }
  grep -qx 'From: gray-scott-school.tar' docker/gray-scott.def \
    || { echo "FAIL docker/gray-scott.def: not 'From: gray-scott-school.tar'"; status=1; }
  smoke=$(grep -o 'build/bin/gray_scott -r 64 -c 64 -n 2 -e 4 --no-output' docker/Dockerfile)
  grep -q "/opt/gray-scott-school/$smoke" docker/gray-scott.def \
    || { echo "FAIL docker/gray-scott.def's %test is not the Dockerfile's smoke run"; status=1; }
  [ "$status" = 0 ] && echo "container_check.sh: static checks passed (Dockerfile, .dockerignore, gray-scott.def)"
  return $status
}
if [ "${1:-}" = --static ]; then
  static_checks
  exit
fi
base=${GS_CONTAINER_BASE:-localhost/debian:bookworm}
image=localhost/gray-scott-school:check
jobs=${GS_CONTAINER_JOBS:-2}
work=${GS_CONTAINER_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/gs-container.XXXXXX")}
cuda_base=docker.io/nvidia/cuda:13.0.2-devel-ubuntu24.04  # docker/Dockerfile's default base
logs=$work/logs
start=$SECONDS
proved=() not_proved=() failures=()
step() { echo; echo "== [$((SECONDS - start)) s] $*"; }
failed() { failures+=("$1"); echo "FAILED: $1"; }
# Runs a command in the container, in the course's folder, under nice.
in_container() { nice -n 10 buildah run --isolation chroot --workingdir /opt/gray-scott-school "$container" -- "$@"; }

static_checks || exit 1
missing=()
for tool in buildah podman; do command -v "$tool" > /dev/null || missing+=("$tool"); done
if [ "$base" = localhost/debian:bookworm ] && ! podman image exists "$base" 2> /dev/null; then
  command -v mmdebstrap > /dev/null || missing+=(mmdebstrap)
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "container_check.sh: needs ${missing[*]} (Debian/Ubuntu: sudo apt-get install ${missing[*]})" >&2
  exit 2
fi
mkdir -p "$logs"
echo "container_check.sh: base $base, image $image, $jobs compile jobs, logs in $logs"

step "base image"
if podman image exists "$base" 2> /dev/null; then
  echo "$base is there"
elif [ "$base" = localhost/debian:bookworm ]; then
  echo "making $base from the Debian mirror (mmdebstrap --variant=minbase bookworm)"
  if ! { mmdebstrap --variant=minbase bookworm "$work/debian-bookworm.tar" \
         && podman import "$work/debian-bookworm.tar" "$base"; } > "$logs/base.log" 2>&1; then
    tail -20 "$logs/base.log"
    echo "container_check.sh: could not make $base (log: $logs/base.log)" >&2
    exit 1
  fi
  rm -f "$work/debian-bookworm.tar"
else
  echo "$base is not here: the build pulls it"
fi

step "build: buildah build -f docker/Dockerfile --build-arg BASE_IMAGE=$base (log: $logs/build.log)"
# The commit gs_benchmark names: the last that changed what the image holds (the build context,
# less what .dockerignore keeps out), so that a commit of the recipes alone, or of this script,
# does not change the build argument and rebuild the course.
image_sources=(. ':(exclude)docker' ':(exclude).dockerignore' ':(exclude)scripts/container_check.sh')
commit=$(git log -1 --format=%h -- "${image_sources[@]}" 2> /dev/null)
[ -n "$(git status --porcelain -- "${image_sources[@]}" 2> /dev/null)" ] && commit+=-dirty
commit=${commit:-unknown}
build_start=$SECONDS
if nice -n 10 buildah build --isolation chroot --layers -f docker/Dockerfile -t "$image" \
     --build-arg BASE_IMAGE="$base" --build-arg BUILD_JOBS="$jobs" \
     --build-arg GS_GIT_COMMIT="$commit" . > "$logs/build.log" 2>&1; then
  build_seconds=$((SECONDS - build_start))
  sed -n '/Gray-Scott School build summary/,/^-- $/p' "$logs/build.log" | sed 's/^/  /'
  grep -m1 "build summary" "$logs/build.log" > /dev/null || echo "  (configure step cached)"
  size=$(podman image inspect --format '{{.Size}}' "$image" 2> /dev/null || echo 0)
  cached=$(grep -c "Using cache" "$logs/build.log")
  built="docker/Dockerfile builds with buildah on $base (image $image, $((size / 1000000)) MB, $build_seconds s, $cached step(s) from the layer cache)"
  echo "$built"
  proved+=("$built")
else
  tail -30 "$logs/build.log"
  failed "the image build (log: $logs/build.log)"
fi
has_cuda=0
grep -q "CUDA compiler   [0-9]" "$logs/build.log" && has_cuda=1

if [ ${#failures[@]} -eq 0 ]; then
  container=$(buildah from --name "gs-container-check-$$" "$image")
  trap 'buildah rm "$container" > /dev/null 2>&1' EXIT

  step "the README's test command, inside: bash scripts/test.sh (log: $logs/test.log)"
  if in_container bash scripts/test.sh > "$logs/test.log" 2>&1; then
    result=$(grep -E "tests passed|tests failed" "$logs/test.log" | tail -1)
    echo "$result"
    proved+=("bash scripts/test.sh passes inside it: $result")
  else
    grep -E "tests passed|tests failed|\(Failed\)|\(SEGFAULT\)|\(Timeout\)" "$logs/test.log" | tail -15
    failed "bash scripts/test.sh inside the image (log: $logs/test.log)"
  fi
  grep "test.sh: the GPU tests above were skipped" "$logs/test.log" || true

  step "the quick start's demo, inside: bash scripts/quickstart.sh (log: $logs/demo.log)"
  rm -rf "$work/demo" && mkdir -p "$work/demo"
  if in_container bash scripts/quickstart.sh > "$logs/demo.log" 2>&1; then
    grep -E "^== running|implementation|Done\." "$logs/demo.log" | head -4
    # The pictures come out to be checked here; the 52 MB HDF5 file is checked inside.
    in_container tar -cf - demo/demo.gif demo/frames | tar -xf - -C "$work"
    frames=$(find "$work/demo/frames" -name '*.png' 2> /dev/null | wc -l)
    bad_frames=0
    for png in "$work"/demo/frames/*.png; do
      [ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || bad_frames=$((bad_frames + 1))
    done
    gif_bytes=$(stat -c %s "$work/demo/demo.gif" 2> /dev/null || echo 0)
    gif_magic=$(head -c 6 "$work/demo/demo.gif" 2> /dev/null)
    shape=$(in_container h5dump -H -d matrix demo/demo.h5 2> /dev/null \
              | sed -n 's/.*DATASPACE *SIMPLE *{ *( *\([0-9][0-9, ]*[0-9]\) *).*/\1/p' | head -1)
    echo "demo/demo.h5: dataset matrix ($shape); demo/demo.gif: $gif_bytes bytes ($gif_magic);" \
         "demo/frames: $frames PNG files, $bad_frames without a PNG signature (copied to $work/demo)"
    if [ "$shape" = "100, 270, 480" ] && [ "$gif_magic" = GIF89a ] && [ "$gif_bytes" -gt 10000 ] \
       && [ "$frames" = 10 ] && [ "$bad_frames" = 0 ]; then
      proved+=("the demo runs inside it: demo/demo.h5 (100 x 270 x 480), demo/demo.gif ($((gif_bytes / 1000)) kB), 10 PNG frames")
    else
      failed "the demo's outputs (expected 100 x 270 x 480 frames, a GIF89a, 10 PNG frames)"
    fi
  else
    tail -20 "$logs/demo.log"
    failed "bash scripts/quickstart.sh inside the image (log: $logs/demo.log)"
  fi

  step "lesson 07's chart command, inside: bash scripts/python.sh tools/charts.py timeline"
  if in_container bash scripts/python.sh tools/charts.py timeline \
       docs/data/timeline-cpu-no-overlap-2core-09b7902.csv docs/data/timeline-cpu-overlap-2core-09b7902.csv \
       --frames 12 --label before --label after -o /tmp/timeline.png > "$logs/chart.log" 2>&1 \
     && in_container test -s /tmp/timeline.png; then
    echo "drew /tmp/timeline.png with $(in_container bash scripts/python.sh --print tools/charts.py)"
    proved+=("the Python tools run inside it (tools/charts.py timeline through scripts/python.sh)")
  else
    cat "$logs/chart.log"
    failed "tools/charts.py inside the image (log: $logs/chart.log)"
  fi

  step "the archive docker/gray-scott.def builds from: podman save --format docker-archive"
  archive=$work/gray-scott-school.tar
  rm -f "$archive"
  if podman save --format docker-archive -o "$archive" "$image" > "$logs/save.log" 2>&1 \
     && tar -xOf "$archive" manifest.json | grep -q "gray-scott-school:check"; then
    echo "$archive: $(($(stat -c %s "$archive") / 1000000)) MB, manifest.json names $image"
    proved+=("podman save --format docker-archive writes the archive docker/gray-scott.def names ($(($(stat -c %s "$archive") / 1000000)) MB)")
    if command -v apptainer > /dev/null; then
      step "apptainer build gray-scott.sif docker/gray-scott.def (log: $logs/apptainer.log)"
      if (cd "$work" && apptainer build --force gray-scott.sif "$root/docker/gray-scott.def" \
          && apptainer test gray-scott.sif \
          && apptainer run gray-scott.sif -r 64 -c 64 -n 2 -e 4 --no-output) > "$logs/apptainer.log" 2>&1; then
        proved+=("apptainer builds docker/gray-scott.def from the archive; its %test and run script pass")
      else
        tail -20 "$logs/apptainer.log"
        failed "the Apptainer build or run (log: $logs/apptainer.log)"
      fi
    else
      not_proved+=("docker/gray-scott.def: apptainer is not installed here (Debian 12 has no package for it), so the .sif was neither built nor run; its input, the archive, was")
    fi
  else
    cat "$logs/save.log"
    failed "podman save of $image"
  fi
fi

step "summary ($((SECONDS - start)) s)"
if [ "$has_cuda" = 0 ]; then
  not_proved+=("the GPU lessons: $base has no CUDA, so this image has the CPU lessons, the programs and their tests (the GPU lessons are listed as skipped)")
  if [ "$base" != "$cuda_base" ]; then
    if reason=$(timeout 60 podman manifest inspect "$cuda_base" 2>&1 > /dev/null); then
      not_proved+=("the CUDA image: not built in this run ($cuda_base can be reached: GS_CONTAINER_BASE=$cuda_base bash scripts/container_check.sh)")
    else
      not_proved+=("the CUDA image (BASE_IMAGE $cuda_base) was not built: its registry cannot be reached from here (podman manifest inspect: ...$(echo "$reason" | tail -1 | rev | cut -c1-90 | rev))")
    fi
  fi
fi
not_proved+=("a GPU inside a container (docker run --gpus all, apptainer --nv): no GPU on this machine")
docker info > /dev/null 2>&1 \
  || not_proved+=("docker build and run: no Docker engine here; buildah read the same Dockerfile and .dockerignore")
echo "proved:"
for line in ${proved[@]+"${proved[@]}"}; do echo "  - $line"; done
echo "not proved here:"
for line in "${not_proved[@]}"; do echo "  - $line"; done
if [ ${#failures[@]} -gt 0 ]; then
  echo "FAILED:"
  for line in "${failures[@]}"; do echo "  - $line"; done
  exit 1
fi
echo "container_check.sh: everything it ran passed"
