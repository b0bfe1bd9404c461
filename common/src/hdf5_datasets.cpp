// Files of named datasets (lesson 09's parameter sweep): DatasetWriter and DatasetReader. The
// HDF5 set-up, handles, error texts and reader's refusals are the frame files' (hdf5_detail.hpp).
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gs/hdf5_io.hpp"
#include "hdf5_detail.hpp"

namespace gs {

using namespace hdf5_detail;

namespace {

void dataset_file_attribute(hid_t object, const std::string& name, hid_t file_type,
                            hid_t memory_type, const void* value) {
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t attribute =
      H5Acreate2(object, name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT);
  const bool ok = attribute >= 0 && H5Awrite(attribute, memory_type, value) >= 0;
  if (attribute >= 0) H5Aclose(attribute);
  H5Sclose(space);
  if (!ok) throw OutputError("cannot write HDF5 attribute '" + name + "'");
}

void dataset_file_text_attribute(hid_t object, const std::string& name, const std::string& value) {
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, value.empty() ? 1 : value.size());
  H5Tset_strpad(type, H5T_STR_NULLPAD);
  try {
    dataset_file_attribute(object, name, type, type, value.empty() ? "" : value.c_str());
  } catch (...) {
    H5Tclose(type);
    throw;
  }
  H5Tclose(type);
}

std::string dataset_file_read_text(hid_t object, const std::string& name) {
  const hid_t attribute = H5Aopen(object, name.c_str(), H5P_DEFAULT);
  if (attribute < 0) throw OutputError("no attribute '" + name + "'");
  const hid_t type = H5Aget_type(attribute);
  std::string value(H5Tget_size(type), '\0');
  const hid_t memory_type = H5Tcopy(H5T_C_S1);
  H5Tset_size(memory_type, value.size());
  H5Tset_strpad(memory_type, H5T_STR_NULLPAD);
  const bool ok =
      H5Tget_class(type) == H5T_STRING && H5Aread(attribute, memory_type, value.data()) >= 0;
  H5Tclose(memory_type);
  H5Tclose(type);
  H5Aclose(attribute);
  if (!ok) throw OutputError("attribute '" + name + "' is not a string");
  value.erase(value.find_last_not_of('\0') + 1);
  return value;
}

}  // namespace

DatasetWriter::DatasetWriter(const std::string& path, OutputOptions options) {
  prepare_hdf5();
  Handle created;
  file_ = std::make_unique<OutputFile>(
      path, std::move(options),
      [&created](const std::string& name) { return create_hdf5_file(name, created); });
  hdf5_file_ = created.release();
}

DatasetWriter::~DatasetWriter() {
  close_file();  // then file_ deletes the temporary file, unless it was committed
}

void DatasetWriter::close_file() noexcept {
  if (hdf5_file_ >= 0) H5Fclose(hdf5_file_);
  hdf5_file_ = -1;
}

void DatasetWriter::write(const std::string& name, const std::vector<std::int64_t>& shape,
                          const float* values, const std::string& description) {
  write_dataset(name, shape, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, sizeof(float), values, description);
}

void DatasetWriter::write(const std::string& name, const std::vector<std::int64_t>& shape,
                          const std::int32_t* values, const std::string& description) {
  write_dataset(name, shape, H5T_STD_I32LE, H5T_NATIVE_INT32, sizeof(std::int32_t), values,
                description);
}

void DatasetWriter::write_dataset(const std::string& name, const std::vector<std::int64_t>& shape,
                                  std::int64_t file_type, std::int64_t memory_type,
                                  std::size_t value_size, const void* values,
                                  const std::string& description) {
  const std::string& temporary = file_->temporary_path();
  if (hdf5_file_ < 0) throw OutputError("'" + temporary + "' is closed");
  if (shape.empty()) throw OutputError("dataset '" + name + "' needs at least one dimension");
  std::vector<hsize_t> dims;
  std::int64_t count = 1;
  for (const std::int64_t extent : shape) {
    if (extent < 1) throw OutputError("dataset '" + name + "' has an empty dimension");
    dims.push_back(static_cast<hsize_t>(extent));
    count *= extent;
  }
  const std::int64_t chunk_bytes = count / shape[0] * static_cast<std::int64_t>(value_size);
  if (shape.size() >= 2 && chunk_bytes >= (std::int64_t{1} << 32)) {
    throw OutputError("a chunk of dataset '" + name + "' would exceed HDF5's 4 GB chunk limit");
  }
  const std::int64_t end_before = end_of_file(file_->descriptor());
  const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  const hid_t properties = H5Pcreate(H5P_DATASET_CREATE);
  if (shape.size() >= 2) {
    std::vector<hsize_t> chunk = dims;
    chunk[0] = 1;
    H5Pset_chunk(properties, static_cast<int>(chunk.size()), chunk.data());
    // Every chunk is written once: filling it with zeros first would write it twice.
    H5Pset_fill_time(properties, H5D_FILL_TIME_NEVER);
  }
  const hid_t dataset =
      H5Dcreate2(hdf5_file_, name.c_str(), file_type, space, H5P_DEFAULT, properties, H5P_DEFAULT);
  H5Pclose(properties);
  H5Sclose(space);
  if (dataset < 0) {
    throw OutputError("cannot create dataset '" + name + "' in '" + temporary + "'");
  }
  errno = 0;
  bool ok = H5Dwrite(dataset, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) >= 0;
  const std::string reason = reason_of(errno);
  if (ok && !description.empty()) {
    try {
      dataset_file_text_attribute(dataset, "description", description);
    } catch (const OutputError&) {
      ok = false;
    }
  }
  H5Dclose(dataset);  // writes the chunks HDF5's chunk cache still held
  if (!ok) {
    throw OutputError("writing dataset '" + name + "' to '" + temporary + "' failed" + reason +
                      "; is the disk full?");
  }
  bytes_written_ += count * static_cast<std::int64_t>(value_size);
  note_written(*file_, end_before);  // the dataset's chunks, on their way to the disk
}

void DatasetWriter::set_number(const std::string& name, double value) {
  dataset_file_attribute(hdf5_file_, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value);
}

void DatasetWriter::set_integer(const std::string& name, std::int64_t value) {
  dataset_file_attribute(hdf5_file_, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value);
}

void DatasetWriter::set_text(const std::string& name, const std::string& value) {
  dataset_file_text_attribute(hdf5_file_, name, value);
}

void DatasetWriter::commit(bool flush_to_disk) {
  if (file_->committed()) return;
  errno = 0;
  const bool closed = hdf5_file_ >= 0 && H5Fclose(hdf5_file_) >= 0;
  hdf5_file_ = -1;
  if (!closed) {
    throw OutputError("closing '" + file_->temporary_path() + "' failed" + reason_of(errno) +
                      "; is the disk full?");
  }
  file_->commit(flush_to_disk);  // fsync, permissions, rename, fsync of the directory
}

DatasetReader::DatasetReader(const std::string& path) : path_(path) {
  file_ = open_for_reading(path);  // a regular file that HDF5 opens, or a message saying why not
}

DatasetReader::~DatasetReader() {
  H5Fclose(file_);
}

bool DatasetReader::has_dataset(const std::string& name) const {
  return H5Lexists(file_, name.c_str(), H5P_DEFAULT) > 0;
}

namespace {

// Opens dataset @p name of @p file and refuses it when its values are not in the file (external
// storage, a virtual dataset) before anything else is read from it.
Handle dataset_file_open(hid_t file, const std::string& path, const std::string& name,
                         H5D_layout_t* layout = nullptr) {
  const std::string what = "dataset " + quoted_text(name) + " of " + quoted_text(path);
  Handle dataset = open_own_dataset(file, path, name, what);
  const H5D_layout_t found = refuse_foreign_storage(dataset.get(), what);
  if (layout != nullptr) *layout = found;
  return dataset;
}

// Reads all of dataset @p name after checking that every value of it was written and lies
// inside the file.
template <typename T>
std::vector<T> dataset_file_read_all(hid_t file, const std::string& path, const std::string& name,
                                     hid_t memory_type, std::int64_t count) {
  const std::string what = "dataset " + quoted_text(name) + " of " + quoted_text(path);
  H5D_layout_t layout = H5D_LAYOUT_ERROR;
  const Handle dataset = dataset_file_open(file, path, name, &layout);
  check_stored(dataset.get(), layout, size_on_disk(file, quoted_text(path)), what);
  std::vector<T> values(static_cast<std::size_t>(count));
  if (H5Dread(dataset.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0) {
    const std::string detail = hdf5_first_error();
    throw OutputError("cannot read " + what +
                      (detail.empty() ? std::string() : " (HDF5: " + detail + ")"));
  }
  return values;
}

// The number of values of a dataset of @p shape, refused when it cannot be held in memory.
std::int64_t dataset_file_count(const std::vector<std::int64_t>& shape, const std::string& what) {
  std::int64_t count = 1;
  for (const std::int64_t extent : shape) {
    if (extent != 0 && count > std::numeric_limits<std::int64_t>::max() / 16 / extent) {
      throw OutputError(what + " has more values than memory can hold");
    }
    count *= extent;
  }
  return count;
}

}  // namespace

std::vector<std::int64_t> DatasetReader::shape(const std::string& name) const {
  const Handle dataset = dataset_file_open(file_, path_, name);
  const std::string what =
      "the shape of dataset " + quoted_text(name) + " of " + quoted_text(path_);
  const Handle space = take(H5Dget_space(dataset.get()), H5Sclose, "cannot read " + what);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  check(rank, "cannot read " + what);
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  if (rank > 0)
    check(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr), "cannot read " + what);
  return std::vector<std::int64_t>(dims.begin(), dims.end());
}

std::vector<float> DatasetReader::read_floats(const std::string& name) const {
  return dataset_file_read_all<float>(
      file_, path_, name, H5T_NATIVE_FLOAT,
      dataset_file_count(shape(name),
                         "dataset " + quoted_text(name) + " of " + quoted_text(path_)));
}

std::vector<std::int32_t> DatasetReader::read_ints(const std::string& name) const {
  return dataset_file_read_all<std::int32_t>(
      file_, path_, name, H5T_NATIVE_INT32,
      dataset_file_count(shape(name),
                         "dataset " + quoted_text(name) + " of " + quoted_text(path_)));
}

std::string DatasetReader::description(const std::string& name) const {
  const Handle dataset = open_own_dataset(
      file_, path_, name, "dataset " + quoted_text(name) + " of " + quoted_text(path_));
  if (H5Aexists(dataset.get(), "description") <= 0) return {};
  return dataset_file_read_text(dataset.get(), "description");
}

double DatasetReader::number(const std::string& name) const {
  const hid_t attribute = H5Aopen(file_, name.c_str(), H5P_DEFAULT);
  if (attribute < 0) throw OutputError("'" + path_ + "' has no attribute '" + name + "'");
  double value = 0.0;
  const hid_t type = H5Aget_type(attribute);
  const H5T_class_t type_class = H5Tget_class(type);
  const bool ok = (type_class == H5T_FLOAT || type_class == H5T_INTEGER) &&
                  H5Aread(attribute, H5T_NATIVE_DOUBLE, &value) >= 0;
  H5Tclose(type);
  H5Aclose(attribute);
  if (!ok) throw OutputError("attribute '" + name + "' of '" + path_ + "' is not a number");
  return value;
}

std::string DatasetReader::text(const std::string& name) const {
  return dataset_file_read_text(file_, name);
}

}  // namespace gs
