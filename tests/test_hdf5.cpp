// HDF5 output: round trip, the course layout, attributes, and the guarantees of the writer:
// no file appears at the final name unless every frame was written, the file closed and flushed;
// the temporary file is its own (two writers never share one); only a regular file is replaced,
// a symbolic link is written through with the mode kept; names fit NAME_MAX; the room allowed
// for HDF5's metadata covers what HDF5 writes; temporaries of dead processes are reported.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>

#include "gs/hdf5_io.hpp"
#include "gs/interrupt.hpp"
#include "gs/state.hpp"

namespace {
namespace fs = std::filesystem;

std::string temp_path(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / "gs_hdf5_tests";
  fs::create_directories(dir);
  const fs::path path = dir / name;
  fs::remove(path);
  return path.string();
}

gs::Params small_params(const std::string& path) {
  gs::Params params;
  params.rows = 5;
  params.cols = 7;
  params.frames = 3;
  params.steps_per_frame = 4;
  params.rates.kill = 0.06f;
  params.output = path;
  return params;
}

std::vector<float> frame_values(const gs::Params& params, int frame) {
  std::vector<float> v(static_cast<std::size_t>(params.cells()));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = frame * 100.0f + static_cast<float>(i) * 0.5f;
  return v;
}

void write_all(const gs::Params& params) {
  gs::FrameWriter writer(params.output, params, "unit-test");
  for (int f = 0; f < params.frames; ++f) writer.write_frame(f, frame_values(params, f).data());
  writer.commit();
  EXPECT_EQ(writer.bytes_written(), params.output_bytes());
}

TEST(Hdf5, RoundTripKeepsFramesAndAttributes) {
  const gs::Params params = small_params(temp_path("roundtrip.h5"));
  write_all(params);
  gs::FrameReader reader(params.output);
  EXPECT_EQ(reader.info().frames, 3);
  EXPECT_EQ(reader.info().rows, 5);
  EXPECT_EQ(reader.info().cols, 7);
  EXPECT_EQ(reader.info().implementation, "unit-test");
  EXPECT_EQ(reader.info().params.steps_per_frame, 4);
  EXPECT_FLOAT_EQ(reader.info().params.rates.kill, 0.06f);
  EXPECT_FLOAT_EQ(reader.info().params.rates.diffusion_v, 0.05f);
  for (int f = 0; f < 3; ++f) EXPECT_EQ(reader.read_frame(f), frame_values(params, f));
  EXPECT_THROW(reader.read_frame(3), gs::OutputError);
}

// Lesson 08's ranks write their own rows of each frame into the writer's file themselves: every
// chunk allocated at creation, each frame's place known, the rows written by pwrite through a
// descriptor of another open (as another process would), out of order, in two halves; the file
// read back is the course's file, frame for frame.
TEST(Hdf5, FramesWrittenElsewhereAtTheirOffsetsReadBack) {
  const gs::Params params = small_params(temp_path("elsewhere.h5"));
  {
    gs::FrameWriter writer(params.output, params, "unit-test", gs::FrameWriterOptions(),
                           gs::FrameLayout::chunks_allocated);
    EXPECT_THROW(writer.frame_offset(params.frames), gs::OutputError);
    EXPECT_THROW(writer.commit(), gs::OutputError);  // no frame written yet
    const int descriptor = ::open(writer.temporary_path().c_str(), O_WRONLY | O_NOFOLLOW);
    ASSERT_GE(descriptor, 0);
    const std::size_t row_bytes = static_cast<std::size_t>(params.cols) * sizeof(float);
    for (int f = params.frames - 1; f >= 0; --f) {
      const std::vector<float> v = frame_values(params, f);
      const int half = params.rows / 2;
      for (const auto& [first, count] : {std::pair{half, params.rows - half}, std::pair{0, half}}) {
        const auto written = ::pwrite(descriptor, v.data() + first * params.cols, count * row_bytes,
                                      writer.frame_offset(f) + first * row_bytes);
        ASSERT_EQ(written, static_cast<ssize_t>(count * row_bytes));
      }
    }
    ::close(descriptor);
    writer.mark_written_elsewhere();
    writer.commit();
  }
  gs::FrameReader reader(params.output);
  for (int f = 0; f < params.frames; ++f) EXPECT_EQ(reader.read_frame(f), frame_values(params, f));
  gs::FrameWriter chunked(temp_path("chunked.h5"), params, "unit-test");
  EXPECT_THROW(chunked.frame_offset(0), gs::OutputError);
  EXPECT_THROW(chunked.mark_written_elsewhere(), gs::OutputError);
}

TEST(Hdf5, LayoutIsTheCourseLayout) {
  const gs::Params params = small_params(temp_path("layout.h5"));
  write_all(params);
  const hid_t file = H5Fopen(params.output.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hid_t dataset = H5Dopen2(file, "matrix", H5P_DEFAULT);
  ASSERT_GE(dataset, 0);
  const hid_t space = H5Dget_space(dataset);
  hsize_t dims[3] = {};
  ASSERT_EQ(H5Sget_simple_extent_ndims(space), 3);
  H5Sget_simple_extent_dims(space, dims, nullptr);
  EXPECT_EQ(dims[0], 3u);
  EXPECT_EQ(dims[1], 5u);
  EXPECT_EQ(dims[2], 7u);
  const hid_t type = H5Dget_type(dataset);
  EXPECT_GT(H5Tequal(type, H5T_IEEE_F32LE), 0) << "dtype must be little-endian float32";
  const hid_t create = H5Dget_create_plist(dataset);
  ASSERT_EQ(H5Pget_layout(create), H5D_CHUNKED);
  hsize_t chunk[3] = {};
  ASSERT_EQ(H5Pget_chunk(create, 3, chunk), 3);
  EXPECT_EQ(chunk[0], 1u);
  EXPECT_EQ(chunk[1], 5u);
  EXPECT_EQ(chunk[2], 7u);
  EXPECT_EQ(H5Pget_nfilters(create), 0) << "no compression";
  for (const char* name : {"nbrow", "nbcol", "nbimage", "nbextrastep", "killrate", "feedrate",
                           "deltat", "diffusion_u", "diffusion_v", "implementation"}) {
    EXPECT_GT(H5Aexists(dataset, name), 0) << "attribute " << name;
  }
  H5Pclose(create);
  H5Tclose(type);
  H5Sclose(space);
  H5Dclose(dataset);
  H5Fclose(file);
}

TEST(Hdf5, AbandonedWriterLeavesNoFile) {
  const gs::Params params = small_params(temp_path("abandoned.h5"));
  std::string temporary;
  {
    gs::FrameWriter writer(params.output, params, "unit-test");
    temporary = writer.temporary_path();
    writer.write_frame(0, frame_values(params, 0).data());
    EXPECT_TRUE(fs::exists(temporary));
    EXPECT_FALSE(fs::exists(params.output)) << "the final name appears only on commit";
  }
  EXPECT_FALSE(fs::exists(params.output));
  EXPECT_FALSE(fs::exists(temporary)) << "the partial file is deleted";
}

TEST(Hdf5, CommitRefusesMissingFrames) {
  const gs::Params params = small_params(temp_path("incomplete.h5"));
  gs::FrameWriter writer(params.output, params, "unit-test");
  writer.write_frame(0, frame_values(params, 0).data());
  writer.write_frame(1, frame_values(params, 1).data());
  EXPECT_THROW(writer.commit(), gs::OutputError);
  EXPECT_FALSE(fs::exists(params.output));
  EXPECT_THROW(writer.write_frame(3, frame_values(params, 0).data()), gs::OutputError);
}

TEST(Hdf5, CommitReplacesAnOldFileOnlyAtTheEnd) {
  const gs::Params params = small_params(temp_path("replace.h5"));
  write_all(params);
  {
    gs::FrameWriter writer(params.output, params, "second-run");
    writer.write_frame(0, frame_values(params, 2).data());
  }  // abandoned: the first run's complete file must still be there
  gs::FrameReader reader(params.output);
  EXPECT_EQ(reader.info().implementation, "unit-test");
}

TEST(Hdf5, CheckOutputPathExplainsEachProblem) {
  const auto message_of = [](const std::string& path, std::int64_t bytes) {
    try {
      gs::check_output_path(path, bytes);
    } catch (const gs::OutputError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  const std::string dir = fs::path(temp_path("x")).parent_path().string();
  EXPECT_NE(message_of(dir, 10).find("is a directory"), std::string::npos);
  EXPECT_NE(message_of(dir + "/missing/out.h5", 10).find("does not exist"), std::string::npos);
  EXPECT_NE(message_of(dir + "/big.h5", std::int64_t{1} << 62).find("not enough space"),
            std::string::npos);
  EXPECT_EQ(message_of(dir + "/fine.h5", 10), "no error");
}

TEST(Hdf5, ReaderRejectsFilesThatAreNotOutputs) {
  const std::string path = temp_path("not_hdf5.h5");
  {
    std::FILE* file = std::fopen(path.c_str(), "w");
    std::fputs("not an HDF5 file", file);
    std::fclose(file);
  }
  EXPECT_THROW(gs::FrameReader reader(path), gs::OutputError);
  EXPECT_THROW(gs::FrameReader reader(path + ".missing"), gs::OutputError);
}

// A fresh, empty directory of its own for one test.
std::string temp_dir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / "gs_hdf5_tests" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::string message_of_writer(const gs::Params& params) {
  try {
    gs::FrameWriter writer(params.output, params, "unit-test");
  } catch (const gs::OutputError& error) {
    return error.what();
  }
  return "no error";
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  return names;
}

TEST(Hdf5Writer, TwoWritersForcedOntoOneTemporaryNameNeverShareIt) {
  // Two runs with the same PID (two containers, two hosts) once truncated each other's file.
  // Forced onto the same unique part, the second writer must fail and leave the first's intact.
  const gs::Params params = small_params(temp_dir("same_name") + "/out.h5");
  gs::FrameWriterOptions same;
  same.unique_part = [] { return std::string("00000000"); };
  gs::FrameWriter first(params.output, params, "first", same);
  first.write_frame(0, frame_values(params, 0).data());
  try {
    gs::FrameWriter second(params.output, params, "second", same);
    ADD_FAILURE() << "the second writer opened " << second.temporary_path();
  } catch (const gs::OutputError& error) {
    EXPECT_NE(std::string(error.what()).find("already exists"), std::string::npos) << error.what();
  }
  ASSERT_TRUE(fs::exists(first.temporary_path())) << "the failed writer deleted the first's file";
  for (int f = 1; f < params.frames; ++f) first.write_frame(f, frame_values(params, f).data());
  first.commit();
  gs::FrameReader reader(params.output);
  EXPECT_EQ(reader.info().implementation, "first");
  for (int f = 0; f < params.frames; ++f) {
    EXPECT_EQ(reader.read_frame(f), frame_values(params, f)) << "frame " << f;
  }
}

TEST(Hdf5Writer, TemporaryNamesAreUniqueAndNameTheHostAndProcess) {
  const gs::Params params = small_params(temp_dir("unique") + "/out.h5");
  gs::FrameWriter first(params.output, params, "first");
  gs::FrameWriter second(params.output, params, "second");
  EXPECT_NE(first.temporary_path(), second.temporary_path());
  const std::string name = fs::path(first.temporary_path()).filename().string();
  EXPECT_EQ(name.rfind("out.h5.partial-", 0), 0u) << name;
  EXPECT_NE(name.find("-" + std::to_string(::getpid()) + "-"), std::string::npos) << name;
}

// A Unix socket bound at @p path (a socket file), or -1 when the path is too long for one
// (108 bytes) and the test leaves this case out.
int bound_socket(const std::string& path) {
  sockaddr_un address{};
  if (path.size() >= sizeof address.sun_path) {
    std::cout << "[   NOTE   ] socket case left out: " << path << " is too long for a socket\n";
    return -1;
  }
  address.sun_family = AF_UNIX;
  std::strcpy(address.sun_path, path.c_str());
  const int descriptor = ::socket(AF_UNIX, SOCK_STREAM, 0);
  EXPECT_GE(descriptor, 0);
  EXPECT_EQ(::bind(descriptor, reinterpret_cast<sockaddr*>(&address), sizeof address), 0)
      << std::strerror(errno);
  return descriptor;
}

TEST(Hdf5Writer, OnlyARegularFileIsEverReplaced) {
  const std::string dir = temp_dir("not_regular");
  struct Case {
    std::string path;
    const char* kind;
  };
  std::vector<Case> cases;
  const std::string fifo = dir + "/fifo.h5";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0) << std::strerror(errno);
  cases.push_back({fifo, "a FIFO"});
  const std::string socket_path = dir + "/socket.h5";
  const int socket_descriptor = bound_socket(socket_path);
  if (socket_descriptor >= 0) cases.push_back({socket_path, "a socket"});
  const std::string directory = dir + "/directory.h5";
  fs::create_directories(directory);
  cases.push_back({directory, "is a directory"});
  // A device node made here (a copy of /dev/null's numbers), never the real /dev: needs root and
  // CAP_MKNOD, which containers often have; without them this case is left out.
  const std::string device = dir + "/device.h5";
  const bool have_device = ::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0;
  if (have_device) cases.push_back({device, "a character device"});
  // A symbolic link to the FIFO is refused the same way, naming both.
  const std::string link_to_fifo = dir + "/link_to_fifo.h5";
  fs::create_symlink("fifo.h5", link_to_fifo);
  cases.push_back({link_to_fifo, "a FIFO"});

  for (const Case& c : cases) {
    gs::Params params = small_params(c.path);
    const std::string message = message_of_writer(params);
    EXPECT_NE(message.find(c.kind), std::string::npos) << c.path << ": " << message;
    EXPECT_NE(message.find(c.path), std::string::npos) << "names the path: " << message;
    EXPECT_THROW(gs::check_output_path(c.path, 100), gs::OutputError) << c.path;
  }
  struct stat status {};
  ASSERT_EQ(::stat(fifo.c_str(), &status), 0);
  EXPECT_TRUE(S_ISFIFO(status.st_mode)) << "the FIFO was replaced";
  if (socket_descriptor >= 0) {
    ASSERT_EQ(::lstat(socket_path.c_str(), &status), 0);
    EXPECT_TRUE(S_ISSOCK(status.st_mode)) << "the socket was replaced";
    ::close(socket_descriptor);
  }
  if (have_device) {
    ASSERT_EQ(::stat(device.c_str(), &status), 0);
    EXPECT_TRUE(S_ISCHR(status.st_mode)) << "the device node was replaced";
  }
  EXPECT_TRUE(fs::is_symlink(link_to_fifo));
  for (const std::string& name : names_in(dir)) {
    EXPECT_EQ(name.find(".partial-"), std::string::npos) << "temporary left: " << name;
  }
  if (!have_device) {
    std::cout << "[   NOTE   ] device-node case left out: mknod needs root and CAP_MKNOD\n";
  }
}

mode_t mode_of(const std::string& path) {
  struct stat status {};
  EXPECT_EQ(::stat(path.c_str(), &status), 0) << path;
  return status.st_mode & 07777;
}

TEST(Hdf5Writer, ASymbolicLinkIsWrittenThroughAndTheModeKept) {
  const std::string dir = temp_dir("symlink");
  fs::create_directories(dir + "/data");
  gs::Params params = small_params(dir + "/data/real.h5");
  write_all(params);  // an old run's file, then made private
  ASSERT_EQ(::chmod(params.output.c_str(), 0600), 0);
  const std::string link = dir + "/link.h5";
  fs::create_symlink("data/real.h5", link);  // relative, into another directory
  gs::Params through_link = params;
  through_link.output = link;
  through_link.rates.kill = 0.061f;
  {
    gs::FrameWriter writer(link, through_link, "through-the-link");
    EXPECT_EQ(fs::path(writer.temporary_path()).parent_path(), fs::path(dir) / "data")
        << "the temporary is made beside the file the link points to";
    EXPECT_EQ(mode_of(writer.temporary_path()), 0600u) << "never more readable than the target";
    for (int f = 0; f < params.frames; ++f) writer.write_frame(f, frame_values(params, f).data());
    writer.commit();
  }
  EXPECT_TRUE(fs::is_symlink(link)) << "the link itself stays a link";
  EXPECT_EQ(fs::read_symlink(link), fs::path("data/real.h5"));
  EXPECT_EQ(mode_of(params.output), 0600u) << "the file keeps its permission bits";
  gs::FrameReader reader(params.output);
  EXPECT_EQ(reader.info().implementation, "through-the-link") << "the target was written";
  EXPECT_FLOAT_EQ(reader.info().params.rates.kill, 0.061f);

  // A read-only file (0444) is replaced by a read-only file.
  ASSERT_EQ(::chmod(params.output.c_str(), 0444), 0);
  write_all(through_link);
  EXPECT_EQ(mode_of(params.output), 0444u);
  ASSERT_EQ(::chmod(params.output.c_str(), 0600), 0);

  // A chain of links is followed to its end; a dangling link creates its target.
  const std::string chain = dir + "/chain.h5";
  fs::create_symlink("link.h5", chain);
  through_link.output = chain;
  write_all(through_link);
  EXPECT_TRUE(fs::is_symlink(chain));
  EXPECT_EQ(mode_of(params.output), 0600u);
  const std::string dangling = dir + "/dangling.h5";
  fs::create_symlink("data/new.h5", dangling);
  through_link.output = dangling;
  write_all(through_link);
  EXPECT_TRUE(fs::is_symlink(dangling));
  EXPECT_TRUE(fs::is_regular_file(dir + "/data/new.h5"));

  // A loop of links is refused with a message.
  const std::string loop = dir + "/loop.h5";
  fs::create_symlink("loop.h5", loop);
  through_link.output = loop;
  EXPECT_NE(message_of_writer(through_link).find("symbolic links"), std::string::npos);
  for (const std::string& where : {dir, dir + "/data"}) {
    for (const std::string& name : names_in(where)) {
      EXPECT_EQ(name.find(".partial-"), std::string::npos) << "temporary left: " << name;
    }
  }
}

TEST(Hdf5Writer, CommitFlushesTheFileBeforeTheRenameAndTheDirectoryAfter) {
  const gs::Params params = small_params(temp_dir("fsync") + "/out.h5");
  std::vector<std::string> steps;
  gs::FrameWriterOptions options;
  options.on_commit_step = [&steps](const std::string& step) { steps.push_back(step); };
  {
    gs::FrameWriter writer(params.output, params, "flushed", options);
    for (int f = 0; f < params.frames; ++f) writer.write_frame(f, frame_values(params, f).data());
    writer.commit(true);
    EXPECT_GT(writer.flush_seconds(), 0.0) << "the flush is timed";
    EXPECT_GT(writer.rename_seconds(), 0.0) << "the rename is timed";
  }
  EXPECT_EQ(steps, (std::vector<std::string>{"fsync file", "rename", "fsync directory"}));
  steps.clear();
  {
    gs::FrameWriter writer(params.output, params, "not-flushed", options);
    for (int f = 0; f < params.frames; ++f) writer.write_frame(f, frame_values(params, f).data());
    writer.commit(false);
    EXPECT_EQ(writer.flush_seconds(), 0.0);
  }
  EXPECT_EQ(steps, std::vector<std::string>{"rename"}) << "--no-fsync flushes nothing";
  gs::FrameReader reader(params.output);
  EXPECT_EQ(reader.info().implementation, "not-flushed");
}

bool deleted_by_a_second_signal(const std::string& path) {
  const std::vector<std::string> partials = gs::partial_outputs();
  return std::find(partials.begin(), partials.end(), fs::absolute(path).string()) != partials.end();
}

TEST(Hdf5Writer, TheTemporaryIsWhatASecondSignalDeletes) {
  const gs::Params params = small_params(temp_dir("partial") + "/out.h5");
  std::string temporary;
  {
    gs::FrameWriter writer(params.output, params, "unit-test");
    temporary = writer.temporary_path();
    EXPECT_TRUE(deleted_by_a_second_signal(temporary));
    for (int f = 0; f < params.frames; ++f) writer.write_frame(f, frame_values(params, f).data());
    writer.commit(false);
    EXPECT_FALSE(deleted_by_a_second_signal(temporary)) << "forgotten once renamed";
  }
  {
    gs::FrameWriter writer(params.output, params, "unit-test");
    temporary = writer.temporary_path();
    EXPECT_TRUE(deleted_by_a_second_signal(temporary));
  }
  EXPECT_FALSE(deleted_by_a_second_signal(temporary)) << "forgotten once deleted";
  EXPECT_TRUE(gs::partial_outputs().empty());
}

TEST(Hdf5Writer, FramesWrittenTwiceCountOnce) {
  const gs::Params params = small_params(temp_dir("twice") + "/out.h5");
  gs::FrameWriter writer(params.output, params, "unit-test");
  writer.write_frame(0, frame_values(params, 0).data());
  writer.write_frame(0, frame_values(params, 0).data());
  writer.write_frame(2, frame_values(params, 2).data());
  EXPECT_THROW(writer.commit(), gs::OutputError) << "frame 1 was never written";
  EXPECT_FALSE(fs::exists(params.output));
}

TEST(Hdf5Writer, NamesUpToNameMaxWorkAndLongerOnesAreRefused) {
  const std::string dir = temp_dir("long_names");
  // 255 bytes: the longest valid name; its temporary name must still fit.
  gs::Params params = small_params(dir + "/" + std::string(252, 'a') + ".h5");
  {
    gs::FrameWriter writer(params.output, params, "unit-test");
    EXPECT_LE(fs::path(writer.temporary_path()).filename().string().size(), 255u);
    for (int f = 0; f < params.frames; ++f) writer.write_frame(f, frame_values(params, f).data());
    writer.commit(false);
  }
  EXPECT_TRUE(fs::exists(params.output));
  // Multi-byte characters (é is 2 bytes in UTF-8) are never cut in half.
  std::string accents;
  for (int i = 0; i < 126; ++i) accents += "\xC3\xA9";
  params.output = dir + "/" + accents + ".h5";  // 255 bytes
  {
    gs::FrameWriter writer(params.output, params, "unit-test");
    const std::string name = fs::path(writer.temporary_path()).filename().string();
    EXPECT_LE(name.size(), 255u);
    const std::size_t base = name.find(".partial-");
    ASSERT_NE(base, std::string::npos);
    EXPECT_EQ(base % 2, 0u) << "a character was cut: " << base << " bytes kept";
  }
  params.output = dir + "/" + std::string(253, 'b') + ".h5";  // 256 bytes
  const std::string message = message_of_writer(params);
  EXPECT_NE(message.find("255"), std::string::npos) << message;
  EXPECT_NE(message.find("NAME_MAX"), std::string::npos) << message;
  for (const std::string& name : names_in(dir)) {
    EXPECT_EQ(name.find(".partial-"), std::string::npos) << "temporary left: " << name;
  }
}

TEST(Hdf5Writer, MetadataAllowanceCoversWhatHdf5WritesAndScalesWithTheRun) {
  // 1 x 1 frames: the case where HDF5's own bytes outweigh the data the most.
  const std::string dir = temp_dir("metadata");
  for (const int frames : {1, 64, 65, 1000, 3000}) {
    gs::Params params;
    params.rows = 1;
    params.cols = 1;
    params.frames = frames;
    params.output = dir + "/f" + std::to_string(frames) + ".h5";
    {
      gs::FrameWriter writer(params.output, params, "an-implementation-with-a-long-name");
      const float value = 0.5f;
      for (int f = 0; f < frames; ++f) writer.write_frame(f, &value);
      writer.commit(false);
    }
    const auto size = static_cast<std::int64_t>(fs::file_size(params.output));
    EXPECT_LE(size, gs::output_file_bytes(params)) << frames << " frames";
    EXPECT_LE(gs::output_file_bytes(params), 3 * size + 16 * 1024)
        << frames << " frames: the allowance should not be far above what HDF5 writes";
  }
  EXPECT_LT(gs::hdf5_metadata_allowance(1), 64 * 1024) << "no fixed megabyte for a 1 x 1 run";
  gs::Params huge;
  huge.rows = 46340;
  huge.cols = 46340;
  huge.frames = 2147483647;
  EXPECT_EQ(gs::output_file_bytes(huge), std::numeric_limits<std::int64_t>::max()) << "saturates";
}

TEST(Hdf5Writer, AFrameOverTheChunkLimitIsRefusedBeforeAnyFile) {
  const std::string dir = temp_dir("chunk_limit");
  gs::Params params = small_params(dir + "/big.h5");
  params.rows = 32768;
  params.cols = 32768;  // 2^30 cells = 4 GiB: one more byte than a chunk may hold
  params.frames = 1;
  const std::string message = message_of_writer(params);
  EXPECT_NE(message.find("4 GiB"), std::string::npos) << message;
  EXPECT_NE(message.find("1073741823 cells"), std::string::npos) << message;
  EXPECT_TRUE(names_in(dir).empty());
  params.cols = 32767;  // 4 GiB - 128 KiB: within the limit, refused only for want of room (if so)
  EXPECT_EQ(message_of_writer(params).find("chunk"), std::string::npos);
}

TEST(Hdf5Writer, TemporariesOfDeadProcessesAreReportedNeverDeleted) {
  const std::string dir = temp_dir("stale");
  const gs::Params params = small_params(dir + "/out.h5");
  // A process that has exited (and was reaped): its PID is not alive.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  // The writer's own name tells this host's spelling.
  std::string host_and_pid;
  {
    gs::FrameWriter probe(params.output, params, "probe");
    const std::string name = fs::path(probe.temporary_path()).filename().string();
    const std::string rest = name.substr(std::string("out.h5.partial-").size());
    host_and_pid = rest.substr(0, rest.rfind('-'));
  }
  const std::string host = host_and_pid.substr(0, host_and_pid.rfind('-'));
  const auto touch = [&dir](const std::string& name) {
    std::ofstream(dir + "/" + name) << "partial";
    return dir + "/" + name;
  };
  const std::string dead = touch("out.h5.partial-" + host + "-" + std::to_string(child) + "-abc");
  touch("out.h5.partial-" + host + "-" + std::to_string(::getpid()) + "-def");  // alive
  touch("out.h5.partial-another-host-" + std::to_string(child) + "-abc");       // other host
  touch("other.h5.partial-" + host + "-" + std::to_string(child) + "-abc");     // other output
  const std::vector<gs::StalePartial> stale = gs::find_stale_partials(params.output);
  ASSERT_EQ(stale.size(), 1u);
  EXPECT_EQ(stale[0].path, dead);
  EXPECT_EQ(stale[0].pid, child);
  EXPECT_EQ(stale[0].bytes, 7);

  std::ostringstream warnings;
  gs::FrameWriterOptions options;
  options.warnings = &warnings;
  { gs::FrameWriter writer(params.output, params, "unit-test", options); }
  EXPECT_NE(warnings.str().find(dead), std::string::npos) << warnings.str();
  EXPECT_NE(warnings.str().find("rm -- '" + dead + "'"), std::string::npos) << warnings.str();
  EXPECT_TRUE(fs::exists(dead)) << "never deleted by the program";
}

TEST(Hdf5Writer, AReadOnlyDirectoryIsRefused) {
  // Root may write into a read-only directory, and CI often runs as root: then the check runs
  // in a child process that gave up root for the user nobody (65534).
  const fs::path dir = fs::path(temp_dir("read_only"));
  fs::permissions(dir.parent_path(), fs::perms::others_exec, fs::perm_options::add);
  fs::permissions(fs::path(::testing::TempDir()) / "gs_hdf5_tests", fs::perms::others_exec,
                  fs::perm_options::add);
  ASSERT_EQ(::chmod(dir.c_str(), 0555), 0);
  int pipe_ends[2];
  ASSERT_EQ(::pipe(pipe_ends), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(pipe_ends[0]);
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(3);
    const std::string message = message_of_writer(small_params((dir / "out.h5").string()));
    const ssize_t written = ::write(pipe_ends[1], message.data(), message.size());
    ::_exit(written == static_cast<ssize_t>(message.size()) ? 0 : 4);
  }
  ::close(pipe_ends[1]);
  std::string message;
  char buffer[512];
  for (ssize_t got; (got = ::read(pipe_ends[0], buffer, sizeof buffer)) > 0;) {
    message.append(buffer, static_cast<std::size_t>(got));
  }
  ::close(pipe_ends[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ::chmod(dir.c_str(), 0755);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 3) {
    GTEST_SKIP() << "running as root and cannot become the user nobody to test this";
  }
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  EXPECT_NE(message.find("not writable"), std::string::npos) << message;
  EXPECT_TRUE(names_in(dir.string()).empty());
}

}  // namespace
