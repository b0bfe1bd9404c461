// Lesson 08's program plumbing (you need not read it for the exercise): MPI and the ranks'
// devices. MPI's start and end and the node-local rank (MpiSession), each rank's GPU
// (choose_gpu(), the README's section 4), what the MPI library says about device buffers
// (cuda_awareness()), and the exchange a rank uses, chosen from the flags and named in the report
// (choose_transport(), name_of(), key_of(): section 5). The exchanges themselves are the lesson's
// (ranks.hpp).
#pragma once

#include <mpi.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include "gs/stepper.hpp"
#include "ranks.hpp"  // lessons/08_multi_gpu/: Transport

namespace GS_LESSON_NAMESPACE {

class MpiSession {
 public:
  MpiSession(int& argc, char**& argv) {
    // Start-up: OpenMPI's default point-to-point layer on the course's GPU machine is UCX, which
    // probes the network adapters a run across nodes would use: 0.7 s more per run, measured
    // (README, "Results"). When every rank is on this node (mpirun says so in the environment
    // before MPI starts) shared memory is all the ranks need, and ob1 (shared memory, self)
    // starts without that probe. A user's own choice (OMPI_MCA_pml) is kept.
    const char* on_node = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    const char* in_world = std::getenv("OMPI_COMM_WORLD_SIZE");
    if (on_node != nullptr && in_world != nullptr && std::string(on_node) == in_world) {
      setenv("OMPI_MCA_pml", "ob1", 0);
    }
    // Only the thread that called MPI_Init calls MPI (rank 0's frame loop gathers the frames on
    // its computing thread; its writer thread and OpenMP's threads never do): FUNNELED.
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    if (provided < MPI_THREAD_FUNNELED) {
      std::cerr << "warning: this MPI library offers no MPI_THREAD_FUNNELED; the program uses "
                   "threads besides the one that calls MPI\n";
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    // The ranks of this node: their order on the node picks their GPU.
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank_);
    MPI_Comm_free(&node);
  }
  ~MpiSession() { MPI_Finalize(); }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }

 private:
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
};

// What the MPI library says about device buffers (OpenMPI's extension, where it exists).
std::string cuda_awareness();

// The GPU of this rank: the node-local rank modulo the GPUs it sees. Returns the description,
// with the limits the plans follow when GS_DEVICE_LIMITS replaces the device's.
std::string choose_gpu(int local_rank);

const char* name_of(Transport transport);

// The short name of a transport in the benchmark's CSV (host, staged, nccl, peer).
const char* key_of(Transport transport);

// The exchange a rank of `implementation` uses, given --transport (`asked`: auto, peer, nccl or
// mpi) and --edge-first. GPU ranks: auto means peer (the GPUs write each other's halos), except
// edge first, which is built on NCCL. Peer is what a rank asks for: RankSlab::connect() checks
// that the ranks' GPUs can reach each other, and falls back to NCCL (or MPI) when they cannot.
Transport choose_transport(const gs::Implementation& implementation, const std::string& asked,
                           bool edge_first);

}  // namespace GS_LESSON_NAMESPACE
