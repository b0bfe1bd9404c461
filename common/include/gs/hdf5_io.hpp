/// @file hdf5_io.hpp
/// @brief HDF5 output in the course layout: dataset `matrix`, float32, shape [frames, R, C],
///        one chunk per frame, no compression, parameters stored as attributes.
///
/// What the writer guarantees (README.md, "Exit codes and errors"):
/// - A run writes to a temporary file of its own beside the target, created exclusively
///   (O_EXCL) under a name no other run can pick (host, process id and a random part), and
///   renames it over the target only after the last frame, the close and, unless told otherwise,
///   an fsync of the file; the directory is flushed after the rename. A failed, full-disk or
///   interrupted run never leaves a file that looks complete, and never truncates a file it did
///   not just create.
/// - Only a regular file (or a new name) is ever replaced: a device, a FIFO, a socket or a
///   directory given as the output is refused before any work.
/// - A symbolic link given as the output is written through: the file it points to is replaced
///   (the temporary is made beside that file), the link itself stays, and the replaced file's
///   permission bits (and, where allowed, its owner and group) are kept.
/// - A run that was killed (SIGKILL, a crash, a power loss) cannot delete its temporary file; the
///   next run with the same output lists those left by dead processes of this host (it never
///   deletes them itself).
///
/// The reader checks everything it reads (dimensions, each attribute's type and that it holds
/// exactly one value) and refuses a malformed file with a message instead of crashing. It also
/// refuses what is not a simulation's file: values kept in another file (external storage, a
/// virtual dataset), a layout other than one chunk per frame, a frame never written, a chunk past
/// the file's real end (a file cut short), an input that is not a regular file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iostream>
#include <memory>
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

/// @brief Largest frame, in bytes, that can be written: each frame is one HDF5 chunk, and HDF5
///        stores a chunk's size in 32 bits (H5Pset_chunk refuses 4 GiB and more). For float32
///        frames that is at most 1,073,741,823 cells (e.g. 32,767 x 32,767).
inline constexpr std::int64_t kMaxFrameBytes = (std::int64_t{1} << 32) - 1;

/// @brief Longest file name (one path component), in bytes, that Linux file systems accept
///        (NAME_MAX). The temporary file's name always fits it: the base part is shortened.
inline constexpr std::size_t kMaxFileNameBytes = 255;

/// @brief Room, in bytes, allowed for what HDF5 writes besides the frames of a run of
///        @p frames frames: 16 KiB plus 128 bytes per frame.
///
/// Measured with HDF5 1.10.8 for this layout (the default file format: a v1 B-tree indexes the
/// chunks): 5,136 bytes per file (superblock, object header, attributes), then 6,272 more as the
/// 65th frame splits the first B-tree node, and 58.5 bytes per frame at 4,000 frames; the frame
/// size does not matter. A v1 B-tree node of a 3-D chunked dataset is 3,136 bytes and indexes
/// up to 64 chunks (24 bytes of header, 65 keys of 40 bytes, 64 addresses of 8; HDF5 File
/// Format Specification version 2, section III.A.1, with the default K of 32). The allowance is
/// about twice what was measured, for other HDF5 versions and partly filled nodes.
std::int64_t hdf5_metadata_allowance(std::int64_t frames);

/// @brief Bytes the output file of @p params needs on the disk: the frames
///        (Params::output_bytes()) plus hdf5_metadata_allowance(); saturated at INT64_MAX.
std::int64_t output_file_bytes(const Params& params);

/// @brief Checks, before any work, that @p path can receive a file of @p bytes (use
///        output_file_bytes()): it is a regular file, a symbolic link to one, or a new name in an
///        existing, writable directory; its name fits kMaxFileNameBytes; the file system has the
///        room. FrameWriter's constructor runs the same checks.
/// @throws OutputError with a message that names the path and the problem (for a device, a FIFO,
///         a socket or a directory: what it is).
void check_output_path(const std::string& path, std::int64_t bytes);

/// @brief A temporary file left beside an output by a run whose process is gone.
struct StalePartial {
  std::string path;        ///< The leftover file.
  long pid = 0;            ///< The process that created it (no longer running on this host).
  std::int64_t bytes = 0;  ///< Its size.
};

/// @brief The temporary files of output @p path (or of the file its symbolic link points to)
///        left by processes of this host that no longer run: what a run killed by SIGKILL, a
///        crash or a power loss leaves. Temporaries of other hosts, and of processes still
///        running, are not listed. Never deletes anything.
std::vector<StalePartial> find_stale_partials(const std::string& path);

/// @brief Prints a warning that names each of @p stale and how to delete it (nothing when empty).
void warn_about_stale_partials(std::ostream& out, const std::vector<StalePartial>& stale);

/// @brief Choices of FrameWriter that tests need to make; the defaults are what programs use.
struct FrameWriterOptions {
  /// @brief Makes the unique part of the temporary file's name (default: 8 random hexadecimal
  ///        digits); at most 8 characters, no '-', '/' or NUL. A test makes two writers pick
  ///        the same name with it.
  std::function<std::string()> unique_part;
  /// @brief Told each step of commit() as it happens: "fsync file", "rename",
  ///        "fsync directory" (a test checks their order).
  std::function<void(const std::string& step)> on_commit_step;
  /// @brief Where the warning about stale temporary files goes (nullptr: nowhere).
  std::ostream* warnings = &std::cerr;
};

/// @brief Writes the frames of one run; the file appears at its final name only on commit().
///        While it exists, its temporary file is the one a second signal deletes
///        (set_partial_output()).
class FrameWriter {
 public:
  /// @brief Checks the output (check_output_path()), warns about stale temporary files, creates
  ///        the temporary file and the dataset for @p params.frames frames.
  /// @param path final file name (`-o`); a symbolic link is written through.
  /// @param params the run's parameters, stored as attributes of the dataset.
  /// @param implementation the implementation's name, stored as an attribute.
  /// @param options test seams; the defaults are the programs'.
  /// @throws OutputError when the frame is larger than kMaxFrameBytes, the output path is
  ///         refused, or the file cannot be created.
  FrameWriter(const std::string& path, const Params& params, const std::string& implementation,
              FrameWriterOptions options = {});
  /// @brief Closes and deletes the temporary file unless commit() succeeded.
  ~FrameWriter();
  FrameWriter(const FrameWriter&) = delete;             ///< Owns HDF5 handles: not copyable.
  FrameWriter& operator=(const FrameWriter&) = delete;  ///< Owns HDF5 handles: not copyable.

  /// @brief Writes frame @p index (0-based) from @p v, rows * cols values.
  void write_frame(int index, const float* v);
  /// @brief Checks that every frame was written, closes the file, flushes it to the disk (fsync
  ///        of the file, and of its directory after the rename) unless @p flush_to_disk is false,
  ///        and renames it to its final name.
  /// @throws OutputError when a frame is missing or a step fails; if only the directory's flush
  ///         fails, the file is already complete at its final name.
  void commit(bool flush_to_disk = true);
  /// @brief Seconds the flush of commit() took (0 without one).
  double flush_seconds() const { return flush_seconds_; }
  /// @brief Bytes of frame data written so far.
  std::int64_t bytes_written() const { return bytes_written_; }
  /// @brief The temporary file name used until commit().
  const std::string& temporary_path() const { return temporary_path_; }
  /// @brief The file commit() replaces: the output, or the file its symbolic link points to.
  const std::string& target_path() const { return target_path_; }

 private:
  struct Hdf5;  // the HDF5 handles, closed by their own destructors
  void abandon() noexcept;
  void forget_partial() noexcept;

  std::string path_;
  std::string target_path_;
  std::string temporary_path_;
  std::string registered_partial_;  // the absolute name given to set_partial_output()
  std::unique_ptr<Hdf5> hdf5_;
  std::function<void(const std::string&)> on_commit_step_;
  int descriptor_ = -1;  // the temporary file as created (O_EXCL), kept for fsync
  bool owns_temporary_ = false;
  int final_mode_ = -1;  // the replaced file's permission bits, given to ours at commit()
  int rows_ = 0;
  int cols_ = 0;
  int frames_ = 0;
  std::vector<bool> written_;
  int frames_written_ = 0;
  std::int64_t bytes_written_ = 0;
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
  /// @brief Opens @p path read-only and reads and checks its layout and attributes: a
  ///        three-dimensional floating-point dataset of at least one frame of at most kMaxCells
  ///        cells, and every attribute the writer writes, each of its type (an integer that fits
  ///        an int, a finite number, a string), each holding exactly one value, the sizes agreeing
  ///        with the dataset's. Refuses, before reading a value, a path that is not a regular
  ///        file, a file HDF5 finds truncated, and a dataset whose values are not in the file
  ///        (external storage, a virtual dataset) or not stored one chunk per frame, [1, R, C].
  /// @throws OutputError naming the file and what is wrong with it.
  explicit FrameReader(const std::string& path);
  /// @brief Closes the file.
  ~FrameReader();
  FrameReader(const FrameReader&) = delete;             ///< Owns HDF5 handles: not copyable.
  FrameReader& operator=(const FrameReader&) = delete;  ///< Owns HDF5 handles: not copyable.

  /// @brief The file's layout and attributes.
  const OutputInfo& info() const { return info_; }
  /// @brief Reads frame @p index into a vector of rows * cols values, after checking that its
  ///        chunk was written, has the size of a frame (unless compressed) and lies inside the
  ///        file's size on the disk. Values are returned as stored: NaN and infinities included.
  /// @throws OutputError naming the frame, the file and the problem.
  std::vector<float> read_frame(int index) const;

 private:
  struct Hdf5;  // the HDF5 handles, closed by their own destructors
  std::string path_;
  std::unique_ptr<Hdf5> hdf5_;
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
///        tools). Throws OutputError for a missing file, dataset or attribute, and, like
///        FrameReader, for what is not the file's own data: an input that is not a regular file,
///        a truncated file, a dataset kept in another file (external storage, virtual), values
///        never written or lying past the file's end.
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
