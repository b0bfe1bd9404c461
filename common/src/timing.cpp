// The progress line of long runs.
#include "gs/timing.hpp"

#include <cstdio>

namespace gs {

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
