// Progress line and report. The report's numbers are the ones the benchmark document quotes.
#include "gs/timing.hpp"

#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

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

double RunResult::cell_updates_per_second() const {
  return compute_seconds > 0.0 ? static_cast<double>(params.cells()) * steps / compute_seconds
                               : 0.0;
}

std::string si(double value, const std::string& unit) {
  const char* prefixes[] = {"", "k", "M", "G", "T", "P"};
  int prefix = 0;
  while (value >= 1000.0 && prefix < 5) {
    value /= 1000.0;
    ++prefix;
  }
  std::ostringstream text;
  text << std::fixed << std::setprecision(value < 10.0 ? 2 : (value < 100.0 ? 1 : 0)) << value
       << " " << prefixes[prefix] << unit;
  return text.str();
}

void print_report(std::ostream& out, const RunResult& result) {
  const Params& p = result.params;
  const double rate = result.cell_updates_per_second();
  out << std::fixed << std::setprecision(3);
  out << "implementation  " << result.implementation << " on " << result.device_name << "\n";
  out << "grid            " << p.rows << " x " << p.cols << ", " << p.frames << " frames x "
      << p.steps_per_frame << " steps = " << result.steps << " steps\n";
  out << "compute         " << result.compute_seconds << " s  ("
      << si(result.compute_seconds > 0 ? result.steps / result.compute_seconds : 0.0, "steps/s")
      << ", " << si(rate, "cell-updates/s") << ", " << si(rate * kBytesPerCellUpdate, "B/s")
      << " at 16 B per cell-update)\n";
  if (result.wrote_output) {
    out << "output          " << p.output << ": " << si(result.bytes_written, "B") << " in "
        << result.write_seconds << " s ("
        << si(result.write_seconds > 0 ? result.bytes_written / result.write_seconds : 0.0, "B/s")
        << ")\n";
  } else {
    out << "output          none (--no-output)\n";
  }
  out << "total           " << result.seconds << " s\n";
}

namespace {

std::string json_string(const std::string& text) {
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') quoted += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    quoted += c;
  }
  return quoted + "\"";
}

}  // namespace

void print_json(std::ostream& out, const RunResult& result) {
  std::ostringstream line;
  line << std::setprecision(9);
  line << "{\"implementation\":" << json_string(result.implementation)
       << ",\"device\":" << json_string(result.device_name) << ",\"rows\":" << result.params.rows
       << ",\"cols\":" << result.params.cols << ",\"frames\":" << result.params.frames
       << ",\"steps\":" << result.steps << ",\"seconds\":" << result.seconds
       << ",\"compute_seconds\":" << result.compute_seconds
       << ",\"write_seconds\":" << result.write_seconds
       << ",\"cell_updates_per_s\":" << result.cell_updates_per_second()
       << ",\"bytes_written\":" << result.bytes_written << "}";
  out << line.str() << std::endl;
}

}  // namespace gs
