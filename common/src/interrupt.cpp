// Signals and batched advancing. The handler only stores the signal number (and deletes the
// partial files: on a second signal, then exits; on the first one when asked): everything else
// happens in the run's own checks.
#include "gs/interrupt.hpp"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstring>
#include <string>

#include "gs/timing.hpp"

namespace gs {
namespace {

volatile std::sig_atomic_t g_signal = 0;
volatile std::sig_atomic_t g_delete_at_first = 0;  // delete_partial_on_first_signal()

// The files a second signal deletes: a fixed set of slots the handler reads without allocating
// or locking. A slot's state says whether its name may be read: a writer claims a free slot
// (kFree -> kChanging), writes the name, then publishes it (kReady); removing goes back through
// kChanging, so the handler never reads a name being written. std::atomic<int> is lock-free,
// hence safe to use in a signal handler.
enum SlotState : int { kFree = 0, kChanging = 1, kReady = 2 };
struct PartialSlot {
  std::atomic<int> state{kFree};
  char path[4096] = {};
};
PartialSlot g_partials[kMaxPartialOutputs];
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs lock-free atomics");

extern "C" void on_signal(int signal_number) {
  if (g_signal == 0 && g_delete_at_first != 0) {
    for (PartialSlot& slot : g_partials) {
      if (slot.state.load() == kReady) ::unlink(slot.path);
    }
  }
  if (g_signal != 0) {
    // The second signal: the user wants out now. unlink, write and _exit are async-signal-safe.
    for (PartialSlot& slot : g_partials) {
      if (slot.state.load() == kReady) ::unlink(slot.path);
    }
    static const char message[] = "\nstopped at once by a second signal; partial output deleted\n";
    const ssize_t ignored = ::write(STDERR_FILENO, message, sizeof message - 1);
    (void)ignored;
    ::_exit(128 + signal_number);
  }
  g_signal = signal_number;
}

constexpr int kCaught[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_previous[3];
struct sigaction g_previous_xfsz;
int g_depth = 0;  // guards alive: only the outermost installs and restores the handlers

}  // namespace

InterruptGuard::InterruptGuard() {
  if (g_depth++ > 0) return;
  g_signal = 0;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  for (int i = 0; i < 3; ++i) sigaction(kCaught[i], &action, &g_previous[i]);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGXFSZ, &ignore, &g_previous_xfsz);
}

InterruptGuard::~InterruptGuard() {
  if (--g_depth > 0) return;
  for (int i = 0; i < 3; ++i) sigaction(kCaught[i], &g_previous[i], nullptr);
  sigaction(SIGXFSZ, &g_previous_xfsz, nullptr);
}

int pending_signal() {
  return g_signal;
}

void throw_if_interrupted(const std::string& when) {
  if (const int signal_number = g_signal) {
    throw Interrupted(signal_number, std::string("interrupted by ") + strsignal(signal_number) +
                                         " (signal " + std::to_string(signal_number) + ") " + when);
  }
}

namespace {

// Keeps the caught signals out of this thread while a slot changes (a handler running here
// would wait for nothing); a signal delivered to another thread meanwhile skips the slot.
class CaughtSignalsBlocked {
 public:
  CaughtSignalsBlocked() {
    sigset_t caught;
    sigemptyset(&caught);
    for (const int signal_number : kCaught) sigaddset(&caught, signal_number);
    pthread_sigmask(SIG_BLOCK, &caught, &previous_);
  }
  ~CaughtSignalsBlocked() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  CaughtSignalsBlocked(const CaughtSignalsBlocked&) = delete;
  CaughtSignalsBlocked& operator=(const CaughtSignalsBlocked&) = delete;

 private:
  sigset_t previous_;
};

}  // namespace

bool add_partial_output(const std::string& path) {
  if (path.empty() || path.size() >= sizeof g_partials[0].path) return false;
  const CaughtSignalsBlocked blocked;
  for (PartialSlot& slot : g_partials) {
    int expected = kFree;
    if (!slot.state.compare_exchange_strong(expected, kChanging)) continue;
    std::memcpy(slot.path, path.c_str(), path.size() + 1);
    slot.state.store(kReady);
    return true;
  }
  return false;
}

void remove_partial_output(const std::string& path) {
  const CaughtSignalsBlocked blocked;
  for (PartialSlot& slot : g_partials) {
    if (slot.state.load() != kReady || path != slot.path) continue;
    int expected = kReady;
    if (!slot.state.compare_exchange_strong(expected, kChanging)) continue;
    slot.path[0] = '\0';
    slot.state.store(kFree);
    return;
  }
}

std::vector<std::string> partial_outputs() {
  std::vector<std::string> paths;
  for (const PartialSlot& slot : g_partials) {
    if (slot.state.load() == kReady) paths.emplace_back(slot.path);
  }
  return paths;
}

void delete_partial_on_first_signal(bool enabled) {
  g_delete_at_first = enabled ? 1 : 0;
}

int first_batch_steps(std::int64_t cells) {
  if (cells <= 0) return 64;
  int batch = 64;
  while (batch > 1 && batch * cells > kFirstBatchCellUpdates) batch /= 2;
  return batch;
}

bool BatchedAdvance::advance(Stepper& stepper, int steps, int frame) {
  if (steps <= batch_) {
    stepper.advance(steps);
    return false;
  }
  for (int done = 0; done < steps;) {
    const int now = std::min(batch_, steps - done);
    Stopwatch clock;
    stepper.advance(now);
    stepper.synchronize();
    done += now;
    throw_if_interrupted("during frame " + std::to_string(frame + 1) + " (" + std::to_string(done) +
                         " of its " + std::to_string(steps) + " steps done)");
    adapt(now, clock.seconds());
  }
  return true;
}

void BatchedAdvance::frame_took(int steps, double seconds) {
  if (steps <= batch_ && seconds > 0.25) adapt(steps, seconds);
}

void BatchedAdvance::adapt(int steps, double seconds) {
  constexpr double kTarget = 0.1;  // seconds per batch
  const double wanted = seconds > 0.0 ? steps * kTarget / seconds : 8.0 * steps;
  // A power of two, at least 1, growing at most 8x at a time (a first batch that ran cold).
  int batch = 1;
  while (batch * 2 <= wanted && batch < 8 * steps && batch < (1 << 29)) batch *= 2;
  batch_ = batch;
}

}  // namespace gs
