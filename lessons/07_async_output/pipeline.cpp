// Lesson 07 - asynchronous output: the official run should cost no more than writing its bytes.
//
// Lesson 06 computes the 32,000 steps in about 0.15 s; writing the 8.29 GB they produce takes
// seconds. A loop that computes a frame, downloads it, checks it and writes it, one after the
// other (common/'s run_simulation), pays for each part in turn. Here the parts overlap, as the
// school's CuPy version does with its writer thread:
//
//   computing thread   advance(steps) -> snapshot of v + finiteness count (one kernel, on the
//                      stepper's stream) -> download queued on a copy stream into the frame's
//                      slot of a pinned host ring -> publish; next frame at once
//   copy stream        waits for the snapshot (an event), copies device -> pinned host
//   writer thread      takes frames in order, waits for each one's copy (an event), checks the
//                      count, writes it with HDF5 (the only thread that calls HDF5), releases
//                      the slot
//
// The computing thread waits only when every slot still holds a frame not yet written (the
// report says how often). The file you edit is frame_ring.hpp: the ring's hand-off between the
// two threads (FrameRing) and the queued download (queue_frame_copy). On a CPU the same ring
// and writer thread overlap the writing with lesson 02's threads.
//
// Why a snapshot: the stepper's next launches overwrite the buffer v lives in (ping-pong), so
// the download cannot read it while the next frame computes. A device-to-device copy into a
// slot of the device ring takes ~6 us for a frame (16.6 MB read + written at ~3 TB/s), on the
// compute stream, in order; the download then runs from the slot while the kernels go on.
// Why pinned memory: only page-locked host memory can be the target of an asynchronous copy
// that overlaps kernels (a pageable one is staged by the driver and waits for the GPU).
#include "pipeline.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <iomanip>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "gs/device_limits.hpp"
#include "gs/gpu.hpp"
#include "gs/hdf5_io.hpp"
#include "gs/interrupt.hpp"
#include "gs/lesson.hpp"
#include "gs/output_file.hpp"
#include "gs/state.hpp"
#include "gs/timing.hpp"

#if GS_HAVE_CUDA
#include <cuda_runtime.h>

#include "gs/cuda_check.hpp"
#endif

// The exercise, in namespace handoff: FrameRing, the hand-off between the computing thread and
// the writer thread, and queue_frame_copy(), the download queued on the copy stream. Angle
// brackets: the build picks lessons/07_async_output/frame_ring.hpp (your stubs) or the solution's
// copy. It compiles on its own (LEARNER_ALONE) and sees only what it includes.
#include <frame_ring.hpp>

namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Every slot holds one frame of v and, after it, the number of values of v that are not
// finite, as an unsigned 32-bit integer in the float's bits. Two special counts: the GPU's
// count has not arrived (the copy never ran), and the writer must count itself (CPU path).
constexpr std::uint32_t kCountMissing = 0xFFFFFFFFu;
constexpr std::uint32_t kCountOnWriter = 0xFFFFFFFEu;

std::uint32_t* count_of(float* slot, std::size_t cells) {
  return reinterpret_cast<std::uint32_t*>(slot + cells);
}

// One line of the timeline: a lane (compute, copy, write, wait), a frame, start and end in
// seconds since the run's clock started.
struct Interval {
  const char* lane;
  int frame;
  double start;
  double end;
};

#if GS_HAVE_CUDA
// ---------------------------------------------------------------------------------------------
// The GPU side: the snapshot kernel, and the slots, streams and events of the pipeline
// ---------------------------------------------------------------------------------------------

// Copies v (pitched, as the stepper keeps it) into a contiguous slot and counts the values that
// are not finite: the finiteness check of the frame, on the GPU, in the same pass as the copy.
// Each warp adds its count once (a shuffle reduction), so the atomic is rare.
__global__ void snapshot_kernel(const float* __restrict__ v, std::ptrdiff_t pitch, int rows,
                                int cols, float* __restrict__ slot,
                                unsigned int* __restrict__ not_finite) {
  // 32-bit indices: a grid has fewer than 2^31 cells (gs::kMaxCells), and 64-bit division is
  // slow on a GPU.
  const unsigned int cells = static_cast<unsigned int>(rows) * static_cast<unsigned int>(cols);
  const unsigned int width = static_cast<unsigned int>(cols);
  unsigned int count = 0;
  for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < cells;
       i += gridDim.x * blockDim.x) {
    const unsigned int row = i / width;
    const unsigned int col = i - row * width;
    const float value = v[static_cast<std::ptrdiff_t>(row) * pitch + col];
    slot[i] = value;
    count += isfinite(value) ? 0u : 1u;
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    count += __shfl_down_sync(0xffffffffu, count, offset);
  }
  if ((threadIdx.x & 31u) == 0 && count > 0) atomicAdd(not_finite, count);
}

// Page-locked host memory that frees itself.
struct PinnedFree {
  void operator()(float* pointer) const { cudaFreeHost(pointer); }
};
using PinnedFloats = std::unique_ptr<float, PinnedFree>;

PinnedFloats pinned_floats(std::size_t count) {
  void* pointer = nullptr;
  GS_CUDA_CHECK(cudaHostAlloc(&pointer, count * sizeof(float), cudaHostAllocDefault));
  return PinnedFloats(static_cast<float*>(pointer));
}

// A CUDA event that destroys itself (timing enabled: the timeline and the copy time read it).
class Event {
 public:
  Event() { GS_CUDA_CHECK(cudaEventCreate(&event_)); }
  ~Event() {
    if (event_ != nullptr) cudaEventDestroy(event_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// Seconds from event a to event b (both completed).
double seconds_between(const Event& a, const Event& b) {
  float milliseconds = 0.0f;
  GS_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, a.get(), b.get()));
  return 1e-3 * milliseconds;
}

// One slot of the ring on the GPU side: the device copy of the frame, and the four events of
// its journey.
struct DeviceSlot {
  gs::DeviceFloats snapshot;  // cells + 1 floats: the frame, then its count
  Event computing;            // recorded on the compute stream before the frame's steps
  Event ready;                // after the snapshot kernel
  Event copy_started;         // on the copy stream, once it waited for `ready`
  Event copied;               // on the copy stream, after the download
};

// The copy stream: non-blocking, so that it never waits for the legacy default stream (where
// lessons 03-05 compute) by accident, only for the events it is told to wait for.
class Stream {
 public:
  Stream() { GS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() {
    if (stream_ != nullptr) {
      cudaStreamSynchronize(stream_);
      cudaStreamDestroy(stream_);
    }
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};
#endif

// ---------------------------------------------------------------------------------------------
// The pipeline
// ---------------------------------------------------------------------------------------------

class Pipeline {
 public:
  Pipeline(const gs::Implementation& implementation, const gs::ProgramOptions& options,
           const GS_LESSON_NAMESPACE::PipelineSettings& settings)
      : implementation_(implementation),
        options_(options),
        settings_(settings),
        params_(options.params),
        cells_(static_cast<std::size_t>(params_.cells())),
        ring_(settings.overlap ? std::max(1, settings.slots) : 1) {}

  gs::RunResult run() {
    // The parameters were checked by the caller, once, where the user gave them (FrameLoop::run).
    result_.implementation = implementation_.name;
    result_.device_name = gs::describe_device(implementation_);
    result_.params = params_;
    result_.before_clock_seconds = gs::seconds_since_process_start();  // first: the parts add up
    const Clock::time_point start = Clock::now();

    // Both files of the run are checked before any work: what they name, that they are not one
    // file, the room (common/'s output mechanism, gs/output_file.hpp).
    std::vector<gs::PlannedOutput> outputs;
    if (options_.write_output) {
      outputs.push_back({params_.output, "-o", gs::output_file_bytes(params_)});
    }
    if (!settings_.timeline.empty()) outputs.push_back({settings_.timeline, "--timeline", 0});
    const std::vector<gs::OutputTarget> targets = gs::check_outputs(outputs);
    if (options_.write_output) {
      // check_outputs() checked the path and warned about temporary files left by killed runs:
      // the writer takes its target and does neither again. With fsync, the writer starts each
      // frame's writeback to the disk as it writes it (section 7).
      gs::OutputOptions writer_options = gs::frame_writer_options(options_, nullptr);
      writer_options.checked = targets.front();
      writer_ = std::make_unique<gs::FrameWriter>(params_.output, params_, implementation_.name,
                                                  std::move(writer_options));
    }
    stepper_ = implementation_.create();
    stepper_->load(gs::starting_state(params_), params_.rates);
    prepare_slots();
    stepper_->synchronize();
    result_.startup_seconds = seconds_between(start, Clock::now());

    if (writer_) {
      run_with_output();
    } else {
      run_compute_only();
    }
    result_.seconds = seconds_between(start, Clock::now());
    if (!settings_.timeline.empty()) write_timeline();
    return result_;
  }

  ~Pipeline() {
    // An exception left the writer thread running: stop it before the ring and slots go away.
    if (writer_thread_.joinable()) {
      ring_.abort();
      writer_thread_.join();
    }
#if GS_HAVE_CUDA
    if (gpu_) cudaDeviceSynchronize();  // no copy may still target a slot about to be freed
#endif
  }
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

 private:
  // Compute only (--no-output): the frames are computed and waited for one by one, as
  // gs_benchmark does; the last one is checked for values that are not finite.
  void run_compute_only() {
    result_.pipeline = "none (compute only)";
    gs::ProgressLine progress(params_.frames, options_.progress);
    gs::BatchedAdvance batches(params_.cells());
    const Clock::time_point start = Clock::now();
    for (int frame = 0; frame < params_.frames; ++frame) {
      gs::throw_if_interrupted("before frame " + std::to_string(frame + 1));
      const Clock::time_point frame_start = Clock::now();
      batches.advance(*stepper_, params_.steps_per_frame, frame);
      stepper_->synchronize();
      batches.frame_took(params_.steps_per_frame, seconds_between(frame_start, Clock::now()));
      result_.steps += params_.steps_per_frame;
      progress.update(frame + 1);
    }
    progress.finish();
    result_.compute_seconds = seconds_between(start, Clock::now());
    std::vector<float> v(cells_);
    stepper_->fetch_v(v.data());
    const auto bad = std::count_if(v.begin(), v.end(), [](float x) { return !std::isfinite(x); });
    if (bad > 0) throw gs::Diverged(divergence(params_.frames - 1, static_cast<std::size_t>(bad)));
  }

  void run_with_output() {
    result_.pipeline = settings_.overlap ? "pipelined: " + std::to_string(ring_.slots()) +
                                               " slots, one writer thread"
                                         : "not overlapped: the computing thread writes";
    if (gpu_) result_.pipeline += ", GPU snapshot + pinned download on a copy stream";
    if (settings_.overlap) writer_thread_ = std::thread([this] { writer_loop(); });

    gs::ProgressLine progress(params_.frames, options_.progress);
    gs::BatchedAdvance batches(params_.cells());
    for (int frame = 0; frame < params_.frames; ++frame) {
      gs::throw_if_interrupted("before frame " + std::to_string(frame + 1));
      const Clock::time_point before_wait = Clock::now();
      const int waits_before = ring_.waits();
      const bool free_slot = ring_.acquire(frame);
      if (ring_.waits() > waits_before) {
        const Clock::time_point after_wait = Clock::now();
        result_.wait_seconds += seconds_between(before_wait, after_wait);
        record("wait", frame, before_wait, after_wait);
      }
      if (!free_slot) break;  // the writer stopped: its error is rethrown below
      compute_frame(frame, batches);
      result_.steps += params_.steps_per_frame;
      ring_.publish(frame);
      if (!settings_.overlap) write_one_frame();
      progress.update(frame + 1);
    }
    progress.finish();
    ring_.close();
    if (writer_thread_.joinable()) writer_thread_.join();
    result_.waits = ring_.waits();
    if (writer_error_) std::rethrow_exception(writer_error_);
    gs::throw_if_interrupted("after the last frame");

    gs::commit_frames(*writer_, options_.fsync, result_);
  }

  // The computing thread's part of one frame: the steps, then the frame into its slot.
  void compute_frame(int frame, gs::BatchedAdvance& batches) {
    const int slot = frame % ring_.slots();
    float* host = host_slot(slot);
#if GS_HAVE_CUDA
    if (gpu_) {
      DeviceSlot& device = *device_slots_[static_cast<std::size_t>(slot)];
      const cudaStream_t compute = compute_stream();
      GS_CUDA_CHECK(cudaEventRecord(device.computing.get(), compute));
      batches.advance(*stepper_, params_.steps_per_frame, frame);
      const gs::FieldView view = gs::fields_of(*stepper_);  // after advance: the buffer now current
      float* snapshot = device.snapshot.get();
      auto* not_finite = reinterpret_cast<unsigned int*>(snapshot + cells_);
      GS_CUDA_CHECK(cudaMemsetAsync(not_finite, 0, sizeof(unsigned int), compute));
      snapshot_kernel<<<snapshot_blocks_, 256, 0, compute>>>(view.v, view.pitch, view.rows,
                                                             view.cols, snapshot, not_finite);
      GS_CUDA_CHECK_LAUNCH();
      GS_CUDA_CHECK(cudaEventRecord(device.ready.get(), compute));
      *count_of(host, cells_) = kCountMissing;  // overwritten by the copy, if it runs
      handoff::queue_frame_copy(copy_stream_->get(), device.ready.get(), snapshot, host,
                                (cells_ + 1) * sizeof(float), device.copy_started.get(),
                                device.copied.get());
      return;
    }
#endif
    const Clock::time_point start = Clock::now();
    batches.advance(*stepper_, params_.steps_per_frame, frame);
    stepper_->synchronize();
    const Clock::time_point computed = Clock::now();
    batches.frame_took(params_.steps_per_frame, seconds_between(start, computed));
    result_.compute_seconds += seconds_between(start, computed);
    record("compute", frame, start, computed);
    stepper_->fetch_v(host);
    *count_of(host, cells_) = kCountOnWriter;
    const Clock::time_point copied = Clock::now();
    result_.copy_seconds += seconds_between(computed, copied);
    record("copy", frame, computed, copied);
  }

  // The writer thread: every frame, in order, until the ring is closed and drained or aborted.
  void writer_loop() {
    try {
#if GS_HAVE_CUDA
      if (gpu_) GS_CUDA_CHECK(cudaSetDevice(device_));  // the current device is per thread
#endif
      while (write_one_frame()) {
      }
    } catch (...) {
      writer_error_ = std::current_exception();
      ring_.abort();
    }
  }

  // Takes the next frame from the ring, waits for its copy, checks it, writes it, releases its
  // slot. False when there is none.
  bool write_one_frame() {
    int frame = 0;
    if (!ring_.next(frame)) return false;
    const int slot = frame % ring_.slots();
    float* host = host_slot(slot);
#if GS_HAVE_CUDA
    if (gpu_) {
      const DeviceSlot& device = *device_slots_[static_cast<std::size_t>(slot)];
      GS_CUDA_CHECK(cudaEventSynchronize(device.copied.get()));
      if (*count_of(host, cells_) != kCountMissing) {
        // The GPU's own times: the frame's steps and snapshot on the compute stream (busy time:
        // the event before the steps fires when the stream reaches it), the download.
        result_.compute_seconds += seconds_between(device.computing, device.ready);
        result_.copy_seconds += seconds_between(device.copy_started, device.copied);
        record_gpu("compute", frame, device.computing, device.ready);
        record_gpu("copy", frame, device.copy_started, device.copied);
      }
    }
#endif
    std::uint32_t not_finite = *count_of(host, cells_);
    if (not_finite == kCountMissing) {
      throw std::runtime_error("frame " + std::to_string(frame + 1) +
                               " never arrived in host memory: its download was not queued "
                               "(queue_frame_copy, frame_ring.hpp)");
    }
    if (not_finite == kCountOnWriter) {  // a CPU frame: the writer checks it, off the compute path
      not_finite = static_cast<std::uint32_t>(
          std::count_if(host, host + cells_, [](float x) { return !std::isfinite(x); }));
    }
    if (not_finite > 0) throw gs::Diverged(divergence(frame, not_finite));
    if (settings_.writer_delay_seconds > 0.0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(settings_.writer_delay_seconds));
    }
    const Clock::time_point start = Clock::now();
    writer_->write_frame(frame, host);
    const Clock::time_point written = Clock::now();
    result_.write_seconds += seconds_between(start, written);
    record("write", frame, start, written);
    ring_.release(frame);
    return true;
  }

  std::string divergence(int frame, std::size_t not_finite) const {
    return "the simulation diverged at frame " + std::to_string(frame + 1) + ": " +
           std::to_string(not_finite) + " of " + std::to_string(cells_) +
           " values of v are not finite; choose smaller rates or time step";
  }

  // Allocates the ring's slots (and, for a GPU stepper, the device slots, the copy stream and
  // the events) and decides which path the frames take.
  void prepare_slots() {
    const std::size_t slot_floats = cells_ + 1;
#if GS_HAVE_CUDA
    const gs::FieldView view = gs::fields_of(*stepper_);
    gpu_ = writer_ && view.available() && view.device == gs::Device::gpu;
    if (gpu_) {
      GS_CUDA_CHECK(cudaGetDevice(&device_));
      compute_stream_ = static_cast<cudaStream_t>(view.stream);
      copy_stream_ = std::make_unique<Stream>();
      for (int slot = 0; slot < ring_.slots(); ++slot) {
        pinned_.push_back(pinned_floats(slot_floats));
        device_slots_.push_back(std::make_unique<DeviceSlot>());
        device_slots_.back()->snapshot = gs::device_floats(slot_floats);
      }
      const int sms = gs::device_limits(device_).multiprocessors;  // GS_DEVICE_LIMITS counts
      snapshot_blocks_ = static_cast<unsigned>(
          std::max(1, std::min<int>(sms * 8, static_cast<int>((cells_ + 255) / 256))));
      run_started_ = std::make_unique<Event>();
      GS_CUDA_CHECK(cudaStreamSynchronize(compute_stream_));
      GS_CUDA_CHECK(cudaEventRecord(run_started_->get(), compute_stream_));
      GS_CUDA_CHECK(cudaEventSynchronize(run_started_->get()));
      clock_zero_ = Clock::now();
      return;
    }
#endif
    if (writer_) {
      for (int slot = 0; slot < ring_.slots(); ++slot) host_slots_.emplace_back(slot_floats);
    }
    clock_zero_ = Clock::now();
  }

  float* host_slot(int slot) {
#if GS_HAVE_CUDA
    if (gpu_) return pinned_[static_cast<std::size_t>(slot)].get();
#endif
    return host_slots_[static_cast<std::size_t>(slot)].data();
  }

#if GS_HAVE_CUDA
  cudaStream_t compute_stream() const {
    return compute_stream_;
  }
#endif

  // The timeline (--timeline): host intervals on the host clock, GPU ones from events, both in
  // seconds since clock_zero_ (the GPU's zero is the event recorded, with the stream idle, at
  // the same moment).
  void record(const char* lane, int frame, Clock::time_point start, Clock::time_point end) {
    if (settings_.timeline.empty()) return;
    const std::lock_guard<std::mutex> lock(timeline_mutex_);
    timeline_.push_back(
        {lane, frame, seconds_between(clock_zero_, start), seconds_between(clock_zero_, end)});
  }
#if GS_HAVE_CUDA
  void record_gpu(const char* lane, int frame, const Event& start, const Event& end) {
    if (settings_.timeline.empty()) return;
    const std::lock_guard<std::mutex> lock(timeline_mutex_);
    timeline_.push_back(
        {lane, frame, seconds_between(*run_started_, start), seconds_between(*run_started_, end)});
  }
#endif

  void write_timeline() const {
    std::ostringstream text;
    text << "lane,frame,start_s,end_s\n" << std::setprecision(9);
    for (const Interval& interval : timeline_) {
      text << interval.lane << "," << interval.frame << "," << interval.start << "," << interval.end
           << "\n";
    }
    gs::write_output_file(settings_.timeline, text.str(), gs::OutputOptions("--timeline", nullptr),
                          options_.fsync);
  }

  const gs::Implementation& implementation_;
  const gs::ProgramOptions& options_;
  const GS_LESSON_NAMESPACE::PipelineSettings settings_;
  const gs::Params params_;
  const std::size_t cells_;
  gs::RunResult result_;
  // Declared before the writer, so destroyed after it: the signal handlers (and SIGXFSZ ignored,
  // so that a file-size limit is an error and not a kill) stay until the partial file is gone.
  gs::InterruptGuard signals_;
  Clock::time_point clock_zero_;
  std::unique_ptr<gs::FrameWriter> writer_;
  std::unique_ptr<gs::Stepper> stepper_;
  handoff::FrameRing ring_;
  std::vector<std::vector<float>> host_slots_;  // the CPU path's ring
  std::thread writer_thread_;
  std::exception_ptr writer_error_;
  std::mutex timeline_mutex_;
  std::vector<Interval> timeline_;
  bool gpu_ = false;
#if GS_HAVE_CUDA
  int device_ = 0;
  cudaStream_t compute_stream_ = nullptr;
  std::unique_ptr<Stream> copy_stream_;
  std::vector<PinnedFloats> pinned_;
  std::vector<std::unique_ptr<DeviceSlot>> device_slots_;
  std::unique_ptr<Event> run_started_;
  unsigned snapshot_blocks_ = 1;
#endif
};

}  // namespace

namespace GS_LESSON_NAMESPACE {

gs::RunResult run_pipelined(const gs::Implementation& implementation,
                            const gs::ProgramOptions& options, const PipelineSettings& settings) {
  Pipeline pipeline(implementation, options, settings);
  return pipeline.run();
}

gs::FrameLoop frame_loop() {
  auto settings = std::make_shared<PipelineSettings>();
  gs::FrameLoop loop;
  loop.add_flags = [settings](CLI::App& app) {
    app.add_option("--slots", settings->slots,
                   "frames in flight between computing and writing (the pinned ring)")
        ->capture_default_str()
        ->check(CLI::Range(1, 64));
    app.add_flag_callback(
        "--no-overlap", [settings] { settings->overlap = false; },
        "write each frame on the computing thread, as the synchronous loop does (to compare)");
    app.add_option("--timeline", settings->timeline,
                   "write when each frame was computed, copied and written (CSV) to this file");
  };
  loop.run = [settings](const gs::Implementation& implementation,
                        const gs::ProgramOptions& options) {
    return run_pipelined(implementation, options, *settings);
  };
  return loop;
}

}  // namespace GS_LESSON_NAMESPACE
