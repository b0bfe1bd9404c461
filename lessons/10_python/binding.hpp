// Lesson 10, a file you edit (the other is from_dlpack.hpp): where Python meets the stepper.
//
//  1. array_problem(): why an array the caller hands cannot be one field of the state as it lies
//     (its dtype, its dimensions and shape, its strides, where it lives, whether it may be
//     written), in words the caller can act on;
//  2. field_view(): u and v as the gs::FieldView a stepper reads and writes: the caller's memory
//     itself, its pointer and its pitch, no copy (the zero-copy of the lesson);
//  3. advance_released(): the steps, run with the interpreter's lock (the GIL) released, in
//     batches between which a Ctrl-C reaches Python.
//
// It sees what binding_api.hpp gives it (Target, Work, Batching, overlaps(), and from arrays.hpp
// ArrayInfo, ArrayError and place_of()) and nothing else of the module; module.cpp includes it.
// README.md, "The exercise", says what each part must do; HINTS.md helps in three levels.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

#include "binding_api.hpp"
#include "gs/stepper.hpp"
#include "gs/timing.hpp"

namespace lesson10 {

// Why `array` (called `name` in the message) cannot be one field of a state of `target` as it
// lies; "" when it can. `writes`: the call writes the new state into it.
inline std::string array_problem(const ArrayInfo& array, const std::string& name,
                                 const Target& target, bool writes) {
  // TODO(lesson 10): the first reason, if any, why the stepper must not be handed this array as
  // a field, in a message that names `name`, says what is wrong and what to do about it. The
  // stepper takes one pointer and finds cell (r, c) at r * pitch + c floats from it, in memory it
  // can reach, and may write there: whatever in `array` breaks one of these is a reason.
  // ArrayInfo (arrays.hpp) holds what Python says of the array; TestArrays names the words it
  // expects. As shipped every array is refused: the stepper must never be handed memory
  // unchecked.
  (void)array, (void)target, (void)writes;
  return "TODO(lesson 10): array_problem() in lessons/10_python/binding.hpp is not written yet, "
         "so " +
         name + " is refused";
}

// u and v as the FieldView a stepper works on: their own memory, where it lies.
inline gs::FieldView field_view(const ArrayInfo& u, const ArrayInfo& v, const Target& target,
                                bool writes) {
  // TODO(lesson 10): u and v as the one FieldView the stepper advances: the caller's own memory,
  // nothing copied (the zero-copy of the lesson). The stepper trusts the view entirely: it walks
  // both fields by a single pitch, in a single place, and reads the cells of u and v while it
  // writes them. So a pair it cannot work on as a whole is refused here (ArrayError: Python's
  // ValueError) with a message that says what to do, even when each array alone is fine; what
  // reaches the stepper is exactly the cells the caller described. As shipped every pair is
  // refused.
  (void)v, (void)target;
  const std::string problem = array_problem(u, "u", target, writes);
  throw ArrayError(problem.empty() ? "TODO(lesson 10): field_view() is not written yet" : problem);
}

// Advances `work` by `steps` steps, the GIL released while the stepper runs, so that other Python
// threads go on; between batches of about 0.1 s it takes the GIL back and lets Python handle a
// pending signal (Ctrl-C: KeyboardInterrupt). `done` counts the finished steps, also when a
// signal stops the call (the state is then that of a finished batch).
inline void advance_released(Work& work, std::int64_t steps, Batching& batching,
                             std::int64_t& done) {
  // TODO(lesson 10): as shipped, every step in one call with the GIL held: the numbers are right,
  // but no other Python thread runs until the end, and Ctrl-C waits for the last step. Let the
  // interpreter go on while the stepper runs, and let a Ctrl-C stop a long call within about a
  // batch, on a finished batch, with `done` saying how many steps the state holds; a call short
  // enough for one batch stays one call with no wait, so that a GPU keeps its queue of launches.
  // README.md, section 3, says why; `Batching` and `Work` are what you have to do it with.
  (void)batching;
  while (steps > 0) {
    const int now = static_cast<int>(std::min<std::int64_t>(steps, 1 << 30));
    work.advance(now);
    steps -= now;
    done += now;
  }
}

}  // namespace lesson10
