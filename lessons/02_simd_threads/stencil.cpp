// Lesson 02 - SIMD and threads.
//
// Lesson 01's step again, rewritten for the two kinds of parallelism a CPU offers: vector
// units (one instruction on 8 or 16 floats at once) and several cores. The implementations,
// the threaded ones first:
//   l02-simd-omp       the exercise (row_loop.hpp, the file you edit): a row loop the compiler
//                      vectorizes, rows shared among OpenMP threads;
//   l02-blocked-omp    going further: the same row loop, each thread advancing a band of rows
//                      4 steps while it sits in the thread's cache (cache blocking); slower on
//                      both of the course's machines (README: a prediction that failed);
//   l02-simd           the same row loop on one thread: the vector gain alone;
//   l02-explicit-simd  the row loop written with std::experimental::simd: vectors by
//                      construction instead of by the compiler's consent;
//   l02-scalar-soa     the row loop with vectorization switched off: the layout gain alone.
// All share one layout: each field in its own array, every row padded to a multiple of
// 64 bytes and framed by a ring of zero "ghost" cells, so that a single branch-free loop
// updates every cell, edges included. README.md measures each step.
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <experimental/simd>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "gs/lesson.hpp"
#include "gs/params.hpp"
#include "gs/state.hpp"

// The exercise, in namespace row_loop: update_row(), one row of the step in a loop the compiler
// vectorizes, and update_rows(), the rows of one step shared among OpenMP threads. Angle
// brackets: the build picks lessons/02_simd_threads/row_loop.hpp (your stubs) or the solution's
// copy. It compiles on its own (LEARNER_ALONE) and sees only what it includes.
#include <row_loop.hpp>

namespace {

using gs::Rates;

// The same row with std::experimental::simd (the C++ Parallelism TS v2, in GCC's library since
// GCC 11). FloatVector holds as many floats as the target's widest register (16 with AVX-512,
// 8 with AVX2, 4 with plain x86-64), and its operators are vector instructions: no report to
// read, if it compiles it is vector code. One template serves both the vectors and the scalar
// leftover at the end of the row.
namespace stdx = std::experimental;
using FloatVector = stdx::native_simd<float>;

// Real = float reads one value; Real = FloatVector reads FloatVector::size() consecutive values
// from any address (element_aligned: only float alignment is promised).
template <typename Real>
Real load(const float* address) {
  if constexpr (std::is_same_v<Real, float>) {
    return *address;
  } else {
    return Real(address, stdx::element_aligned);
  }
}

template <typename Real>
Real sum_of_neighbours(const float* centre, std::ptrdiff_t stride) {
  const float* up = centre - stride;
  const float* down = centre + stride;
  return load<Real>(up - 1) + load<Real>(up) + load<Real>(up + 1) + load<Real>(centre - 1) +
         load<Real>(centre + 1) + load<Real>(down - 1) + load<Real>(down) + load<Real>(down + 1);
}

// The cells starting at u, v (one, or one vector of them); a float operand is broadcast.
template <typename Real>
void update_cells(const float* u, const float* v, const float* columns_in_grid, float rows_in_grid,
                  std::ptrdiff_t stride, const Rates& rates, Real& u_new, Real& v_new) {
  const Real neighbours = rows_in_grid * load<Real>(columns_in_grid) - 1.0f;
  const Real uc = load<Real>(u);
  const Real vc = load<Real>(v);
  const Real uvv = uc * vc * vc;
  const Real laplacian_u = sum_of_neighbours<Real>(u, stride) - neighbours * uc;
  const Real laplacian_v = sum_of_neighbours<Real>(v, stride) - neighbours * vc;
  u_new = uc + rates.dt * (rates.diffusion_u * laplacian_u - uvv + rates.feed * (1.0f - uc));
  v_new = vc + rates.dt * (rates.diffusion_v * laplacian_v + uvv - (rates.feed + rates.kill) * vc);
}

void update_row_explicit_simd(const float* u, const float* v, float* u_next, float* v_next,
                              const float* columns_in_grid, float rows_in_grid, int cols,
                              std::ptrdiff_t stride, const Rates& rates) {
  constexpr int width = static_cast<int>(FloatVector::size());
  int col = 0;
  for (; col + width <= cols; col += width) {
    FloatVector u_new;
    FloatVector v_new;
    update_cells(u + col, v + col, columns_in_grid + col, rows_in_grid, stride, rates, u_new,
                 v_new);
    // Column 0 of every row sits on a 64-byte boundary and col is a multiple of the width, so
    // these stores are aligned; saying so (vector_aligned) lets them use the aligned instruction.
    u_new.copy_to(u_next + col, stdx::vector_aligned);
    v_new.copy_to(v_next + col, stdx::vector_aligned);
  }
  for (; col < cols; ++col) {
    update_cells(u + col, v + col, columns_in_grid + col, rows_in_grid, stride, rates, u_next[col],
                 v_next[col]);
  }
}

// The scalar row on the new layout, one cell at a time through update_cells<float>, with the
// vectorizer switched off for this function only: l02-scalar-soa against l01-regular measures the
// layout, l02-simd against l02-scalar-soa the vectors. (Writing the row as one loop the vectorizer
// takes, and promising what it needs, is your row_loop::update_row().)
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-vectorize", "no-tree-slp-vectorize")))
#endif
void update_row_scalar(const float* __restrict__ u, const float* __restrict__ v,
                       float* __restrict__ u_next, float* __restrict__ v_next,
                       const float* __restrict__ columns_in_grid, float rows_in_grid, int cols,
                       std::ptrdiff_t stride, const Rates& rates) {
#if defined(__clang__)
#pragma clang loop vectorize(disable) interleave(disable)
#endif
  for (int col = 0; col < cols; ++col) {
    update_cells(u + col, v + col, columns_in_grid + col, rows_in_grid, stride, rates, u_next[col],
                 v_next[col]);
  }
}

enum class RowLoop { scalar, simd, explicit_simd };

// Floats in one 64-byte cache line: the alignment of every row start.
constexpr std::ptrdiff_t kLineFloats = 64 / sizeof(float);

// An array of floats that starts on a 64-byte boundary (a cache line, and the widest vector
// register), zero-filled. std::vector<float> promises only the alignment of a float (malloc
// gives 16 bytes in practice).
class AlignedFloats {
 public:
  AlignedFloats() = default;
  explicit AlignedFloats(std::size_t count) {
    const std::size_t bytes =
        (count * sizeof(float) + 63) / 64 * 64;  // aligned_alloc wants a multiple of 64
    memory_.reset(static_cast<float*>(std::aligned_alloc(64, std::max<std::size_t>(bytes, 64))));
    if (!memory_) throw std::bad_alloc();
    std::memset(memory_.get(), 0, std::max<std::size_t>(bytes, 64));
  }
  float* data() { return memory_.get(); }
  const float* data() const { return memory_.get(); }

 private:
  struct Free {
    void operator()(float* memory) const { std::free(memory); }
  };
  std::unique_ptr<float, Free> memory_;
};

// One field in the padded layout: rows + 2 rows (a ghost row above and below), each `stride`
// floats. Cell (row, col) lives at (row + 1) * stride + kLineFloats + col: a full cache line of
// padding on the left puts column 0 of every row on a 64-byte boundary, with the left ghost
// cell just before it; the right ghost cell and the rounding up to whole lines follow the row.
class PaddedField {
 public:
  PaddedField() = default;
  PaddedField(int rows, int cols)
      : rows_(rows),
        cols_(cols),
        stride_((kLineFloats + cols + 1 + kLineFloats - 1) / kLineFloats * kLineFloats),
        memory_(static_cast<std::size_t>(stride_) * static_cast<std::size_t>(rows + 2)) {}
  float* row(int r) { return memory_.data() + (r + 1) * stride_ + kLineFloats; }
  const float* row(int r) const { return memory_.data() + (r + 1) * stride_ + kLineFloats; }
  std::ptrdiff_t stride() const { return stride_; }
  void copy_from(const std::vector<float>& field) {
    for (int r = 0; r < rows_; ++r) {
      std::copy_n(field.data() + static_cast<std::size_t>(r) * cols_, cols_, row(r));
    }
  }
  void copy_to(float* field) const {
    for (int r = 0; r < rows_; ++r) {
      std::copy_n(row(r), cols_, field + static_cast<std::size_t>(r) * cols_);
    }
  }

 private:
  int rows_ = 0;
  int cols_ = 0;
  std::ptrdiff_t stride_ = 0;
  AlignedFloats memory_;
};

// What every stepper of this lesson keeps: two copies of u and v in the padded layout (read
// one, write the other, swap), the rates, and how many columns around each column are in the
// grid. The subclasses say how a step goes.
class PaddedState : public gs::Stepper, public gs::HoldsFields {
 public:
  void load(const gs::State& state, const Rates& rates) override {
    gs::require_unit_stencil(rates, "lesson 02's steppers");
    rows_ = state.rows;
    cols_ = state.cols;
    rates_ = rates;
    for (int buffer = 0; buffer < 2; ++buffer) {
      u_[buffer] = PaddedField(rows_, cols_);
      v_[buffer] = PaddedField(rows_, cols_);
    }
    u_[0].copy_from(state.u);
    v_[0].copy_from(state.v);
    current_ = 0;
    // How many of the columns left of, at and right of each column lie in the grid.
    columns_in_grid_ = AlignedFloats(static_cast<std::size_t>(cols_));
    for (int col = 0; col < cols_; ++col) {
      columns_in_grid_.data()[col] =
          1.0f + (col > 0 ? 1.0f : 0.0f) + (col < cols_ - 1 ? 1.0f : 0.0f);
    }
  }

  void fetch(gs::State& state) override {
    state = gs::State(rows_, cols_);
    u_[current_].copy_to(state.u.data());
    v_[current_].copy_to(state.v.data());
  }
  void fetch_v(float* v) override { v_[current_].copy_to(v); }
  gs::FieldView fields() override {
    return {u_[current_].row(0),
            v_[current_].row(0),
            u_[current_].stride(),
            rows_,
            cols_,
            gs::Device::cpu,
            nullptr};
  }

 protected:
  int rows_ = 0;
  int cols_ = 0;
  Rates rates_{};
  PaddedField u_[2];
  PaddedField v_[2];
  int current_ = 0;
  AlignedFloats columns_in_grid_;
};

// Advances the padded state with the chosen row loop, on one thread or on all of OpenMP's.
template <RowLoop kRowLoop, bool kThreads>
class PaddedStepper final : public PaddedState {
 public:
  void advance(int steps) override {
    for (int step = 0; step < steps; ++step) {
      step_once(u_[current_], v_[current_], u_[1 - current_], v_[1 - current_]);
      current_ = 1 - current_;
    }
  }

 private:
  void step_once(const PaddedField& u, const PaddedField& v, PaddedField& u_next,
                 PaddedField& v_next) const {
    const int rows = rows_;
    const std::ptrdiff_t stride = u.stride();
    // row_loop::update_rows() (row_loop.hpp) calls the lambda once for every row, on one thread
    // or shared among OpenMP's threads.
    row_loop::update_rows(rows, kThreads, [&](int row) {
      const float rows_in_grid = 1.0f + (row > 0 ? 1.0f : 0.0f) + (row < rows - 1 ? 1.0f : 0.0f);
      update_row_with(u.row(row), v.row(row), u_next.row(row), v_next.row(row), rows_in_grid,
                      stride);
    });
  }

  void update_row_with(const float* u, const float* v, float* u_next, float* v_next,
                       float rows_in_grid, std::ptrdiff_t stride) const {
    const float* columns = columns_in_grid_.data();
    if constexpr (kRowLoop == RowLoop::simd) {
      row_loop::update_row(u, v, u_next, v_next, columns, rows_in_grid, cols_, stride, rates_);
    } else if constexpr (kRowLoop == RowLoop::explicit_simd) {
      update_row_explicit_simd(u, v, u_next, v_next, columns, rows_in_grid, cols_, stride, rates_);
    } else {
      update_row_scalar(u, v, u_next, v_next, columns, rows_in_grid, cols_, stride, rates_);
    }
  }
};

// Going further: cache blocking over rows. l02-simd-omp reads and writes the whole 33 MB of
// state every step; where that is more than the last-level cache, many threads wait on memory
// (README, "Cache blocking: a prediction that failed"). Here each thread copies a band of rows plus
// kSteps rows of halo on either side into two small private buffers, advances it kSteps steps
// there, and writes the band's rows back: one trip to memory per kSteps steps instead of one per
// step. The price is the halo: at step s a band computes kSteps - s extra rows on either side, work
// that its neighbour does too. Lesson 06 does the same on the GPU ("pyramids"). A band has about
// kBandRows rows: with 24 rows and 4 steps, the four buffers of (24 + 8 + 2) rows of 1984
// floats take 1.1 MB, about a core's L2 cache.
template <int kSteps, int kBandRows>
class BlockedStepper final : public PaddedState {
 public:
  void advance(int steps) override {
    scratch_.resize(static_cast<std::size_t>(omp_get_max_threads()));
    for (int done = 0; done < steps; done += kSteps) {
      advance_bands(std::min(kSteps, steps - done));
      current_ = 1 - current_;
    }
  }

 private:
  // One thread's two private copies of a band and its halo; local row i is grid row first + i.
  struct Scratch {
    int band_rows = -1;
    PaddedField u[2];
    PaddedField v[2];
  };

  void advance_bands(int steps) {
#pragma omp parallel
    {
      // Whole bands per thread, and at least one: every thread gets the same share.
      const int threads = omp_get_num_threads();
      const int per_thread = std::max(1, (rows_ + threads * kBandRows - 1) / (threads * kBandRows));
      const int bands = threads * per_thread;
      const int band_rows = (rows_ + bands - 1) / bands;
      Scratch& scratch = scratch_[static_cast<std::size_t>(omp_get_thread_num())];
      if (scratch.band_rows != band_rows) {
        scratch.band_rows = band_rows;
        for (int buffer = 0; buffer < 2; ++buffer) {
          scratch.u[buffer] = PaddedField(band_rows + 2 * kSteps, cols_);
          scratch.v[buffer] = PaddedField(band_rows + 2 * kSteps, cols_);
        }
      }
      // The implicit barrier at the end of this loop: no thread swaps before every band of this
      // block is written back.
#pragma omp for schedule(static)
      for (int band = 0; band < bands; ++band) {
        const int begin = band * band_rows;
        const int end = std::min(rows_, begin + band_rows);
        if (begin < end) advance_band(scratch, begin, end, steps);
      }
    }
  }

  // Advances grid rows [begin, end) by `steps` <= kSteps steps in the thread's scratch and
  // writes them to the other shared buffer.
  void advance_band(Scratch& scratch, int begin, int end, int steps) {
    const int first = begin - kSteps;  // the grid row of local row 0
    const int local_rows = scratch.band_rows + 2 * kSteps;
    const std::ptrdiff_t stride = scratch.u[0].stride();
    // Local rows outside the grid, ghost rows included, must read as zero (the edge rule).
    for (int local = -1; local <= local_rows; ++local) {
      const int row = first + local;
      if (row >= 0 && row < rows_) continue;
      for (int buffer = 0; buffer < 2; ++buffer) {
        std::fill_n(scratch.u[buffer].row(local) - 1, cols_ + 2, 0.0f);
        std::fill_n(scratch.v[buffer].row(local) - 1, cols_ + 2, 0.0f);
      }
    }
    const int copy_begin = std::max(0, first);
    const int copy_end = std::min(rows_, end + kSteps);
    for (int row = copy_begin; row < copy_end; ++row) {
      std::copy_n(u_[current_].row(row), cols_, scratch.u[0].row(row - first));
      std::copy_n(v_[current_].row(row), cols_, scratch.v[0].row(row - first));
    }
    int in = 0;
    for (int step = 1; step <= steps; ++step) {
      // The rows still exact after `step` steps: one fewer on either side each step.
      const int row_begin = std::max(0, begin - kSteps + step);
      const int row_end = std::min(rows_, end + kSteps - step);
      for (int row = row_begin; row < row_end; ++row) {
        const int local = row - first;
        const float rows_in_grid = 1.0f + (row > 0 ? 1.0f : 0.0f) + (row < rows_ - 1 ? 1.0f : 0.0f);
        row_loop::update_row(scratch.u[in].row(local), scratch.v[in].row(local),
                             scratch.u[1 - in].row(local), scratch.v[1 - in].row(local),
                             columns_in_grid_.data(), rows_in_grid, cols_, stride, rates_);
      }
      in = 1 - in;
    }
    for (int row = begin; row < end; ++row) {
      std::copy_n(scratch.u[in].row(row - first), cols_, u_[1 - current_].row(row));
      std::copy_n(scratch.v[in].row(row - first), cols_, v_[1 - current_].row(row));
    }
  }

  std::vector<Scratch> scratch_;
};

}  // namespace

namespace GS_LESSON_NAMESPACE {

std::vector<gs::Implementation> implementations() {
  return {
      {"l02-simd-omp", "02_simd_threads",
       "padded SoA, vectorized row loop, rows shared among OpenMP threads (the exercise)",
       gs::Device::cpu, [] { return std::make_unique<PaddedStepper<RowLoop::simd, true>>(); }},
      {"l02-blocked-omp", "02_simd_threads",
       "l02-simd-omp's row loop, bands of rows advanced 4 steps at a time in each thread's cache",
       gs::Device::cpu, [] { return std::make_unique<BlockedStepper<4, 24>>(); }},
      {"l02-simd", "02_simd_threads", "the same vectorized row loop on one thread", gs::Device::cpu,
       [] { return std::make_unique<PaddedStepper<RowLoop::simd, false>>(); }},
      {"l02-explicit-simd", "02_simd_threads",
       "row loop written with std::experimental::simd, one thread", gs::Device::cpu,
       [] { return std::make_unique<PaddedStepper<RowLoop::explicit_simd, false>>(); }},
      {"l02-scalar-soa", "02_simd_threads",
       "padded SoA layout, vectorization switched off: the layout gain alone", gs::Device::cpu,
       [] { return std::make_unique<PaddedStepper<RowLoop::scalar, false>>(); }},
  };
}

// For the tests: how many OpenMP threads row_loop::update_rows() puts to work on @p rows rows when
// OpenMP may use @p threads (a missing `parallel for` shows as 1).
int threads_in_update_rows(int rows, int threads) {
  std::vector<char> seen(static_cast<std::size_t>(threads), 0);
  const int previous = omp_get_max_threads();
  omp_set_num_threads(threads);
  row_loop::update_rows(rows, true, [&](int) {
    const int thread = omp_get_thread_num();
    if (thread >= 0 && thread < threads) seen[static_cast<std::size_t>(thread)] = 1;
  });
  omp_set_num_threads(previous);
  return static_cast<int>(std::count(seen.begin(), seen.end(), 1));
}

}  // namespace GS_LESSON_NAMESPACE
