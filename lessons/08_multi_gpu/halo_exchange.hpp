// Lesson 08, the file you edit: the halo exchange between neighbouring ranks.
//
// It sees exchange_api.hpp, the lesson's interface: HaloPlan (what this rank sends and receives,
// below), <mpi.h>, and where the build found NCCL, <nccl.h> and GS_NCCL_CHECK. Each rank holds its
// slab of rows plus, above and below, `halo` rows that belong to its neighbours. After `halo`
// steps those halo rows are stale (the rank computed them as if the grid ended there) while its
// own rows are still exact; the exchange replaces each halo with the neighbour's boundary rows:
//
//   local rows [0, top)                    the halo from the rank above (top = halo or 0)
//   local rows [top, top + rows)           this rank's own rows
//   local rows [top + rows, ... + bottom)  the halo from the rank below (bottom = halo or 0)
//
// The rank above needs this rank's first `halo` own rows, the rank below its last `halo` ones.
// A field is one float array, `pitch` floats from one row to the next (>= cols).
#pragma once

#include <cstddef>

#include "exchange_api.hpp"

// On the host, with MPI (CPU ranks, and GPU ranks that stage through host memory).
inline void exchange_with_mpi(const HaloPlan& plan, float* field, std::ptrdiff_t pitch,
                              MPI_Comm comm) {
  // TODO(lesson 08): send this rank's first plan.halo own rows to plan.up and its last ones to
  // plan.down (a neighbour of -1 does not exist), and receive the neighbours' rows into the two
  // halos: rows of plan.cols floats, `pitch` floats apart, sent from where they lie (no copy of
  // your own), in an exchange that cannot deadlock whatever the size of the rows. HINTS.md has
  // the hints, in levels. As shipped the halos keep their stale rows and the results drift near
  // every slab boundary.
  (void)plan, (void)field, (void)pitch, (void)comm;
}

#if GS_HAVE_NCCL
// On the GPU, with NCCL, queued on `stream` (the one the rank computes on).
inline void exchange_with_nccl(const HaloPlan& plan, float* field, std::ptrdiff_t pitch,
                               ncclComm_t comm, cudaStream_t stream) {
  // TODO(lesson 08): the same exchange between device buffers, queued on `stream` (no host
  // thread waits) and unable to deadlock; check every NCCL call with GS_NCCL_CHECK.
  (void)plan, (void)field, (void)pitch, (void)comm, (void)stream;
}
#endif
