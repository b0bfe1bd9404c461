// The HDF5 reader against files it did not write: each file is built here with the HDF5 C API,
// one thing wrong at a time (an attribute of the wrong type or with more than one value, a
// dimension that does not fit an int, no frames, a rank that is not 3, sizes that disagree), and
// the reader must refuse it with a message that names the problem, never crash or read a
// different size. Files in other writers' styles (h5py: 64-bit numbers, variable-length strings,
// one-element arrays) are read. Then files that are not a simulation at all: values kept in
// another file (external storage, a virtual dataset), a file cut short (with and without its
// superblock patched to match), a frame never written, another layout, a FIFO; and the same for
// the reader of lesson 09's files (DatasetReader). Last, printable(): what a file says is made
// safe for the terminal.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "gs/hdf5_io.hpp"
#include "gs/report.hpp"

namespace {
namespace fs = std::filesystem;

// One attribute as a test writes it: its HDF5 file type, shape (empty: scalar; {0}: a null
// dataspace) and the bytes of its values in that type's memory layout.
struct Attribute {
  std::string name;
  hid_t type;  // a predefined type, or one made by string_type() (closed after writing)
  std::vector<hsize_t> shape;
  std::vector<unsigned char> bytes;
  bool variable_string = false;  // bytes hold the characters of a variable-length string
};

template <typename T>
Attribute number(const std::string& name, hid_t type, T value, std::vector<hsize_t> shape = {}) {
  std::size_t count = 1;
  for (const hsize_t n : shape) count *= n;
  Attribute attribute{name, type, std::move(shape), {}, false};
  for (std::size_t i = 0; i < count; ++i) {
    const auto* raw = reinterpret_cast<const unsigned char*>(&value);
    attribute.bytes.insert(attribute.bytes.end(), raw, raw + sizeof value);
  }
  return attribute;
}

Attribute fixed_string(const std::string& name, const std::string& text) {
  return {name, H5T_C_S1, {}, std::vector<unsigned char>(text.begin(), text.end()), false};
}

Attribute variable_string(const std::string& name, const std::string& text) {
  return {name, H5T_C_S1, {}, std::vector<unsigned char>(text.begin(), text.end()), true};
}

// What gray_scott writes for a [2, 3, 4] dataset.
std::vector<Attribute> good_attributes() {
  return {number("nbrow", H5T_NATIVE_INT, 3),
          number("nbcol", H5T_NATIVE_INT, 4),
          number("nbimage", H5T_NATIVE_INT, 2),
          number("nbextrastep", H5T_NATIVE_INT, 5),
          number("killrate", H5T_NATIVE_FLOAT, 0.054f),
          number("feedrate", H5T_NATIVE_FLOAT, 0.014f),
          number("deltat", H5T_NATIVE_FLOAT, 1.0f),
          number("diffusion_u", H5T_NATIVE_FLOAT, 0.1f),
          number("diffusion_v", H5T_NATIVE_FLOAT, 0.05f),
          fixed_string("implementation", "hand-made")};
}

std::vector<Attribute> with(std::vector<Attribute> attributes, const Attribute& replacement) {
  for (Attribute& attribute : attributes) {
    if (attribute.name == replacement.name) attribute = replacement;
  }
  return attributes;
}

std::vector<Attribute> without(std::vector<Attribute> attributes, const std::string& name) {
  std::vector<Attribute> kept;
  for (Attribute& attribute : attributes) {
    if (attribute.name != name) kept.push_back(attribute);
  }
  return kept;
}

void write_attribute(hid_t dataset, const Attribute& attribute) {
  hid_t space = -1;
  if (attribute.shape.empty()) {
    space = H5Screate(H5S_SCALAR);
  } else if (attribute.shape == std::vector<hsize_t>{0}) {
    space = H5Screate(H5S_NULL);
  } else {
    space =
        H5Screate_simple(static_cast<int>(attribute.shape.size()), attribute.shape.data(), nullptr);
  }
  ASSERT_GE(space, 0);
  hid_t type = H5Tcopy(attribute.type);
  ASSERT_GE(type, 0);
  const void* data = attribute.bytes.data();
  std::string text(attribute.bytes.begin(), attribute.bytes.end());
  const char* text_pointer = text.c_str();
  if (attribute.type == H5T_C_S1) {
    ASSERT_GE(H5Tset_size(type, attribute.variable_string ? H5T_VARIABLE : text.size()), 0);
    if (attribute.variable_string) {
      ASSERT_GE(H5Tset_cset(type, H5T_CSET_UTF8), 0);
      data = &text_pointer;
    }
  }
  const hid_t created =
      H5Acreate2(dataset, attribute.name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(created, 0) << attribute.name;
  if (!(attribute.shape == std::vector<hsize_t>{0})) {
    ASSERT_GE(H5Awrite(created, type, data), 0) << attribute.name;
  }
  H5Aclose(created);
  H5Tclose(type);
  H5Sclose(space);
}

std::string test_path(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / "gs_hdf5_reader_tests";
  fs::create_directories(dir);
  return (dir / name).string();
}

// How a test lays out its dataset: the course's (one chunk per frame, every frame written), or
// its own (@p set_up changes the creation properties; @p frames_written frames are written).
struct Layout {
  std::function<void(hid_t create)> set_up;  // empty: the course's chunks
  hsize_t frames_written = ~hsize_t{0};      // all of them
};

// Writes a file whose dataset `matrix` has shape @p dims and type @p type: in the course's layout
// (chunks of one frame, [1, rows, cols]) and with every frame written (v = 0.25) when the
// dataset is small; a huge shape keeps chunks of one value and no data, so the file stays small
// (those are refused for their shape before any value is read). The attributes come before the
// frames, so the frames are the end of the file (the truncation tests rely on it).
std::string make_file(const std::string& name, const std::vector<hsize_t>& dims,
                      const std::vector<Attribute>& attributes, hid_t type = H5T_IEEE_F32LE,
                      const char* dataset_name = "matrix", const Layout& layout = {}) {
  const std::string path = test_path(name);
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  EXPECT_GE(file, 0);
  const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  EXPECT_GE(space, 0);
  const hid_t create = H5Pcreate(H5P_DATASET_CREATE);
  bool empty = false;
  hsize_t values = 1;
  for (const hsize_t n : dims) {
    empty = empty || n == 0;
    values = values <= (hsize_t{1} << 40) / std::max<hsize_t>(n, 1) ? values * n : hsize_t{1} << 40;
  }
  const bool small = !empty && values <= (hsize_t{1} << 20);
  if (layout.set_up) {
    layout.set_up(create);
  } else if (!empty) {
    std::vector<hsize_t> chunk(dims.size(), 1);
    if (small) std::copy(dims.begin() + 1, dims.end(), chunk.begin() + 1);
    EXPECT_GE(H5Pset_chunk(create, static_cast<int>(chunk.size()), chunk.data()), 0);
  }
  const hid_t dataset =
      H5Dcreate2(file, dataset_name, type, space, H5P_DEFAULT, create, H5P_DEFAULT);
  EXPECT_GE(dataset, 0);
  for (const Attribute& attribute : attributes) write_attribute(dataset, attribute);
  if (small && !dims.empty() && layout.frames_written > 0) {
    std::vector<hsize_t> count = dims;
    count[0] = std::min(dims[0], layout.frames_written);
    const std::vector<hsize_t> start(dims.size(), 0);
    hsize_t written = 1;
    for (const hsize_t n : count) written *= n;
    const std::vector<float> v(written, 0.25f);
    const hid_t memory = H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr);
    EXPECT_GE(
        H5Sselect_hyperslab(space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
        0);
    EXPECT_GE(H5Dwrite(dataset, H5T_NATIVE_FLOAT, memory, space, H5P_DEFAULT, v.data()), 0);
    H5Sclose(memory);
  }
  H5Dclose(dataset);
  H5Pclose(create);
  H5Sclose(space);
  H5Fclose(file);
  return path;
}

// The reader's message for @p path, or "read" when it accepted the file.
std::string refusal(const std::string& path) {
  try {
    gs::FrameReader reader(path);
    const std::vector<float> frame = reader.read_frame(0);
    return "read: " + std::to_string(reader.info().rows) + " x " +
           std::to_string(reader.info().cols) + ", frame of " + std::to_string(frame.size());
  } catch (const gs::OutputError& error) {
    return error.what();
  }
}

struct Malformed {
  const char* name;
  std::vector<hsize_t> dims;
  std::vector<Attribute> attributes;
  const char* message;  // a part of the refusal
};

class ReaderRefuses : public ::testing::TestWithParam<Malformed> {};

TEST_P(ReaderRefuses, WithAMessage) {
  const Malformed& c = GetParam();
  const std::string path = make_file(std::string(c.name) + ".h5", c.dims, c.attributes);
  const std::string message = refusal(path);
  EXPECT_NE(message.find(c.message), std::string::npos) << message;
  EXPECT_NE(message.find(path), std::string::npos) << "names the file: " << message;
}

const hsize_t k2To32 = hsize_t{1} << 32;

INSTANTIATE_TEST_SUITE_P(
    MalformedFiles, ReaderRefuses,
    ::testing::Values(
        // Attributes: each must have its type and exactly one value.
        Malformed{"array_of_100_doubles",
                  {2, 3, 4},
                  with(good_attributes(), number("killrate", H5T_NATIVE_DOUBLE, 0.05, {100})),
                  "must hold exactly one value; it holds 100"},
        Malformed{"two_floats",
                  {2, 3, 4},
                  with(good_attributes(), number("killrate", H5T_NATIVE_FLOAT, 0.05f, {2})),
                  "must hold exactly one value; it holds 2"},
        Malformed{"matrix_of_ints",
                  {2, 3, 4},
                  with(good_attributes(), number("nbrow", H5T_NATIVE_INT, 3, {2, 2})),
                  "must hold exactly one value; it holds 4"},
        Malformed{"null_dataspace",
                  {2, 3, 4},
                  with(good_attributes(), number("nbimage", H5T_NATIVE_INT, 2, {0})),
                  "must hold exactly one value; it holds 0"},
        Malformed{"float_for_int",
                  {2, 3, 4},
                  with(good_attributes(), number("nbrow", H5T_NATIVE_FLOAT, 3.0f)),
                  "must be an integer; it is a floating-point number"},
        Malformed{"string_for_float",
                  {2, 3, 4},
                  with(good_attributes(), fixed_string("deltat", "1.0")),
                  "must be a floating-point number; it is a string"},
        Malformed{"int_for_string",
                  {2, 3, 4},
                  with(good_attributes(), number("implementation", H5T_NATIVE_INT, 7)),
                  "must be a string; it is an integer"},
        Malformed{
            "int64_too_large",
            {2, 3, 4},
            with(good_attributes(), number("nbextrastep", H5T_NATIVE_INT64, std::int64_t{1} << 40)),
            "outside the range of int"},
        Malformed{"uint64_max",
                  {2, 3, 4},
                  with(good_attributes(), number("nbextrastep", H5T_NATIVE_UINT64,
                                                 std::numeric_limits<std::uint64_t>::max())),
                  "outside the range of int"},
        Malformed{"not_a_number",
                  {2, 3, 4},
                  with(good_attributes(), number("feedrate", H5T_NATIVE_FLOAT,
                                                 std::numeric_limits<float>::quiet_NaN())),
                  "not a finite float"},
        Malformed{"beyond_float",
                  {2, 3, 4},
                  with(good_attributes(), number("feedrate", H5T_NATIVE_DOUBLE, 1e300)),
                  "not a finite float"},
        Malformed{"huge_string",
                  {2, 3, 4},
                  with(good_attributes(), fixed_string("implementation", std::string(10000, 'x'))),
                  "at most 4096"},
        Malformed{"missing_attribute",
                  {2, 3, 4},
                  without(good_attributes(), "deltat"),
                  "has no attribute 'deltat'"},
        // Dimensions: checked before they are narrowed to int.
        Malformed{"rows_beyond_32_bits",
                  {1, k2To32 + 2, 2},
                  with(with(good_attributes(), number("nbrow", H5T_NATIVE_INT, 2)),
                       number("nbimage", H5T_NATIVE_INT, 1)),
                  "has frames of 4294967298 x 2 cells"},
        Malformed{"cells_beyond_int",
                  {1, 65536, 65536},
                  good_attributes(),
                  "a frame must have from 1 to 2147483647 cells"},
        Malformed{
            "frames_beyond_int", {hsize_t{1} << 31, 3, 4}, good_attributes(), "2147483648 frames"},
        Malformed{"no_frames", {0, 3, 4}, good_attributes(), "has no frames"},
        Malformed{"empty_rows", {2, 0, 4}, good_attributes(), "has frames of 0 x 4 cells"},
        Malformed{"rank_two", {3, 4}, good_attributes(), "must be three-dimensional"},
        Malformed{"rank_four", {2, 3, 4, 1}, good_attributes(), "it has 4 dimension(s)"},
        Malformed{"sizes_disagree",
                  {2, 3, 4},
                  with(good_attributes(), number("nbcol", H5T_NATIVE_INT, 5)),
                  "is 5 but the dataset has 4 columns"}),
    [](const ::testing::TestParamInfo<Malformed>& param_info) {
      return std::string(param_info.param.name);
    });

TEST(Reader, RefusesADatasetOfIntegersAndAMissingDataset) {
  const std::string integers =
      make_file("integers.h5", {2, 3, 4}, good_attributes(), H5T_STD_I32LE);
  EXPECT_NE(refusal(integers).find("must hold floating-point numbers"), std::string::npos)
      << refusal(integers);
  const std::string other =
      make_file("other_name.h5", {2, 3, 4}, good_attributes(), H5T_IEEE_F32LE, "frames");
  EXPECT_NE(refusal(other).find("has no dataset 'matrix'"), std::string::npos) << refusal(other);
}

TEST(Reader, ReadsTheGoodFileAndOtherWritersStyles) {
  const std::string good = make_file("good.h5", {2, 3, 4}, good_attributes());
  EXPECT_EQ(refusal(good), "read: 3 x 4, frame of 12");
  // h5py's defaults: 64-bit numbers, a variable-length UTF-8 string, one-element arrays.
  std::vector<Attribute> h5py_style = {number("nbrow", H5T_NATIVE_INT64, std::int64_t{3}),
                                       number("nbcol", H5T_NATIVE_INT64, std::int64_t{4}, {1}),
                                       number("nbimage", H5T_NATIVE_INT16, std::int16_t{2}),
                                       number("nbextrastep", H5T_NATIVE_UINT8, std::uint8_t{5}),
                                       number("killrate", H5T_NATIVE_DOUBLE, 0.054),
                                       number("feedrate", H5T_NATIVE_DOUBLE, 0.014, {1, 1}),
                                       number("deltat", H5T_NATIVE_FLOAT, 1.0f),
                                       number("diffusion_u", H5T_NATIVE_DOUBLE, 0.1),
                                       number("diffusion_v", H5T_NATIVE_DOUBLE, 0.05),
                                       variable_string("implementation", "numpy-slices")};
  const std::string path = make_file("h5py_style.h5", {2, 3, 4}, h5py_style);
  ASSERT_EQ(refusal(path), "read: 3 x 4, frame of 12");
  gs::FrameReader reader(path);
  EXPECT_EQ(reader.info().implementation, "numpy-slices");
  EXPECT_EQ(reader.info().params.steps_per_frame, 5);
  EXPECT_FLOAT_EQ(reader.info().params.rates.kill, 0.054f);
  EXPECT_FLOAT_EQ(reader.info().params.rates.feed, 0.014f);
  EXPECT_THROW(reader.read_frame(2), gs::OutputError);
  EXPECT_THROW(reader.read_frame(-1), gs::OutputError);
}

// ---------------------------------------------------------------------------------------------
// Files that are not a simulation: the values are elsewhere, cut short or never written

const std::vector<hsize_t> kDims = {2, 3, 4};  // what good_attributes() describes

// A file of @p bytes bytes of text, standing for any file of the system (/etc/hostname).
std::string text_file(const std::string& name, std::size_t bytes) {
  const std::string path = test_path(name);
  std::ofstream(path, std::ios::binary) << std::string(bytes, 'x');
  return path;
}

// Values of `matrix` kept in @p external instead of the file itself (H5Pset_external), declared
// as the 96 bytes of two frames of 3 x 4 float32.
Layout external_storage(const std::string& external) {
  return {[external](hid_t create) {
            EXPECT_GE(H5Pset_external(create, external.c_str(), 0, 2 * 3 * 4 * sizeof(float)), 0);
          },
          0};
}

// `matrix` as a virtual dataset whose values are dataset `matrix` of @p source.
Layout virtual_dataset(const std::string& source) {
  return {[source](hid_t create) {
            const hid_t space = H5Screate_simple(3, kDims.data(), nullptr);
            EXPECT_GE(H5Pset_virtual(create, space, source.c_str(), "matrix", space), 0);
            H5Sclose(space);
          },
          0};
}

TEST(ReaderRefusesForeignValues, ExternalStorageOnAnotherFile) {
  const std::string hostname = text_file("hostname", 96);  // exactly the size declared
  const std::string path = make_file("external.h5", kDims, good_attributes(), H5T_IEEE_F32LE,
                                     "matrix", external_storage(hostname));
  const std::string message = refusal(path);
  EXPECT_NE(message.find("keeps its values in 1 other file(s), the first '" + hostname + "'"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("external storage"), std::string::npos) << message;
}

TEST(ReaderRefusesForeignValues, AnExternalFileShorterThanDeclared) {
  const std::string short_file = text_file("short_external", 10);
  const std::string path = make_file("external_short.h5", kDims, good_attributes(), H5T_IEEE_F32LE,
                                     "matrix", external_storage(short_file));
  EXPECT_NE(refusal(path).find("external storage"), std::string::npos) << refusal(path);
}

TEST(ReaderRefusesForeignValues, AVirtualDatasetWithAMissingSource) {
  const std::string path = make_file("virtual.h5", kDims, good_attributes(), H5T_IEEE_F32LE,
                                     "matrix", virtual_dataset(test_path("no_such_source.h5")));
  const std::string message = refusal(path);
  EXPECT_NE(message.find("is a virtual dataset"), std::string::npos) << message;
  EXPECT_NE(message.find("no_such_source.h5"), std::string::npos) << message;
}

TEST(ReaderRefusesForeignValues, AVirtualDatasetWhoseSourceIsAFifoDoesNotHang) {
  const std::string fifo = test_path("source_fifo.h5");
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string path = make_file("virtual_fifo.h5", kDims, good_attributes(), H5T_IEEE_F32LE,
                                     "matrix", virtual_dataset(fifo));
  EXPECT_NE(refusal(path).find("is a virtual dataset"), std::string::npos) << refusal(path);
}

TEST(ReaderRefusesForeignValues, OtherLayoutsThanOneChunkPerFrame) {
  const std::string contiguous =
      make_file("contiguous.h5", kDims, good_attributes(), H5T_IEEE_F32LE, "matrix",
                {[](hid_t create) { EXPECT_GE(H5Pset_layout(create, H5D_CONTIGUOUS), 0); }});
  EXPECT_NE(refusal(contiguous).find("is stored contiguously"), std::string::npos)
      << refusal(contiguous);
  const std::string small_chunks = make_file("small_chunks.h5", kDims, good_attributes(),
                                             H5T_IEEE_F32LE, "matrix", {[](hid_t create) {
                                               const hsize_t chunk[3] = {1, 1, 4};
                                               EXPECT_GE(H5Pset_chunk(create, 3, chunk), 0);
                                             }});
  EXPECT_NE(refusal(small_chunks)
                .find("chunks of 1 x 1 x 4; the course's files store one chunk per "
                      "frame, 1 x 3 x 4"),
            std::string::npos)
      << refusal(small_chunks);
}

TEST(ReaderRefusesForeignValues, AFrameNeverWritten) {
  Layout one_frame;
  one_frame.frames_written = 1;
  const std::string path =
      make_file("one_of_two.h5", kDims, good_attributes(), H5T_IEEE_F32LE, "matrix", one_frame);
  gs::FrameReader reader(path);
  EXPECT_EQ(reader.read_frame(0), std::vector<float>(12, 0.25f));
  try {
    reader.read_frame(1);
    ADD_FAILURE() << "frame 1, never written, was read";
  } catch (const gs::OutputError& error) {
    EXPECT_NE(std::string(error.what()).find("frame 1 of '" + path + "' was never written"),
              std::string::npos)
        << error.what();
  }
}

// The end of the last chunk of `matrix` in @p path: the tests below cut the file there.
std::uint64_t last_chunk_end(const std::string& path, hsize_t frames) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t dataset = H5Dopen2(file, "matrix", H5P_DEFAULT);
  const hsize_t offset[3] = {frames - 1, 0, 0};
  unsigned mask = 0;
  haddr_t address = 0;
  hsize_t size = 0;
  EXPECT_GE(H5Dget_chunk_info_by_coord(dataset, offset, &mask, &address, &size), 0);
  H5Dclose(dataset);
  H5Fclose(file);
  return address + size;
}

TEST(ReaderRefusesTruncatedFiles, CutShort) {
  const std::string path = make_file("cut.h5", kDims, good_attributes());
  const auto size = fs::file_size(path);
  fs::resize_file(path, size - 20);
  const std::string message = refusal(path);
  EXPECT_NE(message.find("it is truncated: it has " + std::to_string(size - 20) +
                         " bytes, and its superblock says " + std::to_string(size)),
            std::string::npos)
      << message;
  fs::resize_file(path, 100);
  EXPECT_NE(refusal(path).find("it is truncated"), std::string::npos) << refusal(path);
}

TEST(ReaderRefusesTruncatedFiles, CutShortWithItsSuperblockPatchedToMatch) {
  // What HDF5 does not see: the superblock (version 0, no checksum) says the file ends where it
  // was cut, so it opens, and a read past the end would return zeros.
  const std::string path = make_file("cut_patched.h5", kDims, good_attributes());
  const std::uint64_t size = fs::file_size(path);
  ASSERT_EQ(last_chunk_end(path, 2), size) << "the last frame must be the end of the file";
  const std::uint64_t cut = size - 8;
  fs::resize_file(path, cut);
  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    char version = 0;
    file.seekg(8);
    file.get(version);
    ASSERT_EQ(version, 0) << "superblock version 0: the end-of-file address is at byte 40";
    unsigned char bytes[8];
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(cut >> (8 * i));
    file.seekp(40);
    file.write(reinterpret_cast<const char*>(bytes), 8);
  }
  gs::FrameReader reader(path);  // HDF5 itself finds nothing wrong
  EXPECT_EQ(reader.read_frame(0), std::vector<float>(12, 0.25f));
  try {
    reader.read_frame(1);
    ADD_FAILURE() << "frame 1, cut short, was read";
  } catch (const gs::OutputError& error) {
    EXPECT_NE(std::string(error.what())
                  .find("past the end of the file (" + std::to_string(cut) +
                        " bytes): the file is truncated"),
              std::string::npos)
        << error.what();
  }
}

TEST(ReaderRefuses, WhatIsNotARegularFileWithoutBlocking) {
  const std::string fifo = test_path("input_fifo.h5");
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);  // opening it for reading would wait for a writer
  EXPECT_NE(refusal(fifo).find("it is a FIFO (named pipe), not a regular file"), std::string::npos)
      << refusal(fifo);
  EXPECT_NE(refusal(::testing::TempDir()).find("it is a directory"), std::string::npos);
  EXPECT_NE(refusal(test_path("missing.h5")).find("No such file"), std::string::npos);
  const std::string text = text_file("text.h5", 100);
  EXPECT_NE(refusal(text).find("it is not one (no HDF5 signature)"), std::string::npos)
      << refusal(text);
}

// ---------------------------------------------------------------------------------------------
// The reader of lesson 09's files: the same refusals

std::string dataset_refusal(const std::string& path, const std::string& name = "matrix") {
  try {
    const std::vector<float> values = gs::DatasetReader(path).read_floats(name);
    return "read " + std::to_string(values.size()) + " values";
  } catch (const gs::OutputError& error) {
    return error.what();
  }
}

TEST(DatasetReaderRefuses, ValuesElsewhereCutShortOrNeverWritten) {
  EXPECT_EQ(dataset_refusal(make_file("sweep_good.h5", kDims, {})), "read 24 values");
  const std::string hostname = text_file("hostname_for_sweep", 96);
  const std::string external = make_file("sweep_external.h5", kDims, {}, H5T_IEEE_F32LE, "matrix",
                                         external_storage(hostname));
  EXPECT_NE(dataset_refusal(external).find("external storage"), std::string::npos)
      << dataset_refusal(external);
  const std::string virtual_file = make_file("sweep_virtual.h5", kDims, {}, H5T_IEEE_F32LE,
                                             "matrix", virtual_dataset(test_path("none.h5")));
  EXPECT_NE(dataset_refusal(virtual_file).find("is a virtual dataset"), std::string::npos)
      << dataset_refusal(virtual_file);
  EXPECT_THROW(gs::DatasetReader(virtual_file).shape("matrix"), gs::OutputError)
      << "not even its shape is read";
  Layout one_frame;
  one_frame.frames_written = 1;
  const std::string unwritten =
      make_file("sweep_unwritten.h5", kDims, {}, H5T_IEEE_F32LE, "matrix", one_frame);
  EXPECT_NE(dataset_refusal(unwritten).find("the chunk at [1, 0, 0] of dataset 'matrix' of '" +
                                            unwritten + "' was never written"),
            std::string::npos)
      << dataset_refusal(unwritten);
  const std::string contiguous_unwritten =
      make_file("sweep_contiguous.h5", kDims, {}, H5T_IEEE_F32LE, "matrix",
                {[](hid_t create) { EXPECT_GE(H5Pset_layout(create, H5D_CONTIGUOUS), 0); }, 0});
  EXPECT_NE(dataset_refusal(contiguous_unwritten).find("was never written"), std::string::npos)
      << dataset_refusal(contiguous_unwritten);
  const std::string cut = make_file("sweep_cut.h5", kDims, {});
  fs::resize_file(cut, fs::file_size(cut) - 8);
  EXPECT_NE(dataset_refusal(cut).find("it is truncated"), std::string::npos)
      << dataset_refusal(cut);
  EXPECT_NE(dataset_refusal(cut + ".missing").find("No such file"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// printable(): what a file says, safe for the terminal

TEST(Printable, KeepsTextAndUtf8AndEscapesWhatATerminalWouldObey) {
  EXPECT_EQ(gs::printable("l06-temporal (4 steps)"), "l06-temporal (4 steps)");
  EXPECT_EQ(gs::printable("Gray–Scott, naïve, 格子"), "Gray–Scott, naïve, 格子");
  // ESC [2J (clear the screen), an OSC title, a bell, a newline, a tab, DEL, a backslash.
  EXPECT_EQ(gs::printable("\x1b[2J\x1b]0;pwned\x07 a\nb\tc\x7f\\"),
            "\\x1b[2J\\x1b]0;pwned\\x07 a\\nb\\tc\\x7f\\\\");
  // C1 CSI as UTF-8 (U+009B), a right-to-left override (U+202E), a stray byte, a cut sequence,
  // an overlong '/', a surrogate.
  EXPECT_EQ(gs::printable("\xc2\x9b"
                          "31m"),
            "\\u{009B}31m");
  EXPECT_EQ(gs::printable("abc\xe2\x80\xaetxt.exe"), "abc\\u{202E}txt.exe");
  EXPECT_EQ(gs::printable("\x9b"
                          "1;1H"),
            "\\x9b1;1H");
  EXPECT_EQ(gs::printable("\xe2\x82"), "\\xe2\\x82");
  EXPECT_EQ(gs::printable("\xc0\xaf"), "\\xc0\\xaf");
  EXPECT_EQ(gs::printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");
  EXPECT_EQ(gs::printable(std::string("a\0b", 3)), "a\\x00b");
}

}  // namespace
