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
  HeldArray held;
  ArrayInfo& info = held.info;
  info.protocol = "DLPack";
  // The consumer names the stream it will use the data on (1: the legacy default stream); the
  // producer makes that stream wait for its own work. A CPU array takes no stream.
  const py::tuple device = object.attr("__dlpack_device__")();
  py::object capsule;
  if (device[0].cast<int>() == kDLCUDA) {
    std::intptr_t handle = 1;
    if (stream.known && stream.handle != nullptr) {
      handle = reinterpret_cast<std::intptr_t>(stream.handle);
    }
    capsule = object.attr("__dlpack__")(py::arg("stream") = handle);
  } else {
    capsule = object.attr("__dlpack__")();
  }
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (managed == nullptr) {
    PyErr_Clear();
    throw py::type_error(name + "'s __dlpack__() did not return an unused DLPack capsule (one " +
                         "named 'dltensor')");
  }
  // The capsule stays unconsumed (not renamed): its producer frees the tensor description when
  // the capsule goes, after the call. The memory is the caller's object's.
  held.keep_alive = capsule;
  const DLTensor& tensor = managed->dl_tensor;
  if (tensor.ndim < 0 || (tensor.ndim > 0 && tensor.shape == nullptr)) {
    throw ArrayError(name + "'s DLPack tensor has no shape (" + std::to_string(tensor.ndim) +
                     " dimension(s))");
  }
  info.data = static_cast<char*>(tensor.data) + tensor.byte_offset;
  info.bits = tensor.dtype.bits;
  info.lanes = tensor.dtype.lanes;
  switch (tensor.dtype.code) {
    case kDLInt:
      info.kind = 'i';
      break;
    case kDLUInt:
      info.kind = 'u';
      break;
    case kDLFloat:
      info.kind = 'f';
      break;
    case 5:  // kDLComplex
      info.kind = 'c';
      break;
    case 6:  // kDLBool (DLPack 1.0)
      info.kind = 'b';
      break;
    default:
      info.kind = '?';
  }
  info.type_name = tensor.dtype.code == 4 ? "bfloat16" : numpy_name(info.kind, info.bits);
  if (info.lanes != 1) info.type_name += " x " + std::to_string(info.lanes) + " lanes";
  info.shape.assign(tensor.shape, tensor.shape + tensor.ndim);
  if (tensor.strides == nullptr) {  // DLPack's way of saying compact, row-major
    info.strides = compact_strides(info.shape);
  } else {  // in elements already
    info.strides.assign(tensor.strides, tensor.strides + tensor.ndim);
  }
  switch (tensor.device.device_type) {
    case kDLCPU:
    case kDLCUDAHost:  // pinned host memory: host memory
      info.device = gs::Device::cpu;
      break;
    case kDLCUDA:
      info.device = gs::Device::gpu;
      info.device_id = tensor.device.device_id;
      break;
    default:
      info.unsupported_place = "DLPack device type " + std::to_string(tensor.device.device_type) +
                               " (neither host memory nor CUDA device memory)";
  }
  mark_if_immutable(info, object);
  return held;
}

}  // namespace lesson10
