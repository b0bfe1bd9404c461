// HDF5 output: round trip, the course layout, attributes, and the guarantee that no file
// appears at the final name unless every frame was written and the file closed cleanly.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <filesystem>
#include <string>

#include "gs/hdf5_io.hpp"
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

}  // namespace
