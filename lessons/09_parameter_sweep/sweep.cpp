// Lesson 09 - many simulations at once: a batched parameter sweep.
//
// With a fast solver, a scientist does not run one simulation: she runs hundreds, one per pair of
// feed and kill rates (F, k), and looks at the pattern each one makes. This body advances a batch
// of B independent simulations ("members") of R x C cells together, each with its own F and k
// (Du, Dv and dt shared): the C++ counterpart of JAX's vmap, which maps a one-simulation function
// over a batch axis. The batch axis is the slowest index of every field, [member][row][col].
//
//   CPU        OpenMP over members: one thread takes one member and does all its steps while the
//              member's cells sit in that core's cache, with lesson 02's branch-free row loop.
//   GPU        resident: one block per member, the member's u and v in shared memory for many
//              steps per launch (a 128 x 128 member is 128 KiB: it fits one block of an H100,
//              227 KiB, not one of a T4, 64 KiB); streaming: one step per launch over every
//              member (blockIdx.z is the member), for members too large for a block's shared
//              memory on this GPU (gs::device_limits(), which GS_DEVICE_LIMITS=t4 makes a T4's).
//
// The file you edit is member.hpp: where member m's cells and its (F, k) live, the CPU loop over
// members, and the resident kernel. This file keeps the rest: the CPU row loop, the streaming
// kernel, the launch plan (threads, shared memory, the opt-in above 48 KB), the launches.
#include <omp.h>

#if defined(__SSE2__)
#include <xmmintrin.h>  // _mm_getcsr, _mm_setcsr: the SSE control register (flush to zero)
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "batch.hpp"
#include "gs/device_limits.hpp"
#include "gs/params.hpp"

#if GS_HAVE_CUDA
#include <cuda_runtime.h>

#include "gs/cuda_check.hpp"
#include "gs/gpu.hpp"
#endif

// What the learner's member.hpp is given (member_api.hpp): the rates, the update of one cell, and
// with CUDA the resident kernel's budget and row sums.
#include "member_api.hpp"

// The exercise, in namespace batch_members (member_offset(), member_rates(), for_each_member(),
// resident_kernel()): lessons/09_parameter_sweep/member.hpp or the solution's copy, on its own.
#include <member.hpp>

namespace GS_LESSON_NAMESPACE {
namespace {

// The resident kernel's budget: at most 1024 threads a block; at 1024 threads a thread has 64
// registers, room for the new values of 8 rows of u and v beside its window (16 spill to local
// memory). The plan gives each thread a segment of 1 to 32 rows of one column: the shortest
// segment whose block has at most 1024 threads (fewer where the device allows fewer).
constexpr int kRowsPerThreadChoices[] = {1, 2, 4, 8, 16, 32};

// Steps one launch of the resident kernel advances. Each launch loads its members from global
// memory into shared memory and writes them back at the end, so a launch of many steps makes
// that traffic negligible; the host still gets control back often enough for progress lines.
constexpr int kStepsPerLaunch = 500;

// The streaming kernel's blocks: 32 x 8 cells, one thread each.
constexpr int kStreamBlockCols = 32;
constexpr int kStreamBlockRows = 8;
constexpr int kMaxGridY = 65535;  // CUDA's limit on gridDim.y and gridDim.z

SharedRates shared_rates(const BatchRates& rates) {
  return {rates.diffusion_u, rates.diffusion_v, rates.dt};
}

// The checks every path makes in load(): one F and one k per member, a batch that is not empty.
void check_batch(const BatchState& state, const BatchRates& rates) {
  if (state.members < 1 || state.rows < 1 || state.cols < 1) {
    throw gs::InvalidParameter("a batch needs at least one member of at least 1 x 1 cells (got " +
                               std::to_string(state.members) + " of " + std::to_string(state.rows) +
                               " x " + std::to_string(state.cols) + ")");
  }
  if (state.u.size() != state.size() || state.v.size() != state.size()) {
    throw gs::InvalidParameter("the batch's fields do not hold members * rows * cols values");
  }
  const std::size_t members = static_cast<std::size_t>(state.members);
  if (rates.feed.size() != members || rates.kill.size() != members) {
    throw gs::InvalidParameter("one feed and one kill rate per member: " + std::to_string(members) +
                               " members, " + std::to_string(rates.feed.size()) + " feed and " +
                               std::to_string(rates.kill.size()) + " kill rates");
  }
}

// ---------------------------------------------------------------------------------------------
// The CPU path
// ---------------------------------------------------------------------------------------------

// What one member's step needs besides its fields, allocated once per member (not per step):
// a row of zeros that stands for the row above the first and below the last, the vertical sums
// of the current row with a zero on each side (the columns outside the grid), and how many of
// the columns c - 1, c, c + 1 are inside the grid.
struct RowScratch {
  explicit RowScratch(int cols)
      : zeros(static_cast<std::size_t>(cols), 0.0f),
        sums_u(static_cast<std::size_t>(cols) + 2, 0.0f),
        sums_v(static_cast<std::size_t>(cols) + 2, 0.0f),
        cols_present(static_cast<std::size_t>(cols)) {
    for (int col = 0; col < cols; ++col) {
      cols_present[col] = 1.0f + static_cast<float>(col > 0) + static_cast<float>(col + 1 < cols);
    }
  }
  std::vector<float> zeros;
  std::vector<float> sums_u;
  std::vector<float> sums_v;
  std::vector<float> cols_present;
};

// One step of one member, row by row, with no branch inside a row: the rows outside the grid are
// the zero row, the columns outside the grid the zeros around the sums. Two loops per row: the
// vertical sums of three rows, then the box of three vertical sums and the update (lesson 02's
// row loop, here without padding: the member's cells stay in the batch's own layout).
void step_member(const float* __restrict__ u, const float* __restrict__ v,
                 float* __restrict__ u_next, float* __restrict__ v_next, int rows, int cols,
                 const MemberRates& r, RowScratch& scratch) {
  float* sums_u = scratch.sums_u.data() + 1;  // sums_u[-1] and sums_u[cols] stay 0
  float* sums_v = scratch.sums_v.data() + 1;
  const float* zeros = scratch.zeros.data();
  const float* cols_present = scratch.cols_present.data();
  for (int row = 0; row < rows; ++row) {
    const std::size_t at = static_cast<std::size_t>(row) * static_cast<std::size_t>(cols);
    const float* u_row = u + at;
    const float* v_row = v + at;
    const float* u_above = row > 0 ? u_row - cols : zeros;
    const float* v_above = row > 0 ? v_row - cols : zeros;
    const float* u_below = row + 1 < rows ? u_row + cols : zeros;
    const float* v_below = row + 1 < rows ? v_row + cols : zeros;
    const float rows_present =
        1.0f + static_cast<float>(row > 0) + static_cast<float>(row + 1 < rows);
    for (int col = 0; col < cols; ++col) {
      sums_u[col] = u_above[col] + u_row[col] + u_below[col];
      sums_v[col] = v_above[col] + v_row[col] + v_below[col];
    }
    for (int col = 0; col < cols; ++col) {
      update_cell(u_row[col], v_row[col], sums_u[col - 1] + sums_u[col] + sums_u[col + 1],
                  sums_v[col - 1] + sums_v[col] + sums_v[col + 1], rows_present * cols_present[col],
                  r, u_next[at + col], v_next[at + col]);
    }
  }
}

// While alive, the calling thread's SSE arithmetic flushes subnormal numbers to zero (FTZ: results,
// DAZ: inputs); the previous mode comes back on destruction. A member whose pattern dies out
// decays through the subnormal range (below 1.2e-38) and, without this, stays there: v reaches
// 1e-44 and rounding keeps it from reaching 0. x86 cores compute with subnormals in microcode: on
// the course's build machine the reference loop took 2.7 to 2.9 times as long for a dying 64 x 64
// member as for a live one, and the same time with these two bits set (README.md, "Results"). The
// difference to the reference is below 1e-37, far inside every tolerance. (A GPU computes
// subnormals at full speed: the kernels keep them.)
class FlushSubnormals {
 public:
#if defined(__SSE2__)
  FlushSubnormals() : saved_(_mm_getcsr()) {
    _mm_setcsr(saved_ | kFlushToZero | kDenormalsAreZero);
  }
  ~FlushSubnormals() {
    _mm_setcsr(saved_);
  }

 private:
  static constexpr unsigned kFlushToZero = 0x8000;       // MXCSR bit 15
  static constexpr unsigned kDenormalsAreZero = 0x0040;  // MXCSR bit 6
  unsigned saved_;
#endif
 public:
  FlushSubnormals(const FlushSubnormals&) = delete;
  FlushSubnormals& operator=(const FlushSubnormals&) = delete;
};

// Two batches of fields, current and next. A member's steps go back and forth between its slices
// of the two; every member makes the same number of steps, so after an odd number the whole
// batch's result is in `next` and the two swap.
class CpuBatch final : public BatchStepper {
 public:
  void load(const BatchState& state, const BatchRates& rates) override {
    check_batch(state, rates);
    current_ = state;
    // NaN until written: a cell a step forgets shows up in the tests instead of an old value.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    next_ = BatchState(state.members, state.rows, state.cols, nan, nan);
    rates_ = rates;
  }

  void advance(int steps) override {
    if (steps <= 0) return;
    const int rows = current_.rows;
    const int cols = current_.cols;
    const SharedRates shared = shared_rates(rates_);
    float* const u_current = current_.u.data();
    float* const v_current = current_.v.data();
    float* const u_next = next_.u.data();
    float* const v_next = next_.v.data();
    const float* const feed = rates_.feed.data();
    const float* const kill = rates_.kill.data();
    batch_members::for_each_member(current_.members, [=](int member) {
      const FlushSubnormals flush;  // on the thread that runs this member
      const std::size_t offset = batch_members::member_offset(member, rows, cols);
      const MemberRates r = batch_members::member_rates(shared, feed, kill, member);
      RowScratch scratch(cols);
      float* u_in = u_current + offset;
      float* v_in = v_current + offset;
      float* u_out = u_next + offset;
      float* v_out = v_next + offset;
      for (int step = 0; step < steps; ++step) {
        step_member(u_in, v_in, u_out, v_out, rows, cols, r, scratch);
        std::swap(u_in, u_out);
        std::swap(v_in, v_out);
      }
    });
    if (steps % 2 == 1) std::swap(current_, next_);
  }

  void fetch(BatchState& state) override { state = current_; }

  void fetch_v(float* v) override { std::copy(current_.v.begin(), current_.v.end(), v); }

  std::string describe() const override {
    return "CPU, OpenMP over members (" + std::to_string(omp_get_max_threads()) +
           " threads), one member per thread at a time";
  }

 private:
  BatchState current_;
  BatchState next_;
  BatchRates rates_;
};

// ---------------------------------------------------------------------------------------------
// The GPU path
// ---------------------------------------------------------------------------------------------
#if GS_HAVE_CUDA

using ResidentKernel = void (*)(float*, float*, const float*, const float*, SharedRates, int, int,
                                int);

ResidentKernel resident_kernel_for(int rows_per_thread) {
  switch (rows_per_thread) {
    case 1:
      return batch_members::resident_kernel<1>;
    case 2:
      return batch_members::resident_kernel<2>;
    case 4:
      return batch_members::resident_kernel<4>;
    case 8:
      return batch_members::resident_kernel<8>;
    case 16:
      return batch_members::resident_kernel<16>;
    case 32:
      return batch_members::resident_kernel<32>;
    default:
      throw std::invalid_argument("lesson09: no resident kernel for " +
                                  std::to_string(rows_per_thread) + " rows per thread");
  }
}

// The streaming kernel: one step of every member, one thread per cell, blocks of 32 x 8 cells;
// blockIdx.z is the member. For members too large for shared memory: every step reads and
// writes the fields in global memory (16 B per cell-update), like lesson 04's kernels.
__global__ void __launch_bounds__(kStreamBlockCols* kStreamBlockRows)
    streaming_kernel(const float* __restrict__ u, const float* __restrict__ v,
                     float* __restrict__ u_next, float* __restrict__ v_next,
                     const float* __restrict__ feed, const float* __restrict__ kill,
                     SharedRates shared, int rows, int cols) {
  const int col = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int row = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (row >= rows || col >= cols) return;
  const int member = static_cast<int>(blockIdx.z);
  const std::size_t offset = batch_members::member_offset(member, rows, cols);
  const float* const mu = u + offset;
  const float* const mv = v + offset;
  const bool has_left = col > 0;
  const bool has_right = col + 1 < cols;
  // The 3 x 3 box: the sums of the rows above, at and below the cell, added in that order.
  RowSums box{0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
  for (int box_row = row - 1; box_row <= row + 1; ++box_row) {
    const RowSums s = row_sums(mu, mv, box_row, rows, cols, col, has_left, has_right);
    box.sum_u += s.sum_u;
    box.sum_v += s.sum_v;
  }
  const float rows_present =
      1.0f + static_cast<float>(row > 0) + static_cast<float>(row + 1 < rows);
  const float cols_present = 1.0f + static_cast<float>(has_left) + static_cast<float>(has_right);
  const int at = row * cols + col;
  update_cell(mu[at], mv[at], box.sum_u, box.sum_v, rows_present * cols_present,
              batch_members::member_rates(shared, feed, kill, member), u_next[offset + at],
              v_next[offset + at]);
}

// Device memory that frees itself.
using DeviceArray = gs::DeviceFloats;

class GpuBatch final : public BatchStepper {
 public:
  explicit GpuBatch(GpuPath asked) : asked_(asked) {}
  GpuBatch(const GpuBatch&) = delete;
  GpuBatch& operator=(const GpuBatch&) = delete;

  void load(const BatchState& state, const BatchRates& rates) override {
    check_batch(state, rates);
    plan_ = plan_gpu(state.rows, state.cols, asked_);
    if (plan_.path == GpuPath::streaming && state.members > kMaxGridY) {
      throw gs::InvalidParameter("the streaming kernel runs at most " + std::to_string(kMaxGridY) +
                                 " members per batch (gridDim.z); got " +
                                 std::to_string(state.members));
    }
    // The previous batch goes first (its fields would count as used in the check below); a
    // batch that does not fit leaves the stepper empty.
    synchronize();
    for (DeviceArray* array : {&u_, &v_, &u_next_, &v_next_, &feed_, &kill_}) array->reset();
    members_ = rows_ = cols_ = 0;
    gs::require_device_memory("a batch of " + std::to_string(state.members) + " members of " +
                                  std::to_string(state.rows) + " x " + std::to_string(state.cols) +
                                  " cells (" + gs::bytes_text(plan_.bytes_per_member) +
                                  " per member)",
                              plan_.bytes_per_member * state.members);
    members_ = state.members;
    rows_ = state.rows;
    cols_ = state.cols;
    shared_ = shared_rates(rates);
    const std::size_t count = state.size();
    u_ = gs::device_floats(count);
    v_ = gs::device_floats(count);
    if (plan_.path == GpuPath::streaming) {
      u_next_ = gs::device_floats(count);
      v_next_ = gs::device_floats(count);
      // All bits set is a NaN: a cell the kernel forgets shows up in the tests.
      GS_CUDA_CHECK(cudaMemset(u_next_.get(), 0xFF, count * sizeof(float)));
      GS_CUDA_CHECK(cudaMemset(v_next_.get(), 0xFF, count * sizeof(float)));
    } else {
      u_next_.reset();
      v_next_.reset();
    }
    feed_ = gs::device_floats(rates.feed.size());
    kill_ = gs::device_floats(rates.kill.size());
    upload(u_.get(), state.u.data(), count);
    upload(v_.get(), state.v.data(), count);
    upload(feed_.get(), rates.feed.data(), rates.feed.size());
    upload(kill_.get(), rates.kill.data(), rates.kill.size());
  }

  void advance(int steps) override {
    if (steps <= 0 || members_ == 0) return;
    if (plan_.path == GpuPath::resident) {
      const ResidentKernel kernel = resident_kernel_for(plan_.rows_per_thread);
      for (int done = 0; done < steps; done += kStepsPerLaunch) {
        const int now = std::min(kStepsPerLaunch, steps - done);
        kernel<<<static_cast<unsigned>(members_), static_cast<unsigned>(plan_.threads_per_block),
                 static_cast<std::size_t>(plan_.shared_bytes)>>>(
            u_.get(), v_.get(), feed_.get(), kill_.get(), shared_, rows_, cols_, now);
        GS_CUDA_CHECK_LAUNCH();
      }
      return;
    }
    const dim3 block(kStreamBlockCols, kStreamBlockRows);
    const dim3 grid(static_cast<unsigned>((cols_ + kStreamBlockCols - 1) / kStreamBlockCols),
                    static_cast<unsigned>((rows_ + kStreamBlockRows - 1) / kStreamBlockRows),
                    static_cast<unsigned>(members_));
    for (int step = 0; step < steps; ++step) {
      streaming_kernel<<<grid, block>>>(u_.get(), v_.get(), u_next_.get(), v_next_.get(),
                                        feed_.get(), kill_.get(), shared_, rows_, cols_);
      GS_CUDA_CHECK_LAUNCH();
      std::swap(u_, u_next_);  // ping-pong: this step's output is the next step's input
      std::swap(v_, v_next_);
    }
  }

  void synchronize() override { GS_CUDA_CHECK(cudaDeviceSynchronize()); }

  void fetch(BatchState& state) override {
    synchronize();
    state = BatchState(members_, rows_, cols_);
    download(state.u.data(), u_.get(), state.size());
    download(state.v.data(), v_.get(), state.size());
  }

  void fetch_v(float* v) override {
    synchronize();
    download(v, v_.get(), static_cast<std::size_t>(members_) * rows_ * cols_);
  }

  std::string describe() const override { return plan_.summary; }

 private:
  static void upload(float* device, const float* host, std::size_t count) {
    GS_CUDA_CHECK(cudaMemcpy(device, host, count * sizeof(float), cudaMemcpyHostToDevice));
  }
  static void download(float* host, const float* device, std::size_t count) {
    GS_CUDA_CHECK(cudaMemcpy(host, device, count * sizeof(float), cudaMemcpyDeviceToHost));
  }

  GpuPath asked_;
  GpuPlan plan_;
  int members_ = 0;
  int rows_ = 0;
  int cols_ = 0;
  SharedRates shared_{};
  DeviceArray u_, v_, u_next_, v_next_, feed_, kill_;
};

#endif  // GS_HAVE_CUDA

}  // namespace

// ---------------------------------------------------------------------------------------------
// What batch.hpp declares (the batch's own helpers are inline there)
// ---------------------------------------------------------------------------------------------

std::unique_ptr<BatchStepper> make_cpu_stepper() {
  return std::make_unique<CpuBatch>();
}

int threads_in_for_each_member(int members, int threads) {
  const int previous = omp_get_max_threads();
  omp_set_num_threads(threads);
  // The size of the team that runs each member: 1 outside a parallel region.
  std::vector<int> team(static_cast<std::size_t>(members), 0);
  batch_members::for_each_member(members,
                                 [&team](int member) { team[member] = omp_get_num_threads(); });
  omp_set_num_threads(previous);
  return *std::max_element(team.begin(), team.end());
}

// ---------------------------------------------------------------------------------------------
// The launch plan: which kernel, and its shape, for members of a given size on a given device
// ---------------------------------------------------------------------------------------------

namespace {

// " under the limits of a Tesla T4 (GS_DEVICE_LIMITS=t4)" when the limits are an override's.
std::string with_limits(const gs::DeviceLimits& limits) {
  return limits.overridden() ? " under " + limits.source() : "";
}

std::string resident_summary(const GpuPlan& plan) {
  return "GPU resident kernel: one block of " + std::to_string(plan.threads_per_block) +
         " threads per member (" + std::to_string(plan.rows_per_thread) + " rows per thread), " +
         gs::bytes_text(plan.shared_bytes) + " of shared memory, " +
         std::to_string(plan.blocks_per_sm) + " block(s) per SM on " +
         std::to_string(plan.sm_count) + " SMs, " + std::to_string(kStepsPerLaunch) +
         " steps per launch";
}

// The streaming plan; `fallback` says why the resident kernel does not take the member ("" when
// the streaming path was asked for).
GpuPlan streaming_plan(int rows, int cols, const gs::DeviceLimits& limits,
                       const std::string& fallback) {
  if ((rows + kStreamBlockRows - 1) / kStreamBlockRows > kMaxGridY) {
    throw gs::InvalidParameter("a member of " + std::to_string(rows) +
                               " rows is too tall for the streaming kernel (at most " +
                               std::to_string(kMaxGridY * kStreamBlockRows) + " rows)");
  }
  if (kStreamBlockCols * kStreamBlockRows > limits.threads_per_block) {
    throw gs::InvalidParameter(
        "the streaming kernel's blocks of " + std::to_string(kStreamBlockCols * kStreamBlockRows) +
        " threads do not fit this GPU: a block may have at most " +
        std::to_string(limits.threads_per_block) + " threads" + with_limits(limits) +
        (fallback.empty() ? "" : "; and the resident kernel does not fit either: " + fallback));
  }
  GpuPlan plan;
  plan.path = GpuPath::streaming;
  plan.sm_count = limits.multiprocessors;
  plan.bytes_per_member =
      4 * std::int64_t{rows} * cols * std::int64_t{sizeof(float)} + 2 * sizeof(float);
  plan.fallback = fallback;
  plan.summary = "GPU streaming kernel: one step per launch over every member, blocks of " +
                 std::to_string(kStreamBlockCols) + " x " + std::to_string(kStreamBlockRows) +
                 " cells, the member in blockIdx.z" +
                 (fallback.empty() ? "" : " (not resident: " + fallback + ")");
  return plan;
}

}  // namespace

GpuPlan plan_gpu(int rows, int cols, GpuPath asked, const gs::DeviceLimits& limits) {
  const std::int64_t cells = std::int64_t{rows} * cols;
  const std::int64_t shared_bytes = 2 * cells * std::int64_t{sizeof(float)};
  const int max_threads = std::min(kMaxResidentThreads, limits.threads_per_block);
  // The shortest segment whose block fits: the most threads, so the most warps to hide latency.
  int rows_per_thread = 0;
  int threads = 0;
  for (const int k : kRowsPerThreadChoices) {
    const std::int64_t segments = std::int64_t{cols} * ((rows + k - 1) / k);
    const std::int64_t warps_of_threads = (segments + 31) / 32 * 32;
    if (warps_of_threads <= max_threads) {
      rows_per_thread = k;
      threads = static_cast<int>(warps_of_threads);
      break;
    }
  }
  // Why a block cannot hold a member, or "" when it can.
  std::string why;
  if (shared_bytes > limits.shared_per_block_optin) {
    why = "a member needs " + gs::bytes_text(shared_bytes) +
          " of shared memory, a block may have at most " +
          gs::bytes_text(limits.shared_per_block_optin);
  }
  if (rows_per_thread == 0) {
    why += (why.empty() ? "" : ", and ") + std::to_string(cols) +
           " columns need more threads than the " + std::to_string(max_threads) +
           " of a block (one per column segment)";
  }
  if (!why.empty()) why += with_limits(limits);
  if (asked == GpuPath::resident && !why.empty()) {
    throw gs::InvalidParameter(
        "a member of " + std::to_string(rows) + " x " + std::to_string(cols) +
        " cells does not fit the resident kernel: " + why + "; use the streaming path");
  }
  if (asked == GpuPath::streaming || !why.empty()) {
    return streaming_plan(rows, cols, limits, asked == GpuPath::streaming ? "" : why);
  }
  GpuPlan plan;
  plan.path = GpuPath::resident;
  plan.sm_count = limits.multiprocessors;
  plan.rows_per_thread = rows_per_thread;
  plan.threads_per_block = threads;
  plan.shared_bytes = shared_bytes;
  plan.bytes_per_member = 2 * cells * std::int64_t{sizeof(float)} + 2 * sizeof(float);
  plan.blocks_per_sm = gs::blocks_per_multiprocessor(limits, {}, threads, shared_bytes);
  plan.summary = resident_summary(plan);
  return plan;
}

#if GS_HAVE_CUDA

bool gpu_compiled() {
  return true;
}

GpuPlan plan_gpu(int rows, int cols, GpuPath asked) {
  if (!gs::gpu_status().available) throw std::runtime_error(gs::gpu_status().reason);
  const gs::DeviceLimits& limits = gs::device_limits();
  GpuPlan plan = plan_gpu(rows, cols, asked, limits);
  if (plan.path != GpuPath::resident) return plan;
  // What the limits alone could not say: whether the kernel's registers fit a block of that
  // many threads (ptxas decides them), and how many blocks one SM holds.
  const ResidentKernel kernel = resident_kernel_for(plan.rows_per_thread);
  const void* entry = reinterpret_cast<const void*>(kernel);
  const std::string problem = gs::launch_problem(limits, gs::kernel_resources(entry),
                                                 plan.threads_per_block, plan.shared_bytes);
  if (!problem.empty()) {
    const std::string why = "its block of " + std::to_string(plan.threads_per_block) +
                            " threads does not fit: " + problem + with_limits(limits);
    if (asked == GpuPath::resident) {
      throw gs::InvalidParameter(
          "a member of " + std::to_string(rows) + " x " + std::to_string(cols) +
          " cells does not fit the resident kernel: " + why + "; use the streaming path");
    }
    return streaming_plan(rows, cols, limits, why);
  }
  // Above 48 KiB a block's dynamic shared memory must be asked for, per kernel; the occupancy
  // query below and every launch of this kernel then may use it.
  GS_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(plan.shared_bytes)));
  plan.blocks_per_sm = gs::resident_blocks(entry, plan.threads_per_block, plan.shared_bytes);
  plan.summary = resident_summary(plan);
  return plan;
}

std::unique_ptr<BatchStepper> make_gpu_stepper(GpuPath path) {
  return std::make_unique<GpuBatch>(path);
}

DeviceMemory device_memory() {
  const gs::DeviceMemory memory = gs::device_memory();
  return {memory.free, memory.total};
}

#else  // no CUDA: the GPU path is not there, and says so

bool gpu_compiled() {
  return false;
}

GpuPlan plan_gpu(int, int, GpuPath) {
  throw std::runtime_error("this build has no CUDA support (CMake found no CUDA toolkit)");
}

std::unique_ptr<BatchStepper> make_gpu_stepper(GpuPath) {
  throw std::runtime_error("this build has no CUDA support (CMake found no CUDA toolkit)");
}

DeviceMemory device_memory() {
  return {};
}

#endif  // GS_HAVE_CUDA

}  // namespace GS_LESSON_NAMESPACE
