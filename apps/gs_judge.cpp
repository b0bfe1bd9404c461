// gs_judge: the verdict of scripts/grade.sh, reached apart from the learner's code.
//
// A grade decided inside the process that runs the learner's code can be written by that code (a
// test's comparison replaced at link time, a report forged by a static constructor). So the
// judge, like an online judge's checker, links none of it: it draws cases when it is run (grid
// sizes, a random starting state's seed, rates, frames and steps that no code could know when
// it was written), runs the learner's build in a process of its own (in a bubblewrap sandbox when
// asked: the file system read-only but for a scratch folder, no network), reads back the frames
// that process wrote, computes the reference itself (common/'s definition, evaluated in double)
// and compares every frame. The learner's process gets only its command line; the reference is
// computed after it has exited.
//
// What it runs, per lesson build (its table below): the lesson's program with each of the
// lesson's implementations (01-06, 11), the program through lesson 07's frame loop, lesson 08's
// ranks under mpiexec and the round of its peer exchange (written down by the program's
// `protocol` mode, walked here on tests/judge/round_check.hpp), lesson 09's sweep (each
// member against its own rates), lesson 10's module through tests/judge/lesson10_runner.py. Exit
// status: 0 pass, 1 fail, 2 usage; the verdict and every case, as JSON, in --json.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gs/hdf5_io.hpp"
#include "gs/main_guard.hpp"
#include "gs/output_file.hpp"
#include "gs/params.hpp"
#include "gs/program.hpp"
#include "gs/reference.hpp"
#include "gs/state.hpp"
#include "round_check.hpp"  // tests/judge/: the model of lesson 08's ranks, no learner code

namespace {

// What the judge runs for one lesson build: its shape and the implementations it must hear from.
enum class Shape { implementations, frame_loop, ranks, sweep, module };

struct Graded {
  std::string name;  // an implementation, or the lesson's path (e.g. "ranks-peer")
  bool gpu;          // needs a GPU: not graded where none is
};

struct LessonPlan {
  std::string build;  // the lesson build's id (lessons.tsv): 01, 03_cpu, 08 ...
  Shape shape;
  std::vector<Graded> graded;
  // Where the lesson's idea acts only after so many steps of one launch, every case's frames
  // are drawn at least that long: lesson 11's blocks exchange their edges every `halo` steps
  // inside a launch, so a kernel that never exchanges is exact for a frame of up to `halo`
  // steps (the shipped stub passed 3 cases of 1 to 8 steps on an H200). 0: any length.
  int min_steps_per_frame = 0;
};

// The implementations each lesson's body registers (a CI test checks this table against the
// solution programs' --list, tests/judge/test_judge.sh), so that a build which hides one from
// its --list is still asked for it.
const std::vector<LessonPlan>& plans() {
  static const std::vector<LessonPlan> table = {
      {"01",
       Shape::implementations,
       {{"l01-regular", false}, {"l01-naive", false}, {"l01-naive-alloc", false}}},
      {"02",
       Shape::implementations,
       {{"l02-simd-omp", false},
        {"l02-blocked-omp", false},
        {"l02-simd", false},
        {"l02-explicit-simd", false},
        {"l02-scalar-soa", false}}},
      {"03_cpu",
       Shape::implementations,
       {{"l03cpu-fused", false}, {"l03cpu-array", false}, {"l03cpu-copy-every-step", false}}},
      {"03",
       Shape::implementations,
       {{"l03-fused", true}, {"l03-array", true}, {"l03-copy-every-step", true}}},
      {"04",
       Shape::implementations,
       {{"l04-checked-32x8", true}, {"l04-generic", true}, {"l04-generic-32x8", true}}},
      {"05",
       Shape::implementations,
       {{"l05-tiled", true}, {"l05-tiled-16x16", true}, {"l05-tiled-16x16-pad", true}}},
      {"06",
       Shape::implementations,
       {{"l06-temporal", true},
        {"l06-temporal-launches", true},
        {"l06-shared-blocking-graph", true},
        {"l06-shared-blocking", true},
        {"l06-fused-graph", true},
        {"l06-fused", true}}},
      {"07", Shape::frame_loop, {{"cpu-stepper", false}, {"gpu-stepper", true}}},
      // Lesson 08's learner writes the round of the peer exchange: walked on the model (any
      // machine), then run by GPU ranks that write each other's halos.
      {"08", Shape::ranks, {{"ranks-protocol", false}, {"ranks-peer", true}}},
      {"09", Shape::sweep, {{"sweep-cpu", false}, {"sweep-gpu-resident", true}}},
      {"10", Shape::module, {{"module-cpu", false}, {"module-gpu", true}}},
      // Two exchanges at least at the deepest halo graded (h8: 8 steps between exchanges).
      {"11", Shape::implementations, {{"l11-on-chip", true}, {"l11-on-chip-h8", true}}, 17},
  };
  return table;
}

// ---------------------------------------------------------------------------------------------
// The cases, drawn now
// ---------------------------------------------------------------------------------------------

struct Case {
  gs::Params params;  // grid, frames, steps, rates, seed (params.seed: the starting state)
  int ranks = 1;      // lesson 08
  int halo = 1;       // lesson 08
  int feed_count = 1, kill_count = 1;  // lesson 09: members = feed_count * kill_count
  float feed_last = 0, kill_last = 0;  // lesson 09: the ranges' ends (params.rates: their start)
};

class Draw {
 public:
  explicit Draw(std::uint64_t seed) : engine_(seed) {}
  int integer(int low, int high) { return std::uniform_int_distribution<int>(low, high)(engine_); }
  float number(double low, double high) {
    // Rounded to 6 significant digits: what the command line carries is exactly what was drawn.
    const double value = std::uniform_real_distribution<double>(low, high)(engine_);
    std::ostringstream text;
    text << std::setprecision(6) << value;
    return std::stof(text.str());
  }
  std::uint64_t seed() { return engine_() >> 12; }

 private:
  std::mt19937_64 engine_;
};

// Rates of a stable run from a random state (u, v up to 1): the diffusion's eigenvalues reach
// -12 D and the reaction's about -(v^2 + F), so dt (12 max(Du, Dv) + 1.2) stays below 1.6.
gs::Rates draw_rates(Draw& draw) {
  gs::Rates rates;
  rates.feed = draw.number(0.01, 0.07);
  rates.kill = draw.number(0.04, 0.07);
  rates.diffusion_u = draw.number(0.05, 0.2);
  rates.diffusion_v = draw.number(0.02, rates.diffusion_u);
  const double limit = 1.6 / (12.0 * std::max(rates.diffusion_u, rates.diffusion_v) + 1.2);
  rates.dt = draw.number(0.4 * limit, limit);
  return rates;
}

// Grid shapes, case by case: a small odd one, a larger one, then thin ones (one row or column),
// then any; every size is drawn.
void draw_grid(Draw& draw, int index, int& rows, int& cols) {
  switch (index % 4) {
    case 0:
      rows = draw.integer(2, 9);
      cols = draw.integer(2, 13);
      break;
    case 1:
      rows = draw.integer(17, 70);
      cols = draw.integer(33, 150);
      break;
    case 2:
      if (draw.integer(0, 1) == 0) {
        rows = 1;
        cols = draw.integer(2, 90);
      } else {
        rows = draw.integer(2, 60);
        cols = 1;
      }
      break;
    default:
      rows = draw.integer(9, 45);
      cols = draw.integer(9, 260);
  }
}

std::vector<Case> draw_cases(Draw& draw, Shape shape, int count) {
  std::vector<Case> cases;
  for (int index = 0; index < count; ++index) {
    Case c;
    gs::Params& p = c.params;
    draw_grid(draw, index, p.rows, p.cols);
    p.rates = draw_rates(draw);
    p.frames = draw.integer(2, 4);
    p.steps_per_frame = draw.integer(1, 11);
    p.seed = static_cast<std::int64_t>(draw.seed() % 1000000007ULL);
    if (shape == Shape::frame_loop) {  // more frames than a ring has slots, few steps each
      p.frames = draw.integer(6, 14);
      p.steps_per_frame = draw.integer(1, 3);
    } else if (shape == Shape::ranks) {
      c.ranks = draw.integer(2, 3);
      c.halo = draw.integer(1, 4);
      p.rows = std::max(p.rows, c.ranks * c.halo + draw.integer(0, 20));
      p.cols = std::max(p.cols, 2);
    } else if (shape == Shape::sweep) {
      p.seed = -1;  // lesson 09's members start from the canonical state
      // Small enough that a member fits in one SM's shared memory (the resident kernel), large
      // enough that the canonical state has its seed (gs::seed_box(): 16 rows and 16 columns at
      // least): without it u = 1, v = 0 everywhere is a fixed point, which any code reproduces.
      p.rows = p.rows < 16 ? draw.integer(16, 40) : std::min(p.rows, 40);
      p.cols = p.cols < 16 ? draw.integer(16, 64) : std::min(p.cols, 64);
      const gs::SeedBox seed = gs::seed_box(p.rows, p.cols);
      if (seed.row_begin >= seed.row_end || seed.col_begin >= seed.col_end) {
        throw std::logic_error("a sweep case of " + std::to_string(p.rows) + " x " +
                               std::to_string(p.cols) + " cells has no seed");
      }
      p.frames = 1;
      p.steps_per_frame = draw.integer(1, 40);
      c.feed_count = draw.integer(1, 4);
      c.kill_count = draw.integer(1, 3);
      c.feed_last = draw.number(p.rates.feed, 0.08);
      c.kill_last = draw.number(p.rates.kill, 0.075);
    }
    cases.push_back(c);
  }
  return cases;
}

// ---------------------------------------------------------------------------------------------
// The learner's process
// ---------------------------------------------------------------------------------------------

struct Ran {
  int status = -1;  // exit status; -1 killed by a signal or timed out
  bool timed_out = false;
  std::string output;  // its stdout and stderr, the last few kilobytes
};

std::string number_text(double value) {
  std::ostringstream text;
  text << std::setprecision(9) << value;
  return text.str();
}

std::string quoted(const std::vector<std::string>& command) {
  std::string line;
  for (const std::string& word : command) line += (line.empty() ? "" : " ") + word;
  return line;
}

// Runs @p command (in bubblewrap when @p sandbox) with its output into a file of the scratch
// folder, killed with its process group after @p timeout seconds.
Ran run_command(std::vector<std::string> command, const std::string& scratch, bool sandbox,
                double timeout, const std::vector<std::string>& environment) {
  if (sandbox) {
    // The whole file system read-only (the build may live under /tmp: no tmpfs over it), the
    // scratch folder writable and TMPDIR; no network, no view of other processes.
    std::vector<std::string> jail = {"bwrap",
                                     "--ro-bind",
                                     "/",
                                     "/",
                                     "--dev-bind",
                                     "/dev",
                                     "/dev",
                                     "--proc",
                                     "/proc",
                                     "--bind",
                                     scratch,
                                     scratch,
                                     "--chdir",
                                     scratch,
                                     "--setenv",
                                     "TMPDIR",
                                     scratch,
                                     "--unshare-net",
                                     "--unshare-pid",
                                     "--unshare-ipc",
                                     "--die-with-parent",
                                     "--new-session"};
    for (const std::string& variable : environment) {
      const std::size_t equals = variable.find('=');
      jail.insert(jail.end(),
                  {"--setenv", variable.substr(0, equals), variable.substr(equals + 1)});
    }
    jail.push_back("--");
    command.insert(command.begin(), jail.begin(), jail.end());
  }
  const std::string log = scratch + "/process.log";
  Ran ran;
  const pid_t child = fork();
  if (child < 0) throw std::runtime_error("fork failed");
  if (child == 0) {
    setpgid(0, 0);
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
      close(fd);
    }
    const int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, STDIN_FILENO);
    if (!sandbox && chdir(scratch.c_str()) != 0) _exit(127);
    if (!sandbox) setenv("TMPDIR", scratch.c_str(), 1);
    for (const std::string& variable : environment) putenv(strdup(variable.c_str()));
    std::vector<char*> argv;
    for (std::string& word : command) argv.push_back(word.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::perror(argv[0]);
    _exit(127);
  }
  setpgid(child, child);
  const auto start = std::chrono::steady_clock::now();
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(child, &status, WNOHANG);
    if (done == child) break;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed > timeout) {
      kill(-child, SIGKILL);
      waitpid(child, &status, 0);
      ran.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!ran.timed_out && WIFEXITED(status)) ran.status = WEXITSTATUS(status);
  std::ifstream in(log, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ran.output = text.size() > 3000 ? "..." + text.substr(text.size() - 3000) : text;
  return ran;
}

// ---------------------------------------------------------------------------------------------
// The comparison
// ---------------------------------------------------------------------------------------------

constexpr double kTolerance = 1e-4;  // absolute, as the test suites' (tests/support/check.hpp)

// "" when @p got matches @p expected within kTolerance everywhere, else the worst cell.
std::string compare(const std::string& what, int rows, int cols, const std::vector<float>& got,
                    const std::vector<float>& expected) {
  if (got.size() != expected.size()) {
    return what + ": " + std::to_string(got.size()) + " values, expected " +
           std::to_string(expected.size());
  }
  double worst = -1;
  std::size_t worst_cell = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double error = std::isfinite(got[i]) ? std::fabs(double{got[i]} - expected[i])
                                               : std::numeric_limits<double>::infinity();
    if (error > worst) {
      worst = error;
      worst_cell = i;
    }
  }
  if (worst <= kTolerance) return "";
  std::ostringstream message;
  message << what << ": cell (" << worst_cell / cols << ", " << worst_cell % cols << ") of " << rows
          << " x " << cols << " is " << got[worst_cell] << ", the reference "
          << expected[worst_cell] << " (error " << worst << " > " << kTolerance << ")";
  return message.str();
}

// The reference's frames of v for a run of @p params from @p start.
std::vector<std::vector<float>> reference_frames(gs::State state, const gs::Params& params) {
  std::vector<std::vector<float>> frames;
  for (int frame = 0; frame < params.frames; ++frame) {
    gs::reference_advance_in_double(state, params.rates, params.steps_per_frame);
    frames.push_back(state.v);
  }
  return frames;
}

std::string compare_frame_file(const std::string& path, const gs::Params& params,
                               const gs::State& start) {
  const gs::FrameReader reader(path);
  const gs::OutputInfo& info = reader.info();
  if (info.rows != params.rows || info.cols != params.cols || info.frames != params.frames) {
    return "the file holds " + std::to_string(info.frames) + " frames of " +
           std::to_string(info.rows) + " x " + std::to_string(info.cols) + ", the case " +
           std::to_string(params.frames) + " of " + std::to_string(params.rows) + " x " +
           std::to_string(params.cols);
  }
  const std::vector<std::vector<float>> expected = reference_frames(start, params);
  for (int frame = 0; frame < params.frames; ++frame) {
    const std::string problem = compare("frame " + std::to_string(frame + 1) + ", v", params.rows,
                                        params.cols, reader.read_frame(frame), expected[frame]);
    if (!problem.empty()) return problem;
  }
  return "";
}

// Reads @p count float32 values from @p path, which must be a regular file holding exactly that
// many: opened without following a link and without blocking (a FIFO left by the learner's
// process is refused, never waited on), then checked through its descriptor.
std::vector<float> read_raw_floats(const std::string& path, std::size_t count) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    throw std::runtime_error("no result file " + path + " (" + std::strerror(errno) + ")");
  struct stat status {};
  const std::size_t bytes = count * sizeof(float);
  std::vector<float> values(count);
  std::string problem;
  if (fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    problem = path + " is not a regular file";
  } else if (static_cast<std::size_t>(status.st_size) != bytes) {
    problem = path + " holds " + std::to_string(status.st_size) + " bytes, not " +
              std::to_string(count) + " float32 values";
  } else {
    std::size_t done = 0;
    char* target = reinterpret_cast<char*>(values.data());
    while (done < bytes) {
      const ssize_t got = read(fd, target + done, bytes - done);
      if (got <= 0) {
        problem = "cannot read " + path;
        break;
      }
      done += static_cast<std::size_t>(got);
    }
  }
  close(fd);
  if (!problem.empty()) throw std::runtime_error(problem);
  return values;
}

// The starting state handed to lesson 10's runner, through common/'s output mechanism like every
// file the course writes (its scratch folder is the judge's own, made fresh: no flush needed).
void write_raw_floats(const std::string& path, const std::vector<float>& values) {
  const std::string bytes(reinterpret_cast<const char*>(values.data()),
                          values.size() * sizeof(float));
  gs::write_output_file(path, bytes, gs::OutputOptions("--scratch", nullptr), false);
}

// ---------------------------------------------------------------------------------------------
// One graded path, one case
// ---------------------------------------------------------------------------------------------

struct Options {
  std::string lesson, program, mpiexec = "mpiexec", python = "python3", runner, pythonpath;
  std::string scratch, json;
  std::uint64_t seed = 0;
  bool seed_given = false;
  int cases = 4;
  bool sandbox = false, gpu = false;
  int gpus = 1;  // GPUs there (with gpu): lesson 08's peer ranks need one each
  double timeout = 120;
};

struct Verdict {
  std::string graded, status, detail, command;  // status: pass, fail, not graded here
  int case_index = 0;
};

std::vector<std::string> rate_flags(const gs::Rates& r) {
  return {"-f", number_text(r.feed),        "-k", number_text(r.kill),
          "-u", number_text(r.diffusion_u), "-v", number_text(r.diffusion_v),
          "-t", number_text(r.dt)};
}

std::vector<std::string> grid_flags(const gs::Params& p) {
  return {"-r", std::to_string(p.rows),   "-c", std::to_string(p.cols),
          "-n", std::to_string(p.frames), "-e", std::to_string(p.steps_per_frame)};
}

// A range of gs_sweep: FIRST:LAST:COUNT, or one value.
std::string range_text(float first, float last, int count) {
  if (count == 1) return number_text(first);
  return number_text(first) + ":" + number_text(last) + ":" + std::to_string(count);
}

// The command for @p graded on @p c, and where its result lands.
std::vector<std::string> command_for(const Options& o, Shape shape, const std::string& graded,
                                     const Case& c, const std::string& folder) {
  const gs::Params& p = c.params;
  std::vector<std::string> command;
  auto append = [&command](const std::vector<std::string>& words) {
    command.insert(command.end(), words.begin(), words.end());
  };
  const std::string output = folder + "/result.h5";
  switch (shape) {
    case Shape::implementations:
      command = {o.program, "--impl", graded};
      break;
    case Shape::frame_loop:
      // Lesson 07's ring carries the frames of a stepper of the registry, one of each device.
      command = {o.program, "--impl", graded == "gpu-stepper" ? "l06-temporal" : "l02-simd-omp"};
      break;
    case Shape::ranks:
      command = {o.mpiexec, "-n", std::to_string(c.ranks), "--oversubscribe", "--bind-to", "none"};
      if (geteuid() == 0) command.push_back("--allow-run-as-root");
      // The GPU ranks run lesson 06's stepper; the exchange between them is the peer exchange,
      // whose round is the learner's.
      append({o.program, "--halo", std::to_string(c.halo), "--transport", "peer", "--impl",
              "l06-temporal"});
      break;
    case Shape::sweep:
      command = {o.program,
                 "-r",
                 std::to_string(p.rows),
                 "-c",
                 std::to_string(p.cols),
                 "--steps",
                 std::to_string(p.steps_per_frame),
                 "--feed",
                 range_text(p.rates.feed, c.feed_last, c.feed_count),
                 "--kill",
                 range_text(p.rates.kill, c.kill_last, c.kill_count),
                 "-u",
                 number_text(p.rates.diffusion_u),
                 "-v",
                 number_text(p.rates.diffusion_v),
                 "-t",
                 number_text(p.rates.dt),
                 "--device",
                 graded == "sweep-cpu" ? "cpu" : "gpu",
                 "-o",
                 output,
                 "--no-png",
                 "--no-fsync"};
      if (graded != "sweep-cpu") append({"--path", "resident"});
      return command;
    case Shape::module:
      command = {o.python,   o.runner,
                 "--folder", folder,
                 "--rows",   std::to_string(p.rows),
                 "--cols",   std::to_string(p.cols),
                 "--frames", std::to_string(p.frames),
                 "--steps",  std::to_string(p.steps_per_frame),
                 "--device", graded == "module-cpu" ? "cpu" : "gpu"};
      append(rate_flags(p.rates));
      return command;
  }
  append(grid_flags(p));
  append(rate_flags(p.rates));
  append({"--seed", std::to_string(p.seed), "-o", output, "--no-fsync"});
  return command;
}

std::string check_result(Shape shape, const Case& c, const std::string& folder) {
  const gs::Params& p = c.params;
  if (shape == Shape::sweep) {
    const gs::DatasetReader reader(folder + "/result.h5");
    const std::vector<float> v = reader.read_floats("v");
    const std::vector<float> feed = reader.read_floats("feed");
    const std::vector<float> kill = reader.read_floats("kill");
    const std::size_t members = static_cast<std::size_t>(c.feed_count) * c.kill_count;
    const std::size_t cells = static_cast<std::size_t>(p.rows) * p.cols;
    if (feed.size() != members || kill.size() != members || v.size() != members * cells) {
      return "the file holds " + std::to_string(feed.size()) + " members, the case " +
             std::to_string(members);
    }
    // Each member against its own rates, which must be the ranges' points (F outer, k inner or
    // the other way: the judge accepts either order, as long as each member says its own).
    for (std::size_t m = 0; m < members; ++m) {
      gs::Rates rates = p.rates;
      rates.feed = feed[m];
      rates.kill = kill[m];
      bool on_range = false;
      for (int i = 0; i < c.feed_count && !on_range; ++i) {
        const double f = c.feed_count == 1
                             ? p.rates.feed
                             : p.rates.feed + (c.feed_last - p.rates.feed) * i / (c.feed_count - 1);
        for (int j = 0; j < c.kill_count && !on_range; ++j) {
          const double k = c.kill_count == 1 ? p.rates.kill
                                             : p.rates.kill + (c.kill_last - p.rates.kill) * j /
                                                                  (c.kill_count - 1);
          on_range = std::fabs(f - feed[m]) < 1e-6 && std::fabs(k - kill[m]) < 1e-6;
        }
      }
      if (!on_range) {
        return "member " + std::to_string(m) + " says F = " + number_text(feed[m]) +
               ", k = " + number_text(kill[m]) + ": not a point of the ranges asked for";
      }
      gs::State state = gs::initial_state(p.rows, p.cols);
      gs::reference_advance_in_double(state, rates, p.steps_per_frame);
      const std::vector<float> got(v.begin() + static_cast<std::ptrdiff_t>(m * cells),
                                   v.begin() + static_cast<std::ptrdiff_t>((m + 1) * cells));
      const std::string problem =
          compare("member " + std::to_string(m) + " (F = " + number_text(feed[m]) +
                      ", k = " + number_text(kill[m]) + "), v",
                  p.rows, p.cols, got, state.v);
      if (!problem.empty()) return problem;
    }
    return "";
  }
  if (shape == Shape::module) {
    gs::State state = gs::random_state(p.rows, p.cols, static_cast<std::uint64_t>(p.seed));
    for (int frame = 0; frame < p.frames; ++frame) {
      gs::reference_advance_in_double(state, p.rates, p.steps_per_frame);
      for (const char* field : {"u", "v"}) {
        const std::string name = folder + "/" + field + "-" + std::to_string(frame + 1) + ".f32";
        const std::string problem =
            compare("frame " + std::to_string(frame + 1) + ", " + field, p.rows, p.cols,
                    read_raw_floats(name, state.size()), field[0] == 'u' ? state.u : state.v);
        if (!problem.empty()) return problem;
      }
    }
    return "";
  }
  return compare_frame_file(folder + "/result.h5", p, gs::starting_state(p));
}

// Lesson 08's round of the peer exchange, as the program's `protocol` mode prints it ("done N:
// post 1; fence; ..." for N = 0, 1, ...), walked on the model of the ranks as the point test walks
// it (round_check::check_contract(): two and three ranks). "" when it keeps the contract, else why
// not.
std::string check_protocol(const std::string& output) {
  std::map<unsigned long long, std::vector<round_check::Step>> rounds;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    unsigned long long done = 0;
    int used = 0;
    if (std::sscanf(line.c_str(), "done %llu: %n", &done, &used) != 1 || used == 0) continue;
    std::vector<round_check::Step> steps;
    if (!round_check::parse_round(line.substr(static_cast<std::size_t>(used)), steps)) {
      return "the program's round of a block that finished " + std::to_string(done) +
             " rounds is not a list of the Block's operations: " + line.substr(0, 200);
    }
    rounds[done] = steps;
  }
  const auto round_of = [&rounds](unsigned long long done) {
    const auto found = rounds.find(done);
    if (found == rounds.end()) {
      throw std::runtime_error("the program did not print the round of a block that finished " +
                               std::to_string(done) + " rounds");
    }
    return found->second;
  };
  try {
    return round_check::check_contract(round_of);
  } catch (const std::runtime_error& error) {
    return error.what();
  }
}

Verdict judge_one(const Options& o, Shape shape, const Graded& graded, const Case& c, int index) {
  Verdict verdict{graded.name, "pass", "", "", index};
  const std::string folder = o.scratch + "/" + graded.name + "-" + std::to_string(index);
  if (mkdir(folder.c_str(), 0700) != 0) throw std::runtime_error("cannot create " + folder);
  if (graded.name == "ranks-protocol") {  // no case to draw: the round is the same on any grid
    const std::vector<std::string> command = {o.program, "protocol"};
    verdict.command = quoted(command);
    const Ran ran = run_command(command, folder, o.sandbox, o.timeout, {});
    if (ran.timed_out || ran.status != 0) {
      verdict.status = "fail";
      verdict.detail = ran.timed_out
                           ? "did not finish within " + number_text(o.timeout) + " s"
                           : "exited with status " + std::to_string(ran.status) + ": " + ran.output;
    } else {
      verdict.detail = check_protocol(ran.output);
      if (!verdict.detail.empty()) verdict.status = "fail";
    }
    return verdict;
  }
  if (shape == Shape::module) {  // the starting state, handed over as files: u.f32 and v.f32
    const gs::State start =
        gs::random_state(c.params.rows, c.params.cols, static_cast<std::uint64_t>(c.params.seed));
    write_raw_floats(folder + "/u.f32", start.u);
    write_raw_floats(folder + "/v.f32", start.v);
  }
  const std::vector<std::string> command = command_for(o, shape, graded.name, c, folder);
  verdict.command = quoted(command);
  std::vector<std::string> environment = {"OMP_WAIT_POLICY=passive", "NCCL_NVLS_ENABLE=0"};
  if (shape == Shape::ranks) environment.push_back("OMP_NUM_THREADS=1");
  if (!o.pythonpath.empty()) environment.push_back("PYTHONPATH=" + o.pythonpath);
  const Ran ran = run_command(command, folder, o.sandbox, o.timeout, environment);
  if (ran.timed_out) {
    verdict.status = "fail";
    verdict.detail = "did not finish within " + number_text(o.timeout) + " s";
  } else if (ran.status != 0) {
    verdict.status = "fail";
    verdict.detail = "exited with status " + std::to_string(ran.status) + ": " + ran.output;
  } else if (graded.name == "ranks-peer" &&
             ran.output.find("peer to peer refused") != std::string::npos) {
    // This machine's GPUs cannot write each other's memory: the ranks fell back to another
    // exchange, and the learner's round never ran.
    verdict.status = "not graded here";
    verdict.detail = ran.output.substr(ran.output.find("peer to peer refused"), 300);
  } else {
    try {
      verdict.detail = check_result(shape, c, folder);
    } catch (const std::exception& error) {
      verdict.detail = std::string("its result cannot be read: ") + error.what();
    }
    if (!verdict.detail.empty()) verdict.status = "fail";
  }
  return verdict;
}

int judge(const Options& o) {
  const LessonPlan* plan = nullptr;
  for (const LessonPlan& candidate : plans()) {
    if (candidate.build == o.lesson) plan = &candidate;
  }
  if (plan == nullptr) {
    std::cerr << "gs_judge: error: no judge for lesson build '" << o.lesson << "'\n";
    return gs::kExitUsage;
  }
  Draw draw(o.seed);
  std::vector<Verdict> verdicts;
  bool failed = false, partial = false;
  for (const Graded& graded : plan->graded) {
    if (graded.gpu && !o.gpu) {
      verdicts.push_back({graded.name, "not graded here", "needs a GPU", "", 0});
      partial = true;
      continue;
    }
    // The peer exchange is graded with one GPU per rank: two ranks at least, as many as there
    // are GPUs.
    const bool peer = graded.name == "ranks-peer";
    if (peer && o.gpus < 2) {
      verdicts.push_back({graded.name, "not graded here", "needs two GPUs", "", 0});
      partial = true;
      continue;
    }
    std::vector<Case> cases = draw_cases(draw, plan->shape, o.cases);
    if (plan->min_steps_per_frame > 0) {
      for (Case& c : cases) {
        c.params.steps_per_frame =
            draw.integer(plan->min_steps_per_frame, 2 * plan->min_steps_per_frame + 6);
      }
    }
    if (graded.name == "ranks-protocol") cases.resize(1);
    if (peer) {
      for (Case& c : cases) {
        c.ranks = std::min(c.ranks, o.gpus);
        c.params.rows = std::max(c.params.rows, c.ranks * c.halo + 1);
      }
    }
    for (std::size_t i = 0; i < cases.size(); ++i) {
      Verdict verdict = judge_one(o, plan->shape, graded, cases[i], static_cast<int>(i + 1));
      std::cout << "gs_judge: " << graded.name << " case " << i + 1 << ": " << verdict.status
                << (verdict.detail.empty() ? "" : " - " + verdict.detail.substr(0, 400)) << "\n";
      const bool not_here = verdict.status == "not graded here";
      const bool this_failed = verdict.status != "pass" && !not_here;
      verdicts.push_back(std::move(verdict));
      if (not_here) {  // the machine cannot run this path (lesson 08: GPUs without peer access)
        partial = true;
        break;
      }
      if (this_failed) {
        failed = true;
        break;  // one failing case tells; the next graded path still runs
      }
    }
  }
  const std::string status = failed ? "FAIL" : partial ? "PARTIAL" : "PASS";
  std::cout << "gs_judge: lesson " << o.lesson << ": " << status << " (seed " << o.seed << ", "
            << (o.sandbox ? "sandboxed" : "not sandboxed") << ")\n";
  if (!o.json.empty()) {
    nlohmann::ordered_json document = {{"lesson", o.lesson},
                                       {"status", status},
                                       {"seed", o.seed},
                                       {"sandboxed", o.sandbox},
                                       {"cases", nlohmann::ordered_json::array()}};
    for (const Verdict& v : verdicts) {
      document["cases"].push_back({{"graded", v.graded},
                                   {"case", v.case_index},
                                   {"status", v.status},
                                   {"detail", v.detail},
                                   {"command", v.command}});
    }
    // The learner's process wrote part of the details: bytes that are not UTF-8 become U+FFFD.
    const std::string text =
        document.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
    gs::write_output_file(o.json, text, gs::OutputOptions("--json", nullptr), false);
  }
  return failed ? gs::kExitFailure : gs::kExitSuccess;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "gs_judge: grades a lesson build by running it on cases drawn now and comparing "
      "its results with the reference it computes itself (scripts/grade.sh runs it)",
      "gs_judge"};
  bool plan = false;
  app.add_option("--lesson", o.lesson, "the lesson build (01, 03_cpu, 08 ...)")->required();
  app.add_option("--program", o.program, "the lesson's exercise program");
  app.add_option("--scratch", o.scratch, "an empty folder the learner's process may write");
  app.add_flag("--plan", plan,
               "print what is graded (one name a line, then the device) and exit: the test "
               "that the table matches the solution programs' --list reads it");
  app.add_option("--seed", o.seed, "the cases' seed (default: drawn from the system)");
  app.add_option("--cases", o.cases, "cases per graded path")->check(CLI::Range(1, 50));
  app.add_flag("--sandbox", o.sandbox, "run the learner's process in bubblewrap (bwrap)");
  app.add_flag("--gpu", o.gpu, "grade the GPU paths too (a GPU is there)");
  app.add_option("--gpus", o.gpus, "GPUs there (lesson 08's peer ranks take one each)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--timeout", o.timeout, "seconds one run of the learner's process may take")
      ->check(CLI::Range(1.0, 3600.0));
  app.add_option("--mpiexec", o.mpiexec, "mpiexec, for lesson 08");
  app.add_option("--python", o.python, "the Python interpreter, for lesson 10");
  app.add_option("--runner", o.runner, "lesson 10's runner script");
  app.add_option("--pythonpath", o.pythonpath, "where lesson 10's module is");
  app.add_option("--json", o.json, "write the verdict and every case here");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? gs::kExitSuccess : gs::kExitUsage;
  }
  if (plan) {
    for (const LessonPlan& candidate : plans()) {
      if (candidate.build != o.lesson) continue;
      for (const Graded& graded : candidate.graded)
        std::cout << graded.name << (graded.gpu ? " gpu" : " cpu") << "\n";
      return gs::kExitSuccess;
    }
    std::cerr << "gs_judge: error: no judge for lesson build '" << o.lesson << "'\n";
    return gs::kExitUsage;
  }
  if (o.scratch.empty() || (o.program.empty() && o.runner.empty())) {
    std::cerr << "gs_judge: error: --scratch and --program (or --runner) are needed\n";
    return gs::kExitUsage;
  }
  if (app.count("--seed") == 0)
    o.seed = std::random_device{}() * 4294967296ULL + std::random_device{}();
  return gs::guarded_main("gs_judge", [&o] { return judge(o); });
}
