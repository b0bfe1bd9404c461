// Lesson 10's module: what Python sees besides Simulation and Stepper (the module's DeviceArray,
// to_device, list_implementations, defaults, initial_state, random_state, gpu_status, the
// transfer counters, build). Plumbing, not the lesson's idea: declared here for module.cpp, defined
// by the module's program, a floor above (grayscott's functions.cpp).
#pragma once

#include <pybind11/pybind11.h>

namespace lesson10 {

// Defines them in `module` (called once by module.cpp's PYBIND11_MODULE).
void define_functions(pybind11::module_& module);

}  // namespace lesson10
