// Lesson 09: what the batched steppers of sweep.cpp offer to gs_sweep (one of the course's
// programs) and to the tests (tests/test_lesson09.cpp). Read, not edited.
//
// A batch is B independent Gray-Scott simulations ("members") of R x C cells, each with its own
// feed rate F and kill rate k; Du, Dv and dt are shared, the stencil is the course's unit 3x3
// one. Fields are laid out [member][row][col], one array per field: the layout of the HDF5
// dataset `v` that gs_sweep writes. A BatchStepper is the batched counterpart of gs::Stepper:
// load() once, advance() as often as needed, fetch() the result.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gs/device_limits.hpp"
#include "gs/params.hpp"
#include "gs/state.hpp"

namespace GS_LESSON_NAMESPACE {

// u and v of every member of a batch, [member][row][col].
struct BatchState {
  int members = 0;
  int rows = 0;
  int cols = 0;
  std::vector<float> u;
  std::vector<float> v;

  BatchState() = default;
  // A batch whose every cell holds u_value and v_value.
  BatchState(int members, int rows, int cols, float u_value = 1.0f, float v_value = 0.0f);
  std::size_t member_cells() const {
    return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  }
  std::size_t size() const { return member_cells() * static_cast<std::size_t>(members); }
};

// `members` copies of `state`.
BatchState repeat_state(const gs::State& state, int members);
// Member `member` of `batch`, as a gs::State.
gs::State member_state(const BatchState& batch, int member);
// Puts `state` (of the batch's size) into member `member` of `batch`.
void set_member(BatchState& batch, int member, const gs::State& state);

// The rates of a batch: one F and one k per member, Du, Dv and dt shared.
struct BatchRates {
  std::vector<float> feed;
  std::vector<float> kill;
  float diffusion_u = 0.1f;
  float diffusion_v = 0.05f;
  float dt = 1.0f;
  // Member `member`'s rates as a gs::Rates (unit stencil): what a single simulation of that
  // member would be given.
  gs::Rates member(int member) const;
};

// Advances every member of a batch; the batched counterpart of gs::Stepper.
class BatchStepper {
 public:
  virtual ~BatchStepper() = default;
  // Takes a copy of `state` and `rates` (one F and one k per member); throws
  // gs::InvalidParameter when they disagree in size or the batch cannot run on this path.
  virtual void load(const BatchState& state, const BatchRates& rates) = 0;
  // Advances every member by `steps` steps (steps >= 0); may return before the GPU is done.
  virtual void advance(int steps) = 0;
  // Writes u and v of every member into `state` (resized); waits for pending work first.
  virtual void fetch(BatchState& state) = 0;
  // Writes v of every member (members * rows * cols values) to `v`; waits first.
  virtual void fetch_v(float* v) = 0;
  // Waits until every step asked for so far is done.
  virtual void synchronize() {}
  // One line: where and how the batch runs (threads; kernel, block shape, shared memory).
  virtual std::string describe() const = 0;
};

// The CPU path: OpenMP over members (member.hpp), all the steps of one member on one thread.
std::unique_ptr<BatchStepper> make_cpu_stepper();

// How the GPU advances a batch.
enum class GpuPath {
  automatic,  // resident when a member fits in one block's shared memory, else streaming
  resident,   // one block per member, u and v in shared memory for many steps per launch
  streaming,  // one step per launch over every member, the fields in global memory
};

// What the GPU path will do for members of a given size: the kernel, its launch shape and the
// device memory it needs.
struct GpuPlan {
  GpuPath path = GpuPath::streaming;  // resident or streaming (never automatic)
  int rows_per_thread = 0;            // resident: the column segment each thread updates
  int threads_per_block = 0;          // resident: threads of the block of one member
  std::int64_t shared_bytes = 0;      // resident: dynamic shared memory per block
  int blocks_per_sm = 0;              // resident: blocks of this shape one SM holds at once
  int sm_count = 0;                   // multiprocessors of the device
  std::int64_t bytes_per_member = 0;  // device memory per member (fields and its F and k)
  std::string fallback;               // streaming although not asked for: why not resident
  std::string summary;                // one line for the report
};

// Whether this build has the GPU path (CUDA was found when it was configured).
bool gpu_compiled();

// The plan for members of rows x cols cells on a device with `limits`, for the path asked for:
// resident when a member fits one block (shared memory, threads), else streaming, with the
// reason in `fallback` and the summary. Throws gs::InvalidParameter when the resident path is
// asked for and a member does not fit, or when no path fits (the message says why). Needs no
// GPU: blocks_per_sm is the limits' model, without the kernel's registers.
GpuPlan plan_gpu(int rows, int cols, GpuPath asked, const gs::DeviceLimits& limits);

// The plan for the current device (gs::device_limits(): GS_DEVICE_LIMITS counts), its kernel's
// registers checked and its occupancy asked of the runtime. Throws as above, and
// std::runtime_error without CUDA or without a usable GPU.
GpuPlan plan_gpu(int rows, int cols, GpuPath asked);

// The GPU path with the plan of plan_gpu(rows, cols, path) for the batch given to load().
std::unique_ptr<BatchStepper> make_gpu_stepper(GpuPath path);

// Free and total memory of the current device in bytes, within its limits (gs::device_memory():
// under GS_DEVICE_LIMITS the smaller card's); both 0 without a GPU.
struct DeviceMemory {
  std::int64_t free = 0;
  std::int64_t total = 0;
};
DeviceMemory device_memory();

// How many OpenMP threads for_each_member() (member.hpp) puts to work on `members` members when
// OpenMP may use `threads`: what tells a parallel loop from a serial one, which give the same
// numbers.
int threads_in_for_each_member(int members, int threads);

// ---------------------------------------------------------------------------------------------
// The batch's own helpers
// ---------------------------------------------------------------------------------------------

inline BatchState::BatchState(int members_, int rows_, int cols_, float u_value, float v_value)
    : members(members_),
      rows(rows_),
      cols(cols_),
      u(static_cast<std::size_t>(members_) * static_cast<std::size_t>(rows_) *
            static_cast<std::size_t>(cols_),
        u_value),
      v(u.size(), v_value) {}

inline BatchState repeat_state(const gs::State& state, int members) {
  BatchState batch(members, state.rows, state.cols);
  for (int member = 0; member < members; ++member) set_member(batch, member, state);
  return batch;
}

inline gs::State member_state(const BatchState& batch, int member) {
  gs::State state(batch.rows, batch.cols);
  const std::size_t begin = batch.member_cells() * static_cast<std::size_t>(member);
  std::copy_n(batch.u.begin() + static_cast<std::ptrdiff_t>(begin), batch.member_cells(),
              state.u.begin());
  std::copy_n(batch.v.begin() + static_cast<std::ptrdiff_t>(begin), batch.member_cells(),
              state.v.begin());
  return state;
}

inline void set_member(BatchState& batch, int member, const gs::State& state) {
  if (state.rows != batch.rows || state.cols != batch.cols) {
    throw gs::InvalidParameter("set_member: the state's size differs from the batch's");
  }
  const std::size_t begin = batch.member_cells() * static_cast<std::size_t>(member);
  std::copy(state.u.begin(), state.u.end(), batch.u.begin() + static_cast<std::ptrdiff_t>(begin));
  std::copy(state.v.begin(), state.v.end(), batch.v.begin() + static_cast<std::ptrdiff_t>(begin));
}

inline gs::Rates BatchRates::member(int m) const {
  gs::Rates rates;
  rates.diffusion_u = diffusion_u;
  rates.diffusion_v = diffusion_v;
  rates.dt = dt;
  rates.feed = feed.at(static_cast<std::size_t>(m));
  rates.kill = kill.at(static_cast<std::size_t>(m));
  return rates;
}

}  // namespace GS_LESSON_NAMESPACE
