/// @file hdf5_io.hpp
/// @brief HDF5 output in the course layout: dataset `matrix`, float32, shape [frames, R, C],
///        one chunk per frame, no compression, parameters stored as attributes.
///
/// A run writes to a temporary name beside the target and renames it only after the last frame
/// and the close succeeded, so a failed, full-disk or interrupted run never leaves a file that
/// looks complete.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "gs/params.hpp"

namespace gs {

/// @brief Thrown for every output problem (bad path, no space, failed write, bad file).
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// @brief Name of the dataset that holds the frames.
inline constexpr const char* kDatasetName = "matrix";

/// @brief Checks, before any work, that @p path can receive @p bytes: its directory exists and
///        is writable, @p path is not a directory, and the file system has the room.
/// @throws OutputError with a message that names the path and the problem.
void check_output_path(const std::string& path, std::int64_t bytes);

/// @brief Writes the frames of one run; the file appears at its final name only on commit().
class FrameWriter {
 public:
  /// @brief Creates the temporary file and the dataset for @p params.frames frames.
  /// @param path final file name (`-o`).
  /// @param params the run's parameters, stored as attributes of the dataset.
  /// @param implementation the implementation's name, stored as an attribute.
  FrameWriter(const std::string& path, const Params& params, const std::string& implementation);
  /// @brief Closes and deletes the temporary file unless commit() succeeded.
  ~FrameWriter();
  FrameWriter(const FrameWriter&) = delete;             ///< Owns HDF5 handles: not copyable.
  FrameWriter& operator=(const FrameWriter&) = delete;  ///< Owns HDF5 handles: not copyable.

  /// @brief Writes frame @p index (0-based) from @p v, rows * cols values.
  void write_frame(int index, const float* v);
  /// @brief Checks that every frame was written, closes the file, flushes it to the disk (fsync
  ///        of the file, and of its directory after the rename) unless @p flush_to_disk is false,
  ///        and renames it to its final name.
  void commit(bool flush_to_disk = true);
  /// @brief Seconds the flush of commit() took (0 without one).
  double flush_seconds() const { return flush_seconds_; }
  /// @brief Bytes of frame data written so far.
  std::int64_t bytes_written() const { return bytes_written_; }
  /// @brief The temporary file name used until commit().
  const std::string& temporary_path() const { return temporary_path_; }

 private:
  void close_handles() noexcept;

  std::string path_;
  std::string temporary_path_;
  int rows_ = 0;
  int cols_ = 0;
  int frames_ = 0;
  int frames_written_ = 0;
  std::int64_t bytes_written_ = 0;
  std::int64_t file_ = -1;
  std::int64_t dataset_ = -1;
  std::int64_t file_space_ = -1;
  double flush_seconds_ = 0.0;
  bool committed_ = false;
};

/// @brief What an output file says about itself.
struct OutputInfo {
  int frames = 0;              ///< First dimension of the dataset.
  int rows = 0;                ///< Second dimension.
  int cols = 0;                ///< Third dimension.
  Params params;               ///< Parameters read back from the attributes.
  std::string implementation;  ///< The implementation that wrote it.
};

/// @brief Reads frames back (tests, the renderer, comparisons between runs).
class FrameReader {
 public:
  /// @brief Opens @p path read-only and reads its layout and attributes.
  explicit FrameReader(const std::string& path);
  /// @brief Closes the file.
  ~FrameReader();
  FrameReader(const FrameReader&) = delete;             ///< Owns HDF5 handles: not copyable.
  FrameReader& operator=(const FrameReader&) = delete;  ///< Owns HDF5 handles: not copyable.

  /// @brief The file's layout and attributes.
  const OutputInfo& info() const { return info_; }
  /// @brief Reads frame @p index into a vector of rows * cols values.
  std::vector<float> read_frame(int index) const;

 private:
  std::int64_t file_ = -1;
  std::int64_t dataset_ = -1;
  OutputInfo info_;
};

}  // namespace gs

// ---------------------------------------------------------------------------------------------
// Files of named datasets (added for lesson 09's parameter sweep)
// ---------------------------------------------------------------------------------------------

#include <cstddef>

namespace gs {

/// @brief Writes an HDF5 file of named datasets and attributes of the root group, for results
///        that are not a sequence of frames (lesson 09's sweep: `v` of every member, one value
///        per member for the parameters and the summary). Same discipline as FrameWriter: the
///        file is written as `<path>.partial-<pid>` and renamed to @p path only by commit(), after
///        it was closed and flushed, so a failed or interrupted run leaves no file that looks
///        complete.
class DatasetWriter {
 public:
  /// @brief Creates the temporary file beside @p path. Throws OutputError.
  explicit DatasetWriter(const std::string& path);
  /// @brief Closes and deletes the temporary file unless commit() succeeded.
  ~DatasetWriter();
  DatasetWriter(const DatasetWriter&) = delete;             ///< Owns an HDF5 file: not copyable.
  DatasetWriter& operator=(const DatasetWriter&) = delete;  ///< Owns an HDF5 file: not copyable.

  /// @brief Writes the float32 dataset @p name of shape @p shape from @p values (row-major, as
  ///        many values as the product of @p shape). A dataset of two or more dimensions is
  ///        stored in chunks of one leading index, [1, shape[1], ...] (in a sweep: one member
  ///        per chunk, read alone without touching the others). A non-empty @p description is
  ///        attached as the dataset's string attribute `description`. Throws OutputError.
  void write(const std::string& name, const std::vector<std::int64_t>& shape, const float* values,
             const std::string& description = "");
  /// @brief The same for an int32 dataset.
  void write(const std::string& name, const std::vector<std::int64_t>& shape,
             const std::int32_t* values, const std::string& description = "");
  /// @brief Attaches the float64 attribute @p name to the root group.
  void set_number(const std::string& name, double value);
  /// @brief Attaches the int64 attribute @p name to the root group.
  void set_integer(const std::string& name, std::int64_t value);
  /// @brief Attaches the string attribute @p name to the root group.
  void set_text(const std::string& name, const std::string& value);
  /// @brief Closes the file, flushes it to the disk (fsync of the file, and of its directory
  ///        after the rename) unless @p flush_to_disk is false, and renames it to its final name.
  void commit(bool flush_to_disk = true);
  /// @brief The temporary file name used until commit().
  const std::string& temporary_path() const { return temporary_path_; }
  /// @brief Bytes of dataset values written so far.
  std::int64_t bytes_written() const { return bytes_written_; }

 private:
  void write_dataset(const std::string& name, const std::vector<std::int64_t>& shape,
                     std::int64_t file_type, std::int64_t memory_type, std::size_t value_size,
                     const void* values, const std::string& description);
  void close_file() noexcept;

  std::string path_;
  std::string temporary_path_;
  std::int64_t file_ = -1;
  std::int64_t bytes_written_ = 0;
  bool committed_ = false;
};

/// @brief Reads what a DatasetWriter wrote: whole datasets and root-group attributes (tests,
///        tools). Throws OutputError for a missing file, dataset or attribute.
class DatasetReader {
 public:
  /// @brief Opens @p path read-only.
  explicit DatasetReader(const std::string& path);
  /// @brief Closes the file.
  ~DatasetReader();
  DatasetReader(const DatasetReader&) = delete;             ///< Owns an HDF5 file: not copyable.
  DatasetReader& operator=(const DatasetReader&) = delete;  ///< Owns an HDF5 file: not copyable.

  /// @brief Whether the file has a dataset named @p name.
  bool has_dataset(const std::string& name) const;
  /// @brief The dimensions of dataset @p name.
  std::vector<std::int64_t> shape(const std::string& name) const;
  /// @brief Every value of dataset @p name as float (row-major).
  std::vector<float> read_floats(const std::string& name) const;
  /// @brief Every value of dataset @p name as int32 (row-major).
  std::vector<std::int32_t> read_ints(const std::string& name) const;
  /// @brief The string attribute `description` of dataset @p name (empty when absent).
  std::string description(const std::string& name) const;
  /// @brief The numeric root-group attribute @p name, as a double.
  double number(const std::string& name) const;
  /// @brief The string root-group attribute @p name.
  std::string text(const std::string& name) const;

 private:
  std::int64_t file_ = -1;
  std::string path_;
};

}  // namespace gs
