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
///   before any work.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iostream>
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
};

/// @brief Checks every output of a run before any work: each as check_output_path() does; two
///        that name the same file (after `..` and symbolic links: the same directory and name,
///        or the same existing file) are refused, naming both flags; the room of the outputs
///        that share a file system is checked together. Then warns on @p warnings (nullptr: not
///        at all) about the temporary files killed runs left beside each.
/// @throws OutputError naming the flag(s) and path(s) concerned.
void check_outputs(const std::vector<PlannedOutput>& outputs, std::ostream* warnings = &std::cerr);

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

  /// @brief Checks @p path (as check_output_path() does, with options.bytes), warns about stale
  ///        temporary files, creates the temporary file with @p create and gives it the
  ///        permission bits (and, where allowed, the owner) of the file it replaces.
  /// @throws OutputError naming options.flag and the path.
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
  ///        temporary file: how appending writers append. Returns the bytes copied.
  std::int64_t copy_previous_content();

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
  /// @brief Bytes written through write() and copy_previous_content().
  std::int64_t bytes_written() const { return bytes_written_; }
  /// @brief Whether commit() succeeded.
  bool committed() const { return committed_; }

 private:
  void step(const char* name) const;

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
  bool committed_ = false;
};

/// @brief Writes @p content as the whole file @p path through an OutputFile made with @p options
///        (its flag names the file in messages), flushed to the disk unless @p flush_to_disk is
///        false.
void write_output_file(const std::string& path, const std::string& content,
                       const OutputOptions& options, bool flush_to_disk = true);

/// @brief Appends @p rows to @p path: a new file holds the old content, then @p header when the
///        old file was missing or empty, then @p rows, and replaces the old one only once
///        complete (the old file stays whole on any failure).
void append_to_output_file(const std::string& path, const std::string& header,
                           const std::string& rows, const OutputOptions& options,
                           bool flush_to_disk = true);

/// @brief Bytes an append to @p path of about @p new_bytes more needs: the current size of the
///        file (it is copied) plus @p new_bytes. For check_outputs().
std::int64_t appended_file_bytes(const std::string& path, std::int64_t new_bytes);

}  // namespace gs
