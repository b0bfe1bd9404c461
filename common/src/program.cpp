// The frame loop and the command line shared by every program of the course.
#include "gs/program.hpp"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <limits>
#include <memory>
#include <thread>

#include "gs/device_limits.hpp"
#include "gs/gpu.hpp"
#include "gs/hdf5_io.hpp"
#include "gs/main_guard.hpp"
#include "gs/state.hpp"
#include "gs/timing.hpp"

namespace gs {
namespace {

void require_finite(const float* v, std::size_t count, int frame) {
  for (std::size_t i = 0; i < count; ++i) {
    if (!std::isfinite(v[i])) {
      throw Diverged("the simulation diverged at frame " + std::to_string(frame + 1) +
                     ": v is not finite at cell " + std::to_string(i) +
                     "; choose smaller rates or time step");
    }
  }
}

}  // namespace

bool usable(const Implementation& implementation) {
  return implementation.device == Device::cpu || gpu_status().available;
}

std::string describe_device(const Implementation& implementation) {
  if (implementation.device == Device::gpu) return describe_gpu();
  return "CPU (" + std::to_string(std::thread::hardware_concurrency()) + " hardware threads)";
}

void commit_frames(FrameWriter& writer, bool flush_to_disk, RunResult& result) {
  Stopwatch clock;
  writer.commit(flush_to_disk);
  result.flush_seconds = writer.flush_seconds();
  result.rename_seconds = writer.rename_seconds();
  result.flushed = flush_to_disk;
  result.writeback = writer.writeback();  // the writer's waits for the disk
  result.write_seconds += clock.seconds() - result.flush_seconds - result.rename_seconds;
  result.bytes_written = writer.bytes_written();
  result.wrote_output = true;
}

OutputOptions frame_writer_options(const ProgramOptions& options, std::ostream* warnings) {
  OutputOptions output("-o", warnings);
  output.writeback_bytes = options.fsync && options.writeback ? kWritebackBytesInFlight : 0;
  return output;
}

RunResult run_simulation(const Implementation& implementation, const ProgramOptions& options) {
  const Params& params = options.params;  // checked by the caller (find_problems(), run_guarded)
  RunResult result;
  result.implementation = implementation.name;
  result.device_name = describe_device(implementation);
  result.params = params;
  result.pipeline = "synchronous: compute, fetch, write, one frame at a time";

  InterruptGuard signals;
  result.before_clock_seconds = seconds_since_process_start();  // read first: the parts add up
  Stopwatch total;
  std::unique_ptr<FrameWriter> writer;
  if (options.write_output) {
    // Checks the output path and the room before any work (check_output_path()).
    writer = std::make_unique<FrameWriter>(params.output, params, implementation.name,
                                           frame_writer_options(options));
  }

  Stopwatch clock;
  std::unique_ptr<Stepper> stepper = implementation.create();
  stepper->load(starting_state(params), params.rates);
  stepper->synchronize();
  result.startup_seconds = clock.seconds();

  std::vector<float> frame(static_cast<std::size_t>(params.cells()));
  ProgressLine progress(params.frames, options.progress);
  BatchedAdvance batches(params.cells());  // a large grid: a first batch of one step
  for (int index = 0; index < params.frames; ++index) {
    throw_if_interrupted("before frame " + std::to_string(index + 1));
    clock.restart();
    batches.advance(*stepper, params.steps_per_frame, index);
    stepper->synchronize();
    const double computed = clock.seconds();
    batches.frame_took(params.steps_per_frame, computed);
    result.compute_seconds += computed;
    result.steps += params.steps_per_frame;
    if (writer) {
      clock.restart();
      stepper->fetch_v(frame.data());
      result.copy_seconds += clock.seconds();
      require_finite(frame.data(), frame.size(), index);
      clock.restart();
      writer->write_frame(index, frame.data());
      result.write_seconds += clock.seconds();
    }
    progress.update(index + 1);
  }
  progress.finish();
  if (writer) {
    commit_frames(*writer, options.fsync, result);
  } else {
    // Without output nothing else looks at the state: check the last frame once.
    stepper->fetch_v(frame.data());
    require_finite(frame.data(), frame.size(), params.frames - 1);
  }
  result.seconds = total.seconds();
  return result;
}

FrameLoop synchronous_frame_loop() {
  return {nullptr, run_simulation};
}

void add_grid_flags(CLI::App& app, Params& p) {
  app.add_option("-r,--nbrow", p.rows, "grid rows R")->capture_default_str();
  app.add_option("-c,--nbcol", p.cols, "grid columns C")->capture_default_str();
  app.add_option("-n,--nbimage", p.frames, "frames written")->capture_default_str();
  app.add_option("-e,--nbextrastep", p.steps_per_frame, "steps between two frames")
      ->capture_default_str();
  app.add_option("--seed", p.seed,
                 "start from u and v drawn uniformly from [0, 1) with this seed instead of the "
                 "canonical square (what scripts/grade.sh's judge draws)")
      ->check(CLI::Range(std::int64_t{0}, std::numeric_limits<std::int64_t>::max()));
}

CLI::Validator float32_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        double value = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size()) return text + " is not a number";
        // Beyond double's range strtod says ERANGE and returns +-HUGE_VAL (too large) or a tiny
        // value, maybe 0 (too small): both are float32's problems too.
        if (errno == ERANGE && std::fabs(value) < 1.0) value = std::copysign(1e-300, value);
        if (errno == ERANGE && std::fabs(value) >= 1.0) value = std::copysign(1e300, value);
        const std::string problem = float32_problem(value);
        return problem.empty() ? std::string() : text + " " + problem;
      },
      "");
}

namespace {

// The text of a whole number in base 10 with its leading zeros dropped ("-010" -> "-10"), for
// CLI11, which reads integers with strtoll(..., 0): "010" as octal, "0x10" as hexadecimal.
CLI::Validator base_10_integer() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const std::size_t sign = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
        const bool digits =
            text.size() > sign && text.find_first_not_of("0123456789", sign) == std::string::npos;
        if (!digits) return text + " is not a whole number written in base 10 (digits 0-9 only)";
        const std::size_t first = std::min(text.find_first_not_of('0', sign), text.size() - 1);
        text = text.substr(0, sign) + text.substr(first);
        return std::string();
      },
      "");
}

CLI::Validator not_empty() {
  return CLI::Validator(
      [](const std::string& text) {
        return text.empty()
                   ? std::string("must not be empty (give it a value or leave the flag out)")
                   : std::string();
      },
      "");
}

}  // namespace

void apply_value_rules(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    if (option->get_type_size_max() < 1) continue;  // a flag without a value
    const std::string type = option->get_type_name();
    // Transforms run before the option's own checks (CLI::Range sees 10 for "010"), the last
    // added first: the emptiness first, then the base.
    if (type.rfind("INT", 0) == 0 || type.rfind("UINT", 0) == 0) {
      option->transform(base_10_integer());
    }
    option->transform(not_empty());
  }
  const std::function<bool(CLI::App*)> every;
  for (CLI::App* subcommand : app.get_subcommands(every)) apply_value_rules(*subcommand);
}

void add_rate_flags(CLI::App& app, Rates& r) {
  app.add_option("-k,--killrate", r.kill, "kill rate k")
      ->capture_default_str()
      ->check(float32_number());
  app.add_option("-f,--feedrate", r.feed, "feed rate F")
      ->capture_default_str()
      ->check(float32_number());
  app.add_option("-t,--deltat", r.dt, "time step dt (stable while dt*max(Du,Dv) <= 1/6)")
      ->capture_default_str()
      ->check(float32_number());
  app.add_option("-u,--diffusion-u", r.diffusion_u, "diffusion rate Du of u")
      ->capture_default_str()
      ->check(float32_number());
  app.add_option("-v,--diffusion-v", r.diffusion_v, "diffusion rate Dv of v")
      ->capture_default_str()
      ->check(float32_number());
}

const Implementation* leading_implementation(const std::vector<Implementation>& implementations,
                                             int rows, int cols, std::string& why) {
  // An implementation measured faster than the registry's first on this grid and machine goes
  // first (Implementation::leads_on); the others keep the registry's order.
  for (const Implementation& impl : implementations) {
    if (!usable(impl) || !impl.leads_on || !grid_refusal(impl, rows, cols).empty()) continue;
    why = impl.leads_on(rows, cols);
    if (!why.empty()) return &impl;
  }
  return nullptr;
}

const Implementation* select_implementation(const std::vector<Implementation>& implementations,
                                            const std::string& name, int rows, int cols,
                                            const std::string& program_name, int& exit_code) {
  if (!name.empty()) {
    const Implementation* chosen = find_implementation(implementations, name);
    if (chosen == nullptr) {
      std::cerr << program_name << ": error: no implementation named '" << name
                << "' (see --list)\n";
      exit_code = kExitUsage;
      return nullptr;
    }
    if (!usable(*chosen)) {
      std::cerr << program_name << ": error: '" << chosen->name
                << "' needs a GPU: " << gpu_status().reason << "\n";
      exit_code = kExitNoGpu;
      return nullptr;
    }
    const std::string refusal = grid_refusal(*chosen, rows, cols);
    if (!refusal.empty()) {
      std::cerr << program_name << ": error: '" << chosen->name
                << "' cannot run this grid: " << refusal << "\n";
      exit_code = kExitUsage;
      return nullptr;
    }
    return chosen;
  }
  std::string why;
  if (const Implementation* leader = leading_implementation(implementations, rows, cols, why)) {
    std::cerr << program_name << ": choosing " << leader->name << ": " << why << "\n";
    return leader;
  }
  bool passed_over = false;
  for (const Implementation& impl : implementations) {
    if (!usable(impl)) continue;
    const std::string refusal = grid_refusal(impl, rows, cols);
    if (refusal.empty()) return &impl;
    std::cerr << program_name << ": passing over " << impl.name << ": " << refusal << "\n";
    passed_over = true;
  }
  if (passed_over) {
    std::cerr << program_name << ": error: no implementation of this program can run a " << rows
              << " x " << cols << " grid here (see above)\n";
    exit_code = kExitUsage;
    return nullptr;
  }
  std::cerr << program_name
            << ": error: every implementation of this program needs a GPU: " << gpu_status().reason
            << "\n";
  exit_code = kExitNoGpu;
  return nullptr;
}

namespace {

void add_program_flags(CLI::App& app, ProgramOptions& options) {
  // A flag given twice takes its last value, as in most command-line tools.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  add_grid_flags(app, options.params);
  app.add_option("-o,--output", options.params.output, "HDF5 output file")->capture_default_str();
  add_rate_flags(app, options.params.rates);
  app.add_flag_callback(
      "--no-output", [&options] { options.write_output = false; }, "compute only: write no file");
  app.add_flag_callback(
      "--no-fsync", [&options] { options.fsync = false; },
      "do not flush the output to the disk at the end (faster; a crash may lose it)");
  app.add_flag_callback(
      "--no-writeback", [&options] { options.writeback = false; },
      "do not start writing each frame to the disk as it is written: the final fsync writes "
      "them all (slower; to compare)");
  app.add_flag("--json", options.json, "print one line of JSON on stdout at the end");
  app.add_flag("--progress", options.progress, "show the progress line even when not a terminal");
  app.add_option("--impl", options.implementation, "implementation to run (see --list)");
  app.add_flag("--list", options.list, "list the implementations and exit");
  app.add_flag("--device", options.device_report, "print the GPU's device report and exit");
}

void print_list(const std::vector<Implementation>& implementations) {
  std::cout << "implementations, default first (* = usable on this machine):\n";
  for (const Implementation& impl : implementations) {
    std::cout << (usable(impl) ? "  * " : "    ") << impl.name
              << (impl.device == Device::gpu ? " [gpu] " : " [cpu] ") << impl.summary
              << (impl.generic ? " (any weights)" : "") << "\n";
  }
  if (!gpu_status().available)
    std::cout << "GPU implementations unusable: " << gpu_status().reason << "\n";
}

// A program whose promised output did not reach stdout (a full disk, a closed pipe) failed.
int finish_stdout(const std::string& program_name, int code) {
  std::cout.flush();
  if (!std::cout && code == kExitSuccess) {
    std::cerr << program_name << ": error: cannot write to standard output\n";
    return kExitFailure;
  }
  return code;
}

int run_guarded(int argc, char** argv, const std::vector<Implementation>& implementations,
                const std::string& program_name, const std::string& description,
                const FrameLoop& loop, ReferenceCheck check, ProgramOptions& options) {
  CLI::App app{description, program_name};
  add_program_flags(app, options);
  if (loop.add_flags) loop.add_flags(app);
  apply_value_rules(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return finish_stdout(program_name, app.exit(error) == 0 ? kExitSuccess : kExitUsage);
  }
  options.progress = options.progress || ::isatty(STDERR_FILENO) == 1;

  if (options.list) {
    print_list(implementations);
    return finish_stdout(program_name, kExitSuccess);
  }
  if (options.device_report) {
    bool found = false;
    if (const int refused = check_before_work(  // GS_DEVICE_LIMITS
            program_name, [&] { found = print_device_report(std::cout, true); })) {
      return refused;
    }
    return finish_stdout(program_name, found ? kExitSuccess : kExitNoGpu);
  }
  const std::vector<std::string> problems = find_problems(options.params);
  if (!problems.empty()) {
    for (const std::string& problem : problems) {
      std::cerr << program_name << ": error: " << problem << "\n";
    }
    std::cerr << "Run with --help for the flags and their defaults.\n";
    return kExitUsage;
  }
  int exit_code = kExitSuccess;
  const Implementation* chosen =
      select_implementation(implementations, options.implementation, options.params.rows,
                            options.params.cols, program_name, exit_code);
  if (chosen == nullptr) return exit_code;
  // A bad GS_DEVICE_LIMITS is refused before any work; an override is announced before the
  // first step.
  if (chosen->device == Device::gpu) {
    if (const int refused = check_before_work(program_name, [] { device_limits(); })) {
      return refused;
    }
  }

  // An exercise program: a learner's stub or wrong kernel is named before its figures are read.
  std::string warning;
  if (check == ReferenceCheck::before_work) {
    warning = disagreement_warning(check_against_reference(*chosen, options.params.rates), *chosen);
    if (!warning.empty()) std::cerr << program_name << ": " << warning << std::flush;
  }

  // What the run throws is told by end_program() (run_program).
  RunResult result = loop.run(*chosen, options);
  result.warning = warning;
  // The stepper and the writer are gone: what is left is printing, the exit and the driver's
  // teardown (not counted; the report says so).
  result.process_seconds = seconds_since_process_start();
  print_report(options.json ? std::cerr : std::cout, result);
  if (options.json) print_json(std::cout, result);
  return finish_stdout(program_name, kExitSuccess);
}

}  // namespace

int run_program(int argc, char** argv, const std::vector<Implementation>& implementations,
                const std::string& program_name, const std::string& description,
                const FrameLoop& loop, ReferenceCheck check) {
  // What guarded_main() does, with the run in this file: only what escapes it goes to the ladder
  // (end_program()), so the command line and the grid never leave for main_guard.cpp and come
  // back. A file-size limit (ulimit -f) then fails a write, reported like a full disk.
  std::signal(SIGXFSZ, SIG_IGN);
  ProgramOptions options;
  GuardWords words;  // made before the run: the ladder may be reached when memory ran out
  words.after_interruption = "; no output file was left";
  words.out_of_memory_for = [&options] {
    return "a " + std::to_string(options.params.rows) + " x " +
           std::to_string(options.params.cols) + " grid";
  };
  try {
    return run_guarded(argc, argv, implementations, program_name, description, loop, check,
                       options);
  } catch (...) {
    return end_program(program_name, std::current_exception(), words);
  }
}

}  // namespace gs
