// HDF5 output through the C API. Every call is checked; HDF5's own error printing is turned
// off so that the user sees one message that says what failed and where.
#include "gs/hdf5_io.hpp"
#include "gs/report.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <sstream>

namespace gs {
namespace fs = std::filesystem;

namespace {

std::string system_error_text() {
  return errno != 0 ? std::string(" (") + std::strerror(errno) + ")" : std::string();
}

// HDF5 prints its error stack by default; we report one message of our own instead. We also
// keep HDF5 from closing files at exit: after a write failed (full disk) HDF5 1.10 can crash
// while closing that file a second time in its atexit handler. We close every file ourselves.
void prepare_hdf5() {
  static const bool prepared = [] {
    H5dont_atexit();
    return true;
  }();
  (void)prepared;
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

void write_attribute(hid_t object, const char* name, hid_t type, const void* value) {
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t attribute = H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  const bool ok = attribute >= 0 && H5Awrite(attribute, type, value) >= 0;
  if (attribute >= 0) H5Aclose(attribute);
  H5Sclose(space);
  if (!ok) throw OutputError(std::string("cannot write HDF5 attribute '") + name + "'");
}

void write_string_attribute(hid_t object, const char* name, const std::string& value) {
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, value.empty() ? 1 : value.size());
  H5Tset_strpad(type, H5T_STR_NULLPAD);
  try {
    write_attribute(object, name, type, value.empty() ? "" : value.c_str());
  } catch (...) {
    H5Tclose(type);
    throw;
  }
  H5Tclose(type);
}

template <typename T>
bool read_attribute(hid_t object, const char* name, hid_t type, T& value) {
  if (H5Aexists(object, name) <= 0) return false;
  const hid_t attribute = H5Aopen(object, name, H5P_DEFAULT);
  if (attribute < 0) return false;
  const bool ok = H5Aread(attribute, type, &value) >= 0;
  H5Aclose(attribute);
  return ok;
}

std::string read_string_attribute(hid_t object, const char* name) {
  if (H5Aexists(object, name) <= 0) return {};
  const hid_t attribute = H5Aopen(object, name, H5P_DEFAULT);
  if (attribute < 0) return {};
  const hid_t type = H5Aget_type(attribute);
  std::string value(H5Tget_size(type), '\0');
  const hid_t memory_type = H5Tcopy(H5T_C_S1);
  H5Tset_size(memory_type, value.size());
  H5Tset_strpad(memory_type, H5T_STR_NULLPAD);
  if (H5Aread(attribute, memory_type, value.data()) < 0) value.clear();
  H5Tclose(memory_type);
  H5Tclose(type);
  H5Aclose(attribute);
  value.erase(value.find_last_not_of('\0') + 1);
  return value;
}

// fsync of a closed file: reopened read-only, flushed, closed.
void flush_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  errno = 0;
  if (fd < 0 || ::fsync(fd) != 0) {
    const std::string reason = system_error_text();
    if (fd >= 0) ::close(fd);
    throw OutputError("flushing '" + path + "' to the disk failed" + reason);
  }
  ::close(fd);
}

// fsync of the directory that holds path: makes the rename itself durable.
void flush_directory_of(const std::string& path) {
  const fs::path parent = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : ".";
  const int fd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // nothing more can be done; the file itself is flushed
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

void check_output_path(const std::string& path, std::int64_t bytes) {
  const fs::path target(path);
  std::error_code error;
  if (fs::is_directory(target, error)) {
    throw OutputError("output path '" + path + "' is a directory; give a file name with -o");
  }
  const fs::path directory = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::exists(directory, error)) {
    throw OutputError("cannot write '" + path + "': directory '" + directory.string() +
                      "' does not exist");
  }
  if (!fs::is_directory(directory, error)) {
    throw OutputError("cannot write '" + path + "': '" + directory.string() +
                      "' is not a directory");
  }
  if (::access(directory.c_str(), W_OK | X_OK) != 0) {
    throw OutputError("cannot write '" + path + "': directory '" + directory.string() +
                      "' is not writable" + system_error_text());
  }
  struct statvfs file_system {};
  if (::statvfs(directory.c_str(), &file_system) == 0) {
    const std::int64_t available = static_cast<std::int64_t>(file_system.f_bavail) *
                                   static_cast<std::int64_t>(file_system.f_frsize);
    // A little slack for HDF5's metadata (a few KB per run).
    const std::int64_t needed = bytes + (1 << 20);
    if (available < needed) {
      throw OutputError("not enough space for '" + path + "': the run writes " +
                        si(static_cast<double>(bytes), "B") + ", " +
                        si(static_cast<double>(available), "B") + " free in '" +
                        directory.string() + "' (use --no-output, fewer frames, or another -o)");
    }
  }
}

FrameWriter::FrameWriter(const std::string& path, const Params& params,
                         const std::string& implementation)
    : path_(path),
      temporary_path_(path + ".partial-" + std::to_string(::getpid())),
      rows_(params.rows),
      cols_(params.cols),
      frames_(params.frames) {
  prepare_hdf5();
  if (params.cells() * std::int64_t{sizeof(float)} >= (std::int64_t{1} << 32)) {
    throw OutputError("a frame of " + std::to_string(params.cells()) +
                      " cells exceeds HDF5's 4 GB chunk limit; use --no-output or a smaller grid");
  }
  errno = 0;
  file_ = H5Fcreate(temporary_path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file_ < 0) {
    throw OutputError("cannot create '" + temporary_path_ + "'" + system_error_text());
  }
  try {
    const hsize_t dims[3] = {static_cast<hsize_t>(frames_), static_cast<hsize_t>(rows_),
                             static_cast<hsize_t>(cols_)};
    const hsize_t chunk[3] = {1, static_cast<hsize_t>(rows_), static_cast<hsize_t>(cols_)};
    file_space_ = H5Screate_simple(3, dims, nullptr);
    const hid_t create_properties = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(create_properties, 3, chunk);
    // Every chunk is written exactly once: filling it with zeros first would write twice.
    H5Pset_fill_time(create_properties, H5D_FILL_TIME_NEVER);
    dataset_ = H5Dcreate2(file_, kDatasetName, H5T_IEEE_F32LE, file_space_, H5P_DEFAULT,
                          create_properties, H5P_DEFAULT);
    H5Pclose(create_properties);
    if (file_space_ < 0 || dataset_ < 0) {
      throw OutputError("cannot create dataset '" + std::string(kDatasetName) + "' in '" +
                        temporary_path_ + "'");
    }
    const int ints[4] = {params.rows, params.cols, params.frames, params.steps_per_frame};
    const char* int_names[4] = {"nbrow", "nbcol", "nbimage", "nbextrastep"};
    for (int i = 0; i < 4; ++i) write_attribute(dataset_, int_names[i], H5T_NATIVE_INT, &ints[i]);
    const Rates& rates = params.rates;
    const float floats[5] = {rates.kill, rates.feed, rates.dt, rates.diffusion_u,
                             rates.diffusion_v};
    const char* float_names[5] = {"killrate", "feedrate", "deltat", "diffusion_u", "diffusion_v"};
    for (int i = 0; i < 5; ++i) {
      write_attribute(dataset_, float_names[i], H5T_NATIVE_FLOAT, &floats[i]);
    }
    write_string_attribute(dataset_, "implementation", implementation);
  } catch (...) {
    close_handles();
    std::remove(temporary_path_.c_str());
    throw;
  }
}

FrameWriter::~FrameWriter() {
  if (committed_) return;
  close_handles();
  std::remove(temporary_path_.c_str());
}

void FrameWriter::close_handles() noexcept {
  if (dataset_ >= 0) H5Dclose(dataset_);
  if (file_space_ >= 0) H5Sclose(file_space_);
  if (file_ >= 0) H5Fclose(file_);
  dataset_ = file_space_ = file_ = -1;
}

void FrameWriter::write_frame(int index, const float* v) {
  prepare_hdf5();  // HDF5's error printing is set per thread: the writer may be another thread
  if (index < 0 || index >= frames_) {
    throw OutputError("frame index " + std::to_string(index) + " is outside [0, " +
                      std::to_string(frames_) + ")");
  }
  const hsize_t start[3] = {static_cast<hsize_t>(index), 0, 0};
  const hsize_t count[3] = {1, static_cast<hsize_t>(rows_), static_cast<hsize_t>(cols_)};
  const hid_t memory_space = H5Screate_simple(3, count, nullptr);
  H5Sselect_hyperslab(file_space_, H5S_SELECT_SET, start, nullptr, count, nullptr);
  errno = 0;
  const herr_t status =
      H5Dwrite(dataset_, H5T_NATIVE_FLOAT, memory_space, file_space_, H5P_DEFAULT, v);
  H5Sclose(memory_space);
  if (status < 0) {
    throw OutputError("writing frame " + std::to_string(index) + " to '" + temporary_path_ +
                      "' failed" + system_error_text() + "; is the disk full?");
  }
  ++frames_written_;
  bytes_written_ += std::int64_t{rows_} * cols_ * std::int64_t{sizeof(float)};
}

void FrameWriter::commit(bool flush_to_disk) {
  prepare_hdf5();
  if (committed_) return;
  if (frames_written_ != frames_) {
    throw OutputError("only " + std::to_string(frames_written_) + " of " + std::to_string(frames_) +
                      " frames were written; '" + path_ + "' was not created");
  }
  errno = 0;
  const bool closed = H5Dclose(dataset_) >= 0 && H5Sclose(file_space_) >= 0;
  dataset_ = file_space_ = -1;
  const bool flushed = H5Fclose(file_) >= 0;
  file_ = -1;
  if (!closed || !flushed) {
    throw OutputError("closing '" + temporary_path_ + "' failed" + system_error_text() +
                      "; is the disk full?");
  }
  if (flush_to_disk) {
    // The data must be on the disk before the final name points at it: after a crash or a power
    // loss the final name then holds either the old file or the complete new one.
    const auto start = std::chrono::steady_clock::now();
    flush_file(temporary_path_);
    flush_seconds_ =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  std::error_code error;
  fs::rename(temporary_path_, path_, error);
  if (error) {
    throw OutputError("cannot rename '" + temporary_path_ + "' to '" + path_ +
                      "': " + error.message());
  }
  if (flush_to_disk) {
    const auto start = std::chrono::steady_clock::now();
    flush_directory_of(path_);
    flush_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  committed_ = true;
}

FrameReader::FrameReader(const std::string& path) {
  prepare_hdf5();
  file_ = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file_ < 0) throw OutputError("cannot open '" + path + "' as an HDF5 file");
  dataset_ = H5Dopen2(file_, kDatasetName, H5P_DEFAULT);
  if (dataset_ < 0) {
    H5Fclose(file_);
    throw OutputError("'" + path + "' has no dataset '" + kDatasetName + "'");
  }
  const hid_t space = H5Dget_space(dataset_);
  hsize_t dims[3] = {0, 0, 0};
  const bool three_d = H5Sget_simple_extent_ndims(space) == 3;
  if (three_d) H5Sget_simple_extent_dims(space, dims, nullptr);
  H5Sclose(space);
  if (!three_d) {
    H5Dclose(dataset_);
    H5Fclose(file_);
    throw OutputError("dataset '" + std::string(kDatasetName) + "' in '" + path +
                      "' is not three-dimensional");
  }
  info_.frames = static_cast<int>(dims[0]);
  info_.rows = static_cast<int>(dims[1]);
  info_.cols = static_cast<int>(dims[2]);
  Params& params = info_.params;
  read_attribute(dataset_, "nbrow", H5T_NATIVE_INT, params.rows);
  read_attribute(dataset_, "nbcol", H5T_NATIVE_INT, params.cols);
  read_attribute(dataset_, "nbimage", H5T_NATIVE_INT, params.frames);
  read_attribute(dataset_, "nbextrastep", H5T_NATIVE_INT, params.steps_per_frame);
  read_attribute(dataset_, "killrate", H5T_NATIVE_FLOAT, params.rates.kill);
  read_attribute(dataset_, "feedrate", H5T_NATIVE_FLOAT, params.rates.feed);
  read_attribute(dataset_, "deltat", H5T_NATIVE_FLOAT, params.rates.dt);
  read_attribute(dataset_, "diffusion_u", H5T_NATIVE_FLOAT, params.rates.diffusion_u);
  read_attribute(dataset_, "diffusion_v", H5T_NATIVE_FLOAT, params.rates.diffusion_v);
  params.output = path;
  info_.implementation = read_string_attribute(dataset_, "implementation");
}

FrameReader::~FrameReader() {
  H5Dclose(dataset_);
  H5Fclose(file_);
}

std::vector<float> FrameReader::read_frame(int index) const {
  if (index < 0 || index >= info_.frames) {
    throw OutputError("frame " + std::to_string(index) + " is outside [0, " +
                      std::to_string(info_.frames) + ")");
  }
  std::vector<float> frame(static_cast<std::size_t>(info_.rows) * info_.cols);
  const hsize_t start[3] = {static_cast<hsize_t>(index), 0, 0};
  const hsize_t count[3] = {1, static_cast<hsize_t>(info_.rows), static_cast<hsize_t>(info_.cols)};
  const hid_t file_space = H5Dget_space(dataset_);
  const hid_t memory_space = H5Screate_simple(3, count, nullptr);
  H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr);
  const herr_t status =
      H5Dread(dataset_, H5T_NATIVE_FLOAT, memory_space, file_space, H5P_DEFAULT, frame.data());
  H5Sclose(memory_space);
  H5Sclose(file_space);
  if (status < 0) throw OutputError("cannot read frame " + std::to_string(index));
  return frame;
}

}  // namespace gs

// ---------------------------------------------------------------------------------------------
// Files of named datasets (lesson 09's parameter sweep): DatasetWriter and DatasetReader. Their
// helpers have names of their own, so that this part does not depend on the helpers above.
// ---------------------------------------------------------------------------------------------

#include <fcntl.h>
#include <hdf5.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace gs {
namespace {

std::string dataset_file_errno_text() {
  return errno != 0 ? std::string(" (") + std::strerror(errno) + ")" : std::string();
}

// As for the frame files: HDF5's error stack is not printed (we report one message), and HDF5
// does not close files at exit (we close every file ourselves).
void dataset_file_quiet_hdf5() {
  static const bool prepared = [] {
    H5dont_atexit();
    return true;
  }();
  (void)prepared;
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

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

void dataset_file_fsync(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (directory ? O_DIRECTORY : 0));
  errno = 0;
  if (fd < 0 || ::fsync(fd) != 0) {
    const std::string reason = dataset_file_errno_text();
    if (fd >= 0) ::close(fd);
    if (directory) return;  // the file itself is flushed; nothing more can be done
    throw OutputError("flushing '" + path + "' to the disk failed" + reason);
  }
  ::close(fd);
}

}  // namespace

DatasetWriter::DatasetWriter(const std::string& path)
    : path_(path), temporary_path_(path + ".partial-" + std::to_string(::getpid())) {
  dataset_file_quiet_hdf5();
  errno = 0;
  file_ = H5Fcreate(temporary_path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file_ < 0) {
    throw OutputError("cannot create '" + temporary_path_ + "'" + dataset_file_errno_text());
  }
}

DatasetWriter::~DatasetWriter() {
  if (committed_) return;
  close_file();
  std::remove(temporary_path_.c_str());
}

void DatasetWriter::close_file() noexcept {
  if (file_ >= 0) H5Fclose(file_);
  file_ = -1;
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
  if (file_ < 0) throw OutputError("'" + temporary_path_ + "' is closed");
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
      H5Dcreate2(file_, name.c_str(), file_type, space, H5P_DEFAULT, properties, H5P_DEFAULT);
  H5Pclose(properties);
  H5Sclose(space);
  if (dataset < 0) {
    throw OutputError("cannot create dataset '" + name + "' in '" + temporary_path_ + "'");
  }
  errno = 0;
  bool ok = H5Dwrite(dataset, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) >= 0;
  const std::string reason = dataset_file_errno_text();
  if (ok && !description.empty()) {
    try {
      dataset_file_text_attribute(dataset, "description", description);
    } catch (const OutputError&) {
      ok = false;
    }
  }
  H5Dclose(dataset);
  if (!ok) {
    throw OutputError("writing dataset '" + name + "' to '" + temporary_path_ + "' failed" +
                      reason + "; is the disk full?");
  }
  bytes_written_ += count * static_cast<std::int64_t>(value_size);
}

void DatasetWriter::set_number(const std::string& name, double value) {
  dataset_file_attribute(file_, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value);
}

void DatasetWriter::set_integer(const std::string& name, std::int64_t value) {
  dataset_file_attribute(file_, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value);
}

void DatasetWriter::set_text(const std::string& name, const std::string& value) {
  dataset_file_text_attribute(file_, name, value);
}

void DatasetWriter::commit(bool flush_to_disk) {
  if (committed_) return;
  errno = 0;
  const bool closed = H5Fclose(file_) >= 0;
  file_ = -1;
  if (!closed) {
    throw OutputError("closing '" + temporary_path_ + "' failed" + dataset_file_errno_text() +
                      "; is the disk full?");
  }
  // The data reaches the disk before the final name points at it (see FrameWriter::commit).
  if (flush_to_disk) dataset_file_fsync(temporary_path_, false);
  std::error_code error;
  std::filesystem::rename(temporary_path_, path_, error);
  if (error) {
    throw OutputError("cannot rename '" + temporary_path_ + "' to '" + path_ +
                      "': " + error.message());
  }
  if (flush_to_disk) {
    const std::filesystem::path target(path_);
    dataset_file_fsync(target.has_parent_path() ? target.parent_path().string() : ".", true);
  }
  committed_ = true;
}

DatasetReader::DatasetReader(const std::string& path) : path_(path) {
  dataset_file_quiet_hdf5();
  file_ = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file_ < 0) throw OutputError("cannot open '" + path + "' as an HDF5 file");
}

DatasetReader::~DatasetReader() {
  H5Fclose(file_);
}

bool DatasetReader::has_dataset(const std::string& name) const {
  return H5Lexists(file_, name.c_str(), H5P_DEFAULT) > 0;
}

std::vector<std::int64_t> DatasetReader::shape(const std::string& name) const {
  const hid_t dataset = H5Dopen2(file_, name.c_str(), H5P_DEFAULT);
  if (dataset < 0) throw OutputError("'" + path_ + "' has no dataset '" + name + "'");
  const hid_t space = H5Dget_space(dataset);
  const int rank = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> dims(rank > 0 ? static_cast<std::size_t>(rank) : 0);
  if (rank > 0) H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  H5Sclose(space);
  H5Dclose(dataset);
  return std::vector<std::int64_t>(dims.begin(), dims.end());
}

namespace {

template <typename T>
std::vector<T> dataset_file_read_all(hid_t file, const std::string& path, const std::string& name,
                                     hid_t memory_type, std::int64_t count) {
  std::vector<T> values(static_cast<std::size_t>(count));
  const hid_t dataset = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  if (dataset < 0) throw OutputError("'" + path + "' has no dataset '" + name + "'");
  const bool ok = H5Dread(dataset, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) >= 0;
  H5Dclose(dataset);
  if (!ok) throw OutputError("cannot read dataset '" + name + "' of '" + path + "'");
  return values;
}

std::int64_t dataset_file_count(const std::vector<std::int64_t>& shape) {
  std::int64_t count = 1;
  for (const std::int64_t extent : shape) count *= extent;
  return count;
}

}  // namespace

std::vector<float> DatasetReader::read_floats(const std::string& name) const {
  return dataset_file_read_all<float>(file_, path_, name, H5T_NATIVE_FLOAT,
                                      dataset_file_count(shape(name)));
}

std::vector<std::int32_t> DatasetReader::read_ints(const std::string& name) const {
  return dataset_file_read_all<std::int32_t>(file_, path_, name, H5T_NATIVE_INT32,
                                             dataset_file_count(shape(name)));
}

std::string DatasetReader::description(const std::string& name) const {
  const hid_t dataset = H5Dopen2(file_, name.c_str(), H5P_DEFAULT);
  if (dataset < 0) throw OutputError("'" + path_ + "' has no dataset '" + name + "'");
  std::string text;
  if (H5Aexists(dataset, "description") > 0) {
    try {
      text = dataset_file_read_text(dataset, "description");
    } catch (...) {
      H5Dclose(dataset);
      throw;
    }
  }
  H5Dclose(dataset);
  return text;
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
