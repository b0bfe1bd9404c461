// Lesson 10's arrays: what the module knows of an array Python hands it, whichever way it came
// (NumPy's buffer, DLPack, __cuda_array_interface__); the copies the module makes (every one of
// them counted, so that a test can show that advancing a CuPy array moves no byte across PCIe);
// and the module's own device arrays (Python's side of them, their export through DLPack and
// __cuda_array_interface__, is the program's: program_api.hpp, define_functions()).
// Read by module.cpp, whose learner's file (binding.hpp) checks an ArrayInfo and turns two of
// them into the FieldView a stepper advances.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "gs/stepper.hpp"

namespace lesson10 {

namespace py = pybind11;

/// @brief A refused array or call (wrong dtype, shape, strides, device; read-only): Python sees a
///        ValueError with the message.
class ArrayError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// @brief What the module knows of an array, whichever protocol it came through.
struct ArrayInfo {
  std::string protocol;   ///< "NumPy", "DLPack" or "__cuda_array_interface__"
  void* data = nullptr;   ///< Its first element.
  char kind = '?';        ///< 'f' float, 'i' signed, 'u' unsigned, 'c' complex, 'b' bool, '?' other
  int bits = 0;           ///< Bits of one element (of one lane).
  int lanes = 1;          ///< Values per element (DLPack's vector types; 1 everywhere else).
  std::string type_name;  ///< For messages: "float64", "int32", ">f4" ...
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;  ///< Per dimension, in elements (not bytes).
  bool whole_strides = true;          ///< false: a stride that is not a whole number of elements
  bool read_only = false;
  std::string read_only_reason;  ///< Why, for the message ("a JAX array: immutable").
  gs::Device device = gs::Device::cpu;
  int device_id = 0;              ///< The GPU's number when device is gpu.
  std::string unsupported_place;  ///< Non-empty when the memory is neither host nor CUDA device
                                  ///< memory (another accelerator, managed memory): what it is.
};

/// @brief "cuda:0", "the CPU": where an array lives, for messages.
std::string place_of(const ArrayInfo& array);

/// @brief The caller's CUDA stream: given (`stream=`), named by an array (the CUDA array
///        interface's `stream` key), or unknown (then the module waits for its work before it
///        returns).
struct CallerStream {
  bool known = false;
  void* handle = nullptr;  ///< A cudaStream_t; nullptr: the legacy default stream.
};

/// @brief `stream=` as Python gives it: None, an int (DLPack's convention: 1 the legacy default
///        stream, 2 the per-thread one, else a cudaStream_t; 0 the default stream), a CuPy stream
///        (.ptr) or a PyTorch stream (.cuda_stream).
CallerStream caller_stream(py::handle stream);

/// @brief An array read without a copy: its description, what keeps its memory alive while the
///        module uses it, and the stream its producer named (CUDA array interface only).
struct HeldArray {
  ArrayInfo info;
  py::object keep_alive;
  CallerStream named_stream;
};

/// @brief Reads @p object (named @p name in messages): a NumPy array through its buffer; else an
///        object with `__dlpack__` (CuPy, PyTorch, JAX, NumPy ...; asked for the data ordered on
///        @p stream, or on the legacy default stream when unknown); else one with
///        `__cuda_array_interface__` (CuPy, Numba, PyTorch). Throws py::type_error for anything
///        else. Checks nothing about dtype, shape or device: that is binding.hpp's job.
HeldArray hold_array(py::handle object, const char* name, const CallerStream& stream);

/// @brief Bytes the module copied, by direction, since the module was loaded or the last reset:
///        grayscott.transfer_counters(). Every copy of the module goes through copy_rows().
struct Transfers {
  std::atomic<std::int64_t> host_to_device{0};
  std::atomic<std::int64_t> device_to_host{0};
  std::atomic<std::int64_t> device_to_device{0};
  std::atomic<std::int64_t> host_to_host{0};
  std::atomic<std::int64_t> calls{0};  ///< copy_rows() calls (each copies one field)
};
Transfers& transfers();

/// @brief Copies a rows x cols field between two pitched layouts (pitches in floats), on the host
///        or the device, and counts the bytes. Device copies are queued on @p stream (a
///        cudaStream_t); a copy that touches host memory has finished when this returns.
void copy_rows(float* destination, std::ptrdiff_t destination_pitch, gs::Device destination_device,
               const float* source, std::ptrdiff_t source_pitch, gs::Device source_device, int rows,
               int cols, void* stream);

/// @brief Makes @p waiting wait for the work queued on @p queued so far, without the host
///        waiting (an event; nothing when they are the same stream).
void stream_waits_for(void* waiting, void* queued);

/// @brief The GPU this thread uses (0 without CUDA), and making it @p device.
int current_device();
void use_device(int device);

/// @brief A float32 rows x cols field in device memory that the module allocated: what
///        Stepper.advanced() returns for device arrays, and grayscott.to_device() makes (Python's
///        grayscott.DeviceArray, which leaves through DLPack and `__cuda_array_interface__`); the
///        memory lives as long as any holder.
class DeviceArray {
 public:
  DeviceArray(int rows, int cols);

  float* data() const;
  int rows() const { return rows_; }
  int cols() const { return cols_; }
  int device() const { return device_; }
  /// @brief Its contents are ordered on @p stream (known), or complete (unknown).
  void set_ready(const CallerStream& stream) { ready_ = stream; }
  const CallerStream& ready() const { return ready_; }
  /// @brief A share of the memory, which keeps it alive (what an exported DLPack tensor holds).
  std::shared_ptr<void> memory() const;

 private:
  struct Buffer;
  std::shared_ptr<Buffer> buffer_;
  int rows_ = 0;
  int cols_ = 0;
  int device_ = 0;
  CallerStream ready_;
};

}  // namespace lesson10
