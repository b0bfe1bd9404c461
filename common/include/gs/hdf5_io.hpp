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
