// Lesson 10, a file you edit (the other is binding.hpp): an array the caller owns, read through
// DLPack, no copy.
//
//  from_dlpack(): what a DLPack producer (CuPy, PyTorch, JAX, NumPy ...) says of its array, as
//  the module's ArrayInfo: where its first cell is, its element type, its shape and its strides
//  in cells, where its memory lives; on a GPU, handed over in the order of the caller's stream.
//
// It sees what dlpack_api.hpp gives it (dlpack.h; ArrayInfo, ArrayError, HeldArray and
// CallerStream from arrays.hpp; the helpers numpy_name(), compact_strides() and
// mark_if_immutable()) and nothing else of the module. arrays.cpp includes it; hold_array() calls
// it for an object with __dlpack__ and __dlpack_device__ that is not a NumPy array.
// README.md, "The exercise", says what it must do; HINTS.md helps in three levels.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

#include "dlpack_api.hpp"
#include "gs/stepper.hpp"

namespace lesson10 {

// `object` (called `name` in messages) as the module sees it through DLPack: its memory, where
// it lies, described in ArrayInfo's terms and kept alive by HeldArray::keep_alive. It describes;
// binding.hpp's array_problem() judges. `stream`: the caller's CUDA stream.
inline HeldArray from_dlpack(py::handle object, const std::string& name,
                             const CallerStream& stream) {
  // TODO(lesson 10): the zero-copy read of the lesson. The stepper will be handed one pointer and
  // will walk the caller's memory by ArrayInfo's numbers alone (its first cell, the element's
  // type, the shape, the strides in cells, host or which GPU), so every one of them must say what
  // the producer's tensor says, including what DLPack leaves implicit, and a description that
  // cannot be read is refused with a message that names `name`. Nothing is judged here (wrong
  // dtype or shape is array_problem()'s to refuse) and nothing is copied. A GPU producer may
  // still be writing its array: the module must receive it in the order of the caller's stream
  // (when unknown, the legacy default stream), which only the producer can arrange. The memory
  // must stay alive while the stepper uses it, and the producer, not the module, frees what it
  // made. README.md, section 4, says what DLPack hands over. As shipped every DLPack array is
  // refused: a pointer nobody read properly must never reach the stepper.
  (void)object, (void)stream;
  throw ArrayError("TODO(lesson 10): from_dlpack() in lessons/10_python/from_dlpack.hpp is not " +
                   std::string("written yet, so ") + name + " (a DLPack array) is refused");
}

}  // namespace lesson10
