// The process's age and the progress line of long runs.
#include "gs/timing.hpp"

#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace gs {
namespace {

using Clock = std::chrono::steady_clock;

// When the process started, as a point of the steady clock: /proc/self/stat's starttime (field
// 22, clock ticks after boot) against CLOCK_BOOTTIME, the clock it counts on; or now (a static
// initializer: just before main) when /proc cannot say.
Clock::time_point find_process_start() {
  const Clock::time_point now = Clock::now();
  std::ifstream stat_file("/proc/self/stat");
  std::string stat;
  std::getline(stat_file, stat);
  const std::size_t name_end = stat.rfind(')');  // the command's name may hold spaces
  timespec boot{};
  const long ticks_per_second = ::sysconf(_SC_CLK_TCK);
  if (name_end == std::string::npos || ticks_per_second <= 0 ||
      ::clock_gettime(CLOCK_BOOTTIME, &boot) != 0) {
    return now;
  }
  std::istringstream fields(stat.substr(name_end + 1));
  std::string field;
  for (int number = 3; number <= 22 && fields >> field; ++number) {
    if (number < 22) continue;
    const double started =
        std::strtod(field.c_str(), nullptr) / static_cast<double>(ticks_per_second);
    const double age = static_cast<double>(boot.tv_sec) + boot.tv_nsec * 1e-9 - started;
    if (age < 0.0 || age > 1e9) return now;
    return now - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(age));
  }
  return now;
}

const Clock::time_point g_process_start = find_process_start();

}  // namespace

double seconds_since_process_start() {
  return std::chrono::duration<double>(Clock::now() - g_process_start).count();
}

ProgressLine::ProgressLine(int total_frames, bool enabled)
    : total_frames_(total_frames), enabled_(enabled) {}

void ProgressLine::update(int frames_done) {
  if (!enabled_) return;
  const double now = clock_.seconds();
  const bool last = frames_done >= total_frames_;
  if (!last && now - last_draw_ < 0.25) return;
  last_draw_ = now;
  const double rate = now > 0.0 ? frames_done / now : 0.0;
  const double eta = rate > 0.0 ? (total_frames_ - frames_done) / rate : 0.0;
  std::fprintf(stderr, "\r  frame %d/%d  %.1f frames/s  ETA %.1f s   ", frames_done, total_frames_,
               rate, eta);
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressLine::finish() {
  if (drawn_) std::fputc('\n', stderr);
  drawn_ = false;
}

}  // namespace gs
