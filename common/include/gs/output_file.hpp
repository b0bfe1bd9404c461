/// @file output_file.hpp
/// @brief The one way every program of the course writes a file: HDF5 frames and datasets, PNG,
///        GIF, CSV, Markdown. One set of rules, kept here and nowhere else:
/// - Only a regular file or a new name is ever written: a FIFO, a device, a socket or a
///   directory is refused before any work, and never opened (nothing hangs on a FIFO).
/// - A symbolic link is written through: the file it points to is replaced, the link stays.
/// - The data goes to a temporary file of its own beside the final target, created exclusively
///   (O_CREAT | O_EXCL | O_NOFOLLOW, or HDF5's H5F_ACC_EXCL) under a name no other run can pick,
///   `<name>.partial-<host>-<pid>-<random>` (shortened to fit NAME_MAX): a link planted under any
///   name is never followed, another run's file never truncated.
/// - Replacing a file keeps its permission bits, and its owner and group where allowed.
/// - Only when complete is the file flushed (fsync), renamed over the target, and its directory
///   flushed: on any failure or signal the previous file stays as it was, and no file that
///   looks complete but is not is ever left. A second signal deletes every temporary file
///   (interrupt.hpp).
/// - A run killed by SIGKILL cannot delete its temporary file: the next run lists those left by
///   dead processes of this host, and never deletes them itself.
/// - A run that writes several files declares them all first (check_outputs()): two that name
///   the same file are refused, naming both flags, and the room they need is checked, all
///   before any work; each writer then takes the target found there (OutputOptions::checked)
///   and checks nothing again.
/// - A large file is written back to the disk while it is written (OutputFile::written(): the
///   frame writers call it per frame), so that the final fsync waits only for the last bytes and
///   the run leaves the page cache as it found it. The promise does not change: the fsync of the
///   file and of its directory before success.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace gs {

/// @brief Thrown for every output problem (bad path, no space, failed write, bad file).
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// @brief Longest file name (one path component), in bytes, that Linux file systems accept
///        (NAME_MAX). The temporary file's name always fits it: the base part is shortened.
inline constexpr std::size_t kMaxFileNameBytes = 255;

/// @brief What an output path leads to, through its symbolic links.
struct OutputTarget {
  std::string given;           ///< The path as the user gave it.
  std::string flag;            ///< The flag that gave it ("-o", "--png", ...), for messages.
  std::filesystem::path path;  ///< The file replaced at the end: given, or where its links lead.
  bool exists = false;         ///< A regular file is there now.
  struct stat status {};       ///< Its status, when it exists.
};

/// @brief Follows @p path through its symbolic links (at most 40) and refuses anything but a
///        regular file or a new name, without opening it.
/// @throws OutputError naming @p flag, the path and what it is (a directory, a FIFO, ...).
OutputTarget resolve_output(const std::string& path, const std::string& flag = "-o");

/// @brief Checks, before any work, that @p path can receive a file of @p bytes: it is a regular
///        file, a symbolic link to one, or a new name in an existing, writable directory; its
///        name fits kMaxFileNameBytes; the file system has the room.
/// @throws OutputError with a message that names @p flag, the path and the problem.
void check_output_path(const std::string& path, std::int64_t bytes, const std::string& flag = "-o");

/// @brief One file a run is going to write, declared before any work.
struct PlannedOutput {
  std::string path;        ///< As given on the command line.
  std::string flag;        ///< The flag that names it ("-o", "--png", "-d", ...).
  std::int64_t bytes = 0;  ///< Room it needs (0 when its size cannot be known beforehand).
  /// @brief For a file rows are appended to (a measurement CSV): its header line, with its
  ///        '\n'. An existing file that is not empty must begin with exactly this line (it is
  ///        this program's file), else it is refused. Empty: a file written whole.
  std::string appended_header = {};
};

/// @brief Checks every output of a run before any work: each as check_output_path() does, and
///        one appended to (PlannedOutput::appended_header) as append_to_output_file() does; two
///        that name the same file (after `..` and symbolic links: the same directory and name,
///        or the same existing file) are refused, naming both flags; the room of the outputs
///        that share a file system is checked together. Then warns on @p warnings (nullptr: not
///        at all) about the temporary files killed runs left beside each.
/// @return What each output leads to, in the order of @p outputs: hand one to its writer
///         (OutputOptions::checked) and the path is checked once, here.
/// @throws OutputError naming the flag(s) and path(s) concerned.
std::vector<OutputTarget> check_outputs(const std::vector<PlannedOutput>& outputs,
                                        std::ostream* warnings = &std::cerr);

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

/// @brief The default of OutputOptions::writeback_bytes: 64 MiB of a file on its way to the disk.
///
/// The model: the disk takes bytes at its rate D (about 1.9 GB/s on the course's GPU machine),
/// while a frame of S bytes reaches the page cache every t seconds (compute, copy and the copy
/// into the page cache: about 2.5 ms for an official frame of 8.29 MB). When the writer waits
/// for the oldest frame in flight, the frames behind it must keep the disk busy until the writer
/// starts the next one: at least D x t, about 5 MB, one frame. 64 MiB is eight official frames,
/// about 35 ms of the disk's work: room for a virtual disk's latency jitter, while the dirty
/// pages a run keeps in memory stay at 64 MiB whatever its length.
inline constexpr std::int64_t kWritebackBytesInFlight = std::int64_t{64} << 20;

/// @brief What the writeback of an OutputFile did, for the report (OutputFile::writeback()).
struct WritebackStats {
  bool requested = false;         ///< The options asked for it (writeback_bytes > 0).
  bool active = false;            ///< It runs: requested, and the file system can do it.
  std::string off_because;        ///< Why it does not run, when it was requested and does not.
  std::int64_t budget_bytes = 0;  ///< The most bytes in flight (OutputOptions::writeback_bytes).
  std::int64_t ranges = 0;        ///< Ranges whose writeback was started (one per frame).
  std::int64_t bytes = 0;         ///< Their bytes.
  std::int64_t waits = 0;         ///< Ranges waited for (and dropped from the page cache).
  double start_seconds = 0.0;     ///< In sync_file_range(WRITE): starting writeback. Returns at
                                  ///< once unless the disk's request queue is full.
  double wait_seconds = 0.0;      ///< Waiting for earlier ranges to reach the disk, and dropping
                                  ///< them from the page cache: the disk setting the pace.
};

/// @brief The kernel call that starts and waits for writeback: sync_file_range(2)'s signature.
///        A test replaces it (OutputOptions::sync_range) to count calls or to make them fail.
using SyncRange =
    std::function<int(int descriptor, std::int64_t offset, std::int64_t bytes, unsigned int flags)>;

/// @brief How an OutputFile is made; the defaults are what programs use.
struct OutputOptions {
  /// @brief Options for the file named by @p file_flag, warnings about stale temporary files
  ///        going to @p warnings_to.
  explicit OutputOptions(std::string file_flag = "-o", std::ostream* warnings_to = &std::cerr)
      : flag(std::move(file_flag)), warnings(warnings_to) {}
  /// @brief The flag that names the file, in every message ("-o", "--png", "--csv", ...).
  std::string flag;
  /// @brief Room the file needs, checked when it is created (0: only that the disk is not full).
  std::int64_t bytes = 0;
  /// @brief What the "not enough space" message suggests (default: another place for the flag).
  std::string room_hint;
  /// @brief Makes the unique part of the temporary file's name (default: 8 random hexadecimal
  ///        digits); at most 8 characters, no '-', '/' or NUL. A test makes two writers pick the
  ///        same name with it.
  std::function<std::string()> unique_part;
  /// @brief Told each step of commit() as it happens: "fsync file", "rename", "fsync directory"
  ///        (a test checks their order).
  std::function<void(const std::string& step)> on_commit_step;
  /// @brief Where the warning about stale temporary files goes (nullptr: nowhere, e.g. when
  ///        check_outputs() warned already).
  std::ostream* warnings;
  /// @brief Writeback as the file is written (OutputFile::written()): the most bytes whose
  ///        writeback was started and not yet waited for. 0 turns it off: the bytes then wait in
  ///        the page cache until the kernel or the final fsync writes them (what `--no-fsync`
  ///        and `--no-writeback` ask for).
  std::int64_t writeback_bytes = kWritebackBytesInFlight;
  /// @brief Test seam: replaces the kernel's `sync_file_range` (empty: the kernel's own).
  SyncRange sync_range;
  /// @brief What check_outputs() found this file's path to lead to, its room included: the
  ///        OutputFile then creates its temporary file there without checking the path again
  ///        (the creation itself still follows no link and opens no existing file). Empty: the
  ///        OutputFile checks the path itself, the run's only check (bytes, room_hint).
  std::optional<OutputTarget> checked;
};

/// @brief One output file being written: a temporary file beside the target until commit(),
///        deleted (the previous file untouched) if the OutputFile goes away uncommitted. While
///        it exists, a second signal deletes it (add_partial_output()).
class OutputFile {
 public:
  /// @brief Creates the temporary file named @p temporary exclusively and returns an open,
  ///        writable descriptor of it that the OutputFile owns, or -1 with errno set (EEXIST
  ///        when the name is taken: another name is tried). May throw OutputError after cleaning
  ///        up what it created.
  using Create = std::function<int(const std::string& temporary)>;

  /// @brief open(O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666): plain files.
  static int create_plain(const std::string& temporary);

  /// @brief Checks @p path (as check_output_path() does, with options.bytes) unless
  ///        check_outputs() did (options.checked), warns about stale temporary files, creates
  ///        the temporary file with @p create and gives it the permission bits (and, where
  ///        allowed, the owner) of the file it replaces.
  /// @throws OutputError naming options.flag and the path; std::invalid_argument when
  ///         options.checked is the target of another path.
  explicit OutputFile(const std::string& path, OutputOptions options = OutputOptions(),
                      const Create& create = create_plain);
  /// @brief Deletes the temporary file unless commit() succeeded.
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;             ///< Owns a file: not copyable.
  OutputFile& operator=(const OutputFile&) = delete;  ///< Owns a file: not copyable.

  /// @brief Writes all of @p bytes bytes at @p data. Throws OutputError (e.g. the disk is full).
  void write(const void* data, std::size_t bytes);
  /// @brief Writes @p text.
  void write(const std::string& text) { write(text.data(), text.size()); }
  /// @brief write() for C callbacks (libpng, giflib) that cannot let an exception through:
  ///        returns 0, or the error number of the first failed write (later calls fail too).
  int write_noexcept(const void* data, std::size_t bytes) noexcept;
  /// @brief The error number of the first failed write, or 0.
  int write_error() const { return write_error_; }
  /// @brief Throws the OutputError of a failed write with @p error_number.
  [[noreturn]] void throw_write_error(int error_number) const;
  /// @brief Copies the content of the file being replaced (nothing for a new name) to the
  ///        temporary file: how appending writers append. Returns the bytes copied. With
  ///        @p required_header, a file that is not empty must begin with exactly that line
  ///        (see append_to_output_file()); throws OutputError before copying anything otherwise.
  std::int64_t copy_previous_content(const std::string& required_header = std::string());

  /// @brief Says that bytes [@p offset, @p offset + @p bytes) of the file were just written (by
  ///        write(), or by a library through descriptor(): HDF5). Unless writeback is off, starts
  ///        the writeback of their whole pages to the disk (sync_file_range(SYNC_FILE_RANGE_WRITE),
  ///        which returns at once; a partial last page waits for the next range or the flush,
  ///        since the next write may share it), then, while more than
  ///        OutputOptions::writeback_bytes are in flight, waits for the oldest range to reach the
  ///        disk and drops its pages from the page cache (posix_fadvise(POSIX_FADV_DONTNEED)). On a
  ///        file system that cannot (tmpfs: no disk; EINVAL, ENOSYS, ESPIPE) it turns itself off
  ///        and says why in writeback().
  /// @throws OutputError when the disk reports an error (EIO: a failing disk; ENOSPC).
  void written(std::int64_t offset, std::int64_t bytes);
  /// @brief What the writeback did so far.
  const WritebackStats& writeback() const { return writeback_; }
  /// @brief Flushes the file to the disk (fsync) and, when writeback ran, drops its pages from
  ///        the page cache: what commit() does first. For a file that is never committed (the
  ///        benchmark's baselines). Returns the seconds it took.
  /// @throws OutputError when the flush fails.
  double flush();

  /// @brief Flushes the file to the disk (fsync) unless @p flush_to_disk is false, gives it the
  ///        replaced file's permission bits, closes it, renames it over the target, and
  ///        flushes the directory (unless @p flush_to_disk is false). The data must be complete
  ///        (an HDF5 file closed by its library) before.
  /// @throws OutputError when a step fails; if only the directory's flush fails, the file is
  ///         already complete at its final name.
  void commit(bool flush_to_disk = true);
  /// @brief Closes and deletes the temporary file (nothing once committed).
  void abandon() noexcept;

  /// @brief The descriptor of the temporary file being written (-1 once closed): for fsync, and
  ///        for writing back its pages to the disk as frames are written.
  int descriptor() const { return descriptor_; }
  /// @brief The path as given.
  const std::string& path() const { return path_; }
  /// @brief The flag that named it.
  const std::string& flag() const { return flag_; }
  /// @brief The temporary file's name, used until commit().
  const std::string& temporary_path() const { return temporary_path_; }
  /// @brief The file commit() replaces: the path, or the file its symbolic link points to.
  const std::string& target_path() const { return target_path_; }
  /// @brief Seconds the flush of commit() took (0 without one).
  double flush_seconds() const { return flush_seconds_; }
  /// @brief Seconds the rename of commit() took: replacing a file, the file system frees the
  ///        replaced file's blocks inside it (on ext4 mounted with `discard`, 0.2-0.3 s per GB
  ///        on the course's machines); a new name costs next to nothing.
  double rename_seconds() const { return rename_seconds_; }
  /// @brief Bytes written through write() and copy_previous_content().
  std::int64_t bytes_written() const { return bytes_written_; }
  /// @brief Whether commit() succeeded.
  bool committed() const { return committed_; }

 private:
  void step(const char* name) const;
  void wait_for_oldest_range();
  void turn_writeback_off(const std::string& because);
  void throw_writeback_error(int error_number, const char* doing) const;

  std::string path_;
  std::string flag_;
  std::string target_path_;
  std::string temporary_path_;
  std::string registered_partial_;  // the absolute name given to add_partial_output()
  std::function<void(const std::string&)> on_commit_step_;
  struct stat replaced_ {};  // the file replaced, when replaced_exists_
  bool replaced_exists_ = false;
  int descriptor_ = -1;
  bool owns_temporary_ = false;
  int final_mode_ = -1;  // the replaced file's permission bits, given to ours at commit()
  int write_error_ = 0;
  std::int64_t bytes_written_ = 0;
  double flush_seconds_ = 0.0;
  double rename_seconds_ = 0.0;
  bool committed_ = false;
  // The writeback as the file is written: ranges started, oldest first, not yet waited for.
  struct Range {
    std::int64_t offset;
    std::int64_t bytes;
  };
  std::vector<Range> in_flight_;
  std::size_t oldest_ = 0;  // in_flight_[oldest_ ...] are in flight
  std::int64_t in_flight_bytes_ = 0;
  WritebackStats writeback_;
  SyncRange sync_range_;
};

/// @brief How much of a file is in the page cache (resident_pages()).
struct Residency {
  std::int64_t pages = 0;     ///< Pages the file spans.
  std::int64_t resident = 0;  ///< Of those, pages in the page cache.
  /// @brief The resident share, from 0 to 1 (0 for an empty file).
  double share() const {
    return pages > 0 ? static_cast<double>(resident) / static_cast<double>(pages) : 0.0;
  }
};

/// @brief Counts the pages of the regular file @p path that are in the page cache: mincore(2)
///        on a read-only mapping of it, which reads nothing and faults nothing in. What a run
///        leaves in memory after it ends (`gs_benchmark --resident FILE`).
/// @throws OutputError when the file cannot be opened or mapped.
Residency resident_pages(const std::string& path);

/// @brief Drops the clean pages of @p path from the page cache (posix_fadvise DONTNEED, what
///        an ordinary user can do; dirty pages stay). Between the benchmark's runs. Returns
///        false when the file cannot be opened.
bool drop_from_page_cache(const std::string& path);

/// @brief Writes @p content as the whole file @p path through an OutputFile made with @p options
///        (its flag names the file in messages), flushed to the disk unless @p flush_to_disk is
///        false.
void write_output_file(const std::string& path, const std::string& content,
                       const OutputOptions& options, bool flush_to_disk = true);

/// @brief Appends @p rows to @p path: a new file holds the old content, then @p header when the
///        old file was missing or empty, then @p rows, and replaces the old one only once
///        complete (the old file stays whole on any failure). An old file that is not empty must
///        begin with exactly @p header (a line, with its '\n'): one of another schema, or not a
///        CSV file at all (an HDF5 file given by mistake), is refused (OutputError) and never
///        modified.
void append_to_output_file(const std::string& path, const std::string& header,
                           const std::string& rows, const OutputOptions& options,
                           bool flush_to_disk = true);

/// @brief Bytes an append to @p path of about @p new_bytes more needs: the current size of the
///        file (it is copied) plus @p new_bytes. For check_outputs().
std::int64_t appended_file_bytes(const std::string& path, std::int64_t new_bytes);

}  // namespace gs
