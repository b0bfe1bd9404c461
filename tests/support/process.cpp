// Running programs for the tests: popen for a command and its output, fork/exec of `sh -c` for a
// program that a test sends signals to.
#include "process.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace gs::test {
namespace fs = std::filesystem;

Outcome run(const std::string& command, bool keep_stderr_apart) {
  Outcome outcome;
  std::FILE* pipe =
      ::popen((command + (keep_stderr_apart ? " 2>/dev/null" : " 2>&1")).c_str(), "r");
  if (pipe == nullptr) return outcome;
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr) outcome.output += buffer.data();
  const int status = ::pclose(pipe);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return outcome;
}

std::string fresh_directory(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / "gs_program_tests" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::vector<std::string> partial_files_of(const std::string& path) {
  std::vector<std::string> partials;
  const std::string prefix = fs::path(path).filename().string() + ".partial";
  const fs::path directory = fs::path(path).parent_path();
  if (!fs::is_directory(directory)) return partials;
  for (const auto& entry : fs::directory_iterator(directory)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0) partials.push_back(entry.path().string());
  }
  return partials;
}

void expect_no_output_left(const std::string& path) {
  EXPECT_FALSE(fs::exists(path)) << path;
  for (const std::string& partial : partial_files_of(path)) {
    ADD_FAILURE() << "partial file left: " << partial;
  }
}

Background::Background(const std::string& command) {
  static int counter = 0;
  log_path_ = (fs::path(::testing::TempDir()) / ("gs_background_" + std::to_string(::getpid()) +
                                                 "_" + std::to_string(counter++) + ".log"))
                  .string();
  const std::string shell_command = "exec " + command + " > '" + log_path_ + "' 2>&1";
  pid_ = ::fork();
  if (pid_ == 0) {
    ::execl("/bin/sh", "sh", "-c", shell_command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
}

Background::~Background() {
  if (pid_ > 0 && status_ < 0) {
    ::kill(pid_, SIGKILL);
    int ignored = 0;
    ::waitpid(pid_, &ignored, 0);
  }
  std::error_code ignored;
  fs::remove(log_path_, ignored);
}

void Background::signal(int signal_number) const {
  if (pid_ > 0 && status_ < 0) ::kill(pid_, signal_number);
}

void Background::sleep_a_little() {
  const timespec ten_milliseconds{0, 10'000'000};
  ::nanosleep(&ten_milliseconds, nullptr);
}

int Background::wait(double seconds) {
  if (status_ >= 0) return status_;
  int status = 0;
  const bool ended = wait_until([&] { return ::waitpid(pid_, &status, WNOHANG) == pid_; }, seconds);
  if (!ended) return -1;
  status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return status_;
}

std::string Background::output() const {
  std::ifstream log(log_path_);
  std::stringstream text;
  text << log.rdbuf();
  return text.str();
}

}  // namespace gs::test
