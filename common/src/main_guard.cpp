// The exception -> exit-code ladder every program ends with, written once (gs/main_guard.hpp).
#include "gs/main_guard.hpp"

#include <csignal>
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
  const char* failure_start = words.failure_on_own_line ? "\n" : "";
  try {
    return body();
  } catch (const Refusal& refusal) {
    std::cerr << name << ": error: " << refusal.message << "\n";
    return refusal.exit_code;
  } catch (const InvalidParameter& error) {
    if (words.invalid_parameter_is_usage) {
      std::cerr << name << ": error: " << error.what() << "\n";
      return kExitUsage;
    }
    std::cerr << failure_start << name << ": error: " << error.what() << "\n";
    return kExitFailure;
  } catch (const Interrupted& error) {
    std::cerr << "\n" << name << ": " << error.what() << words.after_interruption << "\n";
    return kExitSignal + error.signal_number();
  } catch (const std::bad_alloc&) {
    const std::string what = words.out_of_memory_for ? words.out_of_memory_for() : "";
    std::cerr << name << ": error: out of memory" << (what.empty() ? "" : " for " + what) << "\n";
    return kExitFailure;
  } catch (const std::exception& error) {
    std::cerr << failure_start << name << ": error: " << error.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace gs
