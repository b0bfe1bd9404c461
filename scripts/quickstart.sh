#!/usr/bin/env bash
# The README's first quick-start command: installs what is missing, builds everything, runs the
# simulation at a demo size with the fastest implementation this machine offers, and renders
# pictures of it into demo/. Arguments go to gray_scott (e.g. -r 1080 -c 1920 -n 1000).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
[ -f build/CMakeCache.txt ] || cmake --preset default
cmake --build build -j "$(nproc)"
mkdir -p demo
echo
echo "== running: build/bin/gray_scott -r 270 -c 480 -n 100 -e 32 -o demo/demo.h5 $*"
build/bin/gray_scott -r 270 -c 480 -n 100 -e 32 -o demo/demo.h5 "$@"
echo
video=()
command -v ffmpeg >/dev/null 2>&1 && video=(--video demo/demo.gif)
build/bin/gs_render demo/demo.h5 -d demo/frames --stride 10 "${video[@]}"
last=$(ls demo/frames/*.png | tail -n 1)
echo
echo "Done. The last picture is $last; all of them are in demo/frames/."
[ "${#video[@]}" -gt 0 ] || echo "(Install ffmpeg to also get demo/demo.gif.)"
