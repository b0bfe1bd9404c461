/// @file cuda_check.hpp
/// @brief Checks for every CUDA runtime call and kernel launch: a failure throws gs::CudaError
///        whose message names the call's text, the file and the line. Include from .cu files
///        and from C++ files that call the CUDA runtime.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

#ifdef GS_ENABLE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace gs {

/// @brief A failed CUDA call; what() says which call, where, and the runtime's explanation.
class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// @brief Throws CudaError for @p status unless it is cudaSuccess (use GS_CUDA_CHECK).
inline void cuda_check(cudaError_t status, const char* call, const char* file, int line) {
  if (status == cudaSuccess) return;
  throw CudaError(std::string(file) + ":" + std::to_string(line) + ": " + call +
                  " failed: " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
}

/// @brief Scoped NVTX range: shows as a named bar in Nsight Systems when the build defines
///        GS_ENABLE_NVTX (CMake option GS_NVTX), and compiles to nothing otherwise.
class NvtxRange {
 public:
  /// @brief Opens a range named @p name.
  explicit NvtxRange(const char* name) {
#ifdef GS_ENABLE_NVTX
    nvtxRangePushA(name);
#else
    (void)name;
#endif
  }
  ~NvtxRange() {
#ifdef GS_ENABLE_NVTX
    nvtxRangePop();
#endif
  }
  NvtxRange(const NvtxRange&) = delete;             ///< A range is closed exactly once.
  NvtxRange& operator=(const NvtxRange&) = delete;  ///< A range is closed exactly once.
};

/// @brief Frees device memory with cudaFree (the deleter of DeviceFloats).
struct CudaFree {
  /// @brief Frees @p pointer; a null pointer is fine.
  void operator()(float* pointer) const { cudaFree(pointer); }
};

/// @brief An array of floats in device memory that frees itself.
using DeviceFloats = std::unique_ptr<float, CudaFree>;

/// @brief Allocates @p count floats of device memory (not initialised); throws CudaError.
inline DeviceFloats device_floats(std::size_t count);

}  // namespace gs

/// @brief Checks a CUDA runtime call: `GS_CUDA_CHECK(cudaMalloc(&p, bytes));`
#define GS_CUDA_CHECK(call) ::gs::cuda_check((call), #call, __FILE__, __LINE__)

/// @brief Checks the launch just made (bad configuration, too many resources). In builds with
///        GS_CUDA_SYNC_CHECK defined it also waits for the kernel, so that a fault is reported
///        at its own launch instead of at a later call.
#ifdef GS_CUDA_SYNC_CHECK
#define GS_CUDA_CHECK_LAUNCH()              \
  do {                                      \
    GS_CUDA_CHECK(cudaGetLastError());      \
    GS_CUDA_CHECK(cudaDeviceSynchronize()); \
  } while (0)
#else
#define GS_CUDA_CHECK_LAUNCH() GS_CUDA_CHECK(cudaGetLastError())
#endif

inline gs::DeviceFloats gs::device_floats(std::size_t count) {
  void* pointer = nullptr;
  GS_CUDA_CHECK(cudaMalloc(&pointer, count * sizeof(float)));
  return DeviceFloats(static_cast<float*>(pointer));
}
