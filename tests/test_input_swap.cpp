// The readers' input swapped for a FIFO between the check that it is a regular file and its open
// (gs::FrameReader, which gs_render and the tests use; gs::DatasetReader shares its open). A
// check of the path followed by an open of the path would block forever in the open; the reader
// opens first, without waiting, checks the descriptor and reads through it, so the swap cannot
// reach it.
//
// The swap is made deterministic by interposing stat() and open() in this executable (its own, so
// that no other test goes through them): the first one of the two that names the armed path is
// done, then a FIFO is renamed over that path, as another process would. A thread opens the FIFO
// for writing whenever a reader waits on it, so that a reader that did open the FIFO fails within
// seconds instead of hanging the suite.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gs/hdf5_io.hpp"

namespace {

std::mutex g_armed_lock;
std::string g_armed;  // the path to swap at its first stat() or open(); empty: none
std::string g_fifo;   // the FIFO renamed over it
std::atomic<bool> g_swapped{false};
std::atomic<bool> g_fifo_read{false};  // a reader had the FIFO open

// Called after the real stat() or open() of @p path: swaps the armed path, once.
void after_use(const char* path) {
  std::lock_guard<std::mutex> lock(g_armed_lock);
  if (g_armed.empty() || path == nullptr || g_armed != path) return;
  if (::rename(g_fifo.c_str(), g_armed.c_str()) == 0) g_swapped = true;
  g_armed.clear();
}

}  // namespace

extern "C" int stat(const char* path, struct stat* status) noexcept {
  const int result = ::fstatat(AT_FDCWD, path, status, 0);
  const int saved = errno;
  after_use(path);
  errno = saved;
  return result;
}

extern "C" int open(const char* path, int flags, ...) {
  mode_t mode = 0;
  if ((flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE) {
    va_list arguments;
    va_start(arguments, flags);
    mode = static_cast<mode_t>(va_arg(arguments, int));
    va_end(arguments);
  }
  const int result = ::openat(AT_FDCWD, path, flags, mode);
  const int saved = errno;
  after_use(path);
  errno = saved;
  return result;
}

namespace {

std::string fresh_directory(const std::string& name) {
  const std::string dir = (std::filesystem::path(::testing::TempDir()) / ("input_swap_" + name) /
                           std::to_string(::getpid()))
                              .string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(InputSwap, AFifoSwappedInAfterTheCheckIsNeverOpened) {
  const std::string dir = fresh_directory("fifo");
  gs::Params params;
  params.rows = 5;
  params.cols = 7;
  params.frames = 2;
  params.output = dir + "/run.h5";
  {
    gs::FrameWriter writer(params.output, params, "unit-test");
    std::vector<float> v(static_cast<std::size_t>(params.cells()), 0.25f);
    for (int frame = 0; frame < params.frames; ++frame) writer.write_frame(frame, v.data());
    writer.commit();
  }
  g_fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(g_fifo.c_str(), 0644), 0);
  // Whoever opened the FIFO to read gets a writer, then an end of file: a failure, not a hang.
  std::atomic<bool> done{false};
  std::thread writer([&] {
    while (!done) {
      if (g_swapped) {
        const int descriptor = ::openat(AT_FDCWD, params.output.c_str(), O_WRONLY | O_NONBLOCK);
        if (descriptor >= 0) {
          g_fifo_read = true;
          ::close(descriptor);
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
  {
    std::lock_guard<std::mutex> lock(g_armed_lock);
    g_armed = params.output;
  }
  std::string failure;
  int frames = 0;
  std::vector<float> last;
  try {
    gs::FrameReader reader(params.output);
    frames = reader.info().frames;
    last = reader.read_frame(frames - 1);
  } catch (const std::exception& error) {
    failure = error.what();
  }
  done = true;
  writer.join();
  EXPECT_TRUE(g_swapped) << "the path was never opened nor checked: the test tested nothing";
  EXPECT_FALSE(g_fifo_read) << "the reader opened the FIFO swapped in after its check: " << failure;
  // The file opened and checked is read, or, its name gone (HDF5 resolves the name it reads
  // through), refused with a message that says so.
  if (failure.empty()) {
    EXPECT_EQ(frames, 2);
    ASSERT_EQ(last.size(), 35u);
    EXPECT_EQ(last[34], 0.25f);
  } else {
    EXPECT_NE(failure.find("cannot open '" + params.output +
                           "' as an HDF5 file: it was replaced or deleted while it was being "
                           "opened"),
              std::string::npos)
        << failure;
  }
}

}  // namespace
