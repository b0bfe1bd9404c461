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
  if (!array.unsupported_place.empty()) {
    return name + " lives in " + array.unsupported_place + ": the stepper reads host memory or " +
           "CUDA device memory";
  }
  if (array.kind != 'f' || array.bits != 32 || array.lanes != 1) {
    return name + " has dtype " + array.type_name +
           "; the fields are float32 (convert it: " + name + ".astype(numpy.float32))";
  }
  if (array.shape.size() != 2) {
    return name + " has " + std::to_string(array.shape.size()) +
           " dimension(s); a field has 2: (rows, cols)";
  }
  if (array.shape[0] != target.rows || array.shape[1] != target.cols) {
    return name + " has shape (" + std::to_string(array.shape[0]) + ", " +
           std::to_string(array.shape[1]) + "); this grid is (" + std::to_string(target.rows) +
           ", " + std::to_string(target.cols) + ")";
  }
  // The stepper finds cell (r, c) at r * pitch + c: the cells of a row side by side (column
  // stride 1), rows at least a row apart (row stride = pitch >= cols). One row or one column
  // has no stride to check.
  const bool columns_adjacent = target.cols == 1 || array.strides[1] == 1;
  const bool rows_apart = target.rows == 1 || array.strides[0] >= target.cols;
  if (!array.whole_strides || !columns_adjacent || !rows_apart) {
    return name + " has strides (" + std::to_string(array.strides[0]) + ", " +
           std::to_string(array.strides[1]) + ") in cells; the stepper needs the cells of a " +
           "row side by side (stride 1) and rows at least " + std::to_string(target.cols) +
           " cells apart: a C-ordered array (numpy.ascontiguousarray)";
  }
  if (reinterpret_cast<std::uintptr_t>(array.data) % alignof(float) != 0) {
    return name + "'s data is not aligned to 4 bytes";
  }
  if (array.device == gs::Device::gpu && target.device != gs::Device::gpu) {
    return name + " is on " + place_of(array) + " but '" + target.implementation +
           "' computes on the CPU: pass a NumPy array, or choose a GPU implementation";
  }
  if (array.device == gs::Device::gpu && array.device_id != target.device_id) {
    return name + " is on " + place_of(array) +
           " but this stepper is on cuda:" + std::to_string(target.device_id);
  }
  if (writes && array.read_only) {
    return name + " is read-only (" + array.read_only_reason + "): advance() writes the new " +
           "state into it; advanced() returns new arrays instead";
  }
  return "";
}

// u and v as the FieldView a stepper works on: their own memory, where it lies.
inline gs::FieldView field_view(const ArrayInfo& u, const ArrayInfo& v, const Target& target,
                                bool writes) {
  for (const std::string& problem :
       {array_problem(u, "u", target, writes), array_problem(v, "v", target, writes)}) {
    if (!problem.empty()) throw ArrayError(problem);
  }
  const auto pitch_of = [&target](const ArrayInfo& array) {
    return target.rows > 1 ? array.strides[0] : std::int64_t{target.cols};
  };
  if (pitch_of(u) != pitch_of(v)) {
    throw ArrayError("u and v must have the same row pitch (one FieldView, one pitch): u has " +
                     std::to_string(pitch_of(u)) + " cells per row, v " +
                     std::to_string(pitch_of(v)));
  }
  if (u.device != v.device) {
    throw ArrayError("u is on " + place_of(u) + " and v on " + place_of(v) +
                     ": both fields must live in the same place");
  }
  if (overlaps(u, v, target)) throw ArrayError("u and v share memory: pass two separate arrays");
  gs::FieldView view;
  view.u = static_cast<float*>(u.data);
  view.v = static_cast<float*>(v.data);
  view.pitch = pitch_of(u);
  view.rows = target.rows;
  view.cols = target.cols;
  view.device = u.device;
  return view;
}

// Advances `work` by `steps` steps, the GIL released while the stepper runs, so that other Python
// threads go on; between batches of about 0.1 s it takes the GIL back and lets Python handle a
// pending signal (Ctrl-C: KeyboardInterrupt). `done` counts the finished steps, also when a
// signal stops the call (the state is then that of a finished batch).
inline void advance_released(Work& work, std::int64_t steps, Batching& batching,
                             std::int64_t& done) {
  if (batching.one_call(steps)) {  // a frame's worth: one call, no wait (GPU work stays queued)
    py::gil_scoped_release released;
    work.advance(static_cast<int>(steps));
    done += steps;
    return;
  }
  for (std::int64_t left = steps; left > 0;) {
    const int now = batching.next(left);
    {
      py::gil_scoped_release released;
      gs::Stopwatch clock;
      work.advance(now);
      work.wait();  // the batch is finished before Python looks: a clean state to stop at
      batching.took(now, clock.seconds());
    }
    done += now;
    left -= now;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();  // KeyboardInterrupt
  }
}

}  // namespace lesson10
