// Lesson 07, the file you edit: the hand-off between the thread that computes frames and the
// thread that writes them, through a ring of slots in host memory.
//
// It sees only what it includes: <mutex>, <condition_variable> and, with CUDA (GS_HAVE_CUDA),
// the runtime and gs/cuda_check.hpp. Frame i lives in slot i % slots(). The computing thread
// acquire()s the slot, fills it (or has the GPU fill it), and publish()es the frame; the writer
// thread takes frames in order with next(), writes each one, and release()s it. The one rule: a
// slot must not be refilled before the writer has released the frame it holds, i.e. frame i may
// enter its slot only once frame i - slots() is released.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>

#if GS_HAVE_CUDA
#include <cuda_runtime.h>

#include "gs/cuda_check.hpp"
#endif

// Namespace handoff: pipeline.cpp makes a handoff::FrameRing and calls handoff::queue_frame_copy().
namespace handoff {

class FrameRing {
 public:
  explicit FrameRing(int slots) : slots_(slots) {}

  int slots() const { return slots_; }

  // Computing thread: waits until frame's slot is free. False if the ring was aborted (the
  // writer failed, or the run stops): the frame must not be computed into the slot.
  bool acquire(int frame) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (frame - released_ >= slots_ && !aborted_) ++waits_;  // the ring is full: we wait
    changed_.wait(lock, [&] { return frame - released_ < slots_ || aborted_; });
    return !aborted_;
  }

  // Computing thread: frame is in its slot (for a GPU, its copy is queued; the writer waits for
  // the copy itself). Frames are published in order.
  void publish(int frame) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      published_ = frame + 1;
    }
    changed_.notify_all();
  }

  // Writer thread: the next frame, in order; waits for it. False once the ring is closed and
  // every published frame was taken, or at once if it was aborted.
  bool next(int& frame) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return taken_ < published_ || closed_ || aborted_; });
    if (aborted_ || taken_ >= published_) return false;
    frame = taken_++;
    return true;
  }

  // Writer thread: frame is written; its slot may be refilled.
  void release(int frame) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      released_ = frame + 1;
    }
    changed_.notify_all();
  }

  // Computing thread: no frame will be published any more.
  void close() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      closed_ = true;
    }
    changed_.notify_all();
  }

  // Either thread: stop now; every waiting call returns false.
  void abort() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      aborted_ = true;
    }
    changed_.notify_all();
  }

  // How many times acquire() found the ring full and waited.
  int waits() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return waits_;
  }

 private:
  const int slots_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;  // notified whenever a counter or flag below changes
  int published_ = 0;                // frames 0 .. published_ - 1 were published
  int taken_ = 0;                    // frames 0 .. taken_ - 1 were handed to the writer
  int released_ = 0;                 // frames 0 .. released_ - 1 were written and released
  bool closed_ = false;
  bool aborted_ = false;
  int waits_ = 0;
};

#if GS_HAVE_CUDA
// GPU: queues the download of one frame into its pinned host slot on the copy stream, after the
// compute stream has made the frame's snapshot (event snapshot_ready), and records `copied`
// once the bytes are in host memory: the event the writer waits for before it reads the slot.
// Nothing here waits: the computing thread goes on queueing the next frame's steps.
inline void queue_frame_copy(cudaStream_t copy_stream, cudaEvent_t snapshot_ready,
                             const void* device_slot, void* host_slot, std::size_t bytes,
                             cudaEvent_t copy_started, cudaEvent_t copied) {
  GS_CUDA_CHECK(cudaStreamWaitEvent(copy_stream, snapshot_ready, 0));
  GS_CUDA_CHECK(cudaEventRecord(copy_started, copy_stream));
  GS_CUDA_CHECK(
      cudaMemcpyAsync(host_slot, device_slot, bytes, cudaMemcpyDeviceToHost, copy_stream));
  GS_CUDA_CHECK(cudaEventRecord(copied, copy_stream));
}
#endif

}  // namespace handoff
