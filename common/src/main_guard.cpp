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

int guarded_main(const std::string& name, const std::function<int()>& body,
                 const GuardWords& words) {
  std::signal(SIGXFSZ, SIG_IGN);
  const Ending ending = guarded_ending(name, body, words);
  std::cerr << ending.message;
  return ending.exit_code;
}

Ending guarded_ending(const std::string& name, const std::function<int()>& body,
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
    return Ending{body(), ""};
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
