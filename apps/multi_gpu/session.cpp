// Lesson 08's program plumbing: MPI and the ranks' devices (session.hpp).
#include "session.hpp"

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // OpenMPI's extensions: MPIX_Query_cuda_support
#endif

#include <stdexcept>
#include <string>

#include "gs/device_limits.hpp"
#include "gs/gpu.hpp"

#if GS_HAVE_CUDA
#include <cuda_runtime.h>

#include "gs/cuda_check.hpp"
#endif

namespace GS_LESSON_NAMESPACE {

std::string cuda_awareness() {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  return std::string("MPI CUDA-aware: built ") + (MPIX_CUDA_AWARE_SUPPORT ? "yes" : "no") +
         ", at run time " + (MPIX_Query_cuda_support() ? "yes" : "no");
#else
  return "MPI CUDA-aware: the library does not say (no MPIX_Query_cuda_support); assume not";
#endif
}

std::string choose_gpu([[maybe_unused]] int local_rank) {
#if GS_HAVE_CUDA
  const int count = gs::gpu_status().available ? gs::gpu_status().device_count : 0;
  if (count == 0) return "no GPU";
  const int device = local_rank % count;
  GS_CUDA_CHECK(cudaSetDevice(device));
  const gs::DeviceLimits& limits = gs::device_limits(device);
  return "GPU " + std::to_string(device) + " of " + std::to_string(count) + " (" +
         limits.describe() + ", bus " + limits.pci_bus + ")";
#else
  return "no GPU (this build has no CUDA)";
#endif
}

const char* name_of(Transport transport) {
  switch (transport) {
    case Transport::host:
      return "MPI between host buffers";
    case Transport::staged:
      return "MPI through pinned host buffers (device -> host, MPI, host -> device)";
    case Transport::nccl:
      return "NCCL between device buffers";
    case Transport::peer:
      return "peer to peer (each GPU writes its neighbours' halos, one kernel, no host)";
  }
  return "?";
}

const char* key_of(Transport transport) {
  switch (transport) {
    case Transport::host:
      return "host";
    case Transport::staged:
      return "staged";
    case Transport::nccl:
      return "nccl";
    case Transport::peer:
      return "peer";
  }
  return "?";
}

Transport choose_transport(const gs::Implementation& implementation, const std::string& asked,
                           [[maybe_unused]] bool edge_first) {
  if (implementation.device == gs::Device::cpu) return Transport::host;
  if (asked == "mpi") return Transport::staged;
  if (asked == "peer") return Transport::peer;
#if GS_HAVE_NCCL
  if (asked == "nccl" || edge_first) return Transport::nccl;
#else
  if (asked == "nccl") {
    throw std::runtime_error("--transport nccl: this build has no NCCL (install libnccl-dev)");
  }
#endif
  return Transport::peer;
}

}  // namespace GS_LESSON_NAMESPACE
