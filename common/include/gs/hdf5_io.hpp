/// @file hdf5_io.hpp
/// @brief HDF5 output in the course layout: dataset `matrix`, float32, shape [frames, R, C],
///        one chunk per frame, no compression, parameters stored as attributes.
///
/// Both writers (FrameWriter for the frames of a run, DatasetWriter for files of named datasets)
/// write through gs::OutputFile (output_file.hpp), which keeps the promises of every output of
/// the course: an exclusive, unpredictable temporary file beside the target, created by HDF5
/// itself (H5F_ACC_EXCL); only a regular file or a new name replaced; a symbolic link written
/// through with its mode kept; fsync and rename only once complete; the previous file kept on any
/// failure or signal; the leftovers of killed runs listed.
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

#include "gs/output_file.hpp"
#include "gs/params.hpp"

namespace gs {

/// @brief Name of the dataset that holds the frames.
inline constexpr const char* kDatasetName = "matrix";

/// @brief Largest frame, in bytes, that can be written: each frame is one HDF5 chunk, and HDF5
///        stores a chunk's size in 32 bits (H5Pset_chunk refuses 4 GiB and more). For float32
///        frames that is at most 1,073,741,823 cells (e.g. 32,767 x 32,767).
inline constexpr std::int64_t kMaxFrameBytes = (std::int64_t{1} << 32) - 1;

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

/// @brief Choices of FrameWriter: the writeback of each frame as it is written
///        (`writeback_bytes`: the bytes in flight, 0 for none), and what tests need (the
///        temporary name's unique part, the commit steps, where warnings go); the defaults are
///        what programs use.
using FrameWriterOptions = OutputOptions;

/// @brief How FrameWriter lays out the frames in its file.
enum class FrameLayout {
  chunk_per_frame,  ///< One HDF5 chunk per frame, allocated as it is written (write_frame()).
  /// The same chunks, every one allocated when the file is created: each frame's bytes lie at
  /// frame_offset(), where other processes may write their rows of it directly (lesson 08's
  /// ranks, each writing its own slab); mark_written_elsewhere() then stands for write_frame().
  chunks_allocated,
};

/// @brief Writes the frames of one run; the file appears at its final name only on commit().
///        While it exists, its temporary file is one a second signal deletes
///        (add_partial_output()).
class FrameWriter {
 public:
  /// @brief Checks the output (check_output_path() with output_file_bytes()) unless
  ///        check_outputs() did (options.checked), warns about stale temporary files, has HDF5
  ///        create the temporary file and the dataset for @p params.frames frames.
  /// @param path final file name (`-o`); a symbolic link is written through.
  /// @param params the run's parameters, stored as attributes of the dataset.
  /// @param implementation the implementation's name, stored as an attribute.
  /// @param options test seams and the warnings' destination; the defaults are the programs'.
  /// @param layout where the frames go: chunk_per_frame (write_frame()), or chunks_allocated
  ///        (every chunk's place known at creation: frame_offset(), mark_written_elsewhere()).
  /// @throws OutputError when the frame is larger than kMaxFrameBytes, the output path is
  ///         refused, or the file cannot be created.
  FrameWriter(const std::string& path, const Params& params, const std::string& implementation,
              FrameWriterOptions options = FrameWriterOptions(),
              FrameLayout layout = FrameLayout::chunk_per_frame);
  /// @brief Closes and deletes the temporary file unless commit() succeeded.
  ~FrameWriter();
  FrameWriter(const FrameWriter&) = delete;             ///< Owns HDF5 handles: not copyable.
  FrameWriter& operator=(const FrameWriter&) = delete;  ///< Owns HDF5 handles: not copyable.

  /// @brief Writes frame @p index (0-based) from @p v, rows * cols values, then starts the
  ///        writeback of the bytes it added to the file and, beyond the bytes allowed in flight,
  ///        waits for earlier frames to reach the disk (OutputFile::written()).
  void write_frame(int index, const float* v);
  /// @brief FrameLayout::chunks_allocated: the byte offset of frame @p index (0-based) in the
  ///        file (its chunk's address), where its rows * cols little-endian floats go, row by row.
  /// @throws OutputError for the chunked layout or an index outside the frames.
  std::int64_t frame_offset(int index) const;
  /// @brief FrameLayout::chunks_allocated: every frame was written into the file by other
  ///        means (pwrite at frame_offset(), by this process or another); commit() may go on.
  void mark_written_elsewhere();
  /// @brief Checks that every frame was written, closes the file, flushes it to the disk (fsync
  ///        of the file, and of its directory after the rename) unless @p flush_to_disk is false,
  ///        and renames it to its final name.
  /// @throws OutputError when a frame is missing or a step fails; if only the directory's flush
  ///         fails, the file is already complete at its final name.
  void commit(bool flush_to_disk = true);
  /// @brief Seconds the flush of commit() took (0 without one).
  double flush_seconds() const { return file_->flush_seconds(); }
  /// @brief Seconds the rename of commit() took (OutputFile::rename_seconds()).
  double rename_seconds() const { return file_->rename_seconds(); }
  /// @brief What the writeback per frame did: on or off (and why), and its seconds.
  const WritebackStats& writeback() const { return file_->writeback(); }
  /// @brief Bytes of frame data written so far.
  std::int64_t bytes_written() const { return bytes_written_; }
  /// @brief The temporary file name used until commit().
  const std::string& temporary_path() const { return file_->temporary_path(); }
  /// @brief The file commit() replaces: the output, or the file its symbolic link points to.
  const std::string& target_path() const { return file_->target_path(); }
  /// @brief The descriptor of the file being written (a duplicate of HDF5's own; -1 once
  ///        committed): what writes its pages back to the disk as frames are written.
  int descriptor() const { return file_->descriptor(); }

 private:
  struct Hdf5;  // the HDF5 handles, closed by their own destructors
  void abandon() noexcept;

  std::string path_;
  std::unique_ptr<Hdf5> hdf5_;
  std::unique_ptr<OutputFile> file_;
  int rows_ = 0;
  int cols_ = 0;
  int frames_ = 0;
  std::vector<bool> written_;
  int frames_written_ = 0;
  std::int64_t bytes_written_ = 0;
  bool committed_ = false;
  FrameLayout layout_ = FrameLayout::chunk_per_frame;
  std::vector<std::int64_t> offsets_;  // chunks_allocated: each frame's place in the file
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
///        per member for the parameters and the summary), through gs::OutputFile like FrameWriter:
///        the file appears at @p path only on commit(), complete and flushed; a failed or
///        interrupted run leaves the previous file as it was.
class DatasetWriter {
 public:
  /// @brief Checks @p path (options.flag names it in messages, options.bytes is the room it
  ///        needs) and has HDF5 create the temporary file beside it. Throws OutputError.
  explicit DatasetWriter(const std::string& path, OutputOptions options = OutputOptions());
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
  const std::string& temporary_path() const { return file_->temporary_path(); }
  /// @brief What the writeback of each dataset, started as it is written, did.
  const WritebackStats& writeback() const { return file_->writeback(); }
  /// @brief Bytes of dataset values written so far.
  std::int64_t bytes_written() const { return bytes_written_; }

 private:
  void write_dataset(const std::string& name, const std::vector<std::int64_t>& shape,
                     std::int64_t file_type, std::int64_t memory_type, std::size_t value_size,
                     const void* values, const std::string& description);
  void close_file() noexcept;

  std::int64_t hdf5_file_ = -1;
  std::unique_ptr<OutputFile> file_;
  std::int64_t bytes_written_ = 0;
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
