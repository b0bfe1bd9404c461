// Lesson 10's module: the checks of a grid and its rates, the choice of an implementation, and
// OpenMP after fork() (program_api.hpp).
#include "program_api.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

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

// The implementation called `name`, or gray_scott's default for a rows x cols grid: the one
// measured fastest there (gs::leading_implementation(): lesson 11 on a Hopper GPU), else the first
// this machine can run that takes the grid; the programs' refusals otherwise.
const gs::Implementation& choose(const std::string& name, int rows, int cols) {
  if (name.empty()) {
    std::string why;
    if (const gs::Implementation* leader = gs::leading_implementation(registry(), rows, cols, why))
      return *leader;
    for (const gs::Implementation& impl : registry()) {
      if (gs::usable(impl) && gs::grid_refusal(impl, rows, cols).empty()) return impl;
    }
    for (const gs::Implementation& impl : registry()) {
      if (gs::usable(impl)) return impl;  // its own refusal of the grid then says why
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
//
// This module is not libgomp's only user: NumPy's BLAS, another extension or ctypes may have run
// a parallel region in the parent, and libgomp gives no way to ask whether its pool exists. Its
// pool's threads are threads of the process, though: a parent that had only the forking thread
// when it forked had no pool of OpenMP threads to lose, and its child runs OpenMP. A parent that
// had other threads may have had such a pool (which ones are OpenMP's cannot be told), and its
// child refuses the OpenMP implementations too, saying how many threads the parent had.

namespace {

std::atomic<bool> g_openmp_started{false};       // this process ran an OpenMP implementation
std::atomic<bool> g_forked_after_openmp{false};  // ... before the fork() that made this process
std::atomic<long> g_threads_at_fork{1};          // the parent's threads when it forked (prepare)
std::atomic<long> g_parent_threads{1};           // in a child: its parent's threads at the fork

// The threads of this process (/proc/self/stat's 20th field), or -1 when unknown. The fields
// after the command's name, which may hold spaces and ')', start after the last ')'.
long threads_of_this_process() {
  const int descriptor = ::open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (descriptor < 0) return -1;
  char text[4096];
  const ssize_t got = ::read(descriptor, text, sizeof text - 1);
  ::close(descriptor);
  if (got <= 0) return -1;
  text[got] = '\0';
  const char* after_name = std::strrchr(text, ')');
  if (after_name == nullptr) return -1;
  // Fields 3 (state) to 20 (num_threads): 18 fields after the name.
  const char* field = after_name + 1;
  for (int skipped = 0; skipped < 17 && field != nullptr; ++skipped) {
    field = std::strchr(field + 1, ' ');
  }
  if (field == nullptr) return -1;
  char* end = nullptr;
  const long threads = std::strtol(field + 1, &end, 10);
  return end != field + 1 && threads > 0 ? threads : -1;
}

extern "C" void note_threads_before_fork() {  // pthread_atfork: in the parent, before fork()
  g_threads_at_fork.store(threads_of_this_process());
}

extern "C" void note_fork_in_child() {  // pthread_atfork: runs in the child, one thread
  if (g_openmp_started.load()) g_forked_after_openmp.store(true);
  g_parent_threads.store(g_threads_at_fork.load());
  g_openmp_started.store(false);  // this process has run no OpenMP of its own yet
}

}  // namespace

void install_fork_handler() {
  static const int fork_handler =
      pthread_atfork(note_threads_before_fork, nullptr, note_fork_in_child);
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
  const long parent_threads = g_parent_threads.load();
  if (!g_forked_after_openmp.load() && parent_threads != 1) {
    throw std::runtime_error(
        "'" + implementation +
        "' runs on OpenMP threads, and this process was forked (os.fork, or multiprocessing's "
        "default 'fork' start method) from a parent that had " +
        (parent_threads > 1 ? std::to_string(parent_threads) + " threads"
                            : std::string("threads it could not count")) +
        ": another library (NumPy's BLAS, another extension) may have started GNU OpenMP "
        "(libgomp) there, which is not fork-safe, and its threads would wait forever here. Start "
        "the workers with multiprocessing's 'spawn' or 'forkserver' method "
        "(multiprocessing.get_context('spawn').Pool(...)), or use a single-threaded "
        "implementation in the child (e.g. 'l02-simd')");
  }
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
