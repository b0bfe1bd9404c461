// Lesson 10's arrays (arrays.hpp says what is here): reading NumPy and CUDA array interface
// arrays without a copy (DLPack arrays: the learner's from_dlpack()), the counted copies, streams,
// and the module's device arrays (their export to Python is the program's).
#include "arrays.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>

#if GS_HAVE_CUDA
#include <cuda_runtime.h>

#include "gs/cuda_check.hpp"
#endif
#if GS_HAVE_DLPACK
// The learner's file: from_dlpack(), an array read through DLPack, written against
// dlpack_api.hpp. Angle brackets: the build picks lessons/10_python/from_dlpack.hpp (the stub) or
// the solution's.
#include <from_dlpack.hpp>
#endif

namespace lesson10 {

// The dtype name of a kind and size, as NumPy writes it ("float32", "int64", "bool").
std::string numpy_name(char kind, int bits) {
  switch (kind) {
    case 'f':
      return "float" + std::to_string(bits);
    case 'i':
      return "int" + std::to_string(bits);
    case 'u':
      return "uint" + std::to_string(bits);
    case 'c':
      return "complex" + std::to_string(bits);
    case 'b':
      return "bool";
    default:
      return "an unknown type of " + std::to_string(bits) + " bits";
  }
}

// Row-major strides, in elements, of a compact array of this shape.
std::vector<std::int64_t> compact_strides(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> strides(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

// A JAX array is immutable: JAX may share its buffer between arrays and never expects it to
// change, so the module must not write into it even though DLPack hands over a plain pointer.
void mark_if_immutable(ArrayInfo& info, py::handle object) {
  const std::string module = py::str(py::type::of(object).attr("__module__"));
  if (module.rfind("jax", 0) == 0) {
    info.read_only = true;
    info.read_only_reason = "a JAX array: JAX arrays are immutable";
  }
}

namespace {

// Byte strides turned into element strides; whole_strides false when one is not a multiple.
void set_strides_from_bytes(ArrayInfo& info, const std::vector<std::int64_t>& bytes) {
  const std::int64_t size = std::max(1, info.bits / 8);
  info.strides.clear();
  for (std::int64_t stride : bytes) {
    if (stride % size != 0) info.whole_strides = false;
    info.strides.push_back(stride / size);
  }
}

ArrayInfo read_numpy(const py::array& array) {
  ArrayInfo info;
  info.protocol = "NumPy";
  info.data = const_cast<void*>(array.data());
  const py::dtype dtype = array.dtype();
  info.bits = static_cast<int>(dtype.itemsize()) * 8;
  info.kind = dtype.kind();
  info.type_name = py::str(py::handle(dtype));
  // Only the machine's own byte order is a number the stepper can read: NumPy writes it '='
  // ('|' where it does not apply), the other one '>' or '<'.
  const char order = dtype.byteorder();
  const std::uint16_t probe = 1;
  const bool little_endian = *reinterpret_cast<const unsigned char*>(&probe) == 1;
  if (!(order == '=' || order == '|' || (order == '<') == little_endian)) {
    info.kind = '?';
    info.type_name = py::str(dtype.attr("str")).cast<std::string>();
    info.type_name += " (the other byte order)";
  }
  std::vector<std::int64_t> byte_strides;
  for (py::ssize_t i = 0; i < array.ndim(); ++i) {
    info.shape.push_back(array.shape(i));
    byte_strides.push_back(array.strides(i));
  }
  set_strides_from_bytes(info, byte_strides);
  if (!array.writeable()) {
    info.read_only = true;
    info.read_only_reason = "a read-only NumPy array";
  }
  return info;
}

// "<f4" -> kind 'f', 32 bits; another byte order marks the kind unknown.
void parse_typestr(ArrayInfo& info, const std::string& typestr) {
  info.type_name = typestr;
  if (typestr.size() < 3) return;
  const char order = typestr[0];
  const bool native = order == '<' || order == '|' || order == '=';
  const int bytes = std::atoi(typestr.c_str() + 2);
  info.bits = bytes * 8;
  info.kind = native ? typestr[1] : '?';
  if (native) info.type_name = numpy_name(info.kind, info.bits);
}

// An integer of a __cuda_array_interface__ (a size, a stride, a pointer), read as T; anything
// else, or an integer T cannot hold, is refused with the module's message, never pybind11's
// "Unable to cast Python instance to C++ type".
template <typename T>
T interface_integer(py::handle value, const std::string& what) {
  if (!py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value)) {
    throw ArrayError(what + " must be an integer (got " + py::repr(value).cast<std::string>() +
                     ")");
  }
  try {
    return value.cast<T>();
  } catch (const py::cast_error&) {
    throw ArrayError(what + " is out of range (got " + py::repr(value).cast<std::string>() + ")");
  }
}

// A tuple of integers of a __cuda_array_interface__ (its shape, its strides).
std::vector<std::int64_t> interface_integers(py::handle value, const std::string& what) {
  if (!py::isinstance<py::tuple>(value)) {
    throw ArrayError(what + " must be a tuple of integers (got " +
                     py::repr(value).cast<std::string>() + ")");
  }
  std::vector<std::int64_t> integers;
  for (py::handle item : value.cast<py::tuple>()) {
    integers.push_back(
        interface_integer<std::int64_t>(item, what + "[" + std::to_string(integers.size()) + "]"));
  }
  return integers;
}

HeldArray read_cuda_array_interface(py::handle object, const std::string& name) {
  HeldArray held;
  ArrayInfo& info = held.info;
  info.protocol = "__cuda_array_interface__";
  const std::string where = name + "'s __cuda_array_interface__";
  const py::object described = object.attr("__cuda_array_interface__");
  if (!py::isinstance<py::dict>(described)) throw ArrayError(where + " must be a dict");
  const py::dict interface = described.cast<py::dict>();
  for (const char* key : {"shape", "typestr", "data"}) {
    if (!interface.contains(key)) throw ArrayError(where + " has no '" + key + "'");
  }
  held.keep_alive = py::reinterpret_borrow<py::object>(object);
  info.shape = interface_integers(interface["shape"], where + "['shape']");
  for (const std::int64_t extent : info.shape) {
    if (extent < 0) throw ArrayError(where + "['shape'] has a negative size");
  }
  if (!py::isinstance<py::str>(interface["typestr"])) {
    throw ArrayError(where + "['typestr'] must be a string such as '<f4'");
  }
  parse_typestr(info, interface["typestr"].cast<std::string>());
  const py::object data = interface["data"];
  if (!py::isinstance<py::tuple>(data) || py::len(data) != 2) {
    throw ArrayError(where + "['data'] must be a tuple (pointer, read_only)");
  }
  info.data = reinterpret_cast<void*>(
      interface_integer<std::uintptr_t>(data.cast<py::tuple>()[0], where + "['data'][0]"));
  if (py::bool_(data.cast<py::tuple>()[1]).cast<bool>()) {
    info.read_only = true;
    info.read_only_reason = "its __cuda_array_interface__ says read-only";
  }
  if (!interface.contains("strides") || interface["strides"].is_none()) {
    info.strides = compact_strides(info.shape);
  } else {
    const std::vector<std::int64_t> bytes =
        interface_integers(interface["strides"], where + "['strides']");
    if (bytes.size() != info.shape.size()) {
      throw ArrayError(where + "['strides'] has " + std::to_string(bytes.size()) +
                       " value(s) for a shape of " + std::to_string(info.shape.size()) +
                       " dimension(s)");
    }
    set_strides_from_bytes(info, bytes);
  }
  if (interface.contains("mask") && !interface["mask"].is_none()) {
    info.unsupported_place = "a masked array (its __cuda_array_interface__ has a mask)";
  }
  if (interface.contains("stream") && !interface["stream"].is_none()) {
    held.named_stream = caller_stream(interface["stream"]);
  }
  info.device = gs::Device::gpu;
#if GS_HAVE_CUDA
  // The interface does not say which GPU: CUDA knows it from the pointer.
  cudaPointerAttributes attributes{};
  if (info.data != nullptr && cudaPointerGetAttributes(&attributes, info.data) == cudaSuccess) {
    if (attributes.type == cudaMemoryTypeDevice) {
      info.device_id = attributes.device;
    } else {
      info.unsupported_place = attributes.type == cudaMemoryTypeManaged
                                   ? "CUDA managed memory"
                                   : "memory that CUDA does not know as device memory";
    }
  }
  cudaGetLastError();  // a failed query leaves no error behind for the next call
#endif
  mark_if_immutable(info, object);
  return held;
}

}  // namespace

std::string place_of(const ArrayInfo& array) {
  if (!array.unsupported_place.empty()) return array.unsupported_place;
  if (array.device == gs::Device::cpu) return "the host";
  return "cuda:" + std::to_string(array.device_id);
}

CallerStream caller_stream(py::handle stream) {
  CallerStream result;
  if (stream.is_none()) return result;
  py::object handle = py::reinterpret_borrow<py::object>(stream);
  if (py::hasattr(stream, "cuda_stream")) {  // torch.cuda.Stream
    handle = stream.attr("cuda_stream");
  } else if (py::hasattr(stream, "ptr")) {  // cupy.cuda.Stream
    handle = stream.attr("ptr");
  }
  if (!py::isinstance<py::int_>(handle)) {
    throw py::type_error(
        "stream must be None, an int (a cudaStream_t; 1: the legacy default "
        "stream, 2: the per-thread one), a CuPy or a PyTorch stream");
  }
  std::intptr_t value = 0;
  try {
    value = handle.cast<std::intptr_t>();
  } catch (const py::cast_error&) {
    throw ArrayError("stream is out of range (got " + py::repr(handle).cast<std::string>() +
                     "): a cudaStream_t is a pointer");
  }
  if (value < 0)
    throw ArrayError("stream must not be negative (got " + std::to_string(value) + ")");
  result.known = true;
  // 0 and 1 both mean the legacy default stream: CUDA's runtime reads 0 that way, DLPack and the
  // CUDA array interface write it 1 (cudaStreamLegacy); 2 is cudaStreamPerThread.
  result.handle = value == 0 ? nullptr : reinterpret_cast<void*>(value);
  return result;
}

HeldArray hold_array(py::handle object, const char* name, const CallerStream& stream) {
  if (py::isinstance<py::array>(object)) {
    HeldArray held;
    held.info = read_numpy(py::reinterpret_borrow<py::array>(object));
    held.keep_alive = py::reinterpret_borrow<py::object>(object);
    return held;
  }
#if GS_HAVE_DLPACK
  if (py::hasattr(object, "__dlpack__") && py::hasattr(object, "__dlpack_device__")) {
    HeldArray held = from_dlpack(object, name, stream);
    // What array_problem() and the view read must agree with itself: one stride per dimension.
    if (held.info.strides.size() != held.info.shape.size()) {
      throw ArrayError(std::string(name) + ": from_dlpack() gave " +
                       std::to_string(held.info.strides.size()) + " stride(s) for " +
                       std::to_string(held.info.shape.size()) +
                       " dimension(s); it must give one per dimension");
    }
    return held;
  }
#endif
  if (py::hasattr(object, "__cuda_array_interface__")) {
    return read_cuda_array_interface(object, name);
  }
  const std::string type = py::str(py::type::of(object));
  std::string hint;
  if (py::hasattr(object, "__array__") || py::hasattr(object, "__array_interface__") ||
      py::isinstance<py::sequence>(object)) {
    hint =
        " (convert it with numpy.asarray(..., dtype=numpy.float32), or pass copy=True where "
        "the call takes it)";
  }
  throw py::type_error(std::string(name) +
                       " must be an array: a NumPy array, or a GPU array "
#if GS_HAVE_DLPACK
                       "with __dlpack__ or __cuda_array_interface__"
#else
                       "with __cuda_array_interface__ (this module was built without dlpack.h)"
#endif
                       " (CuPy, PyTorch, JAX, Numba); got " +
                       type + hint);
}

Transfers& transfers() {
  static Transfers counters;
  return counters;
}

void copy_rows(float* destination, std::ptrdiff_t destination_pitch, gs::Device destination_device,
               const float* source, std::ptrdiff_t source_pitch, gs::Device source_device, int rows,
               int cols, void* stream) {
  const std::int64_t bytes = std::int64_t{rows} * cols * static_cast<std::int64_t>(sizeof(float));
  Transfers& counted = transfers();
  ++counted.calls;
  if (destination_device == gs::Device::cpu && source_device == gs::Device::cpu) {
    for (int row = 0; row < rows; ++row) {
      std::memcpy(destination + row * destination_pitch, source + row * source_pitch,
                  static_cast<std::size_t>(cols) * sizeof(float));
    }
    counted.host_to_host += bytes;
    return;
  }
#if GS_HAVE_CUDA
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  cudaMemcpyKind kind = cudaMemcpyDeviceToDevice;
  if (source_device == gs::Device::cpu) {
    kind = cudaMemcpyHostToDevice;
    counted.host_to_device += bytes;
  } else if (destination_device == gs::Device::cpu) {
    kind = cudaMemcpyDeviceToHost;
    counted.device_to_host += bytes;
  } else {
    counted.device_to_device += bytes;
  }
  GS_CUDA_CHECK(cudaMemcpy2DAsync(destination,
                                  static_cast<std::size_t>(destination_pitch) * sizeof(float),
                                  source, static_cast<std::size_t>(source_pitch) * sizeof(float),
                                  static_cast<std::size_t>(cols) * sizeof(float),
                                  static_cast<std::size_t>(rows), kind, cuda_stream));
  // Host memory may be reused or freed as soon as the caller gets it back.
  if (kind != cudaMemcpyDeviceToDevice) GS_CUDA_CHECK(cudaStreamSynchronize(cuda_stream));
#else
  (void)stream;
  throw std::runtime_error("this module was built without CUDA: no device memory");
#endif
}

void stream_waits_for(void* waiting, void* queued) {
#if GS_HAVE_CUDA
  if (waiting == queued) return;
  cudaEvent_t event = nullptr;
  GS_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  cudaError_t status = cudaEventRecord(event, static_cast<cudaStream_t>(queued));
  if (status == cudaSuccess) {
    status = cudaStreamWaitEvent(static_cast<cudaStream_t>(waiting), event, 0);
  }
  cudaEventDestroy(event);  // released once the wait is resolved, not before
  GS_CUDA_CHECK(status);
#else
  (void)waiting, (void)queued;
#endif
}

int current_device() {
#if GS_HAVE_CUDA
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return device;
#else
  return 0;
#endif
}

void use_device(int device) {
#if GS_HAVE_CUDA
  GS_CUDA_CHECK(cudaSetDevice(device));
#else
  (void)device;
#endif
}

// ---------------------------------------------------------------------------------------------
// The module's own device arrays
// ---------------------------------------------------------------------------------------------

struct DeviceArray::Buffer {
  float* data = nullptr;
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() {
#if GS_HAVE_CUDA
    if (data != nullptr) cudaFree(data);
#endif
  }
};

DeviceArray::DeviceArray(int rows, int cols)
    : buffer_(std::make_shared<Buffer>()), rows_(rows), cols_(cols), device_(current_device()) {
#if GS_HAVE_CUDA
  GS_CUDA_CHECK(
      cudaMalloc(reinterpret_cast<void**>(&buffer_->data),
                 static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * sizeof(float)));
#else
  throw std::runtime_error("this module was built without CUDA: no device arrays");
#endif
}

float* DeviceArray::data() const {
  return buffer_->data;
}

std::shared_ptr<void> DeviceArray::memory() const {
  return std::shared_ptr<void>(buffer_, buffer_->data);
}

}  // namespace lesson10
