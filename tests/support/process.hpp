/// @file process.hpp
/// @brief Running the course's programs as a user would, for the tests of the programs: a command
///        through the shell with its output captured, a program started in the background to be
///        sent signals, fresh temporary directories, and the check that no output (partial or
///        not) was left behind.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace gs::test {

/// @brief Whether these tests (and so the programs, built with the same flags) run under
///        AddressSanitizer, whose shadow memory needs terabytes of address space: a test that
///        limits the address space (`ulimit -v`) cannot run under it.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitized = true;
#else
inline constexpr bool kAddressSanitized = false;
#endif
#else
inline constexpr bool kAddressSanitized = false;
#endif

/// @brief How a command ended and what it printed.
struct Outcome {
  int exit_code = -1;  ///< Its exit status, or 128 + the signal that killed it.
  std::string output;  ///< stdout and stderr together (or stdout alone, see run()).
};

/// @brief Runs @p command through `sh -c`; its stdout (and stderr, unless @p keep_stderr_apart,
///        which sends stderr to /dev/null) is captured.
Outcome run(const std::string& command, bool keep_stderr_apart = false);

/// @brief A fresh, empty directory for one test (under the test's temporary directory).
std::string fresh_directory(const std::string& name);

/// @brief Expects that nothing named like output @p path, final or temporary
///        (`<name>.partial-...`), is in its directory.
void expect_no_output_left(const std::string& path);

/// @brief Names of the temporary files (`<name>.partial-...`) of output @p path in its directory.
std::vector<std::string> partial_files_of(const std::string& path);

/// @brief A program started in the background with `sh -c 'exec COMMAND'` (so the process is
///        the program itself), its stdout and stderr going to a file; killed and reaped if still
///        running when destroyed.
class Background {
 public:
  /// @brief Starts @p command.
  explicit Background(const std::string& command);
  /// @brief Kills (SIGKILL) and reaps the program if it still runs.
  ~Background();
  Background(const Background&) = delete;             ///< Owns a process: not copyable.
  Background& operator=(const Background&) = delete;  ///< Owns a process: not copyable.

  /// @brief The program's process id.
  pid_t pid() const { return pid_; }
  /// @brief Sends @p signal_number to the program.
  void signal(int signal_number) const;
  /// @brief Waits at most @p seconds for the program to end; returns its exit status (128 + the
  ///        signal if one killed it), or -1 if it still runs.
  int wait(double seconds);
  /// @brief Waits at most @p seconds for @p predicate to hold, checking every 10 ms; returns
  ///        whether it did.
  template <typename Predicate>
  static bool wait_until(Predicate predicate, double seconds);
  /// @brief What the program printed so far (stdout and stderr).
  std::string output() const;

 private:
  static void sleep_a_little();
  pid_t pid_ = -1;
  int status_ = -1;
  std::string log_path_;
};

template <typename Predicate>
bool Background::wait_until(Predicate predicate, double seconds) {
  for (double waited = 0.0; waited < seconds; waited += 0.01) {
    if (predicate()) return true;
    sleep_a_little();
  }
  return predicate();
}

}  // namespace gs::test
