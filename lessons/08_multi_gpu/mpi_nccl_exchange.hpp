// Lesson 08: the exchanges through a library, MPI (CPU ranks, and GPU ranks that stage through
// host memory) and NCCL (GPU ranks, where the peer exchange cannot run: ranks on several nodes,
// GPUs that cannot reach each other, or GS_PEER=off), what the peer exchange is measured against.
// Each replaces one field's halos with the neighbours' boundary rows (the plan, below).
//
// Each rank holds its slab of rows plus, above and below, `halo` rows that belong to its
// neighbours. After `halo` steps those halo rows are stale (the rank computed them as if the grid
// ended there) while its own rows are still exact; the exchange replaces each halo with the
// neighbour's boundary rows:
//
//   local rows [0, top)                    the halo from the rank above (top = halo or 0)
//   local rows [top, top + rows)           this rank's own rows
//   local rows [top + rows, ... + bottom)  the halo from the rank below (bottom = halo or 0)
//
// The rank above needs this rank's first `halo` own rows, the rank below its last `halo` ones.
// A field is one float array, `pitch` floats from one row to the next (>= cols).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <stdexcept>
#include <string>

#if GS_HAVE_NCCL
#include <cuda_runtime.h>
#include <nccl.h>
#endif

#include "exchange_api.hpp"

#if GS_HAVE_NCCL
// Throws, naming the call, its file and line, unless an NCCL call succeeded.
inline void nccl_check(ncclResult_t status, const char* call, const char* file, int line) {
  if (status == ncclSuccess) return;
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + call +
                           " failed: " + ncclGetErrorString(status));
}
#define GS_NCCL_CHECK(call) nccl_check((call), #call, __FILE__, __LINE__)
#endif

// On the host, with MPI: one field, rows described by a derived datatype (halo rows of `cols`
// floats, `pitch` apart), non-blocking sends and receives to both neighbours, then one wait.
inline void exchange_with_mpi(const HaloPlan& plan, float* field, std::ptrdiff_t pitch,
                              MPI_Comm comm) {
  MPI_Datatype rows_type;
  MPI_Type_vector(plan.halo, plan.cols, static_cast<int>(pitch), MPI_FLOAT, &rows_type);
  MPI_Type_commit(&rows_type);
  MPI_Request requests[4];
  int count = 0;
  const std::ptrdiff_t own_first = static_cast<std::ptrdiff_t>(plan.top) * pitch;
  const std::ptrdiff_t own_last =
      static_cast<std::ptrdiff_t>(plan.top + plan.rows - plan.halo) * pitch;
  const std::ptrdiff_t below = static_cast<std::ptrdiff_t>(plan.top + plan.rows) * pitch;
  if (plan.up >= 0) {  // tag 0: rows travelling up, tag 1: rows travelling down
    MPI_Irecv(field, 1, rows_type, plan.up, 1, comm, &requests[count++]);
    MPI_Isend(field + own_first, 1, rows_type, plan.up, 0, comm, &requests[count++]);
  }
  if (plan.down >= 0) {
    MPI_Irecv(field + below, 1, rows_type, plan.down, 0, comm, &requests[count++]);
    MPI_Isend(field + own_last, 1, rows_type, plan.down, 1, comm, &requests[count++]);
  }
  MPI_Waitall(count, requests, MPI_STATUSES_IGNORE);
  MPI_Type_free(&rows_type);
}

#if GS_HAVE_NCCL
// On the GPU, with NCCL: the same exchange between device buffers, queued on `stream` (the one
// the rank computes on, so it comes after the steps and before the next ones). `halo` rows of
// one field are `halo * pitch` consecutive floats (the padding columns go along: zeros, as the
// receiver's). Grouped, so that the four transfers proceed together and cannot deadlock.
inline void exchange_with_nccl(const HaloPlan& plan, float* field, std::ptrdiff_t pitch,
                               ncclComm_t comm, cudaStream_t stream) {
  const std::size_t count = static_cast<std::size_t>(plan.halo) * static_cast<std::size_t>(pitch);
  float* own_first = field + static_cast<std::ptrdiff_t>(plan.top) * pitch;
  float* own_last = field + static_cast<std::ptrdiff_t>(plan.top + plan.rows - plan.halo) * pitch;
  float* below = field + static_cast<std::ptrdiff_t>(plan.top + plan.rows) * pitch;
  GS_NCCL_CHECK(ncclGroupStart());
  if (plan.up >= 0) {
    GS_NCCL_CHECK(ncclSend(own_first, count, ncclFloat, plan.up, comm, stream));
    GS_NCCL_CHECK(ncclRecv(field, count, ncclFloat, plan.up, comm, stream));
  }
  if (plan.down >= 0) {
    GS_NCCL_CHECK(ncclSend(own_last, count, ncclFloat, plan.down, comm, stream));
    GS_NCCL_CHECK(ncclRecv(below, count, ncclFloat, plan.down, comm, stream));
  }
  GS_NCCL_CHECK(ncclGroupEnd());
}
#endif
