// Lesson 07: the ring's hand-off on its own (frames in order, a full ring waits for the writer,
// close drains, abort wakes every waiter), then the whole pipeline on the CPU and on the GPU:
// with a writer slowed down on purpose, every frame in the file must still be the reference's
// (a slot refilled before its frame was written shows as a wrong frame), a diverging run and an
// interrupted one must leave no file. The timeline file follows the output rules of every file.
// And the lesson's point: the computing thread never waits for the writer while a slot is free.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "check.hpp"
#include "gs/hdf5_io.hpp"
#include "gs/interrupt.hpp"
#include "gs/lesson.hpp"
#include "gs/reference.hpp"
#include "gs/registry.hpp"
#include "pipeline.hpp"
// The learner's file, tested on its own (GS_HAVE_CUDA is not set here: its GPU part is left out).
// At file scope: it includes what it uses, and those includes must not land in a namespace.
#include <frame_ring.hpp>
// The lesson's point (tests/point/): the ring driven by a scripted writer that holds frames.
#include "lesson07_point.hpp"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Runs `work` on a thread of its own and waits at most `limit` for it: a hand-off that never
// returns fails the test instead of hanging the suite (the thread is then left behind, with the
// state it shares kept alive).
bool finishes_within(std::function<void()> work, std::chrono::milliseconds limit) {
  struct Shared {
    std::mutex mutex;
    std::condition_variable done_changed;
    bool done = false;
  };
  auto shared = std::make_shared<Shared>();
  std::thread([shared, work = std::move(work)] {
    work();
    const std::lock_guard<std::mutex> lock(shared->mutex);
    shared->done = true;
    shared->done_changed.notify_all();
  }).detach();
  std::unique_lock<std::mutex> lock(shared->mutex);
  return shared->done_changed.wait_for(lock, limit, [&] { return shared->done; });
}

TEST(Lesson07Ring, HandsEveryFrameOverInOrder) {
  auto ring = std::make_shared<handoff::FrameRing>(3);
  auto seen = std::make_shared<std::vector<int>>();
  const bool finished = finishes_within(
      [ring, seen] {
        std::thread producer([ring] {
          for (int frame = 0; frame < 10; ++frame) {
            if (!ring->acquire(frame)) return;
            ring->publish(frame);
          }
          ring->close();
        });
        int frame = -1;
        while (ring->next(frame)) {
          seen->push_back(frame);
          ring->release(frame);
        }
        producer.join();
      },
      5s);
  ASSERT_TRUE(finished) << "the hand-off of 10 frames through 3 slots never finished";
  EXPECT_EQ(*seen, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}))
      << "the writer must get every published frame once, in order, then false after close()";
}

TEST(Lesson07Ring, AFullRingWaitsUntilTheWriterReleases) {
  auto ring = std::make_shared<handoff::FrameRing>(2);
  ASSERT_TRUE(ring->acquire(0));
  ring->publish(0);
  ASSERT_TRUE(ring->acquire(1));
  ring->publish(1);
  auto acquired = std::make_shared<std::atomic<bool>>(false);
  auto computing =
      std::make_shared<std::thread>([ring, acquired] { *acquired = ring->acquire(2); });
  std::this_thread::sleep_for(150ms);
  EXPECT_FALSE(*acquired) << "frame 2 went into slot 0 while frame 0 was still there";
  int frame = -1;
  const bool took = ring->next(frame);
  EXPECT_TRUE(took && frame == 0) << "the writer must get frame 0 first";
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(*acquired) << "frame 0 was taken, not yet written: its slot is not free";
  ring->release(0);
  const auto deadline = std::chrono::steady_clock::now() + 2s;
  while (!*acquired && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(1ms);
  EXPECT_TRUE(*acquired) << "release(0) must wake the computing thread waiting for slot 0";
  if (!*acquired) ring->abort();
  EXPECT_TRUE(finishes_within([computing] { computing->join(); }, 2s))
      << "the computing thread is still waiting after release() and abort()";
  EXPECT_EQ(ring->waits(), 1) << "one acquire() found the ring full";
}

TEST(Lesson07Ring, CloseLetsTheWriterDrainThePublishedFrames) {
  handoff::FrameRing ring(4);
  for (int frame = 0; frame < 2; ++frame) {
    ASSERT_TRUE(ring.acquire(frame));
    ring.publish(frame);
  }
  ring.close();
  int frame = -1;
  ASSERT_TRUE(ring.next(frame));
  EXPECT_EQ(frame, 0);
  ring.release(frame);
  ASSERT_TRUE(ring.next(frame));
  EXPECT_EQ(frame, 1);
  ring.release(frame);
  EXPECT_FALSE(ring.next(frame)) << "closed and drained: next() must say there is no more";
}

TEST(Lesson07Ring, AbortWakesBothThreads) {
  auto idle_ring = std::make_shared<handoff::FrameRing>(2);
  auto got_frame = std::make_shared<std::atomic<bool>>(true);
  auto writer = std::make_shared<std::thread>([idle_ring, got_frame] {
    int frame = -1;
    *got_frame = idle_ring->next(frame);
  });
  std::this_thread::sleep_for(50ms);
  idle_ring->abort();
  EXPECT_TRUE(finishes_within([writer] { writer->join(); }, 2s))
      << "abort() must wake a writer waiting in next()";
  EXPECT_FALSE(*got_frame);

  auto full_ring = std::make_shared<handoff::FrameRing>(1);
  ASSERT_TRUE(full_ring->acquire(0));
  full_ring->publish(0);
  auto acquired = std::make_shared<std::atomic<bool>>(true);
  auto computing =
      std::make_shared<std::thread>([full_ring, acquired] { *acquired = full_ring->acquire(1); });
  std::this_thread::sleep_for(50ms);
  full_ring->abort();
  EXPECT_TRUE(finishes_within([computing] { computing->join(); }, 2s))
      << "abort() must wake the computing thread waiting for a slot";
  EXPECT_FALSE(*acquired) << "acquire() after abort() must say no: the frame must not be computed";
}

// The lesson's point: while the writer holds a frame (it is being written), the computing thread
// fills every free slot without waiting, and waits, counted, only on a full ring until the
// writer releases that slot's frame; the writer gets every frame in order, none overwritten. A
// scripted writer and computing thread (tests/point/lesson07_point.hpp): no timing, a guard only.
TEST(Lesson07Point, TheComputingThreadWaitsForTheWriterOnlyWhenTheRingIsFull) {
  const std::string problem = lesson07_point::check_ring_waits_only_when_full();
  EXPECT_EQ(problem, "") << problem;
}

// ---------------------------------------------------------------------------------------------
// The pipeline
// ---------------------------------------------------------------------------------------------

// A directory of this process's own: the sanitizer tests run the whole suite in several processes
// at once.
fs::path fresh_directory(const std::string& name) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("gs_lesson07_" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// The stepper the pipeline runs: on a GPU the registry's fastest (lesson 06's), on the CPU the
// reference of common/ (one thread: on a busy 2-core machine OpenMP's threads could make the
// steps slower than the slowed writer, and the ring would never fill).
const gs::Implementation& first_on(gs::Device device) {
  static const std::vector<gs::Implementation> all = gs::all_implementations();
  for (const gs::Implementation& impl : all) {
    if (impl.device == device && (device == gs::Device::gpu || impl.name == "reference")) {
      return impl;
    }
  }
  throw std::runtime_error("no implementation for this device in the registry");
}

gs::ProgramOptions small_run(const fs::path& output, int frames, int steps) {
  gs::ProgramOptions options;
  options.params.rows = 37;
  options.params.cols = 53;
  options.params.frames = frames;
  options.params.steps_per_frame = steps;
  options.params.output = output.string();
  options.fsync = false;
  return options;
}

// Every frame of the file against the reference, frame by frame.
void expect_frames_match_reference(const gs::ProgramOptions& options) {
  const gs::Params& p = options.params;
  gs::FrameReader reader(p.output);
  ASSERT_EQ(reader.info().frames, p.frames);
  gs::State state = gs::initial_state(p.rows, p.cols);
  for (int frame = 0; frame < p.frames; ++frame) {
    gs::reference_advance(state, p.rates, p.steps_per_frame);
    const std::vector<float> v = reader.read_frame(frame);
    EXPECT_TRUE(
        gs::test::fields_match("v", p.rows, p.cols, v.data(), state.v.data(), gs::test::kTolerance))
        << "frame " << frame << " (written by " << reader.info().implementation << ")";
  }
}

// Nothing named like the output may be left beside it.
void expect_no_file_left(const fs::path& dir) {
  for (const auto& entry : fs::directory_iterator(dir))
    ADD_FAILURE() << "left behind: " << entry.path();
}

void slow_writer_run(gs::Device device, bool overlap) {
  if (device == gs::Device::gpu) GS_REQUIRE_GPU();
  const fs::path dir = fresh_directory(std::string(device == gs::Device::gpu ? "gpu" : "cpu") +
                                       (overlap ? "_slow_writer" : "_no_overlap"));
  gs::ProgramOptions options = small_run(dir / "frames.h5", 8, 7);
  GS_LESSON_NAMESPACE::PipelineSettings settings;
  settings.slots = 2;
  settings.overlap = overlap;
  settings.writer_delay_seconds = 0.1;  // the disk is far slower than the steps: the ring fills
  const gs::RunResult result =
      GS_LESSON_NAMESPACE::run_pipelined(first_on(device), options, settings);
  EXPECT_TRUE(result.wrote_output);
  EXPECT_EQ(result.bytes_written, options.params.output_bytes());
  if (overlap) {
    EXPECT_GT(result.waits, 0) << "a slow writer must make the computing thread wait";
  }
  expect_frames_match_reference(options);
}

TEST(Lesson07Pipeline, CpuSlowWriterFramesMatchTheReference) {
  slow_writer_run(gs::Device::cpu, true);
}

TEST(Lesson07Pipeline, CpuWithoutOverlapFramesMatchTheReference) {
  slow_writer_run(gs::Device::cpu, false);
}

TEST(Lesson07Pipeline, GpuSlowWriterFramesMatchTheReference) {
  slow_writer_run(gs::Device::gpu, true);
}

TEST(Lesson07Pipeline, GpuWithoutOverlapFramesMatchTheReference) {
  slow_writer_run(gs::Device::gpu, false);
}

void diverging_run(gs::Device device) {
  if (device == gs::Device::gpu) GS_REQUIRE_GPU();
  const fs::path dir = fresh_directory(device == gs::Device::gpu ? "gpu_diverges" : "cpu_diverges");
  gs::ProgramOptions options = small_run(dir / "frames.h5", 30, 3);
  options.params.rates.feed = 50.0f;  // far outside the stable range
  GS_LESSON_NAMESPACE::PipelineSettings settings;
  try {
    GS_LESSON_NAMESPACE::run_pipelined(first_on(device), options, settings);
    ADD_FAILURE() << "a run whose state overflows must stop with gs::Diverged";
  } catch (const gs::Diverged& error) {
    EXPECT_NE(std::string(error.what()).find("diverged at frame"), std::string::npos)
        << error.what();
  }
  expect_no_file_left(dir);
}

TEST(Lesson07Pipeline, CpuDivergingRunLeavesNoFile) {
  diverging_run(gs::Device::cpu);
}

TEST(Lesson07Pipeline, GpuDivergingRunLeavesNoFile) {
  diverging_run(gs::Device::gpu);
}

// SIGINT in the middle of a run: the run stops with gs::Interrupted and leaves no file. The
// signal is sent once the output's temporary file exists; the test's own guard catches it should
// the run be over by then (an unsolved exercise ends at once), so it never kills the suite.
TEST(Lesson07Pipeline, InterruptedRunLeavesNoFile) {
  const gs::InterruptGuard test_guard;
  const fs::path dir = fresh_directory("interrupted");
  gs::ProgramOptions options = small_run(dir / "frames.h5", 200, 3);
  GS_LESSON_NAMESPACE::PipelineSettings settings;
  settings.writer_delay_seconds = 0.01;
  std::atomic<bool> stop_watching{false};
  std::thread interrupter([&] {
    while (!stop_watching) {
      if (!fs::is_empty(dir)) {
        std::this_thread::sleep_for(50ms);
        std::raise(SIGINT);
        return;
      }
      std::this_thread::sleep_for(1ms);
    }
  });
  try {
    GS_LESSON_NAMESPACE::run_pipelined(first_on(gs::Device::cpu), options, settings);
    ADD_FAILURE() << "the run was not interrupted";
  } catch (const gs::Interrupted& error) {
    EXPECT_EQ(error.signal_number(), SIGINT);
  } catch (const std::exception& error) {
    ADD_FAILURE() << "the run stopped with another error: " << error.what();
  }
  stop_watching = true;
  interrupter.join();
  expect_no_file_left(dir);
}

// ---------------------------------------------------------------------------------------------
// The timeline (--timeline) is a file of the run like the frames: both are checked before any
// work, and written through common/'s output mechanism (gs/output_file.hpp)
// ---------------------------------------------------------------------------------------------

TEST(Lesson07Output, TheTimelineNamingTheFramesFileIsRefusedBeforeAnyWork) {
  const fs::path dir = fresh_directory("timeline_same_file");
  const gs::ProgramOptions options = small_run(dir / "frames.h5", 3, 2);
  GS_LESSON_NAMESPACE::PipelineSettings settings;
  settings.timeline = (dir / "sub" / ".." / "frames.h5").string();
  fs::create_directories(dir / "sub");
  try {
    GS_LESSON_NAMESPACE::run_pipelined(first_on(gs::Device::cpu), options, settings);
    ADD_FAILURE() << "two flags naming one file were accepted";
  } catch (const gs::OutputError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("-o '" + options.params.output + "' and --timeline '" +
                           settings.timeline + "' name the same file"),
              std::string::npos)
        << message;
  }
  fs::remove(dir / "sub");
  expect_no_file_left(dir);
}

TEST(Lesson07Output, ATimelineFifoIsRefusedWithoutHanging) {
  const fs::path dir = fresh_directory("timeline_fifo");
  const std::string fifo = (dir / "timeline.csv").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  auto message = std::make_shared<std::string>();
  // On a thread of its own: opening the FIFO for writing would wait for a reader forever.
  EXPECT_TRUE(finishes_within(
      [message, dir, fifo] {
        GS_LESSON_NAMESPACE::PipelineSettings settings;
        settings.timeline = fifo;
        try {
          GS_LESSON_NAMESPACE::run_pipelined(first_on(gs::Device::cpu),
                                             small_run(dir / "frames.h5", 3, 2), settings);
        } catch (const gs::OutputError& error) {
          *message = error.what();
        }
      },
      20s))
      << "the run hung on the FIFO";
  EXPECT_NE(message->find("refusing to write --timeline '" + fifo + "': it is a FIFO"),
            std::string::npos)
      << *message;
  EXPECT_FALSE(fs::exists(dir / "frames.h5"));
}

TEST(Lesson07Output, TheTimelineIsWrittenThroughALink) {
  const fs::path dir = fresh_directory("timeline_link");
  fs::create_directories(dir / "logs");
  std::ofstream(dir / "logs" / "timeline.csv") << "an old timeline\n";
  fs::create_symlink(fs::path("logs") / "timeline.csv", dir / "timeline.csv");
  // Compute only: the timeline alone, whatever the ring (the learner's) does.
  gs::ProgramOptions options = small_run(dir / "frames.h5", 3, 2);
  options.write_output = false;
  GS_LESSON_NAMESPACE::PipelineSettings settings;
  settings.timeline = (dir / "timeline.csv").string();
  GS_LESSON_NAMESPACE::run_pipelined(first_on(gs::Device::cpu), options, settings);
  EXPECT_TRUE(fs::is_symlink(dir / "timeline.csv")) << "the link was replaced by a file";
  std::ifstream timeline(dir / "logs" / "timeline.csv");
  std::string header;
  ASSERT_TRUE(std::getline(timeline, header));
  EXPECT_EQ(header, "lane,frame,start_s,end_s");
  for (const fs::path& where : {dir, dir / "logs"}) {
    for (const auto& entry : fs::directory_iterator(where)) {
      EXPECT_EQ(entry.path().filename().string().find(".partial-"), std::string::npos)
          << "temporary left: " << entry.path();
    }
  }
}

}  // namespace
