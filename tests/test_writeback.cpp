// The writeback as frames are written (OutputFile::written(), called by FrameWriter per frame):
// it changes where the bytes wait, never which bytes the file holds. A file written with it and
// without it is the same, byte for byte, on the build directory's file system (a real disk:
// ext4 here) and on tmpfs (where it turns itself off); each frame's writeback is started on the
// frame's own bytes (its HDF5 chunk, read back from the file) and waited for later, by the
// kernel's call; a file system that cannot do it turns it off and says why; a disk error fails the
// write and keeps the previous file; and, on a disk whose page cache lets go of clean pages, the
// output leaves the page cache as the run found it. Then resident_pages() itself.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "gs/hdf5_io.hpp"
#include "gs/output_file.hpp"

namespace {
namespace fs = std::filesystem;

constexpr long kTmpfsMagic = 0x01021994;

// A fresh directory of its own for one test, under @p base.
std::string fresh_under(const std::string& base, const std::string& name) {
  const fs::path dir = fs::path(base) / "gs_writeback_tests" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

// A directory on the build directory's file system: a real disk (ext4 on the course's machines
// and on CI's runners; an overlay in some containers).
std::string on_disk(const std::string& name) {
  return fresh_under(GS_BUILD_DIR, name);
}

bool is_tmpfs(const std::string& path) {
  struct statfs file_system {};
  return ::statfs(path.c_str(), &file_system) == 0 &&
         static_cast<long>(file_system.f_type) == kTmpfsMagic;
}

std::string read_all(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

// Frames large enough that HDF5 writes each one straight to the file (a chunk over the 1 MiB of
// its chunk cache), as the official run's 8.29 MB frames are; values that differ in every frame.
gs::Params big_frames(const std::string& path, int frames = 6) {
  gs::Params params;
  params.rows = 511;  // 511 x 613 floats: 1.25 MB a frame, not a multiple of a page
  params.cols = 613;
  params.frames = frames;
  params.output = path;
  return params;
}

gs::Params small_frames(const std::string& path) {
  gs::Params params;
  params.rows = 5;
  params.cols = 7;
  params.frames = 3;
  params.output = path;
  return params;
}

std::vector<float> frame_values(const gs::Params& params, int frame) {
  std::vector<float> v(static_cast<std::size_t>(params.cells()));
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<float>(frame) + 1e-6f * static_cast<float>(i % 9973);
  }
  return v;
}

gs::FrameWriterOptions with_writeback(std::int64_t bytes_in_flight) {
  gs::FrameWriterOptions options("-o", nullptr);
  options.writeback_bytes = bytes_in_flight;
  return options;
}

// Writes every frame of @p params through a FrameWriter made with @p options, commits, and
// returns what its writeback did. @p after_frames runs once every frame is written, before the
// commit.
gs::WritebackStats write_frames(
    const gs::Params& params, const gs::FrameWriterOptions& options,
    const std::function<void(const gs::FrameWriter&)>& after_frames = nullptr) {
  gs::FrameWriter writer(params.output, params, "writeback-test", options);
  for (int f = 0; f < params.frames; ++f) writer.write_frame(f, frame_values(params, f).data());
  if (after_frames) after_frames(writer);
  writer.commit();
  return writer.writeback();
}

// Writes the same frames twice, with the writeback and without, and expects the two files to be
// identical. HDF5 stores the dataset's modification time (a 4-byte "Object Modification Time"
// message, in seconds: HDF5 tracks times by default), so the two are written within one second,
// tried again if a second boundary fell between them. Returns the stats of the run with it.
gs::WritebackStats expect_the_same_file(const std::string& dir, const gs::Params& like) {
  gs::Params with = like;
  gs::Params without = like;
  with.output = dir + "/with.h5";
  without.output = dir + "/without.h5";
  gs::WritebackStats stats;
  for (int attempt = 0; attempt < 5; ++attempt) {
    const std::time_t started = std::time(nullptr);
    stats = write_frames(with, with_writeback(2 << 20));
    write_frames(without, with_writeback(0));
    if (std::time(nullptr) == started) break;
  }
  const std::string a = read_all(with.output);
  const std::string b = read_all(without.output);
  EXPECT_GT(a.size(), static_cast<std::size_t>(like.output_bytes()));
  EXPECT_EQ(a.size(), b.size());
  EXPECT_TRUE(a == b) << "the writeback changed the file's bytes in " << dir;
  gs::FrameReader reader(with.output);
  for (int f = 0; f < like.frames; ++f) {
    EXPECT_EQ(reader.read_frame(f), frame_values(like, f)) << "frame " << f;
  }
  return stats;
}

TEST(Writeback, TheFileIsTheSameByteForByteWithAndWithoutItOnADisk) {
  const std::string dir = on_disk("same_bytes");
  const gs::WritebackStats stats = expect_the_same_file(dir, big_frames(""));
  if (is_tmpfs(dir)) GTEST_SKIP() << "the build directory is on tmpfs: no disk to write back to";
  EXPECT_TRUE(stats.active) << stats.off_because;
  EXPECT_EQ(stats.ranges, 6) << "one range per frame";
  EXPECT_GE(stats.waits, 1) << "2 MiB in flight: earlier frames were waited for";
  // Frames small enough for HDF5's chunk cache reach the file only when it is closed: nothing to
  // start per frame, and the same file.
  expect_the_same_file(on_disk("same_bytes_small"), small_frames(""));
}

TEST(Writeback, TheFileIsTheSameByteForByteOnTmpfsWhereItTurnsItselfOff) {
  if (!is_tmpfs("/dev/shm")) GTEST_SKIP() << "/dev/shm is not a tmpfs here";
  const std::string dir = fresh_under("/dev/shm", "tmpfs");
  const gs::WritebackStats stats = expect_the_same_file(dir, big_frames(""));
  EXPECT_TRUE(stats.requested);
  EXPECT_FALSE(stats.active);
  EXPECT_NE(stats.off_because.find("tmpfs"), std::string::npos) << stats.off_because;
  EXPECT_EQ(stats.ranges, 0);
  fs::remove_all(fs::path(dir).parent_path());
}

// One call of sync_file_range, as the seam saw it.
struct Call {
  std::int64_t offset;
  std::int64_t bytes;
  unsigned int flags;
};

TEST(Writeback, EachFrameIsStartedOnItsOwnChunkThenWaitedForAndTheKernelIsCalled) {
  const std::string dir = on_disk("calls");
  if (is_tmpfs(dir)) GTEST_SKIP() << "the build directory is on tmpfs";
  const gs::Params params = big_frames(dir + "/out.h5", 8);
  std::vector<Call> calls;
  int kernel_errors = 0;
  // 3 MiB: three frames of 1.25 MB in flight for an instant, two once the oldest is waited for.
  gs::FrameWriterOptions options = with_writeback(3 << 20);
  options.sync_range = [&](int descriptor, std::int64_t offset, std::int64_t bytes,
                           unsigned int flags) {
    calls.push_back({offset, bytes, flags});
    const int status = ::sync_file_range(descriptor, offset, bytes, flags);  // the real call
    if (status != 0) ++kernel_errors;
    return status;
  };
  const gs::WritebackStats stats = write_frames(params, options);
  ASSERT_EQ(kernel_errors, 0) << "sync_file_range failed on this file system";
  ASSERT_TRUE(stats.active) << stats.off_because;

  std::vector<Call> starts;
  std::vector<Call> waits;
  for (const Call& call : calls) {
    (call.flags == SYNC_FILE_RANGE_WRITE ? starts : waits).push_back(call);
  }
  ASSERT_EQ(starts.size(), 8u) << "one writeback started per frame";

  // The chunk of each frame, as the finished file says (H5Dget_chunk_info_by_coord: HDF5 1.10.5
  // and later).
#if H5_VERSION_GE(1, 10, 5)
  const hid_t file = H5Fopen(params.output.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hid_t dataset = H5Dopen2(file, gs::kDatasetName, H5P_DEFAULT);
  ASSERT_GE(dataset, 0);
  const std::int64_t frame_bytes = params.cells() * 4;
  for (int f = 0; f < params.frames; ++f) {
    const hsize_t coordinates[3] = {static_cast<hsize_t>(f), 0, 0};
    unsigned filter_mask = 0;
    haddr_t address = 0;
    hsize_t size = 0;
    ASSERT_GE(H5Dget_chunk_info_by_coord(dataset, coordinates, &filter_mask, &address, &size), 0);
    ASSERT_EQ(static_cast<std::int64_t>(size), frame_bytes);
    const Call& start = starts[static_cast<std::size_t>(f)];
    const auto chunk_begin = static_cast<std::int64_t>(address);
    // Whole pages: from the page that holds the chunk's first byte to the last page the chunk
    // fills; its partial last page, which the next chunk shares, goes with the next range.
    const std::int64_t page = ::sysconf(_SC_PAGESIZE);
    EXPECT_EQ(start.offset % page, 0) << "frame " << f << ": the range starts inside a page";
    EXPECT_EQ((start.offset + start.bytes) % page, 0)
        << "frame " << f << ": the range ends inside a page, which the next write shares";
    EXPECT_LE(start.offset, chunk_begin) << "frame " << f << ": its chunk starts before the range";
    EXPECT_GE(start.offset + start.bytes, (chunk_begin + frame_bytes) / page * page)
        << "frame " << f << ": its chunk's whole pages end after the range";
    EXPECT_LE(start.bytes, frame_bytes + 64 * 1024)
        << "frame " << f << ": the range is much more than the frame";
  }
  H5Dclose(dataset);
  H5Fclose(file);
#endif

  // Waits: each on a range started earlier, oldest first, with the three flags; never more than
  // three frames in flight, and the newest frame never waited for at once.
  const unsigned int wait_flags =
      SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER;
  ASSERT_GE(waits.size(), 5u);
  EXPECT_EQ(static_cast<std::int64_t>(waits.size()), stats.waits);
  for (std::size_t i = 0; i < waits.size(); ++i) {
    EXPECT_EQ(waits[i].flags, wait_flags);
    EXPECT_EQ(waits[i].offset, starts[i].offset) << "wait " << i << " is not the oldest range";
    EXPECT_EQ(waits[i].bytes, starts[i].bytes);
  }
  std::size_t started = 0;
  std::size_t waited = 0;
  for (const Call& call : calls) {
    if (call.flags == SYNC_FILE_RANGE_WRITE) {
      ++started;
    } else {
      ++waited;
      EXPECT_LT(waited, started) << "a frame was waited for as soon as it was started";
    }
    EXPECT_LE(started - waited, 3u) << "more frames in flight than 3 MiB allow";
  }
}

TEST(Writeback, AFileSystemThatCannotDoItTurnsItOffAndSaysWhy) {
  const std::string dir = on_disk("unsupported");
  const gs::Params params = big_frames(dir + "/out.h5", 3);
  int calls = 0;
  gs::FrameWriterOptions options = with_writeback(1 << 20);
  options.sync_range = [&calls](int, std::int64_t, std::int64_t, unsigned int) {
    ++calls;
    errno = EINVAL;
    return -1;
  };
  const gs::WritebackStats stats = write_frames(params, options);
  if (is_tmpfs(dir)) GTEST_SKIP() << "on tmpfs it is off before the first call";
  EXPECT_EQ(calls, 1) << "tried once, then off";
  EXPECT_FALSE(stats.active);
  EXPECT_NE(stats.off_because.find("Invalid argument"), std::string::npos) << stats.off_because;
  gs::FrameReader reader(params.output);  // complete all the same
  EXPECT_EQ(reader.read_frame(2), frame_values(params, 2));
}

TEST(Writeback, ADiskErrorFailsTheWriteAndKeepsThePreviousFile) {
  const std::string dir = on_disk("disk_error");
  if (is_tmpfs(dir)) GTEST_SKIP() << "the build directory is on tmpfs: no writeback there";
  const gs::Params params = big_frames(dir + "/out.h5", 4);
  write_frames(params, with_writeback(0));
  const std::string previous = read_all(params.output);
  gs::FrameWriterOptions options = with_writeback(1 << 20);
  options.sync_range = [](int descriptor, std::int64_t offset, std::int64_t bytes,
                          unsigned int flags) {
    if (flags != SYNC_FILE_RANGE_WRITE) {  // the wait for an earlier frame meets a bad sector
      errno = EIO;
      return -1;
    }
    return ::sync_file_range(descriptor, offset, bytes, flags);
  };
  std::string message;
  try {
    write_frames(params, options);
  } catch (const gs::OutputError& error) {
    message = error.what();
  }
  EXPECT_NE(message.find("Input/output error"), std::string::npos) << message;
  EXPECT_NE(message.find("is the disk failing?"), std::string::npos) << message;
  EXPECT_NE(message.find("-o '" + params.output + "'"), std::string::npos) << message;
  EXPECT_EQ(read_all(params.output), previous) << "the previous file was lost";
  for (const auto& entry : fs::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().filename().string().find(".partial-"), std::string::npos)
        << "temporary left: " << entry.path();
  }
}

// Whether this file system lets go of a file's clean pages when told (POSIX_FADV_DONTNEED): the
// condition for the page-cache test below, checked on a probe file first.
bool drops_clean_pages(const std::string& dir) {
  const std::string probe = dir + "/probe";
  { std::ofstream(probe, std::ios::binary) << std::string(1 << 20, 'p'); }
  const int descriptor = ::open(probe.c_str(), O_RDONLY | O_CLOEXEC);
  if (descriptor < 0) return false;
  ::fdatasync(descriptor);
  ::posix_fadvise(descriptor, 0, 0, POSIX_FADV_DONTNEED);
  ::close(descriptor);
  const bool dropped = gs::resident_pages(probe).resident == 0;
  fs::remove(probe);
  return dropped;
}

TEST(Writeback, TheOutputLeavesThePageCacheAsTheRunFoundIt) {
  const std::string dir = on_disk("page_cache");
  if (is_tmpfs(dir)) GTEST_SKIP() << "the build directory is on tmpfs";
  if (!drops_clean_pages(dir)) {
    GTEST_SKIP() << "this file system keeps clean pages after POSIX_FADV_DONTNEED";
  }
  const gs::Params params = big_frames(dir + "/out.h5", 10);
  double share_before_commit = 1.0;
  const gs::WritebackStats stats =
      write_frames(params, with_writeback(2 << 20), [&](const gs::FrameWriter& writer) {
        share_before_commit = gs::resident_pages(writer.temporary_path()).share();
      });
  ASSERT_TRUE(stats.active) << stats.off_because;
  // With 2 MiB in flight only the newest frame (1.25 MB of 12.5) waits in memory.
  EXPECT_LT(share_before_commit, 0.3) << "the frames written back stayed in the page cache";
  EXPECT_EQ(gs::resident_pages(params.output).resident, 0)
      << "after the fsync the file's pages should have been dropped";
  // Without it, the whole file stays in memory: the contrast shows it is the writeback's doing.
  write_frames(params, with_writeback(0));
  EXPECT_GT(gs::resident_pages(params.output).share(), 0.9);
}

TEST(Residency, CountsThePagesOfAFileInMemoryAndRefusesWhatIsNotAFile) {
  const std::string dir = on_disk("residency");
  const std::string empty = dir + "/empty";
  std::ofstream(empty).close();
  EXPECT_EQ(gs::resident_pages(empty).pages, 0);
  EXPECT_EQ(gs::resident_pages(empty).share(), 0.0);
  const std::string written = dir + "/written";
  { std::ofstream(written, std::ios::binary) << std::string(3 * 4096 + 1, 'w'); }
  const gs::Residency residency = gs::resident_pages(written);  // just written: in memory
  EXPECT_EQ(residency.pages, 4);
  EXPECT_EQ(residency.resident, 4);
  EXPECT_DOUBLE_EQ(residency.share(), 1.0);
  EXPECT_THROW(gs::resident_pages(dir + "/missing"), gs::OutputError);
  EXPECT_THROW(gs::resident_pages(dir), gs::OutputError);
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_THROW(gs::resident_pages(fifo), gs::OutputError) << "a FIFO is refused, not waited on";
}

}  // namespace
