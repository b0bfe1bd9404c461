// Signals and batched advancing. The handler only stores the signal number (and deletes the
// partial file: on a second signal, then exits; on the first one when asked): everything else
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
char g_partial[4096] = {};  // written only outside the handler, while no signal is pending

extern "C" void on_signal(int signal_number) {
  if (g_signal == 0 && g_delete_at_first != 0 && g_partial[0] != '\0') ::unlink(g_partial);
  if (g_signal != 0) {
    // The second signal: the user wants out now. unlink, write and _exit are async-signal-safe.
    if (g_partial[0] != '\0') ::unlink(g_partial);
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
  g_partial[0] = '\0';
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

void set_partial_output(const std::string& path) {
  // The handler reads g_partial: keep the caught signals out of this thread while it changes, so
  // that a second signal never unlinks a half-written name. (A signal delivered to another thread
  // meanwhile still could; the writer sets the name once, before the first frame.)
  sigset_t caught;
  sigemptyset(&caught);
  for (const int signal_number : kCaught) sigaddset(&caught, signal_number);
  sigset_t previous;
  pthread_sigmask(SIG_BLOCK, &caught, &previous);
  if (path.size() >= sizeof g_partial) {
    g_partial[0] = '\0';
  } else {
    std::memcpy(g_partial, path.c_str(), path.size() + 1);
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

std::string partial_output() {
  return std::string(g_partial);
}

void delete_partial_on_first_signal(bool enabled) {
  g_delete_at_first = enabled ? 1 : 0;
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
