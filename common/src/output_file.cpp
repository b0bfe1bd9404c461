// The output mechanism's file (output_file.hpp): the exclusive temporary file beside the target,
// its writing, the commit sequence (fsync, permissions, rename, fsync of the directory), and
// whole files and appends. Every writer of the course goes through it: HDF5 (hdf5_io.cpp), PNG
// (png_file.cpp), GIF (apps/pictures.cpp), CSV and Markdown (report.cpp, benchmark.cpp, the
// lessons). It also starts the writeback of a large file as it is written
// (OutputFile::written()), and measures how much of a file is in the page cache
// (resident_pages()). The paths, their checks and the temporary names: output_paths.cpp.
#include "gs/output_file.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <utility>

#include "gs/interrupt.hpp"
#include "output_detail.hpp"

namespace gs {
namespace fs = std::filesystem;

using namespace output_detail;

namespace {

// ---------------------------------------------------------------------------------------------
// Flushing to the disk

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// fsync of the directory that holds @p path: makes the rename itself durable. A file system
// that cannot flush a directory says EINVAL; nothing more can be done there.
void flush_directory_of(const fs::path& path) {
  const fs::path directory = directory_of(path);
  const int descriptor = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (descriptor < 0) {
    const int error = errno;
    throw OutputError("'" + path.string() + "' is complete, but its directory could not be " +
                      "opened to flush the rename to the disk" + reason_of(error));
  }
  const int status = ::fsync(descriptor);
  const int error = errno;
  ::close(descriptor);
  if (status != 0 && error != EINVAL) {
    throw OutputError("'" + path.string() + "' is complete, but flushing its directory to the " +
                      "disk failed" + reason_of(error) + "; after a crash it may be missing");
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// OutputFile

int OutputFile::create_plain(const std::string& temporary) {
  // O_EXCL: nothing already under this name (another run's file, a link planted there) is
  // opened; O_NOFOLLOW says the same of a link, for file systems where O_EXCL alone may not.
  return ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
}

OutputFile::OutputFile(const std::string& path, OutputOptions options, const Create& create)
    : path_(path),
      flag_(options.flag),
      on_commit_step_(std::move(options.on_commit_step)),
      sync_range_(std::move(options.sync_range)) {
  writeback_.requested = options.writeback_bytes > 0;
  writeback_.active = writeback_.requested;
  writeback_.budget_bytes = std::max<std::int64_t>(options.writeback_bytes, 0);
  if (!sync_range_) {
    sync_range_ = [](int descriptor, std::int64_t offset, std::int64_t bytes, unsigned int flags) {
      return ::sync_file_range(descriptor, offset, bytes, flags);
    };
  }
  if (options.checked && options.checked->given != path) {
    throw std::invalid_argument("OutputFile: options.checked is the target of '" +
                                options.checked->given + "', not of '" + path + "'");
  }
  // The path is checked once: here, or by check_outputs() with the run's other files.
  const OutputTarget target = options.checked ? *options.checked : resolve_output(path, flag_);
  if (!options.checked) {
    check_place(target);
    check_room(target, options.bytes, options.room_hint);
  }
  target_path_ = target.path.string();
  replaced_exists_ = target.exists;
  replaced_ = target.status;
  if (options.warnings != nullptr) {
    warn_about_stale_partials(*options.warnings, stale_partials_of(target.path));
  }

  // The temporary file, under a name of our own beside the target, created exclusively: if
  // anything exists under that name (another run's file, a link planted there) the creation
  // fails and another name is tried, so no other file is ever opened, truncated or followed.
  const std::string stem = partial_prefix(target.path.filename().string()) + host_part() + "-" +
                           std::to_string(::getpid()) + "-";
  const std::function<std::string()> unique_part =
      options.unique_part ? options.unique_part : random_unique_part;
  constexpr int kAttempts = 16;
  int error = 0;
  bool name_taken = false;
  for (int attempt = 0; attempt < kAttempts && descriptor_ < 0; ++attempt) {
    const std::string unique = unique_part().substr(0, kUniqueChars);
    temporary_path_ = (directory_of(target.path) / (stem + unique)).string();
    errno = 0;
    descriptor_ = create(temporary_path_);
    error = errno;
    struct stat existing {};
    name_taken = descriptor_ < 0 && ::lstat(temporary_path_.c_str(), &existing) == 0;
    if (descriptor_ < 0 && !name_taken) break;
  }
  if (descriptor_ < 0) {
    throw OutputError("cannot create the temporary file " + in_quotes(temporary_path_) + " for " +
                      named(flag_, path) +
                      (name_taken ? std::string(": a file of that name already exists "
                                                "(another run writing the same output?)")
                                  : reason_of(error)));
  }
  owns_temporary_ = true;
  if (writeback_.active) {
    // In memory there is no disk to write back to: tmpfs and ramfs keep their pages for good.
    struct statfs file_system {};
    if (::fstatfs(descriptor_, &file_system) == 0 &&
        (file_system.f_type == TMPFS_MAGIC || file_system.f_type == RAMFS_MAGIC)) {
      turn_writeback_off("tmpfs keeps the file in memory: there is no disk to write to");
    }
  }
  // A second signal deletes this file before the immediate exit (interrupt.hpp). The name is
  // made absolute so that it stays right whatever the working directory becomes.
  std::error_code no_error;
  registered_partial_ = fs::absolute(temporary_path_, no_error).string();
  if (!add_partial_output(registered_partial_)) registered_partial_.clear();
  if (target.exists) {
    // Replacing a file keeps its permission bits, and its owner and group where we may set them
    // (fchown first: it can clear set-id bits that fchmod restores). Until commit() the
    // temporary file is never more open than the target (a 0600 file's data is not readable by
    // others meanwhile), but stays writable by us; commit() gives it the exact bits.
    if (target.status.st_uid != ::geteuid() || target.status.st_gid != ::getegid()) {
      const int ignored = ::fchown(descriptor_, target.status.st_uid, target.status.st_gid);
      (void)ignored;  // not permitted for an ordinary user: the file becomes theirs
    }
    final_mode_ = static_cast<int>(target.status.st_mode & 07777);
    if (::fchmod(descriptor_, (target.status.st_mode & 0777) | S_IRUSR | S_IWUSR) != 0) {
      const int chmod_error = errno;
      abandon();
      throw OutputError("cannot give " + in_quotes(temporary_path_) + " the permissions of " +
                        in_quotes(target_path_) + reason_of(chmod_error));
    }
  }
}

OutputFile::~OutputFile() {
  abandon();
}

void OutputFile::abandon() noexcept {
  if (committed_) return;
  if (descriptor_ >= 0) {
    ::close(descriptor_);
    descriptor_ = -1;
  }
  if (owns_temporary_) {
    ::unlink(temporary_path_.c_str());
    owns_temporary_ = false;
  }
  if (!registered_partial_.empty()) {
    remove_partial_output(registered_partial_);
    registered_partial_.clear();
  }
}

int OutputFile::write_noexcept(const void* data, std::size_t bytes) noexcept {
  if (write_error_ != 0) return write_error_;
  if (descriptor_ < 0 || committed_) return write_error_ = EBADF;
  const char* next = static_cast<const char*>(data);
  std::size_t left = bytes;
  while (left > 0) {
    const ssize_t written = ::write(descriptor_, next, left);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return write_error_ = written < 0 ? errno : EIO;
    next += written;
    left -= static_cast<std::size_t>(written);
    bytes_written_ += written;
  }
  return 0;
}

void OutputFile::throw_write_error(int error_number) const {
  throw OutputError("writing " + named(flag_, path_) + " failed" + reason_of(error_number) +
                    (error_number == ENOSPC || error_number == EFBIG || error_number == EDQUOT
                         ? "; is the disk full?"
                         : std::string()));
}

void OutputFile::write(const void* data, std::size_t bytes) {
  const int error = write_noexcept(data, bytes);
  if (error != 0) throw_write_error(error);
}

std::int64_t OutputFile::copy_previous_content(const std::string& required_header) {
  if (!replaced_exists_) return 0;
  // The very file resolve_output() found (O_NOFOLLOW: never a link put there since; O_NONBLOCK:
  // never waiting on a FIFO put there since; then the same device and inode, or nothing).
  const int source =
      ::open(target_path_.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (source < 0) {
    const int error = errno;
    throw OutputError("cannot read " + named(flag_, target_path_) + " to append to it" +
                      reason_of(error));
  }
  struct stat status {};
  if (::fstat(source, &status) != 0 || !S_ISREG(status.st_mode) ||
      status.st_dev != replaced_.st_dev || status.st_ino != replaced_.st_ino) {
    ::close(source);
    throw OutputError(named(flag_, path_) + " changed while it was being appended to");
  }
  if (!required_header.empty()) {
    try {
      require_header(source, required_header, flag_, path_);
    } catch (...) {
      ::close(source);
      throw;
    }
  }
  std::int64_t copied = 0;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t got = ::read(source, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int error = errno;
      ::close(source);
      throw OutputError("cannot read " + named(flag_, target_path_) + " to append to it" +
                        reason_of(error));
    }
    if (got == 0) break;
    const int error = write_noexcept(buffer, static_cast<std::size_t>(got));
    if (error != 0) {
      ::close(source);
      throw_write_error(error);
    }
    copied += got;
  }
  ::close(source);
  return copied;
}

void OutputFile::step(const char* name) const {
  if (on_commit_step_) on_commit_step_(name);
}

// ---------------------------------------------------------------------------------------------
// Writeback as the file is written
//
// Where a frame's bytes are: write(2) (or HDF5's pwrite) copies them into the page cache and
// returns; they are dirty pages, in memory only. The kernel writes dirty pages back on its own
// only past vm.dirty_background_ratio of memory (about 12 GB on a host with 125 GiB: more than
// the official run's 8.29 GB), so without help every byte waits for the final fsync, and the
// run's wall time is the writing plus the whole drain. Starting each range's writeback as soon
// as it is written lets the disk drain while the next frames are computed and written; waiting
// for a range a few frames later bounds the dirty memory; dropping it then leaves the page cache
// as the run found it. None of this makes anything durable (sync_file_range flushes neither the
// file's metadata nor the disk's cache): commit()'s fsync still does, and waits only for what is
// left.
//
// O_DIRECT is the other way to bypass the page cache, and HDF5's sec2 driver cannot use it (every
// write must be aligned, in offset, length and buffer, to the disk's blocks). gs_benchmark
// --end-to-end --fsync measures both on the same bytes: the writer keeps writeback, which needs
// no alignment and leaves HDF5's writes as they are.

void OutputFile::turn_writeback_off(const std::string& because) {
  writeback_.active = false;
  writeback_.off_because = because;
  in_flight_.clear();
  oldest_ = 0;
  in_flight_bytes_ = 0;
}

void OutputFile::throw_writeback_error(int error_number, const char* doing) const {
  throw OutputError(std::string(doing) + " of " + in_quotes(temporary_path_) + " for " +
                    named(flag_, path_) + " failed" + reason_of(error_number) +
                    (error_number == ENOSPC || error_number == EDQUOT ? "; is the disk full?"
                     : error_number == EIO                            ? "; is the disk failing?"
                                                                      : std::string()) +
                    "; " + named(flag_, path_) + " was not replaced");
}

void OutputFile::written(std::int64_t offset, std::int64_t bytes) {
  if (!writeback_.active || descriptor_ < 0 || bytes <= 0 || offset < 0) return;
  // Whole pages only. A range's last page is usually shared with the next write (HDF5's chunks
  // do not start on page boundaries), and a page under writeback is one the next write may have
  // to wait for: each frame's write would then wait for the disk to finish the previous frame,
  // and writing and draining would run in turn instead of together. So the partial last page is
  // left for the next range (which starts at the page that holds its first byte) or the flush.
  static const std::int64_t page = std::max<long>(::sysconf(_SC_PAGESIZE), 512);
  const std::int64_t begin = offset / page * page;
  const std::int64_t end = (offset + bytes) / page * page;
  if (end <= begin) return;  // less than a page so far: the next range or the flush takes it
  offset = begin;
  bytes = end - begin;
  const auto start = std::chrono::steady_clock::now();
  int status = -1;
  do {
    status = sync_range_(descriptor_, offset, bytes, SYNC_FILE_RANGE_WRITE);
  } while (status != 0 && errno == EINTR);
  writeback_.start_seconds += seconds_since(start);
  if (status != 0) {
    const int error = errno;
    if (error == EINVAL || error == ENOSYS || error == ESPIPE || error == EOPNOTSUPP) {
      // Not an error of the data: this file system cannot start writeback of a range. The bytes
      // stay in the page cache until the final fsync, as without writeback.
      turn_writeback_off("this file system cannot write back a range: sync_file_range says " +
                         std::string(std::strerror(error)) +
                         "; the bytes wait in the page cache for the flush");
      return;
    }
    throw_writeback_error(error, "starting the writeback to the disk");
  }
  ++writeback_.ranges;
  writeback_.bytes += bytes;
  in_flight_.push_back({offset, bytes});
  in_flight_bytes_ += bytes;
  // The newest range always stays in flight, even when it alone is over the budget: the disk
  // writes it while the next one is made.
  while (in_flight_bytes_ > writeback_.budget_bytes && in_flight_.size() - oldest_ > 1) {
    wait_for_oldest_range();
  }
  if (oldest_ > 1024 && oldest_ * 2 > in_flight_.size()) {  // keep the list short
    in_flight_.erase(in_flight_.begin(), in_flight_.begin() + static_cast<std::ptrdiff_t>(oldest_));
    oldest_ = 0;
  }
}

void OutputFile::wait_for_oldest_range() {
  const Range range = in_flight_[oldest_++];
  in_flight_bytes_ -= range.bytes;
  const auto start = std::chrono::steady_clock::now();
  int status = -1;
  do {
    // WAIT_BEFORE: the writeback started earlier; WRITE: pages dirtied again since (a page
    // shared with the next range); WAIT_AFTER: until all of it is on the disk.
    status = sync_range_(
        descriptor_, range.offset, range.bytes,
        SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
  } while (status != 0 && errno == EINTR);
  if (status != 0) {
    const int error = errno;
    writeback_.wait_seconds += seconds_since(start);
    throw_writeback_error(error, "writing back");
  }
  // Clean pages now: dropping them costs nothing, and a long run does not fill the page cache
  // with a file nobody is reading (pages shared with a neighbouring range are kept).
  const int ignored = ::posix_fadvise(descriptor_, range.offset, range.bytes, POSIX_FADV_DONTNEED);
  (void)ignored;  // advice: a file system that ignores it loses nothing
  writeback_.wait_seconds += seconds_since(start);
  ++writeback_.waits;
}

double OutputFile::flush() {
  if (write_error_ != 0) throw_write_error(write_error_);
  if (descriptor_ < 0) {
    throw OutputError(in_quotes(temporary_path_) + " is closed; " + named(flag_, path_) +
                      " was not created");
  }
  const auto start = std::chrono::steady_clock::now();
  if (::fsync(descriptor_) != 0) {
    const int error = errno;
    throw OutputError("flushing " + in_quotes(temporary_path_) + " to the disk failed" +
                      reason_of(error) + "; " + named(flag_, path_) + " was not replaced");
  }
  // Every range is on the disk now (the fsync waited for those still in flight).
  in_flight_.clear();
  oldest_ = 0;
  in_flight_bytes_ = 0;
  if (writeback_.active && writeback_.ranges > 0) {
    // The last ranges and HDF5's metadata, clean now: the run leaves the page cache as it found
    // it (a reader of the file reads it from the disk, as after any other program).
    const int ignored = ::posix_fadvise(descriptor_, 0, 0, POSIX_FADV_DONTNEED);
    (void)ignored;
  }
  return seconds_since(start);
}

void OutputFile::commit(bool flush_to_disk) {
  if (committed_) return;
  if (write_error_ != 0) throw_write_error(write_error_);
  if (descriptor_ < 0) {
    throw OutputError(in_quotes(temporary_path_) + " is closed; " + named(flag_, path_) +
                      " was not created");
  }
  // The data must be on the disk before the final name points at it: after a crash or a power
  // loss the final name then holds either the old file or the complete new one. fsync through
  // the descriptor we created the file with flushes that very file, whatever its name is now.
  flush_seconds_ = 0.0;
  if (flush_to_disk) {
    step("fsync file");
    flush_seconds_ += flush();
  }
  if (final_mode_ >= 0 && ::fchmod(descriptor_, static_cast<mode_t>(final_mode_)) != 0) {
    const int error = errno;
    throw OutputError("cannot give " + in_quotes(temporary_path_) + " the permissions of " +
                      in_quotes(target_path_) + reason_of(error));
  }
  const int descriptor = std::exchange(descriptor_, -1);
  if (::close(descriptor) != 0) {
    const int error = errno;
    throw OutputError("closing " + in_quotes(temporary_path_) + " failed" + reason_of(error) +
                      "; " + named(flag_, path_) + " was not replaced");
  }
  // The target may have become something else while we wrote: a FIFO or a device made under its
  // name mid-run would be replaced by the rename. Checked again here, just before it; what stays
  // open is the moment between this lstat and the rename (rename(2) cannot be told to replace
  // only a regular file), microseconds instead of the whole run.
  struct stat now {};
  if (::lstat(target_path_.c_str(), &now) == 0 && !S_ISREG(now.st_mode) && !S_ISLNK(now.st_mode)) {
    abandon();  // deletes the temporary file; the target is left as it is
    throw OutputError("refusing to replace " + named(flag_, target_path_) + ": it became " +
                      kind_of(now.st_mode) +
                      " during the run; it was kept and the new output deleted (" + flag_ +
                      " must name a regular file or a new one)");
  }
  step("rename");
  const auto rename_start = std::chrono::steady_clock::now();
  if (::rename(temporary_path_.c_str(), target_path_.c_str()) != 0) {
    const int error = errno;
    throw OutputError("cannot rename " + in_quotes(temporary_path_) + " to " +
                      in_quotes(target_path_) + reason_of(error));
  }
  rename_seconds_ = seconds_since(rename_start);
  owns_temporary_ = false;
  committed_ = true;
  if (!registered_partial_.empty()) {
    remove_partial_output(registered_partial_);
    registered_partial_.clear();
  }
  if (flush_to_disk) {
    step("fsync directory");
    const auto start = std::chrono::steady_clock::now();
    flush_directory_of(target_path_);
    flush_seconds_ += seconds_since(start);
  }
}

// ---------------------------------------------------------------------------------------------
// The page cache

Residency resident_pages(const std::string& path) {
  const int descriptor = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (descriptor < 0) {
    const int error = errno;
    throw OutputError("cannot open " + in_quotes(path) + reason_of(error));
  }
  struct stat status {};
  if (::fstat(descriptor, &status) != 0 || !S_ISREG(status.st_mode)) {
    ::close(descriptor);
    throw OutputError(in_quotes(path) + " is not a regular file");
  }
  const long page = ::sysconf(_SC_PAGESIZE);
  const std::int64_t size = status.st_size;
  Residency residency;
  residency.pages = (size + page - 1) / page;
  // A piece at a time (1 GiB), so that a file of any size needs little address space and a
  // small vector. mincore() reports the pages of the mapping present in memory; a mapping of the
  // file reads none of it.
  constexpr std::int64_t kPiece = std::int64_t{1} << 30;
  std::vector<unsigned char> present;
  for (std::int64_t offset = 0; offset < size; offset += kPiece) {
    const auto length = static_cast<std::size_t>(std::min(kPiece, size - offset));
    void* mapping = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, descriptor, offset);
    if (mapping == MAP_FAILED) {
      const int error = errno;
      ::close(descriptor);
      throw OutputError("cannot map " + in_quotes(path) + reason_of(error));
    }
    present.assign((length + static_cast<std::size_t>(page) - 1) / static_cast<std::size_t>(page),
                   0);
    const int status_of_mincore = ::mincore(mapping, length, present.data());
    const int error = errno;
    ::munmap(mapping, length);
    if (status_of_mincore != 0) {
      ::close(descriptor);
      throw OutputError("cannot tell which pages of " + in_quotes(path) +
                        " are in memory (mincore)" + reason_of(error));
    }
    for (const unsigned char byte : present) residency.resident += byte & 1u;
  }
  ::close(descriptor);
  return residency;
}

bool drop_from_page_cache(const std::string& path) {
  const int descriptor = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (descriptor < 0) return false;
  const int ignored = ::posix_fadvise(descriptor, 0, 0, POSIX_FADV_DONTNEED);
  (void)ignored;
  ::close(descriptor);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Whole files and appends

void write_output_file(const std::string& path, const std::string& content,
                       const OutputOptions& options, bool flush_to_disk) {
  OutputOptions sized = options;
  sized.bytes = static_cast<std::int64_t>(content.size());
  OutputFile file(path, sized);
  file.write(content);
  file.commit(flush_to_disk);
}

namespace {

// An exclusive lock held from before the old content is read until after the new file is renamed
// over it: two runs appending to one file at once would otherwise each copy the same old content
// and the last rename would drop the other's rows. The lock is flock(2) on a file beside the
// target, `.<name>.lock` (shortened to fit NAME_MAX), which is kept: deleting it would let a
// waiting run lock a file that no longer has the name. Opened without following links and without
// blocking on a FIFO, and used only when it is a regular file.
class AppendLock {
 public:
  explicit AppendLock(const OutputTarget& target) {
    const std::string name = target.path.filename().string();
    constexpr char kSuffix[] = ".lock";
    std::size_t keep = std::min(name.size(), kMaxFileNameBytes - 1 - (sizeof kSuffix - 1));
    while (keep > 0 && keep < name.size() &&
           (static_cast<unsigned char>(name[keep]) & 0xC0) == 0x80) {
      --keep;
    }
    path_ = (directory_of(target.path) / ("." + name.substr(0, keep) + kSuffix)).string();
    descriptor_ = ::open(path_.c_str(),
                         O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0666);
    struct stat status {};
    if (descriptor_ < 0 || ::fstat(descriptor_, &status) != 0 || !S_ISREG(status.st_mode)) {
      const int error = descriptor_ < 0 ? errno : 0;
      throw OutputError("cannot lock " + named(target.flag, target.given) +
                        " to append to it: " + in_quotes(path_) +
                        (error != 0 ? reason_of(error) : " is not a regular file"));
    }
    for (;;) {
      if (::flock(descriptor_, LOCK_EX) == 0) break;
      const int error = errno;
      if (error == EINTR) {
        throw_if_interrupted("while waiting for another run appending to " + target.given);
        continue;
      }
      throw OutputError("cannot lock " + named(target.flag, target.given) + " to append to it (" +
                        in_quotes(path_) + ")" + reason_of(error));
    }
  }
  ~AppendLock() {
    if (descriptor_ >= 0) ::close(descriptor_);  // releases the lock
  }
  AppendLock(const AppendLock&) = delete;
  AppendLock& operator=(const AppendLock&) = delete;

 private:
  std::string path_;
  int descriptor_ = -1;
};

}  // namespace

void append_to_output_file(const std::string& path, const std::string& header,
                           const std::string& rows, const OutputOptions& options,
                           bool flush_to_disk) {
  const AppendLock lock(resolve_output(path, options.flag));
  OutputOptions sized = options;
  sized.bytes = appended_file_bytes(path, static_cast<std::int64_t>(header.size() + rows.size()));
  OutputFile file(path, sized);
  const std::int64_t previous = file.copy_previous_content(header);
  if (previous == 0) file.write(header);
  file.write(rows);
  file.commit(flush_to_disk);
}

std::int64_t appended_file_bytes(const std::string& path, std::int64_t new_bytes) {
  struct stat status {};
  const std::int64_t old_bytes =
      ::stat(path.c_str(), &status) == 0 && S_ISREG(status.st_mode) ? status.st_size : 0;
  return old_bytes + std::max<std::int64_t>(new_bytes, 0);
}

}  // namespace gs
