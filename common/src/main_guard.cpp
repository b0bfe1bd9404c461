// The exception -> exit-code ladder every program ends with, written once (gs/main_guard.hpp).
#include "gs/main_guard.hpp"

#include <csignal>
#include <cstring>
#include <iostream>
#include <new>
#include <stdexcept>

#include "gs/interrupt.hpp"
#include "gs/params.hpp"
#include "gs/program.hpp"

namespace gs {

namespace {

// The ladder: what escaped a program's body, as an exit code and a message. Throws on what it
// does not know (not a std::exception).
Ending ending_of(const std::string& name, const std::exception_ptr& escaped,
                 const GuardWords& words) {
  const char* failure_start = words.failure_on_own_line ? "\n" : "";
  const std::string failed = name + ": " + words.failure_source + "error: ";
  // A failure of the run, or the pending signal it came from (words.pending_signal_...).
  const auto failure = [&](const char* what) {
    const int signal_number = words.pending_signal_explains_failure ? pending_signal() : 0;
    if (signal_number != 0) {
      return Ending{kExitSignal + signal_number,
                    "\n" + name + ": interrupted by " + strsignal(signal_number) + " (signal " +
                        std::to_string(signal_number) + ")" + words.after_interruption + "\n"};
    }
    return Ending{kExitFailure, failure_start + failed + what + "\n"};
  };
  try {
    std::rethrow_exception(escaped);
  } catch (const Refusal& refusal) {
    return Ending{refusal.exit_code, name + ": error: " + refusal.message + "\n"};
  } catch (const InvalidParameter& error) {
    if (words.invalid_parameter_is_usage) {
      return Ending{kExitUsage, name + ": error: " + error.what() + "\n"};
    }
    return failure(error.what());
  } catch (const Interrupted& error) {
    return Ending{kExitSignal + error.signal_number(),
                  "\n" + name + ": " + error.what() + words.after_interruption + "\n"};
  } catch (const std::bad_alloc&) {
    const std::string what = words.out_of_memory_for ? words.out_of_memory_for() : "";
    return Ending{kExitFailure, (words.out_of_memory_on_own_line ? failure_start : "") + failed +
                                    "out of memory" + (what.empty() ? "" : " for " + what) + "\n"};
  } catch (const std::exception& error) {
    return failure(error.what());
  }
}

}  // namespace

int guarded_main(const std::string& name, const std::function<int()>& body,
                 const GuardWords& words) {
  std::signal(SIGXFSZ, SIG_IGN);
  try {
    return body();
  } catch (...) {
    return end_program(name, std::current_exception(), words);
  }
}

int end_program(const std::string& name, const std::exception_ptr& error, const GuardWords& words) {
  const Ending ending = ending_of(name, error, words);
  std::cerr << ending.message;
  return ending.exit_code;
}

Ending guarded_ending(const std::string& name, const std::function<int()>& body,
                      const GuardWords& words) {
  try {
    return Ending{body(), ""};
  } catch (...) {
    return ending_of(name, std::current_exception(), words);
  }
}

int check_before_work(const std::string& name, const std::function<void()>& check) {
  GuardWords words;
  words.failure_on_own_line = false;  // nothing was printed yet: no progress line to end
  words.invalid_parameter_is_usage = true;
  const Ending ending = guarded_ending(
      name,
      [&] {
        check();
        return kExitSuccess;
      },
      words);
  std::cerr << ending.message;
  return ending.exit_code;
}

}  // namespace gs
