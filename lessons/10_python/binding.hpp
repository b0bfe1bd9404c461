// Lesson 10, the file you edit: where Python meets the stepper.
//
//  1. array_problem(): why an array the caller hands cannot be one field of the state as it lies
//     (its dtype, its dimensions and shape, its strides, where it lives, whether it may be
//     written), in words the caller can act on;
//  2. field_view(): u and v as the gs::FieldView a stepper reads and writes: the caller's memory
//     itself, its pointer and its pitch, no copy (the zero-copy of the lesson);
//  3. advance_released(): the steps, run with the interpreter's lock (the GIL) released, in
//     batches between which a Ctrl-C reaches Python.
//
// Included by module.cpp inside namespace lesson10, after ArrayInfo and ArrayError (arrays.hpp),
// Target, Work, Batching and overlaps(). README.md, "The exercise", says what each part must do;
// HINTS.md helps in three levels.
#pragma once

// Why `array` (called `name` in the message) cannot be one field of a state of `target` as it
// lies; "" when it can. `writes`: the call writes the new state into it.
inline std::string array_problem(const ArrayInfo& array, const std::string& name,
                                 const Target& target, bool writes) {
  // TODO(lesson 10): return a message naming `name` and what is wrong, for the first problem of:
  //  - memory that is neither host nor CUDA device memory (array.unsupported_place);
  //  - a dtype other than float32 (array.kind 'f', 32 bits, 1 lane; array.type_name for the text);
  //  - not 2 dimensions; a shape other than (target.rows, target.cols);
  //  - strides (in cells) the stepper cannot walk: it finds cell (r, c) at r * pitch + c, so the
  //    column stride must be 1 and the row stride (the pitch) at least target.cols; a grid of
  //    one row or one column has no stride to check; array.whole_strides false is refused too;
  //  - data not aligned to 4 bytes;
  //  - a GPU array (array.device) for a CPU implementation (target.device), or on another GPU
  //    (array.device_id against target.device_id; place_of(array) names where it is);
  //  - read-only (array.read_only, array.read_only_reason) when the call writes into it.
  // As shipped every array is refused: the stepper must never be handed memory unchecked.
  (void)array, (void)target, (void)writes;
  return "TODO(lesson 10): array_problem() in lessons/10_python/binding.hpp is not written yet, "
         "so " +
         name + " is refused";
}

// u and v as the FieldView a stepper works on: their own memory, where it lies.
inline gs::FieldView field_view(const ArrayInfo& u, const ArrayInfo& v, const Target& target,
                                bool writes) {
  // TODO(lesson 10): throw ArrayError(message) for the first problem array_problem() finds in u,
  // then in v; refuse u and v with different pitches (a FieldView has one pitch: the row stride,
  // or target.cols for a grid of one row), in different places, or sharing memory (overlaps());
  // then return the FieldView of their memory: u.data and v.data as float*, the pitch, the grid's
  // rows and cols, and u.device. No copy: the stepper will read and write the caller's cells.
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
  // but no other Python thread runs until the end, and Ctrl-C waits for the last step.
  //  - steps that fit one call (batching.one_call(steps)): work.advance() once, the GIL released
  //    (py::gil_scoped_release), no wait: a GPU keeps its queue of launches;
  //  - more: batches of batching.next(left) steps; each, with the GIL released: work.advance(),
  //    work.wait() (the batch is finished before Python looks), batching.took(steps, seconds)
  //    (gs::Stopwatch); then, with the GIL back, count the steps into `done` and ask Python for
  //    pending signals: PyErr_CheckSignals() != 0 means an exception is set, which
  //    `throw py::error_already_set()` hands to the caller (KeyboardInterrupt for Ctrl-C).
  (void)batching;
  while (steps > 0) {
    const int now = static_cast<int>(std::min<std::int64_t>(steps, 1 << 30));
    work.advance(now);
    steps -= now;
    done += now;
  }
}
