// Lesson 07's point, checked on the CPU: the ring lets the computing thread run ahead of the
// writer. While a slot is free the computing thread never waits for the writer, even while the
// writer is busy with an older frame; it waits only when the ring is full, until the writer
// releases the frame the slot holds; and the writer gets every frame, in order, none overwritten
// before it was written. A ring whose acquire() also waits while the writer holds a frame (the
// ring "holds still" while it is read) gives the same files — every test of the suite passes,
// the slow-writer runs included, since a slow writer keeps the ring full anyway — but the
// computing thread then waits for every write: the overlap the lesson is about is gone.
//
// The check is a script, not a race: the test's own thread plays a writer that holds a frame
// for as long as the script says, a second thread the computing thread, and each step waits for
// the previous one to be done (counters under a mutex), never for a time. The only clock is a
// guard of 10 s on each step, that a right ring never comes near (each step is a few calls that
// return at once); a ring that waits where it must not reaches it on every run, because the
// writer releases nothing until the computing thread has done what the step asks.
// Used by tests/test_lesson07.cpp (the exercise and the solution) and by
// tests/point/test_lesson07_wrong_answer.cpp (the fixture of a wrong answer,
// tests/fixtures/07_async_output/waits_while_the_writer_writes/, which must fail it).
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <frame_ring.hpp>  // the learner's (or the fixture's) FrameRing

namespace lesson07_point {

inline constexpr int kSlots = 4;
inline constexpr int kFrames = 14;
inline constexpr auto kGuard = std::chrono::seconds(10);

// What the two threads share; kept alive by both, so that a thread a broken ring never lets go
// of can be left behind.
struct Script {
  std::mutex mutex;
  std::condition_variable changed;
  int target = 0;     // the computing thread publishes the frames below this
  int published = 0;  // frames 0 .. published - 1 were published
  int released = 0;   // frames 0 .. released - 1 were released (counted before release())
  bool done = false;  // the computing thread has finished (closed the ring, or stopped)
  bool stop = false;
  std::string problem;  // the first thing that went wrong, either thread
  std::vector<int> slots_hold{std::vector<int>(kSlots, -1)};  // the frame each slot holds
};

// The computing thread: acquires, fills and publishes frames in order, as far as the script's
// target, and checks that no frame entered a slot whose frame the writer had not released.
inline void compute(const std::shared_ptr<handoff::FrameRing>& ring,
                    const std::shared_ptr<Script>& script) {
  for (int frame = 0; frame < kFrames; ++frame) {
    {
      std::unique_lock<std::mutex> lock(script->mutex);
      script->changed.wait(lock, [&] { return script->target > frame || script->stop; });
      if (script->stop) break;
    }
    if (!ring->acquire(frame)) {
      const std::lock_guard<std::mutex> lock(script->mutex);
      if (script->problem.empty()) {
        script->problem = "acquire(" + std::to_string(frame) + ") said the ring was aborted";
      }
      break;
    }
    {
      const std::lock_guard<std::mutex> lock(script->mutex);
      if (script->released < frame - kSlots + 1) {
        if (script->problem.empty()) {
          script->problem = "acquire(" + std::to_string(frame) + ") returned while frame " +
                            std::to_string(frame - kSlots) +
                            ", which its slot holds, was not released: frame " +
                            std::to_string(frame) + " would overwrite it before it is written";
        }
        break;
      }
      script->slots_hold[frame % kSlots] = frame;
    }
    ring->publish(frame);
    {
      const std::lock_guard<std::mutex> lock(script->mutex);
      script->published = frame + 1;
    }
    script->changed.notify_all();
  }
  bool finished;
  {
    const std::lock_guard<std::mutex> lock(script->mutex);
    finished = script->published == kFrames;
  }
  if (finished) ring->close();
  {
    const std::lock_guard<std::mutex> lock(script->mutex);
    script->done = true;
  }
  script->changed.notify_all();
}

// The writer's side of the script, on the caller's thread: "" or what went wrong.
inline std::string write(const std::shared_ptr<handoff::FrameRing>& ring,
                         const std::shared_ptr<Script>& script) {
  // Waits (at most the guard) until `condition` (called under the script's mutex) holds or the
  // computing thread found a problem; returns the problem, `failure` when the guard was reached, or
  // "".
  const auto wait_until = [&](auto condition, const std::string& failure) -> std::string {
    // Polled every millisecond as well as woken: waits() changes inside the ring, unseen here.
    const auto deadline = std::chrono::steady_clock::now() + kGuard;
    std::unique_lock<std::mutex> lock(script->mutex);
    bool met = false;
    while (!(met = condition()) && script->problem.empty() &&
           std::chrono::steady_clock::now() < deadline) {
      script->changed.wait_for(lock, std::chrono::milliseconds(1));
    }
    if (!script->problem.empty()) return script->problem;
    return met ? "" : failure;
  };
  const auto set_target = [&](int target) {
    {
      const std::lock_guard<std::mutex> lock(script->mutex);
      script->target = target;
    }
    script->changed.notify_all();
  };
  // The writer takes the next frame, which must be `expected`, still in its slot.
  const auto take = [&](int expected) -> std::string {
    int frame = -1;
    if (!ring->next(frame)) {
      return "next() returned false, though frame " + std::to_string(expected) +
             " was published and the ring neither closed nor aborted";
    }
    if (frame != expected) {
      return "next() gave frame " + std::to_string(frame) + " where frame " +
             std::to_string(expected) + " was due: the writer takes every frame, in order";
    }
    const std::lock_guard<std::mutex> lock(script->mutex);
    if (script->slots_hold[frame % kSlots] != frame) {
      return "frame " + std::to_string(frame) + "'s slot holds frame " +
             std::to_string(script->slots_hold[frame % kSlots]) +
             " when the writer takes it: it was overwritten before it was written";
    }
    return "";
  };
  const auto release = [&](int frame) {
    {
      const std::lock_guard<std::mutex> lock(script->mutex);
      script->released = frame + 1;
    }
    ring->release(frame);
  };
  const auto published_reaches = [&](int count) {
    return [script, count] { return script->published >= count; };
  };

  // Frame 0 into an empty ring, and the writer takes it and holds it: it is being written.
  set_target(1);
  std::string problem =
      wait_until(published_reaches(1), "acquire(0) or publish(0) on an empty ring never returned");
  if (problem.empty()) problem = take(0);
  int held = 0;
  while (problem.empty()) {
    // The writer holds frame `held`; every earlier frame is released, so frames up to
    // held + kSlots - 1 have a free slot: the computing thread must fill them now, without
    // waiting for the writer.
    const int waits_before = ring->waits();
    const int fits = std::min(held + kSlots, kFrames);
    set_target(fits);
    problem = wait_until(
        published_reaches(fits),
        "while the writer held frame " + std::to_string(held) +
            " (being written, not yet "
            "released, every earlier frame released), the computing thread waited in acquire() "
            "though its frame's slot was free: frames " +
            std::to_string(held) + " to " + std::to_string(held + kSlots - 1) + " fit into the " +
            std::to_string(kSlots) +
            " slots. The computing thread waits for the writer only "
            "when the ring is full; while a slot is free it computes the next frame as the "
            "writer writes (README.md)");
    if (!problem.empty()) break;
    if (ring->waits() != waits_before) {
      problem = "waits() rose from " + std::to_string(waits_before) + " to " +
                std::to_string(ring->waits()) + " while every acquire() found its slot free: " +
                "it counts the times acquire() found the ring full";
      break;
    }
    if (fits == kFrames) break;
    // The ring is full: frame fits's slot holds frame `held`, which the writer still holds. The
    // computing thread must wait in acquire() (and count it) until the writer releases it.
    set_target(fits + 1);
    problem = wait_until([&] { return ring->waits() > waits_before; },
                         "acquire(" + std::to_string(fits) +
                             ") on a full ring (its slot holds frame " + std::to_string(held) +
                             ", not yet released) did not count a wait in waits()");
    if (!problem.empty()) break;
    release(held);
    problem = wait_until(published_reaches(fits + 1), "release(" + std::to_string(held) +
                                                          ") did not wake the computing "
                                                          "thread waiting in acquire(" +
                                                          std::to_string(fits) + ") for its slot");
    if (!problem.empty()) break;
    // The next frame is written at once; the one after is held, with slots free again.
    problem = take(held + 1);
    if (!problem.empty()) break;
    release(held + 1);
    held += 2;
    problem = take(held);
  }
  if (problem.empty()) {
    // The rest: every frame published and the ring closed, then drained in order.
    release(held);
    set_target(kFrames);
    problem = wait_until([&] { return script->done; },
                         "the computing thread did not finish the last frames");
    for (int frame = held + 1; problem.empty() && frame < kFrames; ++frame) {
      problem = take(frame);
      if (problem.empty()) release(frame);
    }
    int frame = -1;
    if (problem.empty() && ring->next(frame)) {
      problem = "after close(), the writer got frame " + std::to_string(frame) +
                " from next() "
                "once every frame was taken";
    }
  }
  return problem;
}

// The whole script on a ring of kSlots slots and kFrames frames: "" when the ring hands every
// frame over in order, waits only when full and never while a slot is free, else what it did.
inline std::string check_ring_waits_only_when_full() {
  auto ring = std::make_shared<handoff::FrameRing>(kSlots);
  auto script = std::make_shared<Script>();
  struct Result {
    std::mutex mutex;
    std::condition_variable changed;
    bool finished = false;
    std::string problem;
  };
  auto result = std::make_shared<Result>();
  // Both threads detached, each owning what it uses: a ring that never lets a call return leaves
  // them behind instead of hanging the suite.
  std::thread([ring, script] { compute(ring, script); }).detach();
  std::thread([ring, script, result] {
    std::string problem = write(ring, script);
    if (!problem.empty()) {
      {
        const std::lock_guard<std::mutex> lock(script->mutex);
        script->stop = true;
      }
      script->changed.notify_all();
      ring->abort();  // wakes a computing thread waiting in acquire()
    }
    const std::lock_guard<std::mutex> lock(result->mutex);
    result->problem = problem;
    result->finished = true;
    result->changed.notify_all();
  }).detach();
  std::unique_lock<std::mutex> lock(result->mutex);
  if (!result->changed.wait_for(lock, 6 * kGuard, [&] { return result->finished; })) {
    ring->abort();
    return "the writer's side of the script never finished: a call of the ring never returned";
  }
  const std::string prefix = "a ring of " + std::to_string(kSlots) + " slots, " +
                             std::to_string(kFrames) + " frames, a writer that holds frames: ";
  return result->problem.empty() ? "" : prefix + result->problem;
}

}  // namespace lesson07_point
