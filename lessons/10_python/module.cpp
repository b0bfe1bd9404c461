// Lesson 10 - back to Python: the course's steppers as a Python module, `grayscott`.
//
// The school's learners start in a notebook with NumPy, CuPy or JAX. This module hands them the
// C++ and CUDA steppers of the course, by name (the registry gray_scott and gs_benchmark choose
// from), in two shapes:
//   Simulation  owns its state, like gray_scott: load once, advance many steps per call, look at
//               u and v (NumPy copies) when wanted; the state crosses PCIe only then;
//   Stepper     works on the caller's arrays: advance(u, v, steps) advances NumPy arrays, or
//               CuPy / PyTorch CUDA arrays where they lie (DLPack or __cuda_array_interface__,
//               on the caller's stream); advanced(u, v, steps) returns new arrays instead (for
//               JAX, whose arrays are immutable).
// What the learner writes (binding.hpp): the check of an array and the FieldView of its memory,
// and the advance with the GIL released, in batches that let Ctrl-C through. Errors: a bad
// parameter or array is a ValueError with the programs' message (TypeError for what is not an
// array at all); a GPU implementation without a GPU, a CUDA error, a busy object: RuntimeError.
// The module's plumbing is the program's, a floor above (the program grayscott), behind the
// interface this lesson owns (program_api.hpp): the checks of the parameters and the choice of an
// implementation among every lesson's steppers, and what Python sees besides the two classes.

// The learner's file: array_problem(), field_view(), advance_released(), written against
// binding_api.hpp (Target, Work, Batching, overlaps()). Angle brackets: the build picks
// lessons/10_python/binding.hpp (the stubs) or the solution's. It comes first, so that it sees
// only what it includes itself (the build also compiles it alone).
#include <binding.hpp>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "arrays.hpp"
#include "gs/gpu.hpp"
#include "gs/interrupt.hpp"
#include "gs/params.hpp"
#include "gs/program.hpp"
#include "gs/state.hpp"
#include "gs/stepper.hpp"
#include "gs/timing.hpp"
#include "program_api.hpp"

namespace lesson10 {

namespace {

std::int64_t field_bytes(const Target& target) {
  return std::int64_t{target.rows} * target.cols * static_cast<std::int64_t>(sizeof(float));
}

// Whether @p array lives on a device (a CuPy or PyTorch CUDA array, ...): its
// __cuda_array_interface__, or a DLPack device other than the CPU (kDLCPU is 1; NumPy says so).
bool on_a_device(const py::object& array) {
  if (py::hasattr(array, "__cuda_array_interface__")) return true;
  if (!py::hasattr(array, "__dlpack_device__")) return false;
  const py::tuple device = array.attr("__dlpack_device__")();
  return device.size() > 0 && device[0].cast<int>() != 1;
}

void require_steps(std::int64_t steps) {
  if (steps < 0) throw ArrayError("steps must be at least 0 (got " + std::to_string(steps) + ")");
}

// ---------------------------------------------------------------------------------------------
// 1. The work advance_released() drives
// ---------------------------------------------------------------------------------------------

// The stepper's own state.
class OwnState final : public Work {
 public:
  explicit OwnState(gs::Stepper& stepper) : stepper_(stepper) {}
  void advance(int steps) override { stepper_.advance(steps); }
  void wait() override { stepper_.synchronize(); }

 private:
  gs::Stepper& stepper_;
};

// The caller's device fields, advanced where they lie (the stepper's gs::CallersFields).
class InPlace final : public Work {
 public:
  InPlace(gs::Stepper& stepper, gs::CallersFields& in_place, const gs::FieldView& fields)
      : stepper_(stepper), in_place_(in_place), fields_(fields) {}
  void advance(int steps) override {
    const gs::FieldsAdvance result = in_place_.advance_fields(fields_, steps);
    if (!result.advanced) throw std::logic_error("the stepper stopped taking the caller's fields");
    transfers().device_to_device += result.bytes_copied;
  }
  void wait() override { stepper_.synchronize(); }

 private:
  gs::Stepper& stepper_;
  gs::CallersFields& in_place_;
  gs::FieldView fields_;
};

// The caller's fields copied into the stepper's own (gs::fields_of()), advanced there, and
// copied back by finish(): for a stepper that works only on its own buffers, or a layout its
// kernels cannot take, and for host arrays (on a GPU stepper: across PCIe, counted). Both copies
// run on the stepper's stream: the first after the work queued on the caller's stream, and the
// caller's stream waits for the last. A stepper that offers no view of its fields (one CPU
// stepper of lesson 01) gets host arrays through load() and fetch() instead.
class CopiedThrough final : public Work {
 public:
  CopiedThrough(gs::Stepper& stepper, const gs::FieldView& caller, const gs::Rates& rates)
      : stepper_(stepper), caller_(caller) {
    const gs::FieldView own = gs::fields_of(stepper_);
    if (!own.available()) {
      if (caller_.device == gs::Device::gpu) {
        throw ArrayError("this implementation offers no view of its fields: pass host arrays");
      }
      gs::State state(caller_.rows, caller_.cols);
      copy(state.u.data(), state.v.data(), state.cols, gs::Device::cpu, caller_, nullptr);
      stepper_.load(state, rates);
      return;
    }
    if (own.device == gs::Device::gpu && caller_.device == gs::Device::gpu) {
      stream_waits_for(own.stream, caller_.stream);
    }
    copy(own.u, own.v, own.pitch, own.device, caller_, own.stream);
  }
  void advance(int steps) override { stepper_.advance(steps); }
  void wait() override { stepper_.synchronize(); }
  // The state back into the caller's fields (also after an interruption: a finished batch).
  void finish() {
    const gs::FieldView own = gs::fields_of(stepper_);
    if (!own.available()) {
      gs::State state;
      stepper_.fetch(state);
      const gs::FieldView fetched{state.u.data(), state.v.data(),  state.cols, state.rows,
                                  state.cols,     gs::Device::cpu, nullptr};
      copy(caller_.u, caller_.v, caller_.pitch, caller_.device, fetched, nullptr);
      return;
    }
    copy(caller_.u, caller_.v, caller_.pitch, caller_.device, own, own.stream);
    if (own.device == gs::Device::gpu && caller_.device == gs::Device::gpu) {
      stream_waits_for(caller_.stream, own.stream);
    }
  }

 private:
  // (u, v) of pitch `pitch` on `device` <- the fields `from`.
  static void copy(float* u, float* v, std::ptrdiff_t pitch, gs::Device device,
                   const gs::FieldView& from, void* stream) {
    copy_rows(u, pitch, device, from.u, from.pitch, from.device, from.rows, from.cols, stream);
    copy_rows(v, pitch, device, from.v, from.pitch, from.device, from.rows, from.cols, stream);
  }

  gs::Stepper& stepper_;
  gs::FieldView caller_;
};

// ---------------------------------------------------------------------------------------------
// 2. The two classes Python sees
// ---------------------------------------------------------------------------------------------

// What Simulation and Stepper share: the chosen implementation's stepper, loaded once (it then
// owns buffers of the grid's size), its rates, and one call at a time.
class Engine {
 public:
  // The grid and rates checked (validate()) and the implementation chosen (choose()) before:
  // a refusal is raised before any object exists.
  Engine(int rows, int cols, const gs::Implementation& chosen, const gs::Rates& rates)
      : rates_(rates), batching_(std::int64_t{rows} * cols) {
    const bool gpu = chosen.device == gs::Device::gpu;
    target_ = {rows, cols, chosen.device, gpu ? current_device() : 0, chosen.name};
    openmp_ = runs_on_openmp(chosen);
    if (openmp_) require_fork_safe_openmp(chosen.name);
    stepper_ = chosen.create();
    load_host(gs::initial_state(rows, cols));
  }
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  virtual ~Engine() = default;

  const Target& target() const { return target_; }
  int rows() const { return target_.rows; }
  int cols() const { return target_.cols; }
  std::string implementation() const { return target_.implementation; }
  std::string device() const { return target_.device == gs::Device::gpu ? "gpu" : "cpu"; }
  py::dict rates() const {
    py::dict r;
    r["feed"] = rates_.feed;
    r["kill"] = rates_.kill;
    r["dt"] = rates_.dt;
    r["du"] = rates_.diffusion_u;
    r["dv"] = rates_.diffusion_v;
    return r;
  }
  void synchronize() {
    Busy busy(*this);
    py::gil_scoped_release released;
    stepper_->synchronize();
  }

 protected:
  // One call at a time: a second Python thread gets an error instead of a race (checked and set
  // while holding the GIL, so that two threads cannot both pass).
  class Busy {
   public:
    explicit Busy(Engine& engine) : engine_(engine) {
      if (engine_.busy_.exchange(true)) {
        throw std::runtime_error("this object is in use by another thread: one call at a time");
      }
      if (engine_.openmp_) {
        try {
          require_fork_safe_openmp(engine_.target_.implementation);
        } catch (...) {
          engine_.busy_ = false;
          throw;
        }
      }
      if (engine_.target_.device == gs::Device::gpu) use_device(engine_.target_.device_id);
    }
    ~Busy() { engine_.busy_ = false; }
    Busy(const Busy&) = delete;
    Busy& operator=(const Busy&) = delete;

   private:
    Engine& engine_;
  };

  // The stepper loads a host state (a GPU stepper uploads it: counted).
  void load_host(const gs::State& state) {
    stepper_->load(state, rates_);
    if (target_.device == gs::Device::gpu) transfers().host_to_device += 2 * field_bytes(target_);
  }

  // Advances the caller's fields `view` by `steps`: in place where the stepper can, else copied
  // through its own fields. With the caller's stream unknown, waits until the work is done.
  void advance_fields(gs::FieldView view, std::int64_t steps, const CallerStream& stream,
                      std::int64_t& done) {
    view.stream = stream.known ? stream.handle : nullptr;
    gs::CallersFields* in_place = gs::callers_fields_of(*stepper_);
    if (view.device == gs::Device::gpu && in_place != nullptr &&
        in_place->advance_fields(view, 0).advanced) {
      InPlace work(*stepper_, *in_place, view);
      advance_released(work, steps, batching_, done);
      if (!stream.known) work.wait();
      return;
    }
    CopiedThrough work(*stepper_, view, rates_);
    try {
      advance_released(work, steps, batching_, done);
    } catch (...) {
      work.finish();
      throw;
    }
    work.finish();
    if (!stream.known) work.wait();
  }

  // gray_scott's check (common/src/program.cpp): a v that is not finite is a diverged run, an
  // error (gs::Diverged, RuntimeError in Python), never a result. @p steps: the steps it took.
  void require_finite_v(const float* v, std::int64_t pitch, std::int64_t steps) const {
    for (int row = 0; row < target_.rows; ++row) {
      const float* line = v + row * pitch;
      for (int col = 0; col < target_.cols; ++col) {
        if (!std::isfinite(line[col])) {
          throw gs::Diverged("the simulation diverged after " + std::to_string(steps) +
                             " steps: v is not finite at cell " +
                             std::to_string(static_cast<std::int64_t>(row) * target_.cols + col) +
                             " (row " + std::to_string(row) + ", column " + std::to_string(col) +
                             "); choose smaller rates or time step");
        }
      }
    }
  }

  // The current state, copied into two new NumPy arrays (one when only_v / only_u).
  py::array_t<float> copy_out(bool v_field) {
    py::array_t<float> out({target_.rows, target_.cols});
    const gs::FieldView view = gs::fields_of(*stepper_);
    if (view.available()) {
      float* from = v_field ? view.v : view.u;
      copy_rows(out.mutable_data(), target_.cols, gs::Device::cpu, from, view.pitch, view.device,
                target_.rows, target_.cols, view.stream);
    } else {
      gs::State state;
      stepper_->fetch(state);
      const std::vector<float>& field = v_field ? state.v : state.u;
      std::copy(field.begin(), field.end(), out.mutable_data());
    }
    return out;
  }

  Target target_;
  gs::Rates rates_;
  std::unique_ptr<gs::Stepper> stepper_;
  Batching batching_;
  bool openmp_ = false;  // runs on OpenMP's threads (runs_on_openmp())
  std::atomic<bool> busy_{false};
};

class Simulation final : public Engine {
 public:
  Simulation(int rows, int cols, const gs::Implementation& chosen, const gs::Rates& rates)
      : Engine(rows, cols, chosen, rates) {}

  void load(const py::object& u, const py::object& v, bool copy) {
    Busy busy(*this);
    if (u.is_none() != v.is_none()) {
      throw ArrayError("load() takes both u and v, or neither (the course's initial condition)");
    }
    if (u.is_none()) {
      load_host(gs::initial_state(target_.rows, target_.cols));
      steps_ = 0;
      return;
    }
    py::object u_array = u;
    py::object v_array = v;
    if (copy) {  // the caller allows a conversion: any array-like NumPy can make float32 of,
      // while a device array stays where it is (NumPy cannot read it; its cells are copied into
      // the stepper's fields device to device below, whatever its pitch)
      const py::module_ numpy = py::module_::import("numpy");
      const auto converted = [&numpy](const py::object& array) -> py::object {
        if (on_a_device(array)) return array;
        return numpy.attr("ascontiguousarray")(array, py::arg("dtype") = "float32");
      };
      u_array = converted(u);
      v_array = converted(v);
    }
    const CallerStream unknown;
    const HeldArray held_u = hold_array(u_array, "u", unknown);
    const HeldArray held_v = hold_array(v_array, "v", unknown);
    const gs::FieldView view = field_view(held_u.info, held_v.info, target_, false);
    if (view.device == gs::Device::cpu) {
      gs::State state(target_.rows, target_.cols);
      copy_rows(state.u.data(), target_.cols, gs::Device::cpu, view.u, view.pitch, gs::Device::cpu,
                target_.rows, target_.cols, nullptr);
      copy_rows(state.v.data(), target_.cols, gs::Device::cpu, view.v, view.pitch, gs::Device::cpu,
                target_.rows, target_.cols, nullptr);
      load_host(state);
    } else {  // device arrays into the stepper's device fields: no byte crosses PCIe
      const gs::FieldView own = gs::fields_of(*stepper_);
      if (!own.available()) throw ArrayError("this implementation offers no view of its fields");
      stream_waits_for(own.stream, nullptr);  // after what the caller queued (legacy stream)
      copy_rows(own.u, own.pitch, own.device, view.u, view.pitch, view.device, target_.rows,
                target_.cols, own.stream);
      copy_rows(own.v, own.pitch, own.device, view.v, view.pitch, view.device, target_.rows,
                target_.cols, own.stream);
      stepper_->synchronize();  // the caller may change its arrays once load() returns
    }
    steps_ = 0;
  }

  // On the CPU the state is checked after every call (the stepper is done, its v in memory); on
  // a GPU, where the call may return before the steps are done, when v is copied out (v,
  // fetch()), so that no call waits or copies for the check.
  void advance(std::int64_t steps) {
    require_steps(steps);
    Busy busy(*this);
    OwnState work(*stepper_);
    advance_released(work, steps, batching_, steps_);
    if (target_.device == gs::Device::cpu && steps > 0) {
      const gs::FieldView view = gs::fields_of(*stepper_);
      if (view.available() && view.device == gs::Device::cpu) {
        require_finite_v(view.v, view.pitch);
      } else {
        std::vector<float> v(static_cast<std::size_t>(target_.rows) * target_.cols);
        stepper_->fetch_v(v.data());
        require_finite_v(v.data(), target_.cols);
      }
    }
  }

  py::array_t<float> field(bool v_field) {
    Busy busy(*this);
    py::array_t<float> out = copy_out(v_field);
    if (v_field && checked_when_copied()) require_finite_v(out.data(), target_.cols);
    return out;
  }
  py::tuple fetch() {
    Busy busy(*this);
    py::array_t<float> v = copy_out(true);
    if (checked_when_copied()) require_finite_v(v.data(), target_.cols);
    return py::make_tuple(copy_out(false), v);
  }
  std::int64_t steps() const { return steps_; }

 private:
  bool checked_when_copied() const { return target_.device == gs::Device::gpu && steps_ > 0; }

  void require_finite_v(const float* v, std::int64_t pitch) const {
    Engine::require_finite_v(v, pitch, steps_);
  }

  std::int64_t steps_ = 0;  // steps advanced since the last load()
};

class CallerStepper final : public Engine {
 public:
  CallerStepper(int rows, int cols, const gs::Implementation& chosen, const gs::Rates& rates)
      : Engine(rows, cols, chosen, rates) {}

  // The caller's u and v, advanced in place; returns them.
  py::tuple advance(const py::object& u, const py::object& v, std::int64_t steps,
                    const py::object& stream) {
    require_steps(steps);
    Busy busy(*this);
    const CallerStream given = caller_stream(stream);
    const HeldArray held_u = hold_array(u, "u", given);
    const HeldArray held_v = hold_array(v, "v", given);
    const gs::FieldView view = field_view(held_u.info, held_v.info, target_, true);
    const CallerStream effective = order_after_producers(given, held_u, held_v);
    std::int64_t done = 0;
    advance_fields(view, steps, effective, done);
    // Host arrays are checked as a Simulation's state is on the CPU: after the call, once the
    // steps are done. Device arrays stay where they are: checking them would copy v back.
    if (view.device == gs::Device::cpu && done > 0) require_finite_v(view.v, view.pitch, done);
    return py::make_tuple(u, v);
  }

  // New arrays holding u and v advanced by `steps`; the caller's are only read. NumPy arrays
  // give NumPy arrays; device arrays give grayscott.DeviceArray (DLPack, CUDA array interface).
  py::tuple advanced(const py::object& u, const py::object& v, std::int64_t steps,
                     const py::object& stream) {
    require_steps(steps);
    Busy busy(*this);
    const CallerStream given = caller_stream(stream);
    const HeldArray held_u = hold_array(u, "u", given);
    const HeldArray held_v = hold_array(v, "v", given);
    const gs::FieldView in = field_view(held_u.info, held_v.info, target_, false);
    const CallerStream effective = order_after_producers(given, held_u, held_v);
    const int rows = target_.rows;
    const int cols = target_.cols;
    std::int64_t done = 0;
    if (in.device == gs::Device::cpu) {
      py::array_t<float> out_u({rows, cols});
      py::array_t<float> out_v({rows, cols});
      gs::FieldView out = in;
      out.u = out_u.mutable_data();
      out.v = out_v.mutable_data();
      out.pitch = cols;
      copy_rows(out.u, cols, gs::Device::cpu, in.u, in.pitch, gs::Device::cpu, rows, cols, nullptr);
      copy_rows(out.v, cols, gs::Device::cpu, in.v, in.pitch, gs::Device::cpu, rows, cols, nullptr);
      advance_fields(out, steps, effective, done);
      if (done > 0) require_finite_v(out.v, out.pitch, done);  // as advance() does
      return py::make_tuple(out_u, out_v);
    }
    DeviceArray out_u(rows, cols);
    DeviceArray out_v(rows, cols);
    void* stream_handle = effective.known ? effective.handle : nullptr;
    copy_rows(out_u.data(), cols, gs::Device::gpu, in.u, in.pitch, gs::Device::gpu, rows, cols,
              stream_handle);
    copy_rows(out_v.data(), cols, gs::Device::gpu, in.v, in.pitch, gs::Device::gpu, rows, cols,
              stream_handle);
    gs::FieldView out = in;
    out.u = out_u.data();
    out.v = out_v.data();
    out.pitch = cols;
    advance_fields(out, steps, effective, done);
    out_u.set_ready(effective);
    out_v.set_ready(effective);
    return py::make_tuple(py::cast(std::move(out_u)), py::cast(std::move(out_v)));
  }

 private:
  // The stream to order the work on: the one given, else the one an array's producer named
  // (CUDA array interface); a stream named by the other array is waited for too.
  static CallerStream order_after_producers(const CallerStream& given, const HeldArray& u,
                                            const HeldArray& v) {
    CallerStream effective = given;
    for (const HeldArray* held : {&u, &v}) {
      if (!held->named_stream.known) continue;
      if (!effective.known) {
        effective = held->named_stream;
      } else {
        stream_waits_for(effective.handle, held->named_stream.handle);
      }
    }
    return effective;
  }
};

}  // namespace
}  // namespace lesson10

PYBIND11_MODULE(GS_MODULE_NAME, module) {
  namespace py = pybind11;
  using namespace lesson10;
  module.doc() =
      "The Gray-Scott School's C++ and CUDA steppers, from Python (lesson 10).\n\n"
      "Simulation owns its state (load, advance, u, v); Stepper advances the caller's arrays:\n"
      "NumPy arrays, or CUDA arrays in place (CuPy, PyTorch: DLPack or __cuda_array_interface__).\n"
      "Errors: ValueError for a bad parameter or array (TypeError when it is no array at all),\n"
      "RuntimeError for a GPU implementation without a GPU or a CUDA error.";
  // A child forked after OpenMP started refuses the OpenMP implementations instead of hanging.
  install_fork_handler();
  const gs::Rates defaults;
  const gs::Params run;

  py::class_<Simulation>(module, "Simulation",
                         "A simulation that owns its state: load() once, advance() many steps "
                         "per call, read u and v (NumPy copies) when wanted.")
      .def(py::init(&make<Simulation>), py::arg("rows") = run.rows, py::arg("cols") = run.cols,
           py::arg("implementation") = py::none(), py::kw_only(), py::arg("feed") = defaults.feed,
           py::arg("kill") = defaults.kill, py::arg("dt") = defaults.dt,
           py::arg("du") = defaults.diffusion_u, py::arg("dv") = defaults.diffusion_v,
           "Makes the stepper of `implementation` (default: the fastest this machine runs, as "
           "gray_scott chooses) and loads the course's initial condition.")
      .def("load", &Simulation::load, py::arg("u") = py::none(), py::arg("v") = py::none(),
           py::kw_only(), py::arg("copy") = false,
           "Loads u and v (float32 (rows, cols) arrays: NumPy, or device arrays for a GPU "
           "implementation), or the initial condition without arguments. copy=True converts "
           "any array-like first.")
      .def("advance", &Simulation::advance, py::arg("steps"),
           "Advances the state by `steps` steps (the GIL released; Ctrl-C stops it between "
           "batches). On a GPU it may return before the steps are done.")
      .def_property_readonly(
          "u", [](Simulation& s) { return s.field(false); }, "u as a new NumPy array")
      .def_property_readonly(
          "v", [](Simulation& s) { return s.field(true); }, "v as a new NumPy array")
      .def("fetch", &Simulation::fetch, "(u, v) as new NumPy arrays")
      .def("synchronize", &Simulation::synchronize, "Waits until every queued step is done.")
      .def_property_readonly("steps", &Simulation::steps, "steps advanced since the last load()")
      .def_property_readonly("rows", &Simulation::rows)
      .def_property_readonly("cols", &Simulation::cols)
      .def_property_readonly("implementation", &Simulation::implementation)
      .def_property_readonly("device", &Simulation::device, "'cpu' or 'gpu'")
      .def_property_readonly("rates", &Simulation::rates)
      .def("__repr__", [](const Simulation& s) {
        return "grayscott.Simulation(" + std::to_string(s.rows()) + ", " +
               std::to_string(s.cols()) + ", implementation='" + s.implementation() + "')";
      });

  py::class_<CallerStepper>(module, "Stepper",
                            "Advances the caller's arrays: NumPy arrays, or CUDA arrays in place "
                            "(CuPy, PyTorch, Numba; DLPack or __cuda_array_interface__).")
      .def(py::init(&make<CallerStepper>), py::arg("rows") = run.rows, py::arg("cols") = run.cols,
           py::arg("implementation") = py::none(), py::kw_only(), py::arg("feed") = defaults.feed,
           py::arg("kill") = defaults.kill, py::arg("dt") = defaults.dt,
           py::arg("du") = defaults.diffusion_u, py::arg("dv") = defaults.diffusion_v)
      .def("advance", &CallerStepper::advance, py::arg("u"), py::arg("v"), py::arg("steps"),
           py::kw_only(), py::arg("stream") = py::none(),
           "Advances u and v in place by `steps` steps and returns them. CUDA arrays are "
           "worked on where they lie, ordered on `stream` (an int, a CuPy or PyTorch stream); "
           "without one the call waits until the work is done.")
      .def("advanced", &CallerStepper::advanced, py::arg("u"), py::arg("v"), py::arg("steps"),
           py::kw_only(), py::arg("stream") = py::none(),
           "New arrays holding u and v advanced by `steps` steps (u and v are only read: JAX "
           "arrays welcome). NumPy in, NumPy out; device arrays in, grayscott.DeviceArray out.")
      .def("synchronize", &CallerStepper::synchronize)
      .def_property_readonly("rows", &CallerStepper::rows)
      .def_property_readonly("cols", &CallerStepper::cols)
      .def_property_readonly("implementation", &CallerStepper::implementation)
      .def_property_readonly("device", &CallerStepper::device)
      .def_property_readonly("rates", &CallerStepper::rates)
      .def("__repr__", [](const CallerStepper& s) {
        return "grayscott.Stepper(" + std::to_string(s.rows()) + ", " + std::to_string(s.cols()) +
               ", implementation='" + s.implementation() + "')";
      });

  define_functions(module);  // program_api.hpp: DeviceArray and the free functions
}
