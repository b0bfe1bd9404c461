// gs_sweep, lesson 09's program: a parameter sweep of Gray-Scott over a grid of (F, k) pairs, all
// advanced as one batch, written as an HDF5 file and a PNG map of the patterns; and
// `gs_sweep benchmark`, which measures the batch against lesson 06's single official-size grid
// and against the same members run one after the other, and on every GPU against one. The
// steppers are sweep.cpp's (batch.hpp); the picture is mosaic.cpp's; the members spread over
// several GPUs, one share and one thread per GPU, by multi_gpu.cpp. Program plumbing: read, not
// edited, and not needed for the exercise (the lesson is member.hpp and sweep.cpp).
//
// This file is the sweep (its flags, the batch run in chunks, the HDF5 file, the map and the
// per-member summary) and program(), which starts it or the benchmark (benchmark.cpp); shared.hpp
// has what both take: the common flags, the GPUs' shares, the memory checks.
#include <omp.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <iomanip>
#include <iostream>
#include <limits>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "batch.hpp"
#include "gs/device_limits.hpp"
#include "gs/gpu.hpp"
#include "gs/hdf5_io.hpp"
#include "gs/interrupt.hpp"
#include "gs/lesson.hpp"
#include "gs/main_guard.hpp"
#include "gs/output_file.hpp"
#include "gs/params.hpp"
#include "gs/png_file.hpp"
#include "gs/program.hpp"
#include "gs/registry.hpp"
#include "gs/report.hpp"
#include "gs/state.hpp"
#include "gs/timing.hpp"
#include "mosaic.hpp"
#include "multi_gpu.hpp"
#include "shared.hpp"

namespace GS_LESSON_NAMESPACE {
namespace {

// ---------------------------------------------------------------------------------------------
// The per-member summary: what the map says without looking at every tile
// ---------------------------------------------------------------------------------------------

// A member "died out" when its largest v at the end is below this: the pattern decayed to the
// trivial state u = 1, v = 0.
constexpr float kDeadBelow = 1e-3f;
// A cell is "covered" when its v is above this: inside a spot, a stripe or a wave.
constexpr float kCoveredAbove = 0.1f;
// A member is "still changing" when the mean |v(N) - v(N - W)| over its cells is above this:
// travelling waves, splitting spots; below it the pattern stands still (steady spots, stripes).
constexpr float kChangingAbove = 1e-3f;

struct Summary {
  std::vector<float> mean_v;       // mean of v over the member's cells at the end
  std::vector<float> covered;      // fraction of the cells with v > kCoveredAbove at the end
  std::vector<float> max_v;        // largest v at the end
  std::vector<std::int32_t> died;  // 1 when max_v < kDeadBelow, else 0
  std::vector<float> change;       // mean |v(N) - v(N - W)| over the cells
};

Summary summarise(const std::vector<float>& v, const std::vector<float>& v_before, int members,
                  std::size_t cells) {
  Summary s;
  for (int m = 0; m < members; ++m) {
    const float* now = v.data() + static_cast<std::size_t>(m) * cells;
    const float* before = v_before.data() + static_cast<std::size_t>(m) * cells;
    double sum = 0.0;
    double change = 0.0;
    std::size_t covered = 0;
    float largest = -std::numeric_limits<float>::infinity();
    for (std::size_t i = 0; i < cells; ++i) {
      sum += now[i];
      change += std::fabs(static_cast<double>(now[i]) - before[i]);
      covered += now[i] > kCoveredAbove ? 1 : 0;
      largest = std::max(largest, now[i]);
    }
    s.mean_v.push_back(static_cast<float>(sum / static_cast<double>(cells)));
    s.covered.push_back(static_cast<float>(static_cast<double>(covered) / cells));
    s.max_v.push_back(largest);
    s.died.push_back(largest < kDeadBelow ? 1 : 0);
    s.change.push_back(static_cast<float>(change / static_cast<double>(cells)));
  }
  return s;
}

// The PNG map's size before it is drawn (mosaic_size(): draw_mosaic()'s rule, the colour bar's
// labels sized for the widest value a float can have, so never smaller than the map drawn).
struct MapSize {
  std::int64_t width = 0;
  std::int64_t height = 0;
  double bytes() const { return static_cast<double>(width) * static_cast<double>(height) * 3.0; }
};

MapSize map_size(int rows, int cols, const MosaicLayout& layout) {
  const MosaicSize size = mosaic_size(rows, cols, layout);
  return {size.width, size.height};
}

std::string pixels(const MapSize& size) {
  return std::to_string(size.width) + " x " + std::to_string(size.height) + " pixels";
}

// Refuses, before any work, a map that would not fit in the host memory left beside the batch's
// @p batch_host_bytes (libpng's limit on its sides is an output check: gs::check_png_size()).
void check_map(const MapSize& size, int feeds, int kills, int tile, double batch_host_bytes) {
  const std::int64_t available = gs::host_available_bytes();
  if (available >= 0 && size.bytes() > static_cast<double>(available) - batch_host_bytes) {
    throw Refusal{gs::kExitUsage,
                  "the map of " + std::to_string(feeds) + " x " + std::to_string(kills) +
                      " members in tiles of " + std::to_string(tile) +
                      " pixels (--tile) would be " + pixels(size) + ", " + bytes(size.bytes()) +
                      ", and host memory has " +
                      bytes(std::max(0.0, static_cast<double>(available) - batch_host_bytes)) +
                      " free besides the batch's " + bytes(batch_host_bytes) +
                      ": lower --tile, sweep fewer values, or write no map (--no-png)"};
  }
}

// ---------------------------------------------------------------------------------------------
// Running the batch: chunks of about a quarter second, a progress line, signals
// ---------------------------------------------------------------------------------------------

class Progress {
 public:
  Progress(int total_steps, double cells_per_step, bool enabled)
      : total_(total_steps), cells_(cells_per_step), enabled_(enabled) {}
  void update(int done) {
    if (!enabled_) return;
    const double now = clock_.seconds();
    if (done < total_ && now - last_draw_ < 0.25) return;
    last_draw_ = now;
    const double rate = now > 0.0 ? done / now : 0.0;
    std::fprintf(stderr, "\r  step %d/%d (%3.0f%%)  %.3g cell-updates/s  ETA %.1f s   ", done,
                 total_, 100.0 * done / total_, rate * cells_,
                 rate > 0.0 ? (total_ - done) / rate : 0.0);
    std::fflush(stderr);
    drawn_ = true;
  }
  void finish() {
    if (drawn_) std::fputc('\n', stderr);
    drawn_ = false;
  }

 private:
  int total_;
  double cells_;
  bool enabled_;
  bool drawn_ = false;
  gs::Stopwatch clock_;
  double last_draw_ = -1.0;
};

// Advances from step `done` to `target`: chunks sized from the measured speed to take about a
// quarter of a second, the device waited for after each, a signal checked between them, and
// `stop` (another GPU failed: multi_gpu.hpp).
class ChunkedRun {
 public:
  ChunkedRun(BatchStepper& stepper, Progress& progress, const std::atomic<bool>& stop)
      : stepper_(stepper), progress_(progress), stop_(stop) {}
  void advance_to(int target) {
    while (done_ < target) {
      gs::throw_if_interrupted("at step " + std::to_string(done_));
      throw_if_stopped(stop_);
      const int now = std::min(chunk_, target - done_);
      gs::Stopwatch clock;
      stepper_.advance(now);
      stepper_.synchronize();
      const double seconds = clock.seconds();
      done_ += now;
      progress_.update(done_);
      if (seconds > 0.0) {
        chunk_ = static_cast<int>(std::clamp(now * 0.25 / seconds, 1.0, 1.0e6));
      }
    }
  }

 private:
  BatchStepper& stepper_;
  Progress& progress_;
  const std::atomic<bool>& stop_;
  int done_ = 0;
  int chunk_ = 8;
};

// Before a long CPU run, how long it may take: the default map is 1.7e11 cell-updates, minutes
// on a laptop's few cores. A model, not a measurement: 1.5e8 to 5e8 cell-updates/s per thread
// (members that fit in a core's cache; the course's 2-core machine did 2.4e8 per thread).
void print_cpu_estimate(double cell_updates) {
  const double threads = omp_get_max_threads();
  const double fastest = cell_updates / (threads * 5e8);
  const double slowest = cell_updates / (threads * 1.5e8);
  if (slowest < 30.0) return;
  std::cout << std::setprecision(2) << "  note     " << cell_updates << " cell-updates on "
            << threads << " thread(s): expect " << std::fixed << std::setprecision(0)
            << fastest / 60.0 << " to " << slowest / 60.0 << " min"
            << " (--device gpu, or fewer members or --steps, for a quick map)\n"
            << std::defaultfloat << std::flush;
}

std::string number_text(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

// ---------------------------------------------------------------------------------------------
// gs_sweep
// ---------------------------------------------------------------------------------------------

struct SweepOptions {
  Common common;
  std::string feed = "0.01:0.06:32";
  std::string kill = "0.04:0.07:32";
  std::string output = "sweep.h5";
  std::string png = "sweep.png";
  bool write_hdf5 = true;
  bool write_png = true;
  bool fsync = true;
  bool progress = false;
  int window = 500;
  int tile = 64;
  float vmax = std::numeric_limits<float>::quiet_NaN();
};

int run_sweep(int argc, char** argv, const std::string& name) {
  SweepOptions o;
  CLI::App app{
      "Gray-Scott parameter sweep: every (F, k) pair of two ranges as one batch of "
      "simulations; writes the last v of each (HDF5) and the map of patterns (PNG). `" +
          name + " benchmark --help` measures the batch.",
      name};
  add_common_flags(app, o.common);
  app.add_option("--feed", o.feed, "feed rates F: FIRST:LAST:COUNT, or one value")
      ->capture_default_str();
  app.add_option("--kill", o.kill, "kill rates k: FIRST:LAST:COUNT, or one value")
      ->capture_default_str();
  app.add_option("-o,--output", o.output, "HDF5 file of the results")->capture_default_str();
  app.add_option("--png", o.png, "PNG file of the map")->capture_default_str();
  app.add_flag_callback(
      "--no-hdf5", [&o] { o.write_hdf5 = false; }, "write no HDF5 file");
  app.add_flag_callback(
      "--no-png", [&o] { o.write_png = false; }, "write no PNG file");
  app.add_flag_callback(
      "--no-output",
      [&o] {
        o.write_hdf5 = false;
        o.write_png = false;
      },
      "compute and summarise only: write no file");
  app.add_flag_callback(
      "--no-fsync", [&o] { o.fsync = false; }, "do not flush the files to the disk at the end");
  app.add_option("--window", o.window,
                 "steps W over which the summary's `change` is measured (at most --steps; the "
                 "default shrinks to --steps in a shorter run)")
      ->capture_default_str();
  app.add_option("--tile", o.tile, "height of one member's tile in the PNG, in pixels")
      ->capture_default_str();
  app.add_option("--vmax", o.vmax, "v drawn pale yellow (default: the largest v of the batch)")
      ->check(gs::float32_number());
  app.add_flag("--progress", o.progress, "show the progress line even when not a terminal");
  gs::apply_value_rules(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? gs::kExitSuccess : gs::kExitUsage;
  }
  o.progress = o.progress || ::isatty(STDERR_FILENO) == 1;

  std::vector<std::string> problems;
  const Range feed = parse_range(o.feed, "--feed", problems);
  const Range kill = parse_range(o.kill, "--kill", problems);
  check_common(o.common, problems);
  if (o.window < 1)
    problems.push_back("--window must be at least 1 (got " + std::to_string(o.window) + ")");
  // The default window (500 steps) shrinks to a shorter run; a window given is never changed.
  const bool window_given = app.count("--window") > 0;
  if (window_given && o.window > o.common.steps && o.common.steps >= 1) {
    problems.push_back("--window must be at most --steps (" + std::to_string(o.common.steps) +
                       "): the change is measured over the last W steps of the run (got " +
                       std::to_string(o.window) + ")");
  }
  if (o.tile < 1 || o.tile > 1024) {
    problems.push_back("--tile must be between 1 and 1024 pixels (got " + std::to_string(o.tile) +
                       ")");
  }
  if (!std::isnan(o.vmax) && !(std::isfinite(o.vmax) && o.vmax > 0.0f)) {
    problems.push_back("--vmax must be a finite number greater than 0");
  }
  if (o.write_hdf5 && o.output.empty()) problems.push_back("-o/--output must not be empty");
  if (o.write_png && o.png.empty()) problems.push_back("--png must not be empty");
  const std::int64_t members = std::int64_t{feed.count} * kill.count;
  if (problems.empty() && members > kMaxMembers) {
    problems.push_back("--feed and --kill ask for " + std::to_string(members) +
                       " members; a batch holds at most " + std::to_string(kMaxMembers));
  }
  if (!problems.empty()) {
    for (const std::string& problem : problems) std::cerr << name << ": error: " << problem << "\n";
    std::cerr << "Run with --help for the flags and their defaults.\n";
    return gs::kExitUsage;
  }
  const Common& c = o.common;
  const int batch = static_cast<int>(members);
  const int window = window_given ? o.window : std::min(o.window, c.steps);
  const std::size_t cells = static_cast<std::size_t>(c.rows) * c.cols;
  // What the program is allocating, for the message if memory runs out: the batch, then the map.
  std::string allocating = std::to_string(batch) + " members of " + std::to_string(c.rows) + " x " +
                           std::to_string(c.cols) + " cells";

  const auto sweep = [&]() -> int {
    // Signals are caught from here on (starting CUDA can take a while): the run stops at the next
    // check, between two chunks of steps, and leaves no file.
    gs::InterruptGuard signals;
    const std::vector<float> feeds = feed.values();
    const std::vector<float> kills = kill.values();
    // The map's layout is known before any work but for the largest v (its label's width): the
    // widest label a float can have stands in for it until then.
    MosaicLayout layout;
    layout.feed.assign(feeds.begin(), feeds.end());
    layout.kill.assign(kills.begin(), kills.end());
    layout.tile_pixels = o.tile;
    layout.vmax = std::isnan(o.vmax) ? std::numeric_limits<float>::max() : o.vmax;
    std::ostringstream title;
    title << "Gray-Scott: v after " << c.steps << " steps, " << feed.count << " x " << kill.count
          << " members of " << c.rows << " x " << c.cols << " cells";
    std::ostringstream rates_line;
    rates_line << "Du = " << c.diffusion_u << ", Dv = " << c.diffusion_v << ", dt = " << c.dt
               << "; every member starts from the course's seed";
    layout.title = {title.str(), rates_line.str()};

    const bool gpu = use_gpu(c.device);
    const std::vector<Share> shares = shares_of(batch, gpu_devices(gpu, c));
    const double batch_host_bytes = check_memory(shares, gpu_path(c.path), c.rows, c.cols, 4);
    const MapSize map = map_size(c.rows, c.cols, layout);
    if (o.write_png) check_map(map, feed.count, kill.count, o.tile, batch_host_bytes);
    // Both files are checked before any work: what each path names, that they are not one file,
    // the room, the size of the picture (output_file.hpp, png_file.hpp).
    std::vector<gs::PlannedOutput> outputs;
    if (o.write_hdf5) {
      const std::int64_t values = static_cast<std::int64_t>(cells) * batch * sizeof(float);
      outputs.push_back({o.output, "-o", values + gs::hdf5_metadata_allowance(batch)});
    }
    if (o.write_png) {
      gs::check_png_size(static_cast<int>(std::min<std::int64_t>(map.width, INT_MAX)),
                         static_cast<int>(std::min<std::int64_t>(map.height, INT_MAX)), o.png,
                         "--png");
      outputs.push_back({o.png, "--png", 0});  // compressed: its size is not known beforehand
    }
    gs::check_outputs(outputs);

    BatchRates rates;
    rates.diffusion_u = c.diffusion_u;
    rates.diffusion_v = c.diffusion_v;
    rates.dt = c.dt;
    for (const float f : feeds) {
      for (const float k : kills) {
        rates.feed.push_back(f);
        rates.kill.push_back(k);
      }
    }
    // One stepper per share, each loaded with its members on its own GPU: one share, on the
    // calling thread, with one GPU or on the CPU; one thread per GPU with several.
    std::vector<ShareStepper> steppers(shares.size());
    gs::Stopwatch clock;
    on_every_share(shares, [&](std::size_t i, const std::atomic<bool>&) {
      steppers[i] = make_share_stepper(shares[i], gpu_path(c.path));
      steppers[i]->load(repeat_state(gs::initial_state(c.rows, c.cols), shares[i].count),
                        share_rates(rates, shares[i]));
      steppers[i]->synchronize();
    });
    const double startup = clock.seconds();
    std::cout << name << ": " << batch << " members (" << feed.count << " F x " << kill.count
              << " k) of " << c.rows << " x " << c.cols << " cells, " << c.steps << " steps\n";
    if (shares.size() == 1) {
      std::cout << "  on " << (gpu ? gs::describe_gpu() : std::string("the CPU")) << ": "
                << steppers[0]->describe() << "\n";
    } else {
      std::cout << "  on " << shares.size() << " GPUs: " << describe_shares(shares) << "\n";
      for (std::size_t i = 0; i < shares.size(); ++i) {
        std::cout << "  GPU " << shares[i].device << ": " << steppers[i]->describe() << "\n";
      }
    }
    std::cout << std::flush;
    if (!gpu) print_cpu_estimate(static_cast<double>(cells) * batch * c.steps);
    // The progress line follows the first share, the largest: the others end at about its time.
    Progress progress(c.steps, static_cast<double>(cells) * batch, o.progress);
    Progress silent(c.steps, 0.0, false);
    std::vector<float> v_before(cells * batch);
    std::vector<float> v(cells * batch);
    clock.restart();
    on_every_share(shares, [&](std::size_t i, const std::atomic<bool>& stop) {
      ChunkedRun run(*steppers[i], i == 0 ? progress : silent, stop);
      const std::size_t offset = cells * static_cast<std::size_t>(shares[i].first);
      run.advance_to(c.steps - window);
      steppers[i]->fetch_v(v_before.data() + offset);  // each share into its members' place
      run.advance_to(c.steps);
      steppers[i]->fetch_v(v.data() + offset);
    });
    const double seconds = clock.seconds();
    progress.finish();
    for (int m = 0; m < batch; ++m) {
      const float* member = v.data() + static_cast<std::size_t>(m) * cells;
      if (!std::all_of(member, member + cells, [](float x) { return std::isfinite(x); })) {
        throw gs::Diverged("member " + std::to_string(m) + " (F = " + number_text(rates.feed[m]) +
                           ", k = " + number_text(rates.kill[m]) +
                           ") diverged: v is not finite; choose a smaller time step");
      }
    }
    const Summary summary = summarise(v, v_before, batch, cells);

    float vmax = o.vmax;
    if (std::isnan(vmax)) vmax = std::max(kDeadBelow, *std::max_element(v.begin(), v.end()));
    gs::throw_if_interrupted("before the output was written");
    std::unique_ptr<gs::DatasetWriter> writer;
    if (o.write_hdf5) {
      gs::OutputOptions output("-o", nullptr);
      if (!o.fsync) output.writeback_bytes = 0;  // --no-fsync: the page cache only, no waits
      writer = std::make_unique<gs::DatasetWriter>(o.output, output);
      const std::int64_t b = batch;
      writer->write("v", {b, c.rows, c.cols}, v.data(),
                    "v of every member after the last step, [member][row][col]");
      writer->write("feed", {b}, rates.feed.data(), "feed rate F of each member");
      writer->write("kill", {b}, rates.kill.data(), "kill rate k of each member");
      writer->write("feed_values", {feed.count}, feeds.data(),
                    "the F of each row of the map: member m has F = feed_values[m / kill_count]");
      writer->write(
          "kill_values", {kill.count}, kills.data(),
          "the k of each column of the map: member m has k = kill_values[m % kill_count]");
      writer->write("mean_v", {b}, summary.mean_v.data(),
                    "mean of v over the member's cells after the last step");
      writer->write("covered", {b}, summary.covered.data(),
                    "fraction of the member's cells with v > covered_above after the last step");
      writer->write("max_v", {b}, summary.max_v.data(),
                    "largest v of the member after the last step");
      writer->write("died", {b}, summary.died.data(),
                    "1 when max_v < dead_below (the pattern decayed to u = 1, v = 0), else 0");
      writer->write("change", {b}, summary.change.data(),
                    "mean over the member's cells of |v(steps) - v(steps - window)|: near 0 for a "
                    "pattern that stands still, larger for moving or growing ones");
      writer->set_integer("rows", c.rows);
      writer->set_integer("cols", c.cols);
      writer->set_integer("steps", c.steps);
      writer->set_integer("members", batch);
      writer->set_integer("feed_count", feed.count);
      writer->set_integer("kill_count", kill.count);
      writer->set_number("feed_first", feed.first);
      writer->set_number("feed_last", feed.last);
      writer->set_number("kill_first", kill.first);
      writer->set_number("kill_last", kill.last);
      writer->set_number("diffusion_u", c.diffusion_u);
      writer->set_number("diffusion_v", c.diffusion_v);
      writer->set_number("deltat", c.dt);
      writer->set_integer("window", window);
      writer->set_number("dead_below", kDeadBelow);
      writer->set_number("covered_above", kCoveredAbove);
      writer->set_text("layout",
                       "member m = (index of F) * kill_count + (index of k); v[m] is its grid");
      writer->set_text("initial_state",
                       "every member starts from the course's initial state (docs/PROBLEM.md)");
      writer->set_integer("gpus", gpu ? static_cast<std::int64_t>(shares.size()) : 0);
      writer->set_text("stepper", (shares.size() > 1 ? std::to_string(shares.size()) +
                                                           " GPUs, members split evenly in order; "
                                                     : std::string()) +
                                      steppers[0]->describe());
    }
    // The map: drawn, then written through common/'s output mechanism like every file.
    std::unique_ptr<gs::OutputFile> png;
    Image image;
    if (o.write_png) {
      layout.vmax = vmax;
      allocating = "the map's picture, " + pixels(map) + " (" + bytes(map.bytes()) +
                   "; lower --tile or use --no-png)";
      image = draw_mosaic(v.data(), c.rows, c.cols, layout);
      png = std::make_unique<gs::OutputFile>(o.png, gs::OutputOptions("--png", nullptr));
      gs::write_rgb_png(*png, image.width, image.height, [&image](int y, unsigned char* rgb) {
        const std::size_t row_bytes = static_cast<std::size_t>(image.width) * 3;
        std::copy_n(image.rgb.data() + static_cast<std::size_t>(y) * row_bytes, row_bytes, rgb);
      });
    }
    gs::throw_if_interrupted("before the output was committed");
    // Each file replaces its old one only when complete; a failure or a signal before leaves
    // both old files as they were.
    if (writer) writer->commit(o.fsync);
    if (png) png->commit(o.fsync);

    const int died = static_cast<int>(std::count(summary.died.begin(), summary.died.end(), 1));
    int changing = 0;
    for (int m = 0; m < batch; ++m) {
      changing += summary.died[m] == 0 && summary.change[m] > kChangingAbove ? 1 : 0;
    }
    const double updates = static_cast<double>(cells) * batch * c.steps;
    std::cout << std::setprecision(3) << "  compute  " << seconds << " s, "
              << gs::si(updates / seconds, "cell-updates/s") << " (load " << startup << " s)\n"
              << "  members  " << died << " died out (max v < " << kDeadBelow << "), " << changing
              << " still changing over the last " << window << " steps (mean |dv| > "
              << kChangingAbove << "), " << batch - died - changing << " standing still\n";
    if (o.write_hdf5) std::cout << "  wrote    " << o.output << "\n";
    if (o.write_png) {
      std::cout << "  wrote    " << o.png << " (" << image.width << " x " << image.height
                << " pixels)\n";
    }
    std::cout.flush();
    if (!std::cout) {
      std::cerr << name << ": error: cannot write to standard output\n";
      return gs::kExitFailure;
    }
    return gs::kExitSuccess;
  };
  gs::GuardWords words;
  words.after_interruption = "; no output file was left";
  words.out_of_memory_for = [&allocating] { return allocating; };
  words.invalid_parameter_is_usage = true;
  return gs::guarded_main(name, sweep, words);
}

}  // namespace

int program(int argc, char** argv, const char* name) {
  if (argc > 1 && std::string(argv[1]) == "benchmark") {
    return run_benchmark(argc - 1, argv + 1, std::string(name) + " benchmark");
  }
  return run_sweep(argc, argv, name);
}

}  // namespace GS_LESSON_NAMESPACE
