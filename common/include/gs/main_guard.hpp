/// @file main_guard.hpp
/// @brief One way to end a program: what escapes its body becomes one of the course's exit
///        codes (gs::ExitCode) and one line on stderr naming the program, written once for every
///        program (gray_scott, gs_benchmark, gs_render, lesson programs).
#pragma once

#include <exception>
#include <functional>
#include <string>

namespace gs {

/// @brief A program's refusal to go on, thrown by its body: guarded_main() prints
///        "<name>: error: <message>" and returns @p exit_code (e.g. kExitUsage, kExitNoGpu).
struct Refusal {
  int exit_code;        ///< What the program returns.
  std::string message;  ///< Why, in one sentence (no program name, no newline).
};

/// @brief How guarded_main() words a program's end; the defaults fit most programs.
struct GuardWords {
  /// Appended to an interruption's message: what the interrupted run left behind
  /// (e.g. "; no output file was left").
  std::string after_interruption;
  /// What was being allocated when memory ran out ("a 512 x 512 grid"), asked only then, so it
  /// may describe the latest allocation; empty (or returning "") for a plain "out of memory".
  std::function<std::string()> out_of_memory_for;
  /// A failure's message starts on a line of its own, after a progress line that may be open on
  /// stderr. An interruption's always does.
  bool failure_on_own_line = true;
  /// gs::InvalidParameter escaping the body is a usage error (kExitUsage, "<name>: error: ...")
  /// rather than a failure of the run.
  bool invalid_parameter_is_usage = false;
  /// Put between "<name>: " and "error: " in a failure's message (not a refusal's, not a usage
  /// error's): which of several processes failed ("rank 3: "), where one run has several.
  std::string failure_source;
  /// The out-of-memory message, too, starts on a line of its own (failure_on_own_line).
  bool out_of_memory_on_own_line = false;
  /// A failure while a caught signal is pending (gs::pending_signal()) ends as that signal's
  /// interruption: the failure came from the stopping (a partial file deleted under its writer,
  /// for instance), so the signal is the reason.
  bool pending_signal_explains_failure = false;
};

/// @brief How a program ends: its exit code and what it prints on stderr (whole lines, or "").
struct Ending {
  int exit_code;        ///< What the program returns.
  std::string message;  ///< What it prints on stderr before it returns.
};

/// @brief Runs @p body, a program's main, and returns its exit code; what escapes it becomes
///        the course's exit code and a line on stderr:
///        - gs::Refusal: its exit code, "<name>: error: <message>";
///        - gs::InvalidParameter (when @p words says so): kExitUsage, "<name>: error: <what>";
///        - gs::Interrupted: kExitSignal + the signal, "\n<name>: <what><after_interruption>";
///        - std::bad_alloc: kExitFailure, "<name>: error: out of memory[ for <what>]";
///        - any other std::exception: kExitFailure, "[\n]<name>: error: <what>".
///
/// Before the body runs, SIGXFSZ is ignored: a file-size limit (ulimit -f) then makes a write
/// fail with EFBIG, reported like a full disk, instead of killing the program before it can say
/// what happened.
int guarded_main(const std::string& name, const std::function<int()>& body,
                 const GuardWords& words = {});

/// @brief guarded_main()'s ladder without the printing: runs @p body and returns the exit code
///        and the message that guarded_main() would return and print (SIGXFSZ left as it is).
///        For a run of several processes that end together (lesson 08's MPI ranks): each
///        process gets its own ending, then they agree on one, printed once.
Ending guarded_ending(const std::string& name, const std::function<int()>& body,
                      const GuardWords& words = {});

/// @brief guarded_main()'s ending for @p error, an exception that escaped a program's body and
///        was caught by the program itself: prints the message guarded_main() would print and
///        returns its exit code (the same ladder). For a program that runs its body in its own
///        function (run_program(): the run stays in its file, and only what escapes it comes
///        here), after ignoring SIGXFSZ itself as guarded_main() does:
///
///            try { return run(); } catch (...) {
///              return gs::end_program(name, std::current_exception(), words);
///            }
///
///        An exception the ladder does not know (neither a gs::Refusal nor a std::exception) is
///        thrown on, as guarded_main() lets it through.
int end_program(const std::string& name, const std::exception_ptr& error,
                const GuardWords& words = {});

/// @brief Runs @p check, a check made before any work (the device, GS_DEVICE_LIMITS), and ends
///        the program as guarded_main() would if it refuses: gs::InvalidParameter is a usage
///        error (kExitUsage), any other exception a failure (kExitFailure), each printed as
///        "<name>: error: <what>" on a line of its own. Returns kExitSuccess (0) when the check
///        passed, else the exit code to return:
///
///            if (const int refused = gs::check_before_work(name, [] { gs::device_limits(); }))
///              return refused;
int check_before_work(const std::string& name, const std::function<void()>& check);

}  // namespace gs
