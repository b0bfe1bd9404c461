// Lesson 10's module: what Python sees besides Simulation and Stepper (program_api.hpp), the
// module's device arrays as Python sees them (grayscott.DeviceArray: their export through DLPack
// and __cuda_array_interface__, numpy(), to_device()) included.
#include "program_api.hpp"

#include <pybind11/numpy.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <string>

#include "arrays.hpp"
#include "gs/gpu.hpp"
#include "gs/params.hpp"
#include "gs/program.hpp"
#include "gs/state.hpp"

#if GS_HAVE_CUDA
#include <cuda_runtime.h>

#include "gs/cuda_check.hpp"
#endif
#if GS_HAVE_DLPACK
#include <dlpack/dlpack.h>
#endif

namespace lesson10 {
namespace {

// ---------------------------------------------------------------------------------------------
// The module's device arrays, as Python sees them: they leave through DLPack (`__dlpack__`,
// `__dlpack_device__`: jax.dlpack.from_dlpack, torch.from_dlpack, cupy.from_dlpack) and
// `__cuda_array_interface__` (cupy.asarray, numba.cuda.as_cuda_array)
// ---------------------------------------------------------------------------------------------

// A device copy of a host float32 rows x cols array (counted host to device).
DeviceArray device_copy(const float* host, std::ptrdiff_t pitch, int rows, int cols) {
  DeviceArray array(rows, cols);
  copy_rows(array.data(), cols, gs::Device::gpu, host, pitch, gs::Device::cpu, rows, cols, nullptr);
  return array;
}

py::dict cuda_array_interface(const DeviceArray& array) {
  py::dict interface;
  interface["shape"] = py::make_tuple(array.rows(), array.cols());
  interface["typestr"] = "<f4";
  interface["data"] = py::make_tuple(reinterpret_cast<std::uintptr_t>(array.data()), false);
  interface["strides"] = py::none();
  interface["version"] = 3;
  // The stream its contents are ordered on, for the consumer to wait on; None: complete.
  if (array.ready().known) {
    const auto handle = reinterpret_cast<std::uintptr_t>(array.ready().handle);
    interface["stream"] = handle == 0 ? 1 : handle;
  } else {
    interface["stream"] = py::none();
  }
  return interface;
}

py::tuple dlpack_device(const DeviceArray& array) {
  return py::make_tuple(2, array.device());  // kDLCUDA
}

#if GS_HAVE_DLPACK
// What a DLPack capsule of a DeviceArray owns: the tensor description and a share of the memory.
struct ExportedTensor {
  DLManagedTensor managed{};
  std::shared_ptr<void> memory;
  std::int64_t shape[2] = {0, 0};
};

void delete_exported(DLManagedTensor* managed) {
  delete static_cast<ExportedTensor*>(managed->manager_ctx);
}

// The capsule's destructor: a consumer that took the tensor renamed the capsule "used_dltensor"
// and calls the deleter itself; an unconsumed capsule frees it here.
void capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "dltensor")) {
    auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
    if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
  }
}
#endif

py::capsule dlpack(const DeviceArray& array, py::handle stream) {
#if GS_HAVE_DLPACK
  // The consumer's stream (None: the legacy default stream; -1: no synchronisation) waits for
  // the work that fills this array.
  const CallerStream& ready = array.ready();
  if (ready.known && !(py::isinstance<py::int_>(stream) && stream.cast<std::intptr_t>() == -1)) {
    const CallerStream consumer =
        stream.is_none() ? CallerStream{true, nullptr} : caller_stream(stream);
    stream_waits_for(consumer.handle, ready.handle);
  }
  auto* exported = new ExportedTensor;
  exported->memory = array.memory();
  exported->shape[0] = array.rows();
  exported->shape[1] = array.cols();
  DLTensor& tensor = exported->managed.dl_tensor;
  tensor.data = array.data();
  tensor.device = {kDLCUDA, array.device()};
  tensor.ndim = 2;
  tensor.dtype = {kDLFloat, 32, 1};
  tensor.shape = exported->shape;
  tensor.strides = nullptr;  // compact, row-major
  tensor.byte_offset = 0;
  exported->managed.manager_ctx = exported;
  exported->managed.deleter = delete_exported;
  PyObject* capsule = PyCapsule_New(&exported->managed, "dltensor", capsule_destructor);
  if (capsule == nullptr) {
    delete exported;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(capsule);
#else
  (void)array, (void)stream;
  throw py::type_error("this module was built without dlpack.h: use __cuda_array_interface__");
#endif
}

// A host copy (counted device to host), once the work that fills the array is done.
py::array_t<float> to_numpy(const DeviceArray& array) {
  py::array_t<float> host({array.rows(), array.cols()});
#if GS_HAVE_CUDA
  if (array.ready().known) {
    GS_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(array.ready().handle)));
  }
#endif
  copy_rows(host.mutable_data(), array.cols(), gs::Device::cpu, array.data(), array.cols(),
            gs::Device::gpu, array.rows(), array.cols(), nullptr);
  return host;
}

// The dlpack.h version the module was built with ("" without DLPack).
std::string dlpack_version() {
#if GS_HAVE_DLPACK
#ifdef DLPACK_MAJOR_VERSION
  return std::to_string(DLPACK_MAJOR_VERSION) + "." + std::to_string(DLPACK_MINOR_VERSION);
#else
  return "0." + std::to_string(DLPACK_VERSION / 10);
#endif
#else
  return "";
#endif
}

// ---------------------------------------------------------------------------------------------
// The rest of what Python sees
// ---------------------------------------------------------------------------------------------

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
      .def_property_readonly("__cuda_array_interface__", &cuda_array_interface)
      .def(
          "__dlpack__",
          [](const DeviceArray& a, const py::object& stream, const py::object&, const py::object&,
             const py::object&) { return dlpack(a, stream); },
          py::kw_only(), py::arg("stream") = py::none(), py::arg("max_version") = py::none(),
          py::arg("dl_device") = py::none(), py::arg("copy") = py::none())
      .def("__dlpack_device__", &dlpack_device)
      .def("numpy", &to_numpy, "a host copy (a NumPy array)")
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
        return device_copy(host.data(), cols, rows, cols);
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
