// Lesson 10's module: the checks of a grid and its rates, the choice of an implementation, and
// OpenMP after fork() (choices.hpp).
#include "choices.hpp"

#include <pthread.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gs/gpu.hpp"
#include "gs/program.hpp"
#include "gs/registry.hpp"

namespace lesson10 {

namespace {

// The programs' refusal (gs::find_problems), with the keyword this module takes named first:
// "feed (-f/--feedrate) must be a finite number greater than 0 (got -1)".
std::string with_keywords(std::string message) {
  static const std::pair<const char*, const char*> kKeywords[] = {
      {"-r/--nbrow", "rows"},    {"-c/--nbcol", "cols"}, {"-k/--killrate", "kill"},
      {"-f/--feedrate", "feed"}, {"-t/--deltat", "dt"},  {"-u/--diffusion-u", "du"},
      {"-v/--diffusion-v", "dv"}};
  for (const auto& [flag, keyword] : kKeywords) {
    const std::string named = std::string(keyword) + " (" + flag + ")";
    for (std::size_t at = message.find(flag); at != std::string::npos;
         at = message.find(flag, at + named.size())) {
      message.replace(at, std::string(flag).size(), named);
    }
  }
  return message;
}

}  // namespace

// Refuses a grid or rates the programs refuse, with their messages (ValueError).
void validate(int rows, int cols, const Keyword (&rates)[5]) {
  std::vector<std::string> problems;
  for (const Keyword& rate : rates) {
    const std::string problem = gs::float32_problem(rate.value);
    if (!problem.empty()) {
      problems.push_back(std::string(rate.flag) + ": " +
                         py::str(py::float_(rate.value)).cast<std::string>() + " " + problem);
    }
  }
  if (problems.empty()) {
    gs::Params params;
    params.rows = rows;
    params.cols = cols;
    params.rates.kill = static_cast<float>(rates[0].value);
    params.rates.feed = static_cast<float>(rates[1].value);
    params.rates.dt = static_cast<float>(rates[2].value);
    params.rates.diffusion_u = static_cast<float>(rates[3].value);
    params.rates.diffusion_v = static_cast<float>(rates[4].value);
    problems = gs::find_problems(params);
  }
  if (problems.empty()) return;
  std::string message = "invalid parameters:";
  for (const std::string& problem : problems) message += "\n  " + with_keywords(problem);
  throw gs::InvalidParameter(message);
}

// The grid alone (initial_state(), random_state()).
void validate(int rows, int cols) {
  const gs::Rates defaults;
  validate(rows, cols,
           {{"-k/--killrate", defaults.kill},
            {"-f/--feedrate", defaults.feed},
            {"-t/--deltat", defaults.dt},
            {"-u/--diffusion-u", defaults.diffusion_u},
            {"-v/--diffusion-v", defaults.diffusion_v}});
}

const std::vector<gs::Implementation>& registry() {
  static const std::vector<gs::Implementation> implementations = gs::all_implementations();
  return implementations;
}

// The implementation called `name`, or the first one this machine can run (gray_scott's
// default); the programs' refusals otherwise.
const gs::Implementation& choose(const std::string& name) {
  if (name.empty()) {
    for (const gs::Implementation& impl : registry()) {
      if (gs::usable(impl)) return impl;
    }
  }
  const gs::Implementation* chosen = gs::find_implementation(registry(), name);
  if (chosen == nullptr) {
    std::string known;
    for (const gs::Implementation& impl : registry())
      known += (known.empty() ? "" : ", ") + impl.name;
    throw py::value_error("no implementation named '" + name +
                          "' (see grayscott.list_implementations(): " + known + ")");
  }
  if (!gs::usable(*chosen)) {
    throw std::runtime_error("'" + chosen->name + "' needs a GPU: " + gs::gpu_status().reason);
  }
  return *chosen;
}

// ---------------------------------------------------------------------------------------------
// OpenMP and fork()
// ---------------------------------------------------------------------------------------------

// GNU OpenMP (libgomp) is not fork-safe: once a parallel region has run, its pool of threads
// exists, and a child made by fork() (os.fork, multiprocessing's default 'fork' start method on
// Linux) inherits the pool's bookkeeping without its threads: the child's first parallel region
// waits for them forever. What a user expects of a worker process is a result or an error, never
// a hang; running the child on one thread instead is not safe either (the runtime's state after a
// fork is undefined), nor what a pool of workers is for. So a child forked after OpenMP started
// in its parent refuses the OpenMP implementations with a RuntimeError that names the cause and
// the fix; single-threaded implementations, and children forked before any OpenMP work, run.

namespace {

std::atomic<bool> g_openmp_started{false};       // this process ran an OpenMP implementation
std::atomic<bool> g_forked_after_openmp{false};  // ... before the fork() that made this process

extern "C" void note_fork_in_child() {  // pthread_atfork: runs in the child, one thread
  if (g_openmp_started.load()) g_forked_after_openmp.store(true);
}

}  // namespace

void install_fork_handler() {
  static const int fork_handler = pthread_atfork(nullptr, nullptr, note_fork_in_child);
  (void)fork_handler;
}

// Whether `implementation` runs on OpenMP's threads: lesson 02's "-omp" steppers and lesson
// 03's Thrust on the CPU (Thrust's OpenMP backend, "l03cpu-...").
bool runs_on_openmp(const gs::Implementation& implementation) {
  const std::string& name = implementation.name;
  const std::string suffix = "-omp";
  const bool omp_named = name.size() >= suffix.size() &&
                         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  return implementation.device == gs::Device::cpu &&
         (omp_named || implementation.lesson == "03_thrust");
}

// Called before every use of an OpenMP stepper (creating it: its load() runs parallel regions
// too; every call on it): refuses in a child forked after OpenMP started, else notes that OpenMP
// has started in this process.
void require_fork_safe_openmp(const std::string& implementation) {
  if (g_forked_after_openmp.load()) {
    throw std::runtime_error(
        "'" + implementation +
        "' runs on OpenMP threads, and this process was forked (os.fork, "
        "or multiprocessing's default 'fork' start method) after its parent had run OpenMP: "
        "GNU OpenMP (libgomp) is not fork-safe, and its threads would wait forever here. Start "
        "the workers with multiprocessing's 'spawn' or 'forkserver' method "
        "(multiprocessing.get_context('spawn').Pool(...)), or use a single-threaded "
        "implementation in the child (e.g. 'l02-simd')");
  }
  g_openmp_started.store(true);
}

// `implementation=`: None (the default choice) or a name.
std::string name_of(const py::object& implementation) {
  if (implementation.is_none()) return "";
  if (!py::isinstance<py::str>(implementation)) {
    throw py::type_error(
        "implementation must be a name (see grayscott.list_implementations()) "
        "or None");
  }
  std::string name = implementation.cast<std::string>();
  // As the programs refuse --impl '': an empty name is no implementation (None is the default).
  if (name.empty()) {
    throw py::value_error(
        "implementation must not be empty: give a name (see grayscott.list_implementations()) "
        "or None for the default");
  }
  return name;
}

}  // namespace lesson10
