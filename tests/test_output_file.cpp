// The output mechanism (gs/output_file.hpp) and every writer of common/ that goes through it:
// HDF5 frames (FrameWriter), files of datasets (DatasetWriter), PNG (write_rgb_png), an appended
// measurement CSV (append_measurement_rows) and a whole text file such as a Markdown table
// (write_output_file). Each writer kind keeps the same promises, tested the same way: a link
// planted at a temporary name is never followed, a symbolic link is written through and kept, the
// mode of the replaced file is kept, a FIFO or a directory is refused without hanging, the
// previous file survives a full disk (RLIMIT_FSIZE in a child process), and the temporary of a
// killed run is listed. Then the checks of a run's several outputs (check_outputs: the same file
// named twice, the room of a file system), a second signal deleting every temporary file, and
// appending. Every file lives in a fresh temporary directory; the real /dev is never touched.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gs/hdf5_io.hpp"
#include "gs/interrupt.hpp"
#include "gs/output_file.hpp"
#include "gs/png_file.hpp"
#include "gs/report.hpp"

namespace {
namespace fs = std::filesystem;

// A fresh, empty directory of its own for one test.
std::string temp_dir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / "gs_output_tests" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::string read_all(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

mode_t mode_of(const std::string& path) {
  struct stat status {};
  EXPECT_EQ(::stat(path.c_str(), &status), 0) << path;
  return status.st_mode & 07777;
}

// The temporary files (`<name>.partial-...`) of output @p path in its directory.
std::vector<std::string> partials_of(const std::string& path) {
  std::vector<std::string> partials;
  const std::string prefix = fs::path(path).filename().string() + ".partial-";
  for (const auto& entry : fs::directory_iterator(fs::path(path).parent_path())) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0) partials.push_back(entry.path().string());
  }
  return partials;
}

// This host's part of temporary names, as the mechanism spells it (read off a probe's name).
std::string host_part() {
  const std::string dir = temp_dir("host_probe");
  gs::OutputFile probe(dir + "/probe", gs::OutputOptions("-o", nullptr));
  const std::string name = fs::path(probe.temporary_path()).filename().string();
  const std::string rest = name.substr(std::string("probe.partial-").size());
  const std::string host_and_pid = rest.substr(0, rest.rfind('-'));
  return host_and_pid.substr(0, host_and_pid.rfind('-'));
}

// A process id that no process has: a child that has exited and was reaped.
pid_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

// Runs @p body in a child process and returns its exit status (128 + the signal that ended it),
// or -1 if it was still running after @p seconds (then it is killed): a write that hangs on a
// FIFO fails the test instead of hanging it.
int in_child(const std::function<int()>& body, double seconds = 20.0) {
  std::cout << std::flush;
  const pid_t child = ::fork();
  if (child == 0) {
    int code = 99;
    try {
      code = body();
    } catch (...) {
      code = 98;
    }
    ::_exit(code);
  }
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() <
         seconds) {
    int status = 0;
    if (::waitpid(child, &status, WNOHANG) == child) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  return -1;
}

// ---------------------------------------------------------------------------------------------
// The writer kinds: each writes a complete file whose bytes depend on `version`; `big` makes it
// larger than 128 KiB (and incompressible, for the PNG), to be cut short by a file-size limit.

struct WriterKind {
  const char* name;
  const char* file;
  std::function<void(const std::string& path, const gs::OutputOptions& options, int version,
                     bool big)>
      write;
};

// gtest prints a parameter with this (not as bytes) when a test fails.
void PrintTo(const WriterKind& kind, std::ostream* out) {
  *out << kind.name;
}

void write_frames(const std::string& path, const gs::OutputOptions& options, int version,
                  bool big) {
  gs::Params params;
  params.rows = big ? 64 : 5;
  params.cols = big ? 64 : 7;
  params.frames = big ? 8 : 3;
  gs::FrameWriter writer(path, params, "version-" + std::to_string(version), options);
  const std::vector<float> frame(static_cast<std::size_t>(params.cells()),
                                 static_cast<float>(version));
  for (int f = 0; f < params.frames; ++f) writer.write_frame(f, frame.data());
  writer.commit();
}

void write_datasets(const std::string& path, const gs::OutputOptions& options, int version,
                    bool big) {
  gs::DatasetWriter writer(path, options);
  const std::vector<float> values(big ? 40000 : 10, static_cast<float>(version));
  writer.write("v", {static_cast<std::int64_t>(values.size())}, values.data(), "the values");
  writer.set_integer("version", version);
  writer.commit();
}

void write_png(const std::string& path, const gs::OutputOptions& options, int version, bool big) {
  gs::OutputFile file(path, options);
  const int side = big ? 256 : 8;
  std::mt19937 noise(static_cast<unsigned>(version));
  gs::write_rgb_png(file, side, side, [&](int, unsigned char* rgb) {
    for (int i = 0; i < 3 * side; ++i) {
      rgb[i] = static_cast<unsigned char>(big ? noise() : static_cast<unsigned>(version));
    }
  });
  file.commit();
}

std::string text_of(int version, bool big) {
  std::string text = "| version | " + std::to_string(version) + " |\n";
  if (big) text += std::string(200 * 1024, 'x') + "\n";
  return text;
}

void append_csv(const std::string& path, const gs::OutputOptions& options, int version, bool big) {
  gs::append_measurement_rows(path, text_of(version, big), options);
}

void write_markdown(const std::string& path, const gs::OutputOptions& options, int version,
                    bool big) {
  gs::write_output_file(path, text_of(version, big), options);
}

const WriterKind kKinds[] = {
    {"Hdf5Frames", "out.h5", write_frames}, {"Datasets", "out.h5", write_datasets},
    {"Png", "out.png", write_png},          {"CsvAppend", "out.csv", append_csv},
    {"Markdown", "out.md", write_markdown},
};

class EveryWriter : public ::testing::TestWithParam<WriterKind> {
 protected:
  std::string dir_for(const std::string& test) {
    return temp_dir(std::string(GetParam().name) + "_" + test);
  }
  void write(const std::string& path, int version, bool big = false,
             gs::OutputOptions options = gs::OutputOptions("--flag", nullptr)) {
    GetParam().write(path, options, version, big);
  }
};

TEST_P(EveryWriter, ReplacesTheFileOnlyWhenComplete) {
  const std::string path = dir_for("replace") + "/" + GetParam().file;
  write(path, 1);
  const std::string first = read_all(path);
  ASSERT_FALSE(first.empty());
  write(path, 2);
  EXPECT_NE(read_all(path), first) << "the second version replaced the first";
  EXPECT_TRUE(partials_of(path).empty());
}

TEST_P(EveryWriter, ALinkPlantedAtATemporaryNameIsNeverFollowed) {
  // An attacker who can write to the directory plants links where a writer may put its temporary
  // file: the predictable `<name>.partial-<pid>` of the old writers, and the very name this one
  // picks first (its unique part forced for the test). The writer must go around both.
  const std::string dir = dir_for("planted");
  const std::string path = dir + "/" + GetParam().file;
  const std::string victim = dir + "/victim";
  write_text(victim, "precious");
  const std::string old_name = path + ".partial-" + std::to_string(::getpid());
  const std::string new_name =
      path + ".partial-" + host_part() + "-" + std::to_string(::getpid()) + "-00000000";
  fs::create_symlink("victim", old_name);
  fs::create_symlink("victim", new_name);
  gs::OutputOptions options("--flag", nullptr);
  int attempt = 0;
  options.unique_part = [&attempt] { return attempt++ == 0 ? "00000000" : "11111111"; };
  write(path, 1, false, options);
  EXPECT_EQ(read_all(victim), "precious") << "a planted link was followed";
  EXPECT_TRUE(fs::is_symlink(old_name));
  EXPECT_TRUE(fs::is_symlink(new_name));
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(path))) << "the output is a file of its own";
  EXPECT_GE(attempt, 2) << "the taken name was not used";
  EXPECT_EQ(partials_of(path).size(), 2u) << "only the two planted links are left";
}

TEST_P(EveryWriter, ASymbolicLinkIsWrittenThroughAndTheModeKept) {
  const std::string dir = dir_for("link");
  fs::create_directories(dir + "/data");
  const std::string real = dir + "/data/" + GetParam().file;
  write(real, 1);
  ASSERT_EQ(::chmod(real.c_str(), 0600), 0);
  const std::string before = read_all(real);
  const std::string link = dir + "/latest";
  fs::create_symlink(fs::path("data") / GetParam().file, link);
  write(link, 2);
  EXPECT_TRUE(fs::is_symlink(link)) << "the link was replaced by a file";
  EXPECT_EQ(fs::read_symlink(link), fs::path("data") / GetParam().file);
  EXPECT_NE(read_all(real), before) << "the file the link points to was not written";
  EXPECT_EQ(mode_of(real), 0600u) << "the mode was not kept";
  write(real, 3);  // named directly
  EXPECT_EQ(mode_of(real), 0600u);
  EXPECT_TRUE(partials_of(real).empty());
  EXPECT_TRUE(partials_of(link).empty());
}

TEST_P(EveryWriter, AFifoOrADirectoryIsRefusedWithoutHanging) {
  const std::string dir = dir_for("not_regular");
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0) << std::strerror(errno);
  fs::create_directories(dir + "/directory");
  fs::create_symlink("fifo", dir + "/link_to_fifo");
  for (const auto& [path, kind] :
       std::vector<std::pair<std::string, std::string>>{{fifo, "a FIFO"},
                                                        {dir + "/link_to_fifo", "a FIFO"},
                                                        {dir + "/directory", "directory"}}) {
    // In a child: were the FIFO opened for writing, the open would wait for a reader forever.
    const std::string message_file = dir + "/message";
    const int code = in_child([&, path = path] {
      try {
        write(path, 1);
      } catch (const gs::OutputError& error) {
        write_text(message_file, error.what());
        return 0;
      }
      return 1;
    });
    ASSERT_NE(code, -1) << path << ": the writer hung";
    EXPECT_EQ(code, 0) << path << ": not refused";
    const std::string message = read_all(message_file);
    EXPECT_NE(message.find(kind), std::string::npos) << message;
    EXPECT_NE(message.find("--flag '" + path + "'"), std::string::npos)
        << "names the flag and the path: " << message;
  }
  struct stat status {};
  ASSERT_EQ(::stat(fifo.c_str(), &status), 0);
  EXPECT_TRUE(S_ISFIFO(status.st_mode)) << "the FIFO was replaced";
  for (const auto& entry : fs::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().filename().string().find(".partial-"), std::string::npos)
        << "temporary left: " << entry.path();
  }
}

TEST_P(EveryWriter, APreviousFileSurvivesAFullDisk) {
  // A file-size limit makes write() fail with EFBIG, as a full disk does with ENOSPC; SIGXFSZ is
  // ignored, as the programs do, so the failed write is an error and not a kill.
  const std::string dir = dir_for("full");
  const std::string path = dir + "/" + GetParam().file;
  write(path, 1);
  const std::string before = read_all(path);
  const std::string message_file = dir + "/message";
  const int code = in_child([&] {
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{16 * 1024, 16 * 1024};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) return 2;
    try {
      write(path, 2, true);
    } catch (const gs::OutputError& error) {
      const rlimit unlimited{RLIM_INFINITY, RLIM_INFINITY};
      ::setrlimit(RLIMIT_FSIZE, &unlimited);
      write_text(message_file, error.what());
      return 0;
    }
    return 1;
  });
  EXPECT_EQ(code, 0) << "the write did not fail";
  EXPECT_NE(read_all(message_file).find("File too large"), std::string::npos)
      << read_all(message_file);
  EXPECT_EQ(read_all(path), before) << "the previous file was lost or changed";
  EXPECT_TRUE(partials_of(path).empty()) << "the temporary file was left";
}

TEST_P(EveryWriter, TheTemporaryOfAKilledRunIsListedNeverDeleted) {
  const std::string dir = dir_for("stale");
  const std::string path = dir + "/" + GetParam().file;
  const std::string left =
      path + ".partial-" + host_part() + "-" + std::to_string(dead_pid()) + "-0badc0de";
  write_text(left, "half a file");
  std::ostringstream warnings;
  write(path, 1, false, gs::OutputOptions("--flag", &warnings));
  EXPECT_NE(warnings.str().find(left), std::string::npos) << warnings.str();
  EXPECT_NE(warnings.str().find("rm -- '" + left + "'"), std::string::npos) << warnings.str();
  EXPECT_TRUE(fs::exists(left)) << "never deleted by the writer";
}

INSTANTIATE_TEST_SUITE_P(OutputFile, EveryWriter, ::testing::ValuesIn(kKinds),
                         [](const ::testing::TestParamInfo<WriterKind>& kind) {
                           return std::string(kind.param.name);
                         });

// ---------------------------------------------------------------------------------------------
// The outputs of one run

std::string message_of_check(const std::vector<gs::PlannedOutput>& outputs) {
  try {
    gs::check_outputs(outputs, nullptr);
  } catch (const gs::OutputError& error) {
    return error.what();
  }
  return "no error";
}

TEST(CheckOutputs, TwoFlagsNamingOneFileAreRefusedNamingBoth) {
  const std::string dir = temp_dir("same_file");
  fs::create_directories(dir + "/sub");
  const std::string x = dir + "/x.h5";
  write_text(x, "old");
  fs::create_symlink("x.h5", dir + "/link.png");
  fs::create_hard_link(x, dir + "/hard.png");
  const std::string relative = fs::relative(x).string();  // the same file, another spelling
  for (const std::string& other :
       {dir + "/./x.h5", dir + "/sub/../x.h5", dir + "/link.png", dir + "/hard.png", relative}) {
    const std::string message = message_of_check({{x, "-o", 100}, {other, "--png", 0}});
    EXPECT_NE(message.find("name the same file"), std::string::npos) << other << ": " << message;
    EXPECT_NE(message.find("-o '" + x + "'"), std::string::npos) << message;
    EXPECT_NE(message.find("--png '" + other + "'"), std::string::npos) << message;
  }
  // A new name too: two spellings of one file that does not exist yet.
  const std::string message =
      message_of_check({{dir + "/new.h5", "-o", 0}, {dir + "/sub/../new.h5", "--png", 0}});
  EXPECT_NE(message.find("name the same file"), std::string::npos) << message;
  EXPECT_EQ(message_of_check({{x, "-o", 100}, {dir + "/sub/x.h5", "--png", 0}}), "no error");
  EXPECT_EQ(read_all(x), "old");
  EXPECT_FALSE(fs::exists(dir + "/new.h5"));
}

TEST(CheckOutputs, OutputsOnOneFileSystemNeedRoomTogether) {
  const std::string dir = temp_dir("room");
  struct statvfs file_system {};
  ASSERT_EQ(::statvfs(dir.c_str(), &file_system), 0);
  const auto free_bytes = static_cast<std::int64_t>(file_system.f_bavail) *
                          static_cast<std::int64_t>(file_system.f_frsize);
  const std::int64_t more_than_half = free_bytes / 2 + free_bytes / 8;
  EXPECT_EQ(message_of_check({{dir + "/a.h5", "-o", more_than_half}}), "no error");
  const std::string message = message_of_check(
      {{dir + "/a.h5", "-o", more_than_half}, {dir + "/b.csv", "--csv", more_than_half}});
  EXPECT_NE(message.find("not enough space for -o '" + dir + "/a.h5', --csv '" + dir + "/b.csv'"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("together"), std::string::npos) << message;
}

TEST(CheckOutputs, EachProblemNamesItsFlag) {
  const std::string dir = temp_dir("flags");
  fs::create_directories(dir + "/a_directory");
  EXPECT_NE(message_of_check({{dir + "/a_directory", "--png", 0}})
                .find("--png '" + dir + "/a_directory' is a directory; give --png a file name"),
            std::string::npos);
  EXPECT_NE(message_of_check({{dir + "/missing/out.md", "--markdown", 0}})
                .find("cannot write --markdown '" + dir + "/missing/out.md': directory"),
            std::string::npos);
  const std::string too_long = dir + "/" + std::string(256, 'n');
  EXPECT_NE(message_of_check({{too_long, "--gif", 0}}).find("cannot write --gif '"),
            std::string::npos);
  EXPECT_NE(message_of_check({{dir + "/big.h5", "-o", std::int64_t{1} << 62}})
                .find("not enough space for -o '"),
            std::string::npos);
}

TEST(CheckOutputs, TemporaryNamesAlwaysFitNameMax) {
  // A 255-byte name (the longest) is fine: its temporary name is shortened to fit.
  const std::string dir = temp_dir("long_names");
  const std::string path = dir + "/" + std::string(251, 'n') + ".csv";
  EXPECT_EQ(message_of_check({{path, "--csv", 10}}), "no error");
  gs::write_output_file(path, "text", gs::OutputOptions("--csv", nullptr));
  EXPECT_EQ(read_all(path), "text");
}

TEST(CheckOutputs, TheWriterTakesTheCheckedTargetAndChecksNothingAgain) {
  const std::string dir = temp_dir("checked_once");
  const std::string file = dir + "/x.h5";
  const std::string link = dir + "/link.h5";
  write_text(file, "old");
  fs::create_symlink("x.h5", link);
  const std::vector<gs::OutputTarget> targets =
      gs::check_outputs({{link, "-o", 100}, {dir + "/new.csv", "--csv", 0}}, nullptr);
  ASSERT_EQ(targets.size(), 2u);
  EXPECT_EQ(targets[0].given, link);
  EXPECT_EQ(targets[0].path, fs::path(file));  // through the link
  EXPECT_TRUE(targets[0].exists);
  EXPECT_FALSE(targets[1].exists);

  // Checked once: a room the disk cannot have is not asked again of the checked target...
  gs::OutputOptions options("-o", nullptr);
  options.bytes = std::int64_t{1} << 62;
  options.checked = targets[0];
  {
    gs::OutputFile output(link, options);
    output.write("new");
    output.commit(false);
  }
  EXPECT_EQ(read_all(file), "new");
  EXPECT_TRUE(fs::is_symlink(link));
  // ...while without it the writer checks the path itself, its only check.
  options.checked.reset();
  EXPECT_THROW(gs::OutputFile(link, options), gs::OutputError);
  // The target of another path is a programming error, never silently another file.
  options.checked = targets[1];
  EXPECT_THROW(gs::OutputFile(link, options), std::invalid_argument);
  EXPECT_EQ(read_all(file), "new");
  EXPECT_FALSE(fs::exists(dir + "/new.csv"));
}

// ---------------------------------------------------------------------------------------------
// Signals, appending, the commit sequence, PNG limits

TEST(OutputSignals, ASecondSignalDeletesEveryTemporaryAndKeepsThePreviousFiles) {
  const std::string dir = temp_dir("second_signal");
  const std::string a = dir + "/a.csv";
  const std::string b = dir + "/b.png";
  write_text(a, "previous a");
  write_text(b, "previous b");
  const int code = in_child([&] {
    gs::InterruptGuard guard;
    gs::OutputFile first(a, gs::OutputOptions("--csv", nullptr));
    gs::OutputFile second(b, gs::OutputOptions("--png", nullptr));
    first.write("half of a");
    second.write("half of b");
    ::raise(SIGINT);  // noted
    ::raise(SIGINT);  // the second: deletes both temporaries and exits at once with 130
    return 1;
  });
  EXPECT_EQ(code, 130);
  EXPECT_EQ(read_all(a), "previous a");
  EXPECT_EQ(read_all(b), "previous b");
  EXPECT_TRUE(partials_of(a).empty());
  EXPECT_TRUE(partials_of(b).empty());
}

TEST(OutputSignals, TheSetOfPartialFilesIsFixedAndForgetsWhatWasRemoved) {
  ASSERT_TRUE(gs::partial_outputs().empty());
  std::vector<std::string> names;
  for (int i = 0; i < gs::kMaxPartialOutputs; ++i) {
    names.push_back("/tmp/partial-" + std::to_string(i));
    EXPECT_TRUE(gs::add_partial_output(names.back()));
  }
  EXPECT_FALSE(gs::add_partial_output("/tmp/one-too-many")) << "the set is full";
  EXPECT_EQ(gs::partial_outputs().size(), names.size());
  gs::remove_partial_output(names[3]);
  EXPECT_TRUE(gs::add_partial_output("/tmp/in-a-freed-slot"));
  for (const std::string& name : names) gs::remove_partial_output(name);
  gs::remove_partial_output("/tmp/in-a-freed-slot");
  EXPECT_TRUE(gs::partial_outputs().empty());
  EXPECT_FALSE(gs::add_partial_output(std::string(5000, 'x'))) << "longer than 4095 bytes";
}

TEST(OutputAppend, OldContentThenTheHeaderOnlyForANewOrEmptyFile) {
  const std::string dir = temp_dir("append");
  const gs::OutputOptions options("--csv", nullptr);
  gs::append_to_output_file(dir + "/new.csv", "header\n", "row 1\n", options);
  gs::append_to_output_file(dir + "/new.csv", "header\n", "row 2\n", options);
  EXPECT_EQ(read_all(dir + "/new.csv"), "header\nrow 1\nrow 2\n");
  write_text(dir + "/empty.csv", "");
  gs::append_to_output_file(dir + "/empty.csv", "header\n", "row\n", options);
  EXPECT_EQ(read_all(dir + "/empty.csv"), "header\nrow\n");
  gs::append_measurement_rows(dir + "/measurements.csv", "a,b\n", options);
  EXPECT_EQ(read_all(dir + "/measurements.csv"), std::string(gs::kMeasurementColumns) + "\na,b\n");
}

// Found by an attacker: --csv appended rows to an HDF5 file given by mistake, and gs_benchmark's
// rows to lesson 08's file (two schemas in one file). A file that is not empty must begin with
// exactly the header; otherwise it is refused, at the check before any work and at the append,
// and left as it was.
TEST(OutputAppend, AFileThatDoesNotBeginWithTheHeaderIsRefusedAndLeftAsItWas) {
  const std::string dir = temp_dir("append_header");
  const gs::OutputOptions options("--csv", nullptr);
  const std::string other_schema = "implementation,scaling,ranks\nreference,strong,1\n";
  const std::string binary = std::string("\x89HDF\r\n\x1a\n\0\0\0", 11) + "rest";
  const std::string longer_header = "header,more\nrow\n";
  const std::string no_newline = "header";
  for (const std::string& content : {other_schema, binary, longer_header, no_newline}) {
    const std::string path = dir + "/file.csv";
    write_text(path, content);
    try {
      gs::append_to_output_file(path, "header\n", "row\n", options);
      ADD_FAILURE() << "appended to a file beginning '" << content.substr(0, 12) << "'";
    } catch (const gs::OutputError& error) {
      EXPECT_NE(std::string(error.what())
                    .find("refusing to append to --csv '" + path +
                          "': its first line is not this program's header "
                          "'header'"),
                std::string::npos)
          << error.what();
    }
    EXPECT_THROW(gs::check_outputs({{path, "--csv", 0, "header\n"}}, nullptr), gs::OutputError);
    EXPECT_EQ(read_all(path), content) << "the file was modified";
    EXPECT_EQ(read_all(path).size(), content.size());
  }
  // Its own file, an empty one and a new name are fine, at the check and at the append.
  write_text(dir + "/own.csv", "header\nrow 0\n");
  write_text(dir + "/empty.csv", "");
  for (const std::string name : {"own.csv", "empty.csv", "new.csv"}) {
    EXPECT_NO_THROW(gs::check_outputs({{dir + "/" + name, "--csv", 0, "header\n"}}, nullptr));
    gs::append_to_output_file(dir + "/" + name, "header\n", "row\n", options);
  }
  EXPECT_EQ(read_all(dir + "/own.csv"), "header\nrow 0\nrow\n");
}

// Found by an attacker: four gs_benchmark --csv on one file at once, all rc 0, two rows in it:
// each copied the same old content and the last rename dropped the others' rows.
TEST(OutputAppend, ConcurrentAppendsKeepEveryRow) {
  const std::string dir = temp_dir("append_concurrent");
  const std::string path = dir + "/same.csv";
  constexpr int kWriters = 6;
  constexpr int kRowsEach = 15;
  std::cout << std::flush;
  std::vector<pid_t> children;
  for (int writer = 0; writer < kWriters; ++writer) {
    const pid_t child = ::fork();
    if (child == 0) {
      int code = 0;
      try {
        for (int row = 0; row < kRowsEach; ++row) {
          gs::append_to_output_file(path, "header\n",
                                    std::to_string(writer) + "," + std::to_string(row) + "\n",
                                    gs::OutputOptions("--csv", nullptr), false);
        }
      } catch (...) {
        code = 1;
      }
      ::_exit(code);
    }
    children.push_back(child);
  }
  for (const pid_t child : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "an append failed";
  }
  const std::string csv = read_all(path);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + kWriters * kRowsEach)
      << "the header once, then every row:\n"
      << csv;
  EXPECT_EQ(csv.rfind("header\n", 0), 0u);
  EXPECT_TRUE(partials_of(path).empty());
}

TEST(OutputCommit, FlushesTheFileRenamesThenFlushesTheDirectory) {
  const std::string path = temp_dir("commit") + "/out.md";
  std::vector<std::string> steps;
  gs::OutputOptions options("--markdown", nullptr);
  options.on_commit_step = [&steps](const std::string& step) { steps.push_back(step); };
  {
    gs::OutputFile file(path, options);
    EXPECT_GE(file.descriptor(), 0) << "the descriptor of the file being written is kept";
    file.write("table");
    EXPECT_FALSE(fs::exists(path)) << "the final name appears only on commit";
    file.commit();
    EXPECT_EQ(file.descriptor(), -1);
  }
  EXPECT_EQ(steps, (std::vector<std::string>{"fsync file", "rename", "fsync directory"}));
  EXPECT_EQ(read_all(path), "table");
  {
    gs::OutputFile abandoned(path, options);
    abandoned.write("never complete");
  }
  EXPECT_EQ(read_all(path), "table") << "an abandoned file replaces nothing";
  EXPECT_TRUE(partials_of(path).empty());
}

TEST(OutputCommit, ATargetThatBecameAFifoOrADeviceDuringTheRunIsKept) {
  const std::string dir = temp_dir("became_special");
  struct Special {
    std::string name;
    std::string kind;
    std::function<int(const std::string&)> make;
  };
  const std::vector<Special> specials = {
      {"fifo.h5", "a FIFO", [](const std::string& path) { return ::mkfifo(path.c_str(), 0644); }},
      // /dev/null's numbers; making a device needs CAP_MKNOD (root, outside most containers).
      {"null.h5", "a character device",
       [](const std::string& path) {
         return ::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 3));
       }},
  };
  for (const Special& special : specials) {
    const std::string path = dir + "/" + special.name;
    std::string message;
    {
      gs::OutputFile file(path, gs::OutputOptions("-o", nullptr));  // a new name when it starts
      file.write("frames");
      if (special.make(path) != 0) {
        std::cout << "not tried: cannot make " << special.kind << ": " << std::strerror(errno)
                  << "\n";
        continue;
      }
      try {
        file.commit(false);
      } catch (const gs::OutputError& error) {
        message = error.what();
      }
    }
    EXPECT_NE(message.find("refusing to replace -o '" + path + "': it became " + special.kind),
              std::string::npos)
        << "the commit must refuse, naming the flag, the path and the kind: '" << message << "'";
    struct stat status {};
    ASSERT_EQ(::lstat(path.c_str(), &status), 0);
    EXPECT_FALSE(S_ISREG(status.st_mode)) << path << " was replaced by a regular file";
    EXPECT_TRUE(partials_of(path).empty()) << "the temporary file was left";
  }
}

TEST(OutputPng, SidesBeyondLibpngsLimitAreRefusedBeforeAnyFile) {
  const std::string dir = temp_dir("png_limit");
  EXPECT_NO_THROW(gs::check_png_size(1000000, 1, dir + "/map.png", "--png"));
  try {
    gs::check_png_size(1000001, 10, dir + "/map.png", "--png");
    ADD_FAILURE() << "a PNG 1000001 pixels wide was accepted";
  } catch (const gs::OutputError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("--png '" + dir + "/map.png'"), std::string::npos) << message;
    EXPECT_NE(message.find("1000001 x 10"), std::string::npos) << message;
  }
  EXPECT_THROW(gs::check_png_size(10, 0, dir + "/map.png", "--png"), gs::OutputError);
  EXPECT_TRUE(fs::is_empty(dir));
}

}  // namespace
