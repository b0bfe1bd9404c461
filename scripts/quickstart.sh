#!/usr/bin/env bash
# The README's first quick-start command: installs what is missing, builds everything, runs the
# simulation at a demo size with the fastest implementation this machine offers, and renders
# pictures of it into demo/: every 10th frame as a PNG, and all of them as demo/demo.gif.
# Arguments go to gray_scott (e.g. -r 1080 -c 1920 -n 1000).
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
# gs_render draws the PNG frames and the animated GIF itself (libpng, giflib); no ffmpeg needed.
build/bin/gs_render demo/demo.h5 -d demo/frames --stride 10
build/bin/gs_render demo/demo.h5 --no-png --gif demo/demo.gif
last=$(ls demo/frames/*.png | tail -n 1)
echo
echo "Done. The animation is demo/demo.gif (open it in a browser or an image viewer); the last"
echo "picture is $last, and all of them are in demo/frames/."
