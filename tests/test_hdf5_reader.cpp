// The HDF5 reader against files it did not write: each file is built here with the HDF5 C API,
// one thing wrong at a time (an attribute of the wrong type or with more than one value, a
// dimension that does not fit an int, no frames, a rank that is not 3, sizes that disagree), and
// the reader must refuse it with a message that names the problem, never crash or read a
// different size. Files in other writers' styles (h5py: 64-bit numbers, variable-length strings,
// one-element arrays) are read.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "gs/hdf5_io.hpp"

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

// Writes a file whose dataset `matrix` has shape @p dims and type @p type (no frame data is
// written: chunks that were never written read as zeros, so even huge shapes stay small files).
std::string make_file(const std::string& name, const std::vector<hsize_t>& dims,
                      const std::vector<Attribute>& attributes, hid_t type = H5T_IEEE_F32LE,
                      const char* dataset_name = "matrix") {
  const fs::path dir = fs::path(::testing::TempDir()) / "gs_hdf5_reader_tests";
  fs::create_directories(dir);
  const std::string path = (dir / name).string();
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  EXPECT_GE(file, 0);
  const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  EXPECT_GE(space, 0);
  const hid_t create = H5Pcreate(H5P_DATASET_CREATE);
  bool empty = false;
  for (const hsize_t n : dims) empty = empty || n == 0;
  if (!empty) {
    const std::vector<hsize_t> chunk(dims.size(), 1);
    EXPECT_GE(H5Pset_chunk(create, static_cast<int>(chunk.size()), chunk.data()), 0);
  }
  const hid_t dataset =
      H5Dcreate2(file, dataset_name, type, space, H5P_DEFAULT, create, H5P_DEFAULT);
  EXPECT_GE(dataset, 0);
  for (const Attribute& attribute : attributes) write_attribute(dataset, attribute);
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

}  // namespace
