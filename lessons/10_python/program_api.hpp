// What lesson 10's module asks of the program that hosts it, the program grayscott a floor above
// (its choices.cpp and functions.cpp define these; it links the registry of every lesson's
// steppers): plumbing, not the lesson's idea. The checks of a grid and its rates with the
// programs' messages, the choice of an implementation by name, the OpenMP steppers refused in a
// child forked after OpenMP started, the making of a Simulation or a Stepper from Python's
// keywords, and what Python sees besides Simulation and Stepper (define_functions()). The lesson
// owns this interface and calls it (module.cpp); the program implements it.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <vector>

#include "gs/params.hpp"
#include "gs/stepper.hpp"

namespace lesson10 {

namespace py = pybind11;

// The keywords' values as the programs' flags take them: a number float32 holds (common's
// float32_problem(), the check of every rate flag: "--feedrate: 1e39 is too large for float32
// ..."), then the programs' checks of the grid and the rates (gs::find_problems,
// common/src/params.cpp), with the same messages, which the suite compares with gray_scott's.
struct Keyword {
  const char* flag;
  double value;
};

// Refuses a grid or rates the programs refuse, with their messages (ValueError).
void validate(int rows, int cols, const Keyword (&rates)[5]);
// The grid alone (initial_state(), random_state()).
void validate(int rows, int cols);

// Every implementation of the build, fastest first (gs::all_implementations()).
const std::vector<gs::Implementation>& registry();
// The implementation called `name`, or gray_scott's default for a rows x cols grid (the fastest
// that takes it here); the programs' refusals otherwise.
const gs::Implementation& choose(const std::string& name, int rows, int cols);
// `implementation=`: None (the default choice) or a name.
std::string name_of(const py::object& implementation);

// A child forked after OpenMP started refuses the OpenMP implementations instead of hanging:
// install_fork_handler() once (the module's initialisation), require_fork_safe_openmp() before
// every use of a stepper for which runs_on_openmp().
void install_fork_handler();
bool runs_on_openmp(const gs::Implementation& implementation);
void require_fork_safe_openmp(const std::string& implementation);

// What Simulation(...) and Stepper(...) do: check the grid and the rates, choose the
// implementation, then make the object (which loads the initial condition).
template <typename Made>
std::unique_ptr<Made> make(int rows, int cols, const py::object& implementation, double feed,
                           double kill, double dt, double du, double dv) {
  validate(rows, cols,
           {{"-k/--killrate", kill},
            {"-f/--feedrate", feed},
            {"-t/--deltat", dt},
            {"-u/--diffusion-u", du},
            {"-v/--diffusion-v", dv}});
  gs::Rates rates;
  rates.feed = static_cast<float>(feed);
  rates.kill = static_cast<float>(kill);
  rates.dt = static_cast<float>(dt);
  rates.diffusion_u = static_cast<float>(du);
  rates.diffusion_v = static_cast<float>(dv);
  const gs::Implementation& chosen = choose(name_of(implementation), rows, cols);
  return std::make_unique<Made>(rows, cols, chosen, rates);
}

// What Python sees besides Simulation and Stepper (the module's DeviceArray, to_device,
// list_implementations, defaults, initial_state, random_state, gpu_status, the transfer
// counters, build): defined in `module`, once, by module.cpp's PYBIND11_MODULE.
void define_functions(py::module_& module);

}  // namespace lesson10
