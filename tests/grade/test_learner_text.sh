#!/usr/bin/env bash
# The text check of a learner file (scripts/grade_results.py includes, what grade.sh runs before
# it builds anything) against the attacks on the point tests that walk the learner's code on the
# host or on a model while a GPU runs it in the programs (tests/grade/attacks/README.md): each
# must be refused with its reason; and every shipped stub and solution must pass it (a solution
# refused would fail its own grade). Seconds, no build: CI runs it with the tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
text_check() {  # text_check TREE LEARNER_FILE: the problems found, one per line
  python3 "$root/scripts/grade_results.py" includes --tree "$1" --lesson-folder "$(dirname "$2")" \
    --learner "$2"
}
# attack NAME LEARNER FRAGMENT EXPECTED...: LEARNER with FRAGMENT appended is refused, each
# EXPECTED reason named.
attack() {
  local name=$1 learner=$2 fragment=$3 out
  shift 3
  mkdir -p "$work/$name/$(dirname "$learner")"
  cat "$root/$learner" "$root/tests/grade/attacks/$fragment" > "$work/$name/$learner"
  out=$(text_check "$work/$name" "$learner")
  for expected in "$@"; do
    if grep -qF -- "$expected" <<< "$out"; then
      echo "ok   $name: $expected"
    else
      echo "FAIL $name: '$expected' not among the problems found:"
      printf '%s\n' "${out:-(none)}" | sed 's/^/       /'
      failed=1
    fi
  done
}
attack which_block lessons/08_multi_gpu/halo_exchange.hpp which_block.fragment \
  "a question about the Block's type" "a name of the model's or of the kernel's"
attack device_only_04 lessons/04_cuda_kernels/kernels.cuh device_only.fragment \
  "whether the code is compiled for the GPU or the host"
attack device_only_08 lessons/08_multi_gpu/halo_exchange.hpp device_only.fragment \
  "whether the code is compiled for the GPU or the host" "a preprocessor condition"
attack device_only_09 lessons/09_parameter_sweep/member.hpp device_only.fragment \
  "whether the code is compiled for the GPU or the host"
attack token_pasting_04 lessons/04_cuda_kernels/kernels.cuh token_pasting.fragment \
  "token pasting" "a preprocessor condition on anything but GS_HAVE_CUDA"
attack point_macro_07 lessons/07_async_output/frame_ring.hpp point_macro.fragment \
  "a preprocessor condition on anything but GS_HAVE_CUDA"

# The shipped stubs and the solutions: nothing to refuse.
for solution in "$root"/solutions/*/*; do
  folder=$(basename "$(dirname "$solution")")
  for learner in "lessons/$folder/$(basename "$solution")" "solutions/$folder/$(basename "$solution")"; do
    [ -f "$root/$learner" ] || continue
    out=$(text_check "$root" "$learner")
    if [ -n "$out" ]; then
      echo "FAIL $learner is refused:"
      printf '%s\n' "$out" | sed 's/^/       /'
      failed=1
    fi
  done
done
[ "$failed" = 0 ] && echo "ok   every shipped stub and solution passes the text check"
exit "$failed"
