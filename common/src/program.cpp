// The frame loop and the command line shared by every program of the course.
#include "gs/program.hpp"

#include <unistd.h>
#include <CLI/CLI.hpp>

#include <atomic>
#include <cmath>
#include <csignal>
#include <exception>
#include <iostream>
#include <memory>
#include <new>
#include <optional>
#include <thread>

#include "gs/gpu.hpp"
#include "gs/hdf5_io.hpp"
#include "gs/state.hpp"

namespace gs {
namespace {

std::atomic<int> g_signal{0};

extern "C" void remember_signal(int signal_number) {
  g_signal.store(signal_number);
}

// SIGINT/SIGTERM end the run between two frames, so the writer can delete its partial file.
// SIGXFSZ (a file-size limit, how the tests simulate a full disk) becomes an error from write().
class SignalGuard {
 public:
  SignalGuard() {
    g_signal.store(0);
    previous_int_ = std::signal(SIGINT, remember_signal);
    previous_term_ = std::signal(SIGTERM, remember_signal);
    previous_xfsz_ = std::signal(SIGXFSZ, SIG_IGN);
  }
  ~SignalGuard() {
    std::signal(SIGINT, previous_int_);
    std::signal(SIGTERM, previous_term_);
    std::signal(SIGXFSZ, previous_xfsz_);
  }
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

 private:
  void (*previous_int_)(int) = SIG_DFL;
  void (*previous_term_)(int) = SIG_DFL;
  void (*previous_xfsz_)(int) = SIG_DFL;
};

void throw_if_interrupted(int frame) {
  if (const int signal_number = g_signal.load()) {
    throw Interrupted("interrupted by signal " + std::to_string(signal_number) + " before frame " +
                      std::to_string(frame + 1));
  }
}

void require_finite(const float* v, std::size_t count, int frame) {
  for (std::size_t i = 0; i < count; ++i) {
    if (!std::isfinite(v[i])) {
      throw Diverged("the simulation diverged at frame " + std::to_string(frame + 1) +
                     ": v is not finite at cell " + std::to_string(i) +
                     "; choose smaller rates or time step");
    }
  }
}

std::string describe_device(const Implementation& implementation) {
  if (implementation.device == Device::gpu) return gpu_status().name;
  return "CPU (" + std::to_string(std::thread::hardware_concurrency()) + " hardware threads)";
}

bool usable(const Implementation& implementation) {
  return implementation.device == Device::cpu || gpu_status().available;
}

}  // namespace

RunResult run_simulation(const Implementation& implementation, const ProgramOptions& options) {
  const Params& params = options.params;
  validate(params);
  RunResult result;
  result.implementation = implementation.name;
  result.device_name = describe_device(implementation);
  result.params = params;

  SignalGuard signals;
  Stopwatch total;
  std::unique_ptr<FrameWriter> writer;
  if (options.write_output) {
    check_output_path(params.output, params.output_bytes());
    writer = std::make_unique<FrameWriter>(params.output, params, implementation.name);
  }

  std::unique_ptr<Stepper> stepper = implementation.create();
  std::vector<float> frame(static_cast<std::size_t>(params.cells()));
  ProgressLine progress(params.frames, options.progress);

  Stopwatch compute;
  stepper->load(initial_state(params.rows, params.cols), params);
  result.compute_seconds += compute.seconds();
  for (int index = 0; index < params.frames; ++index) {
    throw_if_interrupted(index);
    compute.restart();
    stepper->advance(params.steps_per_frame);
    if (writer) {
      stepper->fetch_v(frame.data());
    } else {
      stepper->synchronize();
    }
    result.compute_seconds += compute.seconds();
    result.steps += params.steps_per_frame;
    if (writer) {
      require_finite(frame.data(), frame.size(), index);
      Stopwatch write;
      writer->write_frame(index, frame.data());
      result.write_seconds += write.seconds();
    }
    progress.update(index + 1);
  }
  progress.finish();
  if (writer) {
    Stopwatch write;
    writer->commit();
    result.write_seconds += write.seconds();
    result.bytes_written = writer->bytes_written();
    result.wrote_output = true;
  } else {
    // Without output nothing else looks at the state: check the last frame once.
    stepper->fetch_v(frame.data());
    require_finite(frame.data(), frame.size(), params.frames - 1);
  }
  result.seconds = total.seconds();
  return result;
}

namespace {

void add_course_flags(CLI::App& app, ProgramOptions& options) {
  Params& p = options.params;
  // A flag given twice takes its last value, as in most command-line tools.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("-r,--nbrow", p.rows, "grid rows R")->capture_default_str();
  app.add_option("-c,--nbcol", p.cols, "grid columns C")->capture_default_str();
  app.add_option("-n,--nbimage", p.frames, "frames written")->capture_default_str();
  app.add_option("-e,--nbextrastep", p.steps_per_frame, "steps between two frames")
      ->capture_default_str();
  app.add_option("-o,--output", p.output, "HDF5 output file")->capture_default_str();
  app.add_option("-k,--killrate", p.kill_rate, "kill rate k")->capture_default_str();
  app.add_option("-f,--feedrate", p.feed_rate, "feed rate F")->capture_default_str();
  app.add_option("-t,--deltat", p.dt, "time step dt (stable while dt*max(Du,Dv) <= 1/6)")
      ->capture_default_str();
  app.add_option("-u,--diffusion-u", p.diffusion_u, "diffusion rate Du of u")
      ->capture_default_str();
  app.add_option("-v,--diffusion-v", p.diffusion_v, "diffusion rate Dv of v")
      ->capture_default_str();
  app.add_flag_callback(
      "--no-output", [&options] { options.write_output = false; }, "compute only: write no file");
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
              << (impl.device == Device::gpu ? " [gpu] " : " [cpu] ") << impl.summary << "\n";
  }
  if (!gpu_status().available)
    std::cout << "GPU implementations unusable: " << gpu_status().reason << "\n";
}

}  // namespace

int run_program(int argc, char** argv, const std::vector<Implementation>& implementations,
                const std::string& program_name, const std::string& description) {
  ProgramOptions options;
  CLI::App app{description, program_name};
  add_course_flags(app, options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? kExitSuccess : kExitUsage;
  }
  options.progress = options.progress || ::isatty(STDERR_FILENO) == 1;

  if (options.list) {
    print_list(implementations);
    return kExitSuccess;
  }
  if (options.device_report) {
    try {
      return print_device_report(std::cout, true) ? kExitSuccess : kExitNoGpu;
    } catch (const std::exception& error) {
      std::cerr << program_name << ": " << error.what() << "\n";
      return kExitFailure;
    }
  }
  const std::vector<std::string> problems = find_problems(options.params);
  if (!problems.empty()) {
    for (const std::string& problem : problems) {
      std::cerr << program_name << ": error: " << problem << "\n";
    }
    std::cerr << "Run with --help for the flags and their defaults.\n";
    return kExitUsage;
  }

  const Implementation* chosen = nullptr;
  if (!options.implementation.empty()) {
    chosen = find_implementation(implementations, options.implementation);
    if (chosen == nullptr) {
      std::cerr << program_name << ": error: no implementation named '" << options.implementation
                << "' (see --list)\n";
      return kExitUsage;
    }
    if (!usable(*chosen)) {
      std::cerr << program_name << ": error: '" << chosen->name
                << "' needs a GPU: " << gpu_status().reason << "\n";
      return kExitNoGpu;
    }
  } else {
    for (const Implementation& impl : implementations) {
      if (usable(impl)) {
        chosen = &impl;
        break;
      }
    }
    if (chosen == nullptr) {
      std::cerr << program_name << ": error: every implementation of this program needs a GPU: "
                << gpu_status().reason << "\n";
      return kExitNoGpu;
    }
  }

  std::ostream& report = options.json ? std::cerr : std::cout;
  try {
    const RunResult result = run_simulation(*chosen, options);
    print_report(report, result);
    if (options.json) print_json(std::cout, result);
    return kExitSuccess;
  } catch (const Interrupted& error) {
    std::cerr << "\n" << program_name << ": " << error.what() << "; no output file was left\n";
    return kExitInterrupted;
  } catch (const std::bad_alloc&) {
    std::cerr << program_name << ": error: out of memory for a " << options.params.rows << " x "
              << options.params.cols << " grid\n";
    return kExitFailure;
  } catch (const std::exception& error) {
    std::cerr << "\n" << program_name << ": error: " << error.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace gs
