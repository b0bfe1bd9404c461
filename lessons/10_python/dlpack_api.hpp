// Lesson 10: what from_dlpack(), the learner's DLPack read, works with (its interface): dlpack.h
// (DLManagedTensor, DLTensor and their codes), what the module knows of an array (ArrayInfo,
// ArrayError, HeldArray, CallerStream: arrays.hpp), and three helpers of arrays.cpp, which
// includes from_dlpack.hpp and calls it from hold_array().
#pragma once

#include <dlpack/dlpack.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <vector>

#include "arrays.hpp"

namespace lesson10 {

// The dtype name of a kind and size, as NumPy writes it ("float32", "int64", "bool").
std::string numpy_name(char kind, int bits);

// Row-major strides, in elements, of a compact array of this shape.
std::vector<std::int64_t> compact_strides(const std::vector<std::int64_t>& shape);

// Marks `info` read-only when `object` is an array that must not be written (a JAX array:
// immutable, its buffer possibly shared, though DLPack hands over a plain pointer).
void mark_if_immutable(ArrayInfo& info, py::handle object);

}  // namespace lesson10
