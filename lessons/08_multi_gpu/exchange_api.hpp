// Lesson 08's interface for the learner's file (halo_exchange.hpp): what an exchange is given.
// HaloPlan (what one rank sends and receives), MPI, and where the build found NCCL, NCCL, the
// CUDA stream type and GS_NCCL_CHECK (every NCCL call checked). ranks.hpp includes it; so does
// halo_exchange.hpp, which then compiles on its own.
#pragma once

#include <mpi.h>

#include <stdexcept>
#include <string>

#if GS_HAVE_NCCL
#include <cuda_runtime.h>
#include <nccl.h>
#endif

// What one rank sends and receives in an exchange (halo_exchange.hpp draws it).
struct HaloPlan {
  int up;      // the rank above (holding the rows before ours), or -1
  int down;    // the rank below, or -1
  int rows;    // this rank's own rows
  int cols;    // columns of the grid
  int halo;    // rows exchanged with each neighbour (the steps between two exchanges)
  int top;     // halo rows above the own rows: halo, or 0 for the first rank
  int bottom;  // halo rows below: halo, or 0 for the last rank
};

#if GS_HAVE_NCCL
// Throws, naming the call, its file and line, unless an NCCL call succeeded.
inline void nccl_check(ncclResult_t status, const char* call, const char* file, int line) {
  if (status == ncclSuccess) return;
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + call +
                           " failed: " + ncclGetErrorString(status));
}
#define GS_NCCL_CHECK(call) nccl_check((call), #call, __FILE__, __LINE__)
#endif
