// Lesson 10's module: what Python sees besides Simulation and Stepper (program_api.hpp).
#include "program_api.hpp"

#include <pybind11/numpy.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include "arrays.hpp"
#include "gs/gpu.hpp"
#include "gs/params.hpp"
#include "gs/program.hpp"
#include "gs/state.hpp"

namespace lesson10 {
namespace {

py::list list_implementations() {
  py::list list;
  for (const gs::Implementation& impl : registry()) {
    py::dict entry;
    entry["name"] = impl.name;
    entry["lesson"] = impl.lesson;
    entry["summary"] = impl.summary;
    entry["device"] = impl.device == gs::Device::gpu ? "gpu" : "cpu";
    entry["generic"] = impl.generic;
    entry["usable"] = gs::usable(impl);
    list.append(entry);
  }
  return list;
}

py::tuple as_numpy(const gs::State& state) {
  py::array_t<float> u({state.rows, state.cols});
  py::array_t<float> v({state.rows, state.cols});
  std::copy(state.u.begin(), state.u.end(), u.mutable_data());
  std::copy(state.v.begin(), state.v.end(), v.mutable_data());
  return py::make_tuple(u, v);
}

}  // namespace

void define_functions(py::module_& module) {
  const gs::Params run;

  py::class_<DeviceArray>(module, "DeviceArray",
                          "A float32 (rows, cols) array in device memory that the module made; "
                          "hand it to CuPy, PyTorch or JAX with their from_dlpack (or "
                          "cupy.asarray), or download it with numpy().")
      .def_property_readonly(
          "shape", [](const DeviceArray& a) { return py::make_tuple(a.rows(), a.cols()); })
      .def_property_readonly("dtype", [](const DeviceArray&) { return py::dtype::of<float>(); })
      .def_property_readonly("device", &DeviceArray::device, "the GPU's number")
      .def_property_readonly("__cuda_array_interface__", &DeviceArray::cuda_array_interface)
      .def(
          "__dlpack__",
          [](const DeviceArray& a, const py::object& stream, const py::object&, const py::object&,
             const py::object&) { return a.dlpack(stream); },
          py::kw_only(), py::arg("stream") = py::none(), py::arg("max_version") = py::none(),
          py::arg("dl_device") = py::none(), py::arg("copy") = py::none())
      .def("__dlpack_device__", &DeviceArray::dlpack_device)
      .def("numpy", &DeviceArray::to_numpy, "a host copy (a NumPy array)")
      .def("__repr__", [](const DeviceArray& a) {
        return "grayscott.DeviceArray(shape=(" + std::to_string(a.rows()) + ", " +
               std::to_string(a.cols()) +
               "), dtype=float32, device=cuda:" + std::to_string(a.device()) + ")";
      });

  module.def(
      "to_device",
      [](const py::array_t<float, py::array::c_style | py::array::forcecast>& host) {
        if (host.ndim() != 2 || host.shape(0) < 1 || host.shape(1) < 1 || host.shape(0) > INT_MAX ||
            host.shape(1) > INT_MAX) {
          throw ArrayError("to_device() takes a non-empty 2-dimensional array");
        }
        const int rows = static_cast<int>(host.shape(0));
        const int cols = static_cast<int>(host.shape(1));
        return DeviceArray::from_host(host.data(), cols, rows, cols);
      },
      py::arg("array"), "A DeviceArray copy of a host array (converted to float32 C order first).");
  module.def("list_implementations", &list_implementations,
             "Every implementation of the build, fastest first, as `gray_scott --list` shows "
             "them: name, lesson, summary, device, generic, usable.");
  module.def(
      "defaults",
      [run]() {
        py::dict d;
        d["rows"] = run.rows;
        d["cols"] = run.cols;
        d["frames"] = run.frames;
        d["steps_per_frame"] = run.steps_per_frame;
        d["feed"] = run.rates.feed;
        d["kill"] = run.rates.kill;
        d["dt"] = run.rates.dt;
        d["du"] = run.rates.diffusion_u;
        d["dv"] = run.rates.diffusion_v;
        return d;
      },
      "The course's defaults (common/include/gs/params.hpp).");
  module.def(
      "initial_state",
      [](int rows, int cols) {
        validate(rows, cols);
        return as_numpy(gs::initial_state(rows, cols));
      },
      py::arg("rows"), py::arg("cols"), "(u, v): the course's initial condition");
  module.def(
      "random_state",
      [](int rows, int cols, std::uint64_t seed) {
        validate(rows, cols);
        return as_numpy(gs::random_state(rows, cols, seed));
      },
      py::arg("rows"), py::arg("cols"), py::arg("seed"),
      "(u, v) drawn from [0, 1) by the tests' seeded generator (gs::random_state)");
  module.def("gpu_status", []() {
    const gs::GpuStatus& status = gs::gpu_status();
    py::dict d;
    d["available"] = status.available;
    d["device_count"] = status.device_count;
    d["name"] = status.name;
    d["reason"] = status.reason;
    return d;
  });
  module.def(
      "transfer_counters",
      []() {
        const Transfers& t = transfers();
        py::dict d;
        d["host_to_device"] = t.host_to_device.load();
        d["device_to_host"] = t.device_to_host.load();
        d["device_to_device"] = t.device_to_device.load();
        d["host_to_host"] = t.host_to_host.load();
        d["copies"] = t.calls.load();
        return d;
      },
      "Bytes the module copied, by direction, since loading or the last reset.");
  module.def("reset_transfer_counters", []() {
    Transfers& t = transfers();
    t.host_to_device = 0;
    t.device_to_host = 0;
    t.device_to_device = 0;
    t.host_to_host = 0;
    t.calls = 0;
  });
  py::dict build;
  build["variant"] = GS_MODULE_VARIANT;
  build["cuda"] = GS_HAVE_CUDA != 0;
  build["dlpack"] = dlpack_version();
  // The lesson builds whose solutions' steppers the registry holds besides the reference, in its
  // order ("06", "02", "01"; "03_cpu" for a CPU port): every lesson's in the solution's module,
  // those lesson 10 USES in the exercise's (cmake/GsPythonLesson.cmake).
  py::list lessons;
  const std::string listed = GS_MODULE_LESSONS;
  for (std::size_t begin = 0; begin < listed.size();) {
    const std::size_t end = std::min(listed.find(',', begin), listed.size());
    lessons.append(listed.substr(begin, end - begin));
    begin = end + 1;
  }
  build["lessons"] = py::tuple(lessons);
  module.attr("build") = build;
}

}  // namespace lesson10
