// Lesson 09's points, checked on the host, where every learner is graded:
//
//  - Members are independent: each member has cells of its own (member_offset(), past 2^31 cells
//    too), and one member's F and k change its own result and no other member's.
//    A batch whose members share a rate (member 0's, say) passes every check whose members start
//    alike with alike rates; here each path of member.hpp (the CPU path: for_each_member(),
//    member_offset(), member_rates(); and the resident kernel) runs a batch three times: as it
//    is, with member 2's (F, k) changed, and with member 0's changed.
//  - The resident kernel stays resident: global memory is read once, before its first barrier,
//    and written once, after its last. A kernel that goes through global memory at every step
//    gives the same numbers at the cost the lesson removes. The
//    kernel runs here on the host, as the GPU would run it: one std::thread per CUDA thread of
//    the block, __syncthreads() a barrier of them all, the member's cells in a NaN-poisoned
//    global array. At its first barrier the member's cells in global memory are replaced by
//    NaN: a kernel that reads them after that computes NaN. At every later barrier they are
//    compared with what they were: a kernel that writes them before its last barrier is seen.
//
// The host walk gives member.hpp what a kernel of it uses: threadIdx, blockIdx, blockDim,
// __syncthreads() and the block's dynamic shared memory, declared in the kernel as
// `extern __shared__ float member_fields[];` (keep that name). Used by tests/test_lesson09.cpp
// (the exercise and the solution) and by tests/point/test_lesson09_wrong_answer.cpp (the
// fixtures of wrong answers, tests/fixtures/09_parameter_sweep/, which must fail it).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "gs/state.hpp"

namespace lesson09_point::walk {

struct Index {
  unsigned x, y, z;
};
inline thread_local Index thread_index{0, 0, 0};
inline thread_local Index block_index{0, 0, 0};
inline Index block_dim{1, 1, 1};

// The barrier of one block's threads. A thread that returns leaves it (drop()), as an exited
// thread no longer holds a block's barrier up. on_complete(n) runs once the n-th barrier is
// reached by every thread, before any of them goes on. A barrier that some thread never reaches
// is given up after 10 s (broken), and every later one at once, so that a kernel that skips one
// fails instead of hanging.
class Barrier {
 public:
  template <class OnComplete>
  Barrier(int threads, OnComplete on_complete) : expected_(threads), on_complete_(on_complete) {}

  void arrive_and_wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (broken_) return;  // once given up, the walk only runs to its end, as fast as it can
    const long generation = generation_;
    if (++arrived_ == expected_) {
      complete();
      return;
    }
    if (!changed_.wait_for(lock, std::chrono::seconds(10),
                           [&] { return generation_ != generation; })) {
      broken_ = true;
      complete();
    }
  }

  void drop() {
    std::unique_lock<std::mutex> lock(mutex_);
    --expected_;
    if (arrived_ > 0 && arrived_ >= expected_) complete();
  }

  int count() const { return count_; }
  bool broken() const { return broken_; }

 private:
  void complete() {
    ++count_;
    on_complete_(count_);
    arrived_ = 0;
    ++generation_;
    changed_.notify_all();
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  int expected_;
  int arrived_ = 0;
  long generation_ = 0;
  int count_ = 0;
  bool broken_ = false;
  std::function<void(int)> on_complete_;
};

inline Barrier*& current_barrier() {
  static Barrier* barrier = nullptr;
  return barrier;
}

inline void sync_threads() {
  current_barrier()->arrive_and_wait();
}

}  // namespace lesson09_point::walk

// The block's dynamic shared memory: room for members of up to 2 * 4096 floats (64 x 64 cells).
// In the learner's namespace: the kernel's `extern __shared__ float member_fields[]`, a declaration
// at block scope, names a variable of its innermost enclosing namespace.
namespace batch_members {
alignas(16) inline float member_fields[2 * 4096];
}  // namespace batch_members

// member.hpp, with CUDA's names for the host walk.
#pragma push_macro("GS_HAVE_CUDA")
#undef GS_HAVE_CUDA
#define GS_HAVE_CUDA 1
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__
#define __syncthreads() ::lesson09_point::walk::sync_threads()
#define threadIdx ::lesson09_point::walk::thread_index
#define blockIdx ::lesson09_point::walk::block_index
#define blockDim ::lesson09_point::walk::block_dim
#include <member.hpp>  // its #pragma unroll: the targets compile with -Wno-unknown-pragmas
#undef __global__
#undef __device__
#undef __host__
#undef __forceinline__
#undef __launch_bounds__
#undef __shared__
#undef __syncthreads
#undef threadIdx
#undef blockIdx
#undef blockDim
#pragma pop_macro("GS_HAVE_CUDA")

namespace lesson09_point {

// A batch as member.hpp sees it: members * rows * cols floats per field, and one F and k per
// member.
struct Batch {
  int members = 0;
  int rows = 0;
  int cols = 0;
  std::vector<float> u, v;
  std::vector<float> feed, kill;
  std::size_t cells() const { return static_cast<std::size_t>(rows) * cols; }
};

inline SharedRates shared_rates() {
  return {0.1f, 0.05f, 1.0f};
}

// Four members of 9 x 11 cells, each its own random start and its own (F, k).
inline Batch start_batch(int members = 4, int rows = 9, int cols = 11) {
  Batch batch;
  batch.members = members;
  batch.rows = rows;
  batch.cols = cols;
  for (int m = 0; m < members; ++m) {
    const gs::State s = gs::random_state(rows, cols, 4100 + static_cast<std::uint64_t>(m));
    batch.u.insert(batch.u.end(), s.u.begin(), s.u.end());
    batch.v.insert(batch.v.end(), s.v.begin(), s.v.end());
    batch.feed.push_back(0.022f + 0.004f * static_cast<float>(m));
    batch.kill.push_back(0.051f + 0.002f * static_cast<float>(m));
  }
  return batch;
}

// One step of one member's cells (row-major, rows x cols) with rates r: the model, written out
// (update_cell() of member_api.hpp on each cell's 3 x 3 box, cells outside the grid absent).
inline void model_step(const float* u, const float* v, float* u_next, float* v_next, int rows,
                       int cols, const MemberRates& r) {
  for (int row = 0; row < rows; ++row) {
    for (int col = 0; col < cols; ++col) {
      float box_u = 0.0f, box_v = 0.0f, count = 0.0f;
      for (int y = row - 1; y <= row + 1; ++y) {
        for (int x = col - 1; x <= col + 1; ++x) {
          if (y < 0 || y >= rows || x < 0 || x >= cols) continue;
          box_u += u[y * cols + x];
          box_v += v[y * cols + x];
          count += 1.0f;
        }
      }
      update_cell(u[row * cols + col], v[row * cols + col], box_u, box_v, count, r,
                  u_next[row * cols + col], v_next[row * cols + col]);
    }
  }
}

// The CPU path of member.hpp: for_each_member() runs each member; member_offset() finds its cells
// and member_rates() its rates; the step is the model's.
inline void run_cpu_path(Batch& batch, int steps) {
  const int rows = batch.rows, cols = batch.cols;
  float* const u = batch.u.data();
  float* const v = batch.v.data();
  const float* const feed = batch.feed.data();
  const float* const kill = batch.kill.data();
  batch_members::for_each_member(batch.members, [=](int member) {
    const std::size_t at = batch_members::member_offset(member, rows, cols);
    const MemberRates r = batch_members::member_rates(shared_rates(), feed, kill, member);
    std::vector<float> u_next(static_cast<std::size_t>(rows) * cols);
    std::vector<float> v_next(u_next.size());
    for (int step = 0; step < steps; ++step) {
      model_step(u + at, v + at, u_next.data(), v_next.data(), rows, cols, r);
      std::copy(u_next.begin(), u_next.end(), u + at);
      std::copy(v_next.begin(), v_next.end(), v + at);
    }
  });
}

// What the walk of one launch saw.
struct Launch {
  int barriers = 0;                // barriers of the last block
  bool broken = false;             // a barrier some thread never reached
  int written_before_barrier = 0;  // the first barrier at which global memory had changed, or 0
};

inline int threads_for(int rows, int cols, int rows_per_thread) {
  const int segments = cols * ((rows + rows_per_thread - 1) / rows_per_thread);
  return (segments + 31) / 32 * 32;
}

// One launch of resident_kernel<kRowsPerThread>, one block per member, walked on the host (the
// blocks one after the other). With `poison`, each member's cells in global memory become NaN
// at its block's first barrier and are watched at every later one.
template <int kRowsPerThread>
Launch walk_resident(Batch& batch, int steps, bool poison) {
  Launch seen;
  const int threads = threads_for(batch.rows, batch.cols, kRowsPerThread);
  const std::size_t cells = batch.cells();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int member = 0; member < batch.members; ++member) {
    float* const gu = batch.u.data() + static_cast<std::size_t>(member) * cells;
    float* const gv = batch.v.data() + static_cast<std::size_t>(member) * cells;
    std::vector<float> was_u, was_v;
    walk::Barrier barrier(threads, [&](int n) {
      if (!poison) return;
      if (n == 1) {
        std::fill(gu, gu + cells, nan);
        std::fill(gv, gv + cells, nan);
      } else if (seen.written_before_barrier == 0 &&
                 (std::memcmp(was_u.data(), gu, cells * sizeof(float)) != 0 ||
                  std::memcmp(was_v.data(), gv, cells * sizeof(float)) != 0)) {
        seen.written_before_barrier = n;
      }
      was_u.assign(gu, gu + cells);
      was_v.assign(gv, gv + cells);
    });
    walk::current_barrier() = &barrier;
    walk::block_dim = {static_cast<unsigned>(threads), 1, 1};
    std::fill(std::begin(batch_members::member_fields), std::end(batch_members::member_fields),
              nan);
    std::vector<std::thread> team;
    team.reserve(static_cast<std::size_t>(threads));
    for (int t = 0; t < threads; ++t) {
      team.emplace_back([&, t] {
        walk::thread_index = {static_cast<unsigned>(t), 0, 0};
        walk::block_index = {static_cast<unsigned>(member), 0, 0};
        batch_members::resident_kernel<kRowsPerThread>(
            batch.u.data(), batch.v.data(), batch.feed.data(), batch.kill.data(), shared_rates(),
            batch.rows, batch.cols, steps);
        barrier.drop();
      });
    }
    for (std::thread& thread : team) thread.join();
    walk::current_barrier() = nullptr;
    seen.barriers = barrier.count();
    seen.broken = seen.broken || barrier.broken();
  }
  return seen;
}

// The first cell of member m whose value differs from `expected` by more than rounding, as text,
// or "".
inline std::string first_difference(const Batch& got, const Batch& expected, int m) {
  const std::size_t cells = got.cells();
  for (std::size_t i = 0; i < cells; ++i) {
    const std::size_t at = static_cast<std::size_t>(m) * cells + i;
    for (const auto& [name, a, b] :
         {std::tuple<const char*, float, float>{"u", got.u[at], expected.u[at]},
          std::tuple<const char*, float, float>{"v", got.v[at], expected.v[at]}}) {
      if (!(std::fabs(a - b) <= 1e-5f * (1.0f + std::fabs(b)))) {
        return std::string(name) + " of cell (" + std::to_string(i / got.cols) + ", " +
               std::to_string(i % got.cols) + ") is " + std::to_string(a) + ", the model gives " +
               std::to_string(b);
      }
    }
  }
  return "";
}

inline bool same_member(const Batch& a, const Batch& b, int m) {
  const std::size_t cells = a.cells(), at = static_cast<std::size_t>(m) * cells;
  return std::memcmp(a.u.data() + at, b.u.data() + at, cells * sizeof(float)) == 0 &&
         std::memcmp(a.v.data() + at, b.v.data() + at, cells * sizeof(float)) == 0;
}

// Runs `path` on the batch as it is, then with member `changed`'s (F, k) changed: "" when that
// member's result changed and no other's did.
template <class Path>
std::string check_one_change(const char* what, Path path, int changed) {
  Batch base = start_batch();
  Batch other = base;
  other.feed[changed] += 0.011f;
  other.kill[changed] -= 0.007f;
  path(base);
  path(other);
  const std::string where = std::string(what) + ", a batch of " + std::to_string(base.members) +
                            " members of " + std::to_string(base.rows) + " x " +
                            std::to_string(base.cols) + " cells, each its own (F, k): ";
  if (same_member(base, other, changed)) {
    return where + "member " + std::to_string(changed) + "'s F and k were changed and its result " +
           "did not change: each member must run with its own rates";
  }
  for (int m = 0; m < base.members; ++m) {
    if (m != changed && !same_member(base, other, m)) {
      return where + "changing member " + std::to_string(changed) + "'s F and k changed member " +
             std::to_string(m) + "'s result: members are independent simulations, one member's " +
             "rates change only its own result";
    }
  }
  return "";
}

// The point of the batch: independent members, on the CPU path and (walked on the host) in the
// resident kernel. "" when they are, else the first member that says otherwise.
inline std::string check_members_independent() {
  // Where member m lives: past 2^31 cells too (1100 members of 1080 x 1920 are 2.28e9 cells),
  // else two members share cells, or one lies outside the field.
  const std::size_t far = batch_members::member_offset(1100, 1080, 1920);
  if (far != std::size_t{1100} * 1080 * 1920) {
    return "member_offset(1100, 1080, 1920) is " + std::to_string(far) + ", not " +
           std::to_string(std::size_t{1100} * 1080 * 1920) +
           ": in a batch of more than 2^31 cells, member 1100 would not start where member "
           "1099 ends, and members would share cells or miss their own";
  }
  constexpr int kSteps = 3;
  const auto cpu = [](Batch& batch) { run_cpu_path(batch, kSteps); };
  const auto resident = [](Batch& batch) { walk_resident<2>(batch, kSteps, false); };
  for (const int changed : {2, 0}) {
    std::string problem = check_one_change("the CPU path (for_each_member)", cpu, changed);
    if (problem.empty()) problem = check_one_change("the resident kernel", resident, changed);
    if (!problem.empty()) return problem;
  }
  return "";
}

// The resident kernel made for kRowsPerThread rows per thread, on members of rows x cols: its
// result against the model, then the same launch with the input poisoned at its first barrier.
template <int kRowsPerThread>
std::string check_resident(int rows, int cols, int steps) {
  Batch expected = start_batch(3, rows, cols);
  for (int m = 0; m < expected.members; ++m) {
    const std::size_t at = static_cast<std::size_t>(m) * expected.cells();
    const MemberRates r{0.1f, 0.05f, 1.0f, expected.feed[m], expected.kill[m]};
    std::vector<float> u_next(expected.cells()), v_next(expected.cells());
    for (int step = 0; step < steps; ++step) {
      model_step(expected.u.data() + at, expected.v.data() + at, u_next.data(), v_next.data(), rows,
                 cols, r);
      std::copy(u_next.begin(), u_next.end(), expected.u.begin() + static_cast<long>(at));
      std::copy(v_next.begin(), v_next.end(), expected.v.begin() + static_cast<long>(at));
    }
  }
  const std::string where = "resident_kernel<" + std::to_string(kRowsPerThread) +
                            "> on 3 members of " + std::to_string(rows) + " x " +
                            std::to_string(cols) + " cells, " +
                            std::to_string(threads_for(rows, cols, kRowsPerThread)) + " threads, " +
                            std::to_string(steps) + " steps in one launch: ";
  Batch plain = start_batch(3, rows, cols);
  const Launch first = walk_resident<kRowsPerThread>(plain, steps, false);
  if (first.broken) return where + "a barrier was not reached by every thread of the block";
  for (int m = 0; m < plain.members; ++m) {
    const std::string wrong = first_difference(plain, expected, m);
    if (!wrong.empty()) {
      return where + "member " + std::to_string(m) + " is not advanced as the model says (" +
             wrong + "); the point is checked once the numbers are right";
    }
  }
  Batch poisoned = start_batch(3, rows, cols);
  const Launch second = walk_resident<kRowsPerThread>(poisoned, steps, true);
  if (second.written_before_barrier > 0) {
    return where + "the member's cells in global memory changed before barrier " +
           std::to_string(second.written_before_barrier) + " of " +
           std::to_string(second.barriers) +
           ": a resident kernel writes its member back once, after its last step, not at every "
           "step (global memory once per launch, shared memory between)";
  }
  for (int m = 0; m < poisoned.members; ++m) {
    const std::string wrong = first_difference(poisoned, expected, m);
    if (!wrong.empty()) {
      return where + "with the member's cells in global memory replaced by NaN at the block's " +
             "first barrier, member " + std::to_string(m) + " comes out wrong (" + wrong +
             "): the kernel reads global memory after its first barrier; a resident kernel " +
             "loads its member once, before it, and works in shared memory and registers";
    }
  }
  return "";
}

// The resident kernel at every segment length the plan gives (1 to 32 rows per thread), on
// members whose rows are not a multiple of the segment.
inline std::string check_kernel_stays_resident() {
  for (const std::string& problem :
       {check_resident<1>(7, 9, 4), check_resident<2>(9, 5, 3), check_resident<4>(11, 4, 3),
        check_resident<8>(19, 3, 3), check_resident<16>(37, 2, 2), check_resident<32>(70, 1, 2)}) {
    if (!problem.empty()) return problem;
  }
  return "";
}

}  // namespace lesson09_point
