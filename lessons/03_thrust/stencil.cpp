// Lesson 03 - Thrust transforms: the CuPy session, in C++.
//
// Array thinking on the GPU, and the rule of the day: upload once, compute in place, download
// once. Inside a data-centre GPU the fields move at a few TB/s; across PCIe to the host at some
// 50 GB/s, about fifty times slower. Three implementations, fastest first:
//   l03-fused            one thrust::transform per step computes each cell's whole 3x3 update
//                        of u and v in one functor; the fields stay on the device (the exercise:
//                        fused_step.hpp, the file you edit);
//   l03-array            array style, like CuPy slicing: one transform per term of the update,
//                        through temporaries (21 kernels and about 308 bytes per cell per step);
//   l03-copy-every-step  the fused step, but the state crosses PCIe to the host and back every
//                        step: the toll booth paid 32,000 times.
// After each advance() (one frame) one reduction of v (CUB on the GPU; its two functors are part
// of the exercise) checks that the state is still finite, and a diverging run stops with "the
// simulation diverged at frame N".
//
// The same source is compiled twice (cmake/GsLesson.cmake, KIND thrust): by nvcc with
// Thrust's CUDA backend (GS_THRUST_CUDA=1: namespace lesson03, names "l03-...") and by the C++
// compiler with Thrust's OpenMP backend (GS_THRUST_CUDA=0: namespace lesson03_cpu, names
// "l03cpu-..."), where thrust::device_vector lives in host memory and every transform is an
// OpenMP loop. README.md measures both.
#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/fill.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/transform.h>
#include <thrust/transform_reduce.h>
#include <thrust/tuple.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gs/lesson.hpp"
#include "gs/params.hpp"
#include "gs/state.hpp"
// What fused_step.hpp is given: GS_HOST_DEVICE, on_device(), Rates, raw(), FieldSummary and
// kEmptySummary.
#include "backend.hpp"

#if GS_THRUST_CUDA
#include <cub/device/device_reduce.cuh>

#include "gs/cuda_check.hpp"
#endif

// ---------------------------------------------------------------------------------------------
// 1. The exercise (fused_step.hpp, namespace fused): upload(), the one copy of the state to the
// device; SummarizeValue and CombineSummaries, the two functors of the per-frame reduction;
// FusedCellUpdate, the functor that computes one cell's whole update; fused_transform(), the one
// thrust::transform of a step. Angle brackets: the build picks lessons/03_thrust/fused_step.hpp
// (your stubs) or the solution's copy. It compiles on its own (LEARNER_ALONE): it sees
// backend.hpp and gs/state.hpp, not this file.
#include <fused_step.hpp>

namespace {

// The names and the device differ between the two builds of this file.
#if GS_THRUST_CUDA
#define GS_L03_NAME(VARIANT) "l03-" VARIANT
constexpr gs::Device kWhere = gs::Device::gpu;
constexpr const char* kBackend = "";
#else
#define GS_L03_NAME(VARIANT) "l03cpu-" VARIANT
constexpr gs::Device kWhere = gs::Device::cpu;
constexpr const char* kBackend = " (Thrust's OpenMP backend)";
#endif

// ---------------------------------------------------------------------------------------------
// 2. Array style: what CuPy does with slices, one kernel per term.
//
// Each functor is one element-wise operation over whole arrays. A Laplacian is built by eight
// "shifted adds", one per neighbour, like `lap[1:, :] += a[:-1, :] - a[1:, :]` in CuPy; cells
// whose neighbour in that direction lies outside the grid add nothing.

// laplacian[index] + (field[neighbour] - field[index]) for one fixed neighbour direction.
struct AddNeighbourDifference {
  const float* field;
  int rows;
  int cols;
  int row_offset;
  int col_offset;

  GS_HOST_DEVICE float operator()(int index, float laplacian) const {
    const int row = index / cols + row_offset;
    const int col = index % cols + col_offset;
    if (row < 0 || row >= rows || col < 0 || col >= cols) return laplacian;
    return laplacian + (field[row * cols + col] - field[index]);
  }
};

// uvv = u * v * v, the reaction term both updates share.
struct ReactionTerm {
  GS_HOST_DEVICE float operator()(float u, float v) const { return u * v * v; }
};

// u_next = u + dt * (Du * L(u) - uvv + F * (1 - u)), from the tuple (u, L(u), uvv).
struct UpdateU {
  Rates rates;
  GS_HOST_DEVICE float operator()(const thrust::tuple<float, float, float>& cell) const {
    const float u = thrust::get<0>(cell);
    return u + rates.dt * (rates.diffusion_u * thrust::get<1>(cell) - thrust::get<2>(cell) +
                           rates.feed * (1.0f - u));
  }
};

// v_next = v + dt * (Dv * L(v) + uvv - (F + k) * v), from the tuple (v, L(v), uvv).
struct UpdateV {
  Rates rates;
  GS_HOST_DEVICE float operator()(const thrust::tuple<float, float, float>& cell) const {
    const float v = thrust::get<0>(cell);
    return v + rates.dt * (rates.diffusion_v * thrust::get<1>(cell) + thrust::get<2>(cell) -
                           (rates.feed + rates.kill) * v);
  }
};

// ---------------------------------------------------------------------------------------------
// 3. A reduction per frame: is v still finite, and what do its values look like?
//
// One pass over v folds every value into a FieldSummary with your SummarizeValue and
// CombineSummaries (fused_step.hpp). On the GPU this is cub::DeviceReduce, with its scratch
// memory allocated once in load(); on the CPU backend thrust::transform_reduce.

// "the simulation diverged at frame 3: 12 of 8777 values of v are not finite (the finite ones:
// mean 0.41, min 0, max 0.99); ..." - what the learner needs to see why.
std::string divergence_message(int frame, const FieldSummary& summary, std::size_t cells) {
  std::ostringstream message;
  message.precision(9);
  message << "the simulation diverged at frame " << frame << ": " << summary.non_finite << " of "
          << cells << " values of v are not finite";
  const std::size_t finite = cells - static_cast<std::size_t>(summary.non_finite);
  if (finite > 0) {
    message << " (the finite ones: mean " << summary.sum / static_cast<double>(finite) << ", min "
            << summary.min << ", max " << summary.max << ")";
  }
  message << "; choose smaller rates or time step";
  return message.str();
}

// ---------------------------------------------------------------------------------------------
// 4. The fields on the device, and what every variant shares: upload in load(), download in
// fetch() and fetch_v(), the fused step, the per-frame check.

class DeviceFields : public gs::Stepper, public gs::HoldsFields {
 public:
  void load(const gs::State& state, const Rates& rates) override {
    gs::require_unit_stencil(rates, "lesson 03's steppers");
    rows_ = state.rows;
    cols_ = state.cols;
    rates_ = rates;
    frame_ = 0;
    fused::upload(state, u_, v_);  // the one upload: host memory -> device memory, across PCIe
    u_next_.resize(state.size());
    v_next_.resize(state.size());
    prepare_reduction();
  }

  // One frame: `steps` steps, then one reduction of v to catch a diverging run early. Frames
  // are counted as calls: the first advance() after load() is frame 1.
  void advance(int steps) override {
    for (int step = 0; step < steps; ++step) step_once();
    ++frame_;
    const FieldSummary summary = summarize_v();
    if (summary.non_finite > 0) throw gs::Diverged(divergence_message(frame_, summary, cells()));
  }

  // The downloads: device memory -> host memory, only when a frame is asked for.
  void fetch(gs::State& state) override {
    state.rows = rows_;
    state.cols = cols_;
    state.u.resize(cells());
    state.v.resize(cells());
    thrust::copy(u_.begin(), u_.end(), state.u.begin());
    thrust::copy(v_.begin(), v_.end(), state.v.begin());
  }
  void fetch_v(float* v) override { thrust::copy(v_.begin(), v_.end(), v); }
  gs::FieldView fields() override {
    return {raw(u_), raw(v_), cols_, rows_, cols_, kWhere, nullptr};  // the legacy default stream
  }

  void synchronize() override {
#if GS_THRUST_CUDA
    GS_CUDA_CHECK(cudaDeviceSynchronize());
#endif
  }

 protected:
  // One step of the variant; the current fields are u_ and v_ before and after.
  virtual void step_once() = 0;

  // The fused step: (u_, v_) -> (u_next_, v_next_) in one transform, then the buffers swap
  // roles (ping-pong: swapping two device_vectors swaps pointers, it copies nothing).
  void fused_step() {
    fused::fused_transform(u_, v_, u_next_, v_next_, rows_, cols_, rates_);
    u_.swap(u_next_);
    v_.swap(v_next_);
  }

  int cells() const {
    return rows_ * cols_;
  }

  int rows_ = 0;
  int cols_ = 0;
  Rates rates_{};
  thrust::device_vector<float> u_;
  thrust::device_vector<float> v_;
  thrust::device_vector<float> u_next_;
  thrust::device_vector<float> v_next_;

 private:
#if GS_THRUST_CUDA
  // CUB asks its caller for scratch memory: call once with no buffer to learn the size,
  // allocate it once, then every reduction reuses it (no cudaMalloc per frame).
  void prepare_reduction() {
    summary_on_device_.resize(1);
    std::size_t bytes = 0;
    GS_CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, bytes, values_of_v(), raw(summary_on_device_),
                                            cells(), fused::CombineSummaries{}, kEmptySummary));
    reduction_scratch_.resize(std::max<std::size_t>(bytes, 1));
  }

  FieldSummary summarize_v() {
    std::size_t bytes = reduction_scratch_.size();
    GS_CUDA_CHECK(cub::DeviceReduce::Reduce(raw(reduction_scratch_), bytes, values_of_v(),
                                            raw(summary_on_device_), cells(),
                                            fused::CombineSummaries{}, kEmptySummary));
    FieldSummary summary;  // 24 bytes back to the host (all a frame moves without output)
    GS_CUDA_CHECK(
        cudaMemcpy(&summary, raw(summary_on_device_), sizeof summary, cudaMemcpyDeviceToHost));
    return summary;
  }

  // v seen through SummarizeValue: CUB reads summaries, never a temporary array of them.
  thrust::transform_iterator<fused::SummarizeValue, const float*> values_of_v() const {
    return thrust::make_transform_iterator(raw(v_), fused::SummarizeValue{});
  }

  thrust::device_vector<unsigned char> reduction_scratch_;
  thrust::device_vector<FieldSummary> summary_on_device_;
#else
  void prepare_reduction() {}

  FieldSummary summarize_v() {
    return thrust::transform_reduce(on_device(), v_.begin(), v_.end(), fused::SummarizeValue{},
                                    kEmptySummary, fused::CombineSummaries{});
  }
#endif

  int frame_ = 0;
};

// l03-fused: the fused transform, the fields resident on the device.
class FusedStepper final : public DeviceFields {
 protected:
  void step_once() override { fused_step(); }
};

// l03-array: the step as CuPy writes it, one array operation per kernel. Per step and cell
// (counting every array element a kernel reads or writes, 4 bytes each):
//   2 fills (zero the Laplacians)                  2 kernels   2 x  4 =   8 bytes
//   16 shifted adds (8 neighbours x 2 fields):
//      read centre, neighbour, laplacian; write   16 kernels  16 x 16 = 256 bytes
//   uvv = u * v * v: read 2, write 1                1 kernel              12 bytes
//   u_next, v_next: read 3, write 1 each            2 kernels   2 x 16 =  32 bytes
//                                                  21 kernels            308 bytes
// against 1 kernel and 16 bytes (read u, v; write u, v) for the fused step. The temporaries
// are allocated once, in load(); CuPy's memory pool plays the same role.
class ArrayStyleStepper final : public DeviceFields {
 public:
  void load(const gs::State& state, const Rates& rates) override {
    DeviceFields::load(state, rates);
    laplacian_u_.resize(state.size());
    laplacian_v_.resize(state.size());
    uvv_.resize(state.size());
  }

 protected:
  void step_once() override {
    add_laplacian(u_, laplacian_u_);
    add_laplacian(v_, laplacian_v_);
    thrust::transform(on_device(), u_.begin(), u_.end(), v_.begin(), uvv_.begin(), ReactionTerm{});
    thrust::transform(
        on_device(),
        thrust::make_zip_iterator(
            thrust::make_tuple(u_.begin(), laplacian_u_.begin(), uvv_.begin())),
        thrust::make_zip_iterator(thrust::make_tuple(u_.end(), laplacian_u_.end(), uvv_.end())),
        u_next_.begin(), UpdateU{rates_});
    thrust::transform(
        on_device(),
        thrust::make_zip_iterator(
            thrust::make_tuple(v_.begin(), laplacian_v_.begin(), uvv_.begin())),
        thrust::make_zip_iterator(thrust::make_tuple(v_.end(), laplacian_v_.end(), uvv_.end())),
        v_next_.begin(), UpdateV{rates_});
    u_.swap(u_next_);
    v_.swap(v_next_);
  }

 private:
  // laplacian = 0, then one shifted add per neighbour: 9 kernels per field.
  void add_laplacian(const thrust::device_vector<float>& field,
                     thrust::device_vector<float>& laplacian) {
    thrust::fill(on_device(), laplacian.begin(), laplacian.end(), 0.0f);
    for (int row_offset = -1; row_offset <= 1; ++row_offset) {
      for (int col_offset = -1; col_offset <= 1; ++col_offset) {
        if (row_offset == 0 && col_offset == 0) continue;
        thrust::transform(on_device(), thrust::counting_iterator<int>(0),
                          thrust::counting_iterator<int>(cells()), laplacian.begin(),
                          laplacian.begin(),
                          AddNeighbourDifference{raw(field), rows_, cols_, row_offset, col_offset});
      }
    }
  }

  thrust::device_vector<float> laplacian_u_;
  thrust::device_vector<float> laplacian_v_;
  thrust::device_vector<float> uvv_;
};

// l03-copy-every-step: the fused step, but the state lives on the host between steps, as in
// a loop that forgets where its arrays are: upload u and v, step, download u and v. That is
// 4 x 4 bytes per cell across PCIe every step (33 MB at the official size) - the toll booth.
// (The host copy is ordinary pageable memory, as a std::vector or a NumPy array is.)
class CopyEveryStepStepper final : public DeviceFields {
 public:
  void load(const gs::State& state, const Rates& rates) override {
    DeviceFields::load(state, rates);
    on_host_ = state;
  }
  // Between steps the state lives in the host copy: that is what a caller may read and write.
  gs::FieldView fields() override {
    return {on_host_.u.data(), on_host_.v.data(), cols_, rows_, cols_, gs::Device::cpu, nullptr};
  }

 protected:
  void step_once() override {
    thrust::copy(on_host_.u.begin(), on_host_.u.end(), u_.begin());
    thrust::copy(on_host_.v.begin(), on_host_.v.end(), v_.begin());
    fused_step();
    thrust::copy(u_.begin(), u_.end(), on_host_.u.begin());
    thrust::copy(v_.begin(), v_.end(), on_host_.v.begin());
  }

 private:
  gs::State on_host_;
};

}  // namespace

namespace GS_LESSON_NAMESPACE {  // lesson03 (CUDA backend) or lesson03_cpu (OpenMP backend)

std::vector<gs::Implementation> implementations() {
  const std::string backend = kBackend;
  return {
      {GS_L03_NAME("fused"), "03_thrust",
       "one fused thrust::transform per step, fields resident (the exercise)" + backend, kWhere,
       [] { return std::make_unique<FusedStepper>(); }},
      {GS_L03_NAME("array"), "03_thrust",
       "array style like CuPy: 21 transforms per step through temporaries" + backend, kWhere,
       [] { return std::make_unique<ArrayStyleStepper>(); }},
      {GS_L03_NAME("copy-every-step"), "03_thrust",
       "the fused step, the state copied to the host and back every step" + backend, kWhere,
       [] { return std::make_unique<CopyEveryStepStepper>(); }},
  };
}

}  // namespace GS_LESSON_NAMESPACE
