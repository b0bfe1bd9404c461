// Lesson 08: GPUs that write each other's halos ("peer"), for GPU ranks on one node whose devices
// can reach each other (NVLink, or PCIe peer-to-peer). Included by ranks.cpp, which nvcc compiles
// when the build has CUDA.
//
// NCCL's exchange costs ~19 us however few bytes it moves (0.98 MB over NVLink take ~2 us): a
// grouped send/receive is a protocol between two proxies, with its own kernels and handshakes.
// Here each rank maps, once, a "mailbox" in each neighbour's memory (CUDA IPC: a handle made by the
// owner, sent over MPI, opened by the neighbour), and every exchange is ONE kernel on the stream
// the rank computes on. What a block of that kernel does, and in which order, is the learner's
// round (halo_exchange.hpp); this file gives it the operations (KernelBlock, below: post rows into
// a slot of the neighbours' mailboxes, fence, raise a flag in the neighbours' memory, wait on
// this GPU's own flags, unpack a slot into the halos, and the count of rounds done) and the
// memory they work on.
//
// Block b moves the same part of the rows on every rank (the ranks agree on the grid and on the
// word width at the start), so a block waits for one block of each neighbour and for no block
// of its own kernel: no counter across blocks, no "last block".
//
// No NCCL call, no MPI call, no host thread: the host only queues a kernel, and the ordering
// between the GPUs is the flags'. The round count lives on the device (one per block), so the
// kernel can be queued again and again (or captured in a CUDA graph) without the host counting
// anything.
//
// Why the grid is never larger than what fits on the GPU at once: a block that waits occupies its
// SM until the neighbour posts; if the neighbour's block b were still queued behind its waiting
// blocks, and ours the same, neither would ever post. A grid no larger than the GPU holds at once
// (and a grid-stride loop) is resident from its start.
//
// The wait has a limit (GS_PEER_TIMEOUT_S, default 30 s): a neighbour that died or never queued
// its exchange ends the kernel with a trap, an error the rank reports, not a hang.
#pragma once

#if GS_HAVE_CUDA

#include <cuda_runtime.h>
#include <mpi.h>
#include <cuda/atomic>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <halo_exchange.hpp>  // the round (the build picks your stubs or the solution's)

#include "exchange_api.hpp"
#include "gs/cuda_check.hpp"
#include "gs/stepper.hpp"

namespace GS_LESSON_NAMESPACE {
namespace peer {

// The most blocks an exchange kernel runs (the GPU's resident blocks, capped): each has flags.
constexpr int kMaxBlocks = 2048;

// In each rank's own memory. Block b of an exchange kernel posts the same part of the rows on
// every rank (the ranks agree on the grid and on the word width), so it signals its own flag, and
// block b of the receiver waits for that flag alone: no block waits for another of its kernel.
struct Flags {
  unsigned long long arrived[2][kMaxBlocks];  // rounds posted here by block b of the rank above
                                              // ([0]) and of the rank below ([1])
  unsigned long long round[kMaxBlocks];       // the exchanges block b of this rank has completed
};

// One exchange's arguments (the same every round but for the fields, which the stepper may swap).
struct Round {
  float* u;  // the rank's fields, halos included: cell (0, 0), `pitch` floats per row
  float* v;
  std::int64_t pitch;
  int cols, halo, top, rows, bottom;
  float* mailbox;  // mine: [slot][side: 0 from above, 1 from below][field][halo][cols]
  Flags* mine;
  float* up_mailbox;  // the rank above's, mapped (nullptr: none above)
  Flags* up_flags;
  float* down_mailbox;  // the rank below's (nullptr: none below)
  Flags* down_flags;
  unsigned long long timeout_ns;
};

__host__ __device__ inline std::int64_t mailbox_floats(int halo, int cols) {
  return std::int64_t{2} * 2 * 2 * halo * cols;  // slots x sides x fields x rows x cols
}

__device__ inline unsigned long long now_ns() {
  unsigned long long time;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(time));
  return time;
}

// Spins until `flag` holds at least `round`; traps after `timeout_ns`.
__device__ inline void wait_for(unsigned long long* flag, unsigned long long round,
                                unsigned long long timeout_ns) {
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> arrived(*flag);
  const unsigned long long start = now_ns();
  while (arrived.load(cuda::memory_order_acquire) < round) {
    if (now_ns() - start > timeout_ns) {
      printf("peer exchange: round %llu never arrived from a neighbour (GS_PEER_TIMEOUT_S)\n",
             round);
      __trap();
    }
  }
}

// One block of the exchange kernel, on this rank: the operations the learner's round
// (halo_exchange.hpp) is played with, as exchange_api.hpp describes them. `Word`: float4 where
// the ranks agreed that every row starts 16 bytes aligned and `cols` is a multiple of 4 (four
// cells per load and store: a quarter of the transactions over NVLink), else float. Every rank
// must use the same: block b's part of the rows is counted in words.
template <typename Word>
class KernelBlock {
 public:
  __device__ explicit KernelBlock(const Round& p)
      : p_(p),
        block_(static_cast<int>(blockIdx.x)),
        cols_(p.cols / kWidth),
        pitch_(p.pitch / kWidth),
        per_field_(std::int64_t{p.halo} * (p.cols / kWidth)),
        stride_(std::int64_t{gridDim.x} * blockDim.x),
        first_(std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x) {}

  __device__ unsigned long long done() const { return p_.mine->round[block_]; }

  // My first `halo` own rows into the "from below" side (1) of the above's mailbox, my last ones
  // into the "from above" side (0) of the below's; item i of a side is the same item on both
  // ranks, and the same block moves it.
  __device__ void post(int slot) const {
    const Word* u = reinterpret_cast<const Word*>(p_.u);
    const Word* v = reinterpret_cast<const Word*>(p_.v);
    Word* above = reinterpret_cast<Word*>(p_.up_mailbox);
    Word* below = reinterpret_cast<Word*>(p_.down_mailbox);
    const std::int64_t base = slot_base(slot);
    for (std::int64_t i = first_; i < 2 * per_field_; i += stride_) {
      const std::int64_t cell = i % per_field_;
      const int row = static_cast<int>(cell / cols_);
      const int col = static_cast<int>(cell % cols_);
      const Word* field = i < per_field_ ? u : v;
      if (above != nullptr) above[base + 2 * per_field_ + i] = field[(p_.top + row) * pitch_ + col];
      if (below != nullptr) {
        below[base + i] = field[(p_.top + p_.rows - p_.halo + row) * pitch_ + col];
      }
    }
  }

  // Every thread's stores done, then made visible to the other GPUs (system scope).
  __device__ void fence() const {
    __syncthreads();
    if (threadIdx.x == 0) __threadfence_system();
  }

  __device__ void signal(unsigned long long round) const {
    if (threadIdx.x != 0) return;
    if (p_.up_flags != nullptr) {
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_system>(
          p_.up_flags->arrived[1][block_])
          .store(round, cuda::memory_order_release);
    }
    if (p_.down_flags != nullptr) {
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_system>(
          p_.down_flags->arrived[0][block_])
          .store(round, cuda::memory_order_release);
    }
  }

  // One thread spins on this GPU's own flags; the block goes on together.
  __device__ void wait_for(unsigned long long round) const {
    if (threadIdx.x == 0) {
      if (p_.top > 0) peer::wait_for(&p_.mine->arrived[0][block_], round, p_.timeout_ns);
      if (p_.bottom > 0) peer::wait_for(&p_.mine->arrived[1][block_], round, p_.timeout_ns);
      __threadfence();
    }
    __syncthreads();
  }

  // Loads that skip L1: the mailbox was written by another GPU.
  __device__ void unpack(int slot) const {
    const Word* mailbox = reinterpret_cast<const Word*>(p_.mailbox);
    const std::int64_t base = slot_base(slot);
    for (std::int64_t i = first_; i < 2 * per_field_; i += stride_) {
      const std::int64_t cell = i % per_field_;
      const int row = static_cast<int>(cell / cols_);
      const int col = static_cast<int>(cell % cols_);
      Word* field = reinterpret_cast<Word*>(i < per_field_ ? p_.u : p_.v);
      if (p_.top > 0) field[row * pitch_ + col] = __ldcg(mailbox + base + i);
      if (p_.bottom > 0) {
        field[(p_.top + p_.rows + row) * pitch_ + col] =
            __ldcg(mailbox + base + 2 * per_field_ + i);
      }
    }
  }

  // Read by this block's next kernel (after every thread read done()).
  __device__ void finish(unsigned long long round) const {
    __syncthreads();
    if (threadIdx.x == 0) p_.mine->round[block_] = round;
  }

 private:
  static constexpr int kWidth = sizeof(Word) / sizeof(float);
  // A slot holds two sides, each u then v; a slot outside 0 and 1 traps (the mailbox has two).
  __device__ std::int64_t slot_base(int slot) const {
    if (slot != 0 && slot != 1) __trap();
    return std::int64_t{slot} * 4 * per_field_;
  }
  Round p_;  // by value: a reference would take the kernel parameter's address (local memory)
  int block_;
  int cols_;
  std::int64_t pitch_, per_field_, stride_, first_;
};

// One exchange: the learner's round, played by every block.
template <typename Word>
__global__ void exchange_kernel(Round p) {
  KernelBlock<Word> block(p);
  halo::exchange_round(block);
}

}  // namespace peer

// One rank's side of the peer exchange: its mailbox and flags (exported), its neighbours' (mapped).
class PeerExchange {
 public:
  // Why the ranks cannot write each other's halos, or "" when they can: a collective of every
  // rank of `comm`, the same answer on all. They must share one node (CUDA IPC does not cross
  // nodes), each pair of neighbours' GPUs must reach each other (cudaDeviceCanAccessPeer, or the
  // same GPU), and GS_PEER=off must not be set (a test takes the fallback that way).
  static std::string problem(const HaloPlan& plan, MPI_Comm comm);

  // A collective of every rank: allocates and zeroes this rank's mailbox and flags, sends their
  // IPC handle to every rank (MPI_Allgather), maps its neighbours'; the ranks agree on the kernel's
  // grid and word (float4 where every rank's rows, `pitch` floats apart, allow it).
  PeerExchange(const HaloPlan& plan, std::ptrdiff_t pitch, MPI_Comm comm);
  ~PeerExchange();
  PeerExchange(const PeerExchange&) = delete;
  PeerExchange& operator=(const PeerExchange&) = delete;

  // Queues one exchange of both fields of `view` on its stream. Nothing waits on the host.
  void exchange(const gs::FieldView& view);

 private:
  HaloPlan plan_;
  void* own_ = nullptr;    // Flags, then the mailbox (one allocation: one handle)
  void* above_ = nullptr;  // the neighbours' allocations, mapped
  void* below_ = nullptr;
  static constexpr int kThreads = 256;
  int blocks_ = 1;
  bool wide_ = false;  // float4 words
  unsigned long long timeout_ns_ = 0;
};

// ---------------------------------------------------------------------------------------------
// The host's part: once at the start, then one kernel per exchange
// ---------------------------------------------------------------------------------------------

namespace peer {

// The lowest rank of `comm` whose `reason` is not empty, and its reason ("" when none has one):
// every rank gets the same answer.
inline std::string first_reason(const std::string& reason, MPI_Comm comm) {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int mine = reason.empty() ? size : rank;
  int lowest = size;
  MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, comm);
  if (lowest == size) return "";
  int length = static_cast<int>(reason.size());
  MPI_Bcast(&length, 1, MPI_INT, lowest, comm);
  std::string text(static_cast<std::size_t>(length), ' ');
  if (rank == lowest) text = reason;
  MPI_Bcast(text.data(), length, MPI_CHAR, lowest, comm);
  return "rank " + std::to_string(lowest) + ": " + text;
}

// This rank's GPU and the neighbour `other`'s, as PCI bus ids exchanged over MPI: whether this
// rank's GPU can write the neighbour's memory ("" when it can).
inline std::string reach(int other, const std::string& mine_bus, const std::string& other_bus) {
  if (other < 0) return "";
  int device = 0;
  GS_CUDA_CHECK(cudaGetDevice(&device));
  int other_device = -1;
  if (cudaDeviceGetByPCIBusId(&other_device, other_bus.c_str()) != cudaSuccess) {
    cudaGetLastError();
    return "rank " + std::to_string(other) + "'s GPU (bus " + other_bus +
           ") is not visible to this rank (CUDA_VISIBLE_DEVICES)";
  }
  if (other_device == device) return "";  // two ranks on one GPU: IPC within the device
  int can = 0;
  GS_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, device, other_device));
  if (can == 0) {
    return "GPU " + std::to_string(device) + " (bus " + mine_bus + ") cannot reach rank " +
           std::to_string(other) + "'s GPU " + std::to_string(other_device) + " (bus " + other_bus +
           ") peer to peer";
  }
  return "";
}

inline std::string bus_of_this_rank() {
  int device = 0;
  GS_CUDA_CHECK(cudaGetDevice(&device));
  char bus[32] = {};
  GS_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device));
  return bus;
}

// Every rank's `bytes` bytes, rank by rank (a collective; a few bytes each, once at the start),
// from which a rank takes its neighbours'.
inline std::vector<char> from_every_rank(const void* mine, int bytes, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::vector<char> all(static_cast<std::size_t>(size) * static_cast<std::size_t>(bytes));
  MPI_Allgather(mine, bytes, MPI_BYTE, all.data(), bytes, MPI_BYTE, comm);
  return all;
}

// Rank `rank`'s entry of from_every_rank()'s answer.
inline const char* entry(const std::vector<char>& all, int rank, int bytes) {
  return all.data() + static_cast<std::size_t>(rank) * static_cast<std::size_t>(bytes);
}

// The mailbox starts after the flags, 256-byte aligned.
constexpr std::size_t kFlagsBytes = (sizeof(Flags) + 255) / 256 * 256;

}  // namespace peer

inline std::string PeerExchange::problem(const HaloPlan& plan, MPI_Comm comm) {
  std::string reason;
  const char* asked = std::getenv("GS_PEER");
  if (asked != nullptr && std::strcmp(asked, "off") == 0) {
    reason = "GS_PEER=off asks for the fallback";
  }
  int size = 1;
  MPI_Comm_size(comm, &size);
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int on_node = 1;
  MPI_Comm_size(node, &on_node);
  MPI_Comm_free(&node);
  if (reason.empty() && on_node != size) {
    reason = "the ranks are on several nodes (CUDA IPC maps memory within one node only)";
  }
  // Every rank takes part in the swap of bus ids, whatever it found so far.
  constexpr int kBus = 32;
  char mine[kBus] = {};
  const std::string bus = peer::bus_of_this_rank();
  std::strncpy(mine, bus.c_str(), kBus - 1);
  const std::vector<char> buses = peer::from_every_rank(mine, kBus, comm);
  for (const int other : {plan.up, plan.down}) {
    if (reason.empty() && other >= 0) {
      reason = peer::reach(other, mine, peer::entry(buses, other, kBus));
    }
  }
  return peer::first_reason(reason, comm);
}

inline PeerExchange::PeerExchange(const HaloPlan& plan, std::ptrdiff_t pitch, MPI_Comm comm)
    : plan_(plan) {
  const char* limit = std::getenv("GS_PEER_TIMEOUT_S");
  const double seconds = limit != nullptr ? std::atof(limit) : 30.0;
  timeout_ns_ = static_cast<unsigned long long>((seconds > 0.0 ? seconds : 30.0) * 1e9);
  const std::size_t bytes =
      peer::kFlagsBytes +
      static_cast<std::size_t>(peer::mailbox_floats(plan.halo, plan.cols)) * sizeof(float);
  GS_CUDA_CHECK(cudaMalloc(&own_, bytes));
  GS_CUDA_CHECK(cudaMemset(own_, 0, bytes));
  GS_CUDA_CHECK(cudaDeviceSynchronize());  // zeroed before a neighbour can map it
  cudaIpcMemHandle_t handle{};
  GS_CUDA_CHECK(cudaIpcGetMemHandle(&handle, own_));
  constexpr int kHandle = sizeof(cudaIpcMemHandle_t);
  const std::vector<char> handles = peer::from_every_rank(&handle, kHandle, comm);
  for (const auto& [other, mapped] : {std::pair{plan.up, &above_}, std::pair{plan.down, &below_}}) {
    if (other < 0) continue;
    cudaIpcMemHandle_t theirs{};
    std::memcpy(&theirs, peer::entry(handles, other, kHandle), kHandle);
    GS_CUDA_CHECK(cudaIpcOpenMemHandle(mapped, theirs, cudaIpcMemLazyEnablePeerAccess));
  }
  int device = 0;
  GS_CUDA_CHECK(cudaGetDevice(&device));
  int sms = 1;
  GS_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  // Resident from the start (see above): no more blocks than the GPU holds at once (the occupancy
  // calculator's count per SM, for the wider kernel, the more demanding of the two), nor than
  // there are cells to move.
  int per_sm = 1;
  GS_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm, peer::exchange_kernel<float4>, kThreads, 0));
  // The ranks agree: block b must move the same part of the rows on both sides of a boundary.
  int wide = plan.cols % 4 == 0 && pitch % 4 == 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &wide, 1, MPI_INT, MPI_MIN, comm);
  wide_ = wide == 1;
  const std::int64_t words = std::int64_t{2} * plan.halo * plan.cols / (wide_ ? 4 : 1);
  // Ranks that share this GPU share what it holds at once: where their kernels run side by side
  // (MPS), each rank's waiting blocks must leave room for the others' posting ones.
  constexpr int kBus = 32;
  char bus[kBus] = {};
  std::strncpy(bus, peer::bus_of_this_rank().c_str(), kBus - 1);
  const std::vector<char> buses = peer::from_every_rank(bus, kBus, comm);
  int size = 1;
  MPI_Comm_size(comm, &size);
  int sharing = 0;
  for (int rank = 0; rank < size; ++rank) {
    if (std::strncmp(peer::entry(buses, rank, kBus), bus, kBus) == 0) ++sharing;
  }
  const std::int64_t resident = std::int64_t{sms} * std::max(1, per_sm) / std::max(1, sharing);
  int blocks = static_cast<int>(
      std::max<std::int64_t>(1, std::min<std::int64_t>({resident, (words + kThreads - 1) / kThreads,
                                                        std::int64_t{peer::kMaxBlocks}})));
  // GS_PEER_BLOCKS=N asks for fewer (never more than fit): a knob to measure what a block's
  // fence and flags cost against the parallelism of its stores.
  if (const char* asked = std::getenv("GS_PEER_BLOCKS"); asked != nullptr && std::atoi(asked) > 0) {
    blocks = std::min(blocks, std::atoi(asked));
  }
  MPI_Allreduce(MPI_IN_PLACE, &blocks, 1, MPI_INT, MPI_MIN, comm);
  blocks_ = blocks;
}

inline PeerExchange::~PeerExchange() {
  cudaDeviceSynchronize();  // no exchange of ours in flight
  if (above_ != nullptr) cudaIpcCloseMemHandle(above_);
  if (below_ != nullptr) cudaIpcCloseMemHandle(below_);
  if (own_ != nullptr) cudaFree(own_);
}

inline void PeerExchange::exchange(const gs::FieldView& view) {
  if (plan_.up < 0 && plan_.down < 0) return;  // one rank: nothing to exchange
  auto flags_of = [](void* base) { return static_cast<peer::Flags*>(base); };
  auto mailbox_of = [](void* base) {
    return base == nullptr ? nullptr
                           : reinterpret_cast<float*>(static_cast<char*>(base) + peer::kFlagsBytes);
  };
  peer::Round round{};
  round.u = view.u;
  round.v = view.v;
  round.pitch = view.pitch;
  round.cols = plan_.cols;
  round.halo = plan_.halo;
  round.top = plan_.top;
  round.rows = plan_.rows;
  round.bottom = plan_.bottom;
  round.mailbox = mailbox_of(own_);
  round.mine = flags_of(own_);
  round.up_mailbox = mailbox_of(above_);
  round.up_flags = above_ != nullptr ? flags_of(above_) : nullptr;
  round.down_mailbox = mailbox_of(below_);
  round.down_flags = below_ != nullptr ? flags_of(below_) : nullptr;
  round.timeout_ns = timeout_ns_;
  const auto stream = static_cast<cudaStream_t>(view.stream);
  if (wide_) {
    if (reinterpret_cast<std::uintptr_t>(view.u) % 16 != 0 ||
        reinterpret_cast<std::uintptr_t>(view.v) % 16 != 0) {
      throw std::logic_error("peer exchange: a field is not 16-byte aligned, as agreed");
    }
    peer::exchange_kernel<float4><<<blocks_, kThreads, 0, stream>>>(round);
  } else {
    peer::exchange_kernel<float><<<blocks_, kThreads, 0, stream>>>(round);
  }
  GS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace GS_LESSON_NAMESPACE

#endif  // GS_HAVE_CUDA
