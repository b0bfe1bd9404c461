// Lesson 08's program plumbing: each rank writes its own rows of every frame into the run's one
// HDF5 file, on a writer thread of its own (section 6, "Each rank writes its own rows").
//
// Rank 0 creates the file as every program does (gs::FrameWriter: a temporary name beside the
// output, checked, its room reserved), with every frame's chunk allocated at creation
// (gs::FrameLayout::chunks_allocated), and tells every rank the temporary name, the file's
// identity (device and inode) and where each frame lies. Each rank opens that name for writing
// (never creating, never through a link) and refuses a file that is not the one rank 0 made;
// then, frame after frame, the computing thread copies the rank's own rows of v into a free slot
// and goes on, and the writer thread writes the slot at the frame's offset plus the rank's first
// row (pwrite), starting the bytes' writeback to the disk as it goes. At the end every rank waits
// for its writer and says whether all went well; only then does rank 0 close the file, flush it
// (fsync covers every rank's pages: they are the same file) and rename it. A failure anywhere
// (a write refused, a full disk) is this rank's failure, said at the next round of commands,
// where every rank stops and rank 0's writer deletes the temporary file.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gs/output_file.hpp"  // gs::WritebackStats

namespace GS_LESSON_NAMESPACE {

// What rank 0 tells every rank about the file (one broadcast, then the offsets).
struct OutputPlace {
  char path[4096];       // the temporary file's name
  std::uint64_t device;  // its st_dev and st_ino: the file rank 0 created, no other
  std::uint64_t inode;
  std::int32_t writeback;  // 1: start each frame's writeback (the run flushes at the end)
  std::int32_t frames;
};

class RankOutput {
 public:
  // Opens the file rank 0 made; std::runtime_error (said at the next round) if it cannot.
  RankOutput(const OutputPlace& place, std::vector<std::int64_t> offsets, std::int64_t own_first,
             std::int64_t own_bytes)
      : offsets_(std::move(offsets)),
        own_first_(own_first),
        own_bytes_(own_bytes),
        writeback_(place.writeback != 0) {
    writeback_stats_.requested = writeback_;
    writeback_stats_.budget_bytes = static_cast<std::int64_t>(kSlots) * own_bytes_;
    descriptor_ = ::open(place.path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    if (descriptor_ < 0) {
      throw std::runtime_error(std::string("cannot open the run's file '") + place.path +
                               "' to write this rank's rows: " + std::strerror(errno));
    }
    struct stat status {};
    if (::fstat(descriptor_, &status) != 0 || !S_ISREG(status.st_mode) ||
        static_cast<std::uint64_t>(status.st_dev) != place.device ||
        static_cast<std::uint64_t>(status.st_ino) != place.inode) {
      ::close(descriptor_);
      descriptor_ = -1;
      throw std::runtime_error(std::string("'") + place.path +
                               "' is not the file rank 0 created (another file took its name): "
                               "this rank writes nothing into it");
    }
    writer_ = std::thread([this] { write_loop(); });
  }
  ~RankOutput() {
    stop();
    if (descriptor_ >= 0) ::close(descriptor_);
  }
  RankOutput(const RankOutput&) = delete;
  RankOutput& operator=(const RankOutput&) = delete;

  // The computing thread: hands over this rank's rows of frame `frame` (own_bytes bytes), waiting
  // while kSlots frames are still being written. Returns the seconds it waited.
  double queue(int frame, std::vector<float>&& rows) {
    std::unique_lock<std::mutex> lock(mutex_);
    const auto start = std::chrono::steady_clock::now();
    const auto room = [this] { return pending_.size() < kSlots || !failure_.empty(); };
    if (!room()) ++waits_;
    room_.wait(lock, room);
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (failure_.empty()) pending_.emplace_back(frame, std::move(rows));
    work_.notify_one();
    return waited;
  }

  // The writer's failure so far, or "" (the next round of commands says it).
  std::string failure() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return failure_;
  }

  // Waits until every frame handed over is written (or the writer failed); the writer's failure,
  // or "". The writer's own seconds inside pwrite and the writeback are in seconds().
  std::string finish() {
    std::unique_lock<std::mutex> lock(mutex_);
    room_.wait(lock, [this] { return (pending_.empty() && !busy_) || !failure_.empty(); });
    return failure_;
  }
  double seconds() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return write_seconds_;
  }
  // How many times queue() had to wait for a free slot.
  int waits() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return waits_;
  }
  // What this rank's writeback did (as gs::FrameWriter's report counts it).
  gs::WritebackStats writeback() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return writeback_stats_;
  }

 private:
  static constexpr std::size_t kSlots = 3;

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    work_.notify_all();
    if (writer_.joinable()) writer_.join();
  }

  void write_loop() {
    for (;;) {
      std::pair<int, std::vector<float>> item;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        work_.wait(lock, [this] { return !pending_.empty() || stopping_; });
        if (pending_.empty()) return;  // stopping, nothing left
        item = std::move(pending_.front());
        pending_.pop_front();
        busy_ = true;
      }
      const auto start = std::chrono::steady_clock::now();
      const std::string problem = write(item.first, item.second);
      const double spent =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        busy_ = false;
        write_seconds_ += spent;
        if (!problem.empty() && failure_.empty()) {
          failure_ = problem;
          pending_.clear();
        }
      }
      room_.notify_all();
    }
  }

  // One frame's rows at their place; the writeback of this frame started, and the one of the
  // frame kSlots earlier waited for (a bounded amount of dirty pages, as gs::FrameWriter does).
  std::string write(int frame, const std::vector<float>& rows) {
    const std::int64_t place = offsets_[static_cast<std::size_t>(frame)] + own_first_;
    const char* bytes = reinterpret_cast<const char*>(rows.data());
    std::int64_t done = 0;
    while (done < own_bytes_) {
      const ssize_t written = ::pwrite(descriptor_, bytes + done,
                                       static_cast<std::size_t>(own_bytes_ - done), place + done);
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) {
        const int error = written < 0 ? errno : ENOSPC;
        return "writing this rank's rows of frame " + std::to_string(frame) +
               " into the run's file failed: " + std::strerror(error) +
               (error == ENOSPC ? " (is the disk full?)" : "");
      }
      done += written;
    }
    if (writeback_) {
      auto clock = std::chrono::steady_clock::now();
      const auto lap = [&clock] {
        const auto now = std::chrono::steady_clock::now();
        const double seconds = std::chrono::duration<double>(now - clock).count();
        clock = now;
        return seconds;
      };
      const bool started =
          ::sync_file_range(descriptor_, place, own_bytes_, SYNC_FILE_RANGE_WRITE) == 0;
      const int error = errno;
      const double start_seconds = lap();
      bool waited = false;
      if (started && frame >= static_cast<int>(kSlots)) {
        const std::int64_t earlier =
            offsets_[static_cast<std::size_t>(frame) - kSlots] + own_first_;
        waited = ::sync_file_range(descriptor_, earlier, own_bytes_,
                                   SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                                       SYNC_FILE_RANGE_WAIT_AFTER) == 0;
      }
      const double wait_seconds = lap();
      std::lock_guard<std::mutex> lock(mutex_);
      if (started) {
        writeback_stats_.active = true;
        ++writeback_stats_.ranges;
        writeback_stats_.bytes += own_bytes_;
      } else if (writeback_stats_.off_because.empty()) {
        writeback_stats_.off_because = std::string("sync_file_range: ") + std::strerror(error);
      }
      if (waited) ++writeback_stats_.waits;
      writeback_stats_.start_seconds += start_seconds;
      writeback_stats_.wait_seconds += wait_seconds;
    }
    return "";
  }

  std::vector<std::int64_t> offsets_;
  std::int64_t own_first_;
  std::int64_t own_bytes_;
  bool writeback_;
  int descriptor_ = -1;
  mutable std::mutex mutex_;
  std::condition_variable work_;
  std::condition_variable room_;
  std::deque<std::pair<int, std::vector<float>>> pending_;
  bool busy_ = false;
  bool stopping_ = false;
  std::string failure_;
  double write_seconds_ = 0.0;
  int waits_ = 0;
  gs::WritebackStats writeback_stats_;
  std::thread writer_;
};

}  // namespace GS_LESSON_NAMESPACE
