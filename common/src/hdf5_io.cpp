// HDF5 output and input through the C API. Every HDF5 handle is owned by a Handle that closes it
// with the right H5*close; every HDF5 return code is checked; HDF5's own error printing is turned
// off so that the user sees one message that says what failed and where. The writer and the
// reader share one table of attributes (kAttributes), so a name or a type is spelled once.
#include "gs/hdf5_io.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <hdf5.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <sstream>
#include <utility>

#include "gs/interrupt.hpp"
#include "gs/report.hpp"

namespace gs {
namespace fs = std::filesystem;

namespace {

std::string reason_of(int error_number) {
  return error_number != 0 ? std::string(" (") + std::strerror(error_number) + ")" : std::string();
}

std::string in_quotes(const std::string& path) {
  return "'" + path + "'";
}

// ---------------------------------------------------------------------------------------------
// HDF5 handles and return codes

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

// One HDF5 identifier and the function that closes it (H5Fclose, H5Dclose, ...). Closing is
// explicit where its result matters (commit), automatic everywhere else.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() noexcept = default;
  Handle(hid_t id, Closer closer) noexcept : id_(id), closer_(closer) {}
  Handle(Handle&& other) noexcept
      : id_(std::exchange(other.id_, kInvalid)), closer_(other.closer_) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      close();
      id_ = std::exchange(other.id_, kInvalid);
      closer_ = other.closer_;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { close(); }

  hid_t get() const noexcept { return id_; }
  // Closes now; true when HDF5 reported success (or nothing was open).
  bool close() noexcept {
    if (id_ < 0) return true;
    const herr_t status = closer_(std::exchange(id_, kInvalid));
    return status >= 0;
  }

 private:
  static constexpr hid_t kInvalid = -1;
  hid_t id_ = kInvalid;
  Closer closer_ = nullptr;
};

// Takes ownership of @p id, or throws OutputError(@p what) when HDF5 returned an error.
Handle take(hid_t id, Handle::Closer closer, const std::string& what) {
  if (id < 0) throw OutputError(what);
  return Handle(id, closer);
}

void check(herr_t status, const std::string& what) {
  if (status < 0) throw OutputError(what);
}

// ---------------------------------------------------------------------------------------------
// The attributes: one table for the writer and the reader

enum class AttributeType { integer, real, text };

struct AttributeField {
  const char* name;
  AttributeType type;
  int Params::*integer;  // set for AttributeType::integer
  float Rates::*real;    // set for AttributeType::real
};

constexpr AttributeField kAttributes[] = {
    {"nbrow", AttributeType::integer, &Params::rows, nullptr},
    {"nbcol", AttributeType::integer, &Params::cols, nullptr},
    {"nbimage", AttributeType::integer, &Params::frames, nullptr},
    {"nbextrastep", AttributeType::integer, &Params::steps_per_frame, nullptr},
    {"killrate", AttributeType::real, nullptr, &Rates::kill},
    {"feedrate", AttributeType::real, nullptr, &Rates::feed},
    {"deltat", AttributeType::real, nullptr, &Rates::dt},
    {"diffusion_u", AttributeType::real, nullptr, &Rates::diffusion_u},
    {"diffusion_v", AttributeType::real, nullptr, &Rates::diffusion_v},
    {"implementation", AttributeType::text, nullptr, nullptr},
};

// A string attribute longer than this is not one the writer wrote (and would be read whole).
constexpr std::size_t kMaxTextBytes = 4096;

const char* type_class_name(H5T_class_t type_class) {
  switch (type_class) {
    case H5T_INTEGER:
      return "an integer";
    case H5T_FLOAT:
      return "a floating-point number";
    case H5T_STRING:
      return "a string";
    case H5T_COMPOUND:
      return "a compound type";
    case H5T_ARRAY:
      return "an array type";
    case H5T_ENUM:
      return "an enumeration";
    case H5T_VLEN:
      return "a variable-length sequence";
    default:
      return "an unexpected type";
  }
}

void write_attribute(hid_t dataset, const AttributeField& field, const Params& params,
                     const std::string& implementation, const std::string& file) {
  const std::string what = "cannot write attribute '" + std::string(field.name) + "' to " + file;
  const Handle space = take(H5Screate(H5S_SCALAR), H5Sclose, what);
  Handle file_type;
  hid_t memory_type = -1;
  const void* value = nullptr;
  int integer = 0;
  float real = 0.0f;
  switch (field.type) {
    case AttributeType::integer:
      integer = params.*field.integer;
      file_type = take(H5Tcopy(H5T_STD_I32LE), H5Tclose, what);
      memory_type = H5T_NATIVE_INT;
      value = &integer;
      break;
    case AttributeType::real:
      real = params.rates.*field.real;
      file_type = take(H5Tcopy(H5T_IEEE_F32LE), H5Tclose, what);
      memory_type = H5T_NATIVE_FLOAT;
      value = &real;
      break;
    case AttributeType::text:
      // A fixed-length string, null-padded: what the course's readers (h5py, NumPy) expect.
      file_type = take(H5Tcopy(H5T_C_S1), H5Tclose, what);
      check(H5Tset_size(file_type.get(), implementation.empty() ? 1 : implementation.size()), what);
      check(H5Tset_strpad(file_type.get(), H5T_STR_NULLPAD), what);
      memory_type = file_type.get();
      value = implementation.empty() ? "" : implementation.c_str();
      break;
  }
  const Handle attribute =
      take(H5Acreate2(dataset, field.name, file_type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
           H5Aclose, what);
  check(H5Awrite(attribute.get(), memory_type, value), what);
}

std::string read_text(hid_t attribute, hid_t file_type, const std::string& what) {
  const htri_t variable = H5Tis_variable_str(file_type);
  check(variable, what + ": cannot read its type");
  const H5T_cset_t character_set = H5Tget_cset(file_type);
  check(character_set < 0 ? -1 : 0, what + ": cannot read its character set");
  const Handle memory_type = take(H5Tcopy(H5T_C_S1), H5Tclose, what);
  check(H5Tset_cset(memory_type.get(), character_set), what);
  if (variable > 0) {
    // Variable-length (h5py writes Python strings so): HDF5 allocates the value, we free it.
    check(H5Tset_size(memory_type.get(), H5T_VARIABLE), what);
    char* value = nullptr;
    check(H5Aread(attribute, memory_type.get(), &value), what + ": cannot read it");
    std::string text =
        value != nullptr ? std::string(value, strnlen(value, kMaxTextBytes + 1)) : std::string();
    if (value != nullptr) H5free_memory(value);
    if (text.size() > kMaxTextBytes) {
      throw OutputError(what + " is longer than " + std::to_string(kMaxTextBytes) + " bytes");
    }
    return text;
  }
  const std::size_t size = H5Tget_size(file_type);
  if (size == 0 || size > kMaxTextBytes) {
    throw OutputError(what + " is a string of " + std::to_string(size) + " bytes; at most " +
                      std::to_string(kMaxTextBytes) + " are allowed");
  }
  check(H5Tset_size(memory_type.get(), size), what);
  check(H5Tset_strpad(memory_type.get(), H5T_STR_NULLPAD), what);
  std::string text(size, '\0');
  check(H5Aread(attribute, memory_type.get(), text.data()), what + ": cannot read it");
  text.resize(std::strlen(text.c_str()));
  return text;
}

// Reads attribute @p field into @p info after checking that it exists, has the field's type and
// holds exactly one value; a wrong type or size would otherwise write past the variable (or
// into the next field) or convert silently.
void read_attribute(hid_t dataset, const AttributeField& field, OutputInfo& info,
                    const std::string& file) {
  const std::string what = "attribute '" + std::string(field.name) + "' of " + file;
  const htri_t exists = H5Aexists(dataset, field.name);
  check(exists, "cannot look for " + what);
  if (exists == 0) {
    throw OutputError(file + " has no attribute '" + field.name +
                      "'; it was not written by the course's programs");
  }
  const Handle attribute =
      take(H5Aopen(dataset, field.name, H5P_DEFAULT), H5Aclose, "cannot open " + what);
  const Handle space = take(H5Aget_space(attribute.get()), H5Sclose, "cannot read " + what);
  const H5S_class_t shape = H5Sget_simple_extent_type(space.get());
  const hssize_t values = H5Sget_simple_extent_npoints(space.get());
  if (shape == H5S_NO_CLASS || values < 0) throw OutputError("cannot read the shape of " + what);
  if (shape == H5S_NULL || values != 1) {
    throw OutputError(what + " must hold exactly one value; it holds " +
                      std::to_string(shape == H5S_NULL ? 0 : values));
  }
  const Handle file_type = take(H5Aget_type(attribute.get()), H5Tclose, "cannot read " + what);
  const H5T_class_t type_class = H5Tget_class(file_type.get());
  const H5T_class_t expected = field.type == AttributeType::integer ? H5T_INTEGER
                               : field.type == AttributeType::real  ? H5T_FLOAT
                                                                    : H5T_STRING;
  if (type_class != expected) {
    throw OutputError(what + " must be " + type_class_name(expected) + "; it is " +
                      type_class_name(type_class));
  }
  switch (field.type) {
    case AttributeType::integer: {
      long long value = 0;  // HDF5 converts any integer size to this, clamping what overflows
      check(H5Aread(attribute.get(), H5T_NATIVE_LLONG, &value), "cannot read " + what);
      if (value < INT_MIN || value > INT_MAX) {
        throw OutputError(what + " is " + std::to_string(value) + ", outside the range of int");
      }
      info.params.*field.integer = static_cast<int>(value);
      break;
    }
    case AttributeType::real: {
      double value = 0.0;
      check(H5Aread(attribute.get(), H5T_NATIVE_DOUBLE, &value), "cannot read " + what);
      if (!std::isfinite(value) || std::fabs(value) > std::numeric_limits<float>::max()) {
        std::ostringstream text;
        text << what << " is " << value << ", not a finite float";
        throw OutputError(text.str());
      }
      info.params.rates.*field.real = static_cast<float>(value);
      break;
    }
    case AttributeType::text:
      info.implementation = read_text(attribute.get(), file_type.get(), what);
      break;
  }
}

// ---------------------------------------------------------------------------------------------
// The output's target: what -o names, through its symbolic links

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

struct OutputTarget {
  fs::path path;        // the file to replace: -o itself, or where its symbolic links lead
  bool exists = false;  // a regular file is there (replaced on commit)
  struct stat status {};
};

// Follows @p given through its symbolic links (as open() would, at most 40) and refuses anything
// but a regular file or a name that does not exist yet: renaming over a device node, a FIFO or a
// socket would replace it (as root, /dev/null), and a directory cannot be replaced.
OutputTarget resolve_output(const std::string& given) {
  OutputTarget target;
  target.path = fs::path(given);
  for (int links = 0;; ++links) {
    const std::string name = target.path.filename().string();
    if (name.size() > kMaxFileNameBytes) {
      throw OutputError(
          "cannot write " + in_quotes(given) + ": the file name " +
          (target.path.string() == given ? std::string() : in_quotes(target.path.string()) + " ") +
          "is " + std::to_string(name.size()) + " bytes long; the limit is " +
          std::to_string(kMaxFileNameBytes) + " (NAME_MAX)");
    }
    struct stat status {};
    if (::lstat(target.path.c_str(), &status) != 0) {
      const int error = errno;
      if (error == ENOENT) return target;  // a new file; its directory is checked next
      throw OutputError("cannot examine output path " + in_quotes(target.path.string()) +
                        reason_of(error));
    }
    if (S_ISLNK(status.st_mode)) {
      if (links == 40) {
        throw OutputError("output path " + in_quotes(given) +
                          " is a chain of more than 40 symbolic links (a loop?)");
      }
      std::error_code error;
      const fs::path next = fs::read_symlink(target.path, error);
      if (error) {
        throw OutputError("cannot read the symbolic link " + in_quotes(target.path.string()) +
                          ": " + error.message());
      }
      target.path = next.is_absolute() ? next : target.path.parent_path() / next;
      continue;
    }
    const std::string described =
        target.path.string() == given
            ? in_quotes(given)
            : in_quotes(given) + " (a symbolic link to " + in_quotes(target.path.string()) + ")";
    if (S_ISDIR(status.st_mode)) {
      throw OutputError("output path " + described + " is a directory; give a file name with -o");
    }
    if (!S_ISREG(status.st_mode)) {
      throw OutputError("refusing to write " + described + ": it is " + kind_of(status.st_mode) +
                        "; -o must name a regular file or a new one (the output is written "
                        "beside it and renamed over it, which would replace it)");
    }
    target.exists = true;
    target.status = status;
    return target;
  }
}

fs::path directory_of(const fs::path& path) {
  return path.has_parent_path() ? path.parent_path() : fs::path(".");
}

void check_target(const std::string& given, const OutputTarget& target, std::int64_t bytes) {
  const std::string name = target.path.filename().string();  // at most NAME_MAX: resolved
  if (name.empty() || name == "." || name == "..") {
    throw OutputError("output path " + in_quotes(given) +
                      " names no file; give a file name with -o");
  }
  const fs::path directory = directory_of(target.path);
  struct stat status {};
  if (::stat(directory.c_str(), &status) != 0) {
    const int error = errno;
    throw OutputError("cannot write " + in_quotes(given) + ": directory " +
                      in_quotes(directory.string()) +
                      (error == ENOENT ? std::string(" does not exist") : reason_of(error)));
  }
  if (!S_ISDIR(status.st_mode)) {
    throw OutputError("cannot write " + in_quotes(given) + ": " + in_quotes(directory.string()) +
                      " is not a directory");
  }
  if (::access(directory.c_str(), W_OK | X_OK) != 0) {
    const int error = errno;
    throw OutputError("cannot write " + in_quotes(given) + ": directory " +
                      in_quotes(directory.string()) + " is not writable" + reason_of(error));
  }
  struct statvfs file_system {};
  if (::statvfs(directory.c_str(), &file_system) == 0) {
    const auto free_bytes = static_cast<long double>(file_system.f_bavail) * file_system.f_frsize;
    if (free_bytes < static_cast<long double>(bytes)) {
      throw OutputError("not enough space for " + in_quotes(given) + ": the run writes " +
                        si(static_cast<double>(bytes), "B") + ", " +
                        si(static_cast<double>(free_bytes), "B") + " free in " +
                        in_quotes(directory.string()) +
                        " (use --no-output, fewer frames, or another -o)");
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Temporary names: <base>.partial-<host>-<pid>-<unique>

constexpr std::size_t kHostChars = 32;
constexpr std::size_t kPidChars = 10;
constexpr std::size_t kUniqueChars = 8;
constexpr char kPartialMark[] = ".partial-";
// The longest suffix: ".partial-" host "-" pid "-" unique.
constexpr std::size_t kSuffixBudget =
    (sizeof kPartialMark - 1) + kHostChars + 1 + kPidChars + 1 + kUniqueChars;
static_assert(kSuffixBudget < kMaxFileNameBytes, "the suffix must leave room for a base name");

// This host's name, restricted to letters, digits, '.', '-' and '_' and shortened, as it appears in
// temporary names (another host's temporary on a shared file system is never reported stale).
std::string host_part() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "unknown-host";
  std::string host;
  for (const char* c = name; *c != '\0' && host.size() < kHostChars; ++c) {
    const bool plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                       (*c >= '0' && *c <= '9') || *c == '.' || *c == '-' || *c == '_';
    host += plain ? *c : '_';
  }
  return host;
}

std::string random_unique_part() {
  std::random_device device;
  char text[kUniqueChars + 1];
  std::snprintf(text, sizeof text, "%08x", static_cast<unsigned>(device()));
  return text;
}

// The start every temporary name of output file @p name has: the name itself, shortened (at a
// UTF-8 character boundary) so that the whole temporary name fits NAME_MAX, then ".partial-".
std::string partial_prefix(const std::string& name) {
  std::size_t keep = std::min(name.size(), kMaxFileNameBytes - kSuffixBudget);
  // Do not cut a multi-byte UTF-8 character: back up over continuation bytes (10xxxxxx).
  while (keep > 0 && keep < name.size() &&
         (static_cast<unsigned char>(name[keep]) & 0xC0) == 0x80) {
    --keep;
  }
  return name.substr(0, keep) + kPartialMark;
}

bool process_is_alive(long pid) {
  if (pid <= 0 || pid > std::numeric_limits<pid_t>::max()) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

std::string shell_quoted(const std::string& text) {
  std::string quoted_text = "'";
  for (const char c : text) {
    if (c == '\'') {
      quoted_text += "'\\''";
    } else {
      quoted_text += c;
    }
  }
  return quoted_text + "'";
}

std::vector<StalePartial> stale_partials_of(const fs::path& target) {
  std::vector<StalePartial> stale;
  const std::string prefix = partial_prefix(target.filename().string());
  const std::string host = host_part();
  const fs::path directory = directory_of(target);
  DIR* listing = ::opendir(directory.c_str());
  if (listing == nullptr) return stale;
  while (const dirent* entry = ::readdir(listing)) {
    const std::string name = entry->d_name;
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    // What follows the prefix is host-pid-unique; the host may itself contain '-'.
    const std::string rest = name.substr(prefix.size());
    const std::size_t unique_dash = rest.rfind('-');
    if (unique_dash == std::string::npos || unique_dash == 0) continue;
    const std::size_t pid_dash = rest.rfind('-', unique_dash - 1);
    if (pid_dash == std::string::npos) continue;
    const std::string pid_text = rest.substr(pid_dash + 1, unique_dash - pid_dash - 1);
    if (pid_text.empty() || pid_text.size() > kPidChars ||
        pid_text.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    if (rest.substr(0, pid_dash) != host) continue;  // another host: cannot tell, say nothing
    const long pid = std::stol(pid_text);
    if (pid == ::getpid() || process_is_alive(pid)) continue;
    const fs::path path = directory / name;
    struct stat status {};
    if (::lstat(path.c_str(), &status) != 0 || !S_ISREG(status.st_mode)) continue;
    stale.push_back({path.string(), pid, static_cast<std::int64_t>(status.st_size)});
  }
  ::closedir(listing);
  return stale;
}

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

// -----------------------------------------------------------------------------------------------

std::int64_t hdf5_metadata_allowance(std::int64_t frames) {
  constexpr std::int64_t kPerFile = 16 * 1024;
  constexpr std::int64_t kPerFrame = 128;
  const std::int64_t counted = std::max<std::int64_t>(frames, 0);
  if (counted > (std::numeric_limits<std::int64_t>::max() - kPerFile) / kPerFrame) {
    return std::numeric_limits<std::int64_t>::max();
  }
  return kPerFile + kPerFrame * counted;
}

std::int64_t output_file_bytes(const Params& params) {
  const std::int64_t data = params.output_bytes();
  const std::int64_t metadata = hdf5_metadata_allowance(params.frames);
  if (data > std::numeric_limits<std::int64_t>::max() - metadata) {
    return std::numeric_limits<std::int64_t>::max();
  }
  return data + metadata;
}

void check_output_path(const std::string& path, std::int64_t bytes) {
  check_target(path, resolve_output(path), bytes);
}

std::vector<StalePartial> find_stale_partials(const std::string& path) {
  try {
    return stale_partials_of(resolve_output(path).path);
  } catch (const OutputError&) {
    return {};  // an output that is refused has no temporaries worth naming
  }
}

void warn_about_stale_partials(std::ostream& out, const std::vector<StalePartial>& stale) {
  if (stale.empty()) return;
  std::ostringstream text;
  text << "warning: " << stale.size()
       << " temporary file(s) of this output were left by runs that did not finish (their "
          "processes on this host are gone: killed by SIGKILL, a crash or a power loss). They are "
          "incomplete; this run does not touch them:\n";
  std::string command = "rm --";
  for (const StalePartial& partial : stale) {
    text << "  " << partial.path << "  (" << si(static_cast<double>(partial.bytes), "B")
         << ", process " << partial.pid << ")\n";
    command += " " + shell_quoted(partial.path);
  }
  text << "Delete them with: " << command << "\n";
  out << text.str() << std::flush;
}

// ---------------------------------------------------------------------------------------------
// FrameWriter

struct FrameWriter::Hdf5 {
  Handle file;
  Handle file_space;
  Handle memory_space;  // one frame: [1, R, C]
  Handle dataset;
};

FrameWriter::FrameWriter(const std::string& path, const Params& params,
                         const std::string& implementation, FrameWriterOptions options)
    : path_(path),
      hdf5_(std::make_unique<Hdf5>()),
      on_commit_step_(std::move(options.on_commit_step)),
      rows_(params.rows),
      cols_(params.cols),
      frames_(params.frames) {
  prepare_hdf5();
  const std::int64_t frame_bytes = params.cells() * std::int64_t{sizeof(float)};
  if (frame_bytes > kMaxFrameBytes) {
    throw OutputError("a frame of " + std::to_string(params.rows) + " x " +
                      std::to_string(params.cols) + " cells is " +
                      si(static_cast<double>(frame_bytes), "B") +
                      "; HDF5 holds each frame as one chunk, and a chunk must be smaller than "
                      "4 GiB (at most " +
                      std::to_string(kMaxFrameBytes / std::int64_t{sizeof(float)}) +
                      " cells); use --no-output or a smaller grid");
  }
  if (rows_ < 1 || cols_ < 1 || frames_ < 1) {
    throw OutputError("cannot write " + std::to_string(frames_) + " frames of " +
                      std::to_string(rows_) + " x " + std::to_string(cols_) + " cells");
  }
  const OutputTarget target = resolve_output(path);
  check_target(path, target, output_file_bytes(params));
  target_path_ = target.path.string();
  if (options.warnings != nullptr) {
    warn_about_stale_partials(*options.warnings, stale_partials_of(target.path));
  }

  // The temporary file: HDF5 creates it exclusively (H5F_ACC_EXCL opens with O_CREAT | O_EXCL)
  // under a name of our own. O_EXCL fails if anything exists under that name (another run's file,
  // a link planted there), so no other file is ever truncated, and neither is this one: a file
  // truncated to zero (as H5F_ACC_TRUNC would do to a file created beforehand) is one that ext4's
  // auto_da_alloc flushes as it is closed, which cost the official run 4 s of its 2.5 s of writing
  // (docs/BENCHMARKS.md, "Measured again").
  const std::string stem = partial_prefix(target.path.filename().string()) + host_part() + "-" +
                           std::to_string(::getpid()) + "-";
  const std::function<std::string()> unique_part =
      options.unique_part ? options.unique_part : random_unique_part;
  constexpr int kAttempts = 16;
  int error = 0;
  bool name_taken = false;
  hid_t file = -1;
  for (int attempt = 0; attempt < kAttempts && file < 0; ++attempt) {
    const std::string unique = unique_part().substr(0, kUniqueChars);
    temporary_path_ = (directory_of(target.path) / (stem + unique)).string();
    errno = 0;
    file = H5Fcreate(temporary_path_.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
    error = errno;
    struct stat existing {};
    name_taken = file < 0 && ::lstat(temporary_path_.c_str(), &existing) == 0;
    if (file < 0 && !name_taken) break;
  }
  if (file < 0) {
    throw OutputError("cannot create the temporary file " + in_quotes(temporary_path_) + " for " +
                      in_quotes(path) +
                      (name_taken ? std::string(": a file of that name already exists "
                                                "(another run writing the same output?)")
                                  : reason_of(error)));
  }
  hdf5_->file = take(file, H5Fclose, "cannot create HDF5 file " + in_quotes(temporary_path_));
  owns_temporary_ = true;
  // Our own descriptor of that very file, for fchmod and fsync: a duplicate of the one HDF5
  // opened, never a second lookup of the name (which another user of the directory could have
  // replaced meanwhile).
  void* hdf5_descriptor = nullptr;
  if (H5Fget_vfd_handle(hdf5_->file.get(), H5P_DEFAULT, &hdf5_descriptor) < 0 ||
      hdf5_descriptor == nullptr ||
      (descriptor_ = ::fcntl(*static_cast<int*>(hdf5_descriptor), F_DUPFD_CLOEXEC, 0)) < 0) {
    const int dup_error = errno;
    abandon();
    throw OutputError("cannot keep a descriptor of " + in_quotes(temporary_path_) +
                      reason_of(dup_error));
  }
  written_.assign(static_cast<std::size_t>(frames_), false);
  // A second signal deletes this file before the immediate exit (interrupt.hpp). The name is
  // made absolute so that it stays right whatever the working directory becomes.
  std::error_code no_error;
  registered_partial_ = fs::absolute(temporary_path_, no_error).string();
  set_partial_output(registered_partial_);
  try {
    if (target.exists) {
      // Replacing a file keeps its permission bits, and its owner and group where we may set
      // them (fchown first: it can clear set-id bits that fchmod restores). Until commit() the
      // temporary file is never more open than the target (a 0600 file's data is not readable by
      // others meanwhile), but stays writable by us; commit() gives it the exact bits.
      if (target.status.st_uid != ::geteuid() || target.status.st_gid != ::getegid()) {
        const int ignored = ::fchown(descriptor_, target.status.st_uid, target.status.st_gid);
        (void)ignored;  // not permitted for an ordinary user: the file becomes theirs
      }
      final_mode_ = static_cast<int>(target.status.st_mode & 07777);
      if (::fchmod(descriptor_, (target.status.st_mode & 0777) | S_IRUSR | S_IWUSR) != 0) {
        const int chmod_error = errno;
        throw OutputError("cannot give " + in_quotes(temporary_path_) + " the permissions of " +
                          in_quotes(target_path_) + reason_of(chmod_error));
      }
    }
    const std::string in_file = " in " + in_quotes(temporary_path_);
    const std::string dataset_error =
        "cannot create dataset '" + std::string(kDatasetName) + "'" + in_file;
    const hsize_t dims[3] = {static_cast<hsize_t>(frames_), static_cast<hsize_t>(rows_),
                             static_cast<hsize_t>(cols_)};
    const hsize_t chunk[3] = {1, static_cast<hsize_t>(rows_), static_cast<hsize_t>(cols_)};
    hdf5_->file_space = take(H5Screate_simple(3, dims, nullptr), H5Sclose, dataset_error);
    hdf5_->memory_space = take(H5Screate_simple(3, chunk, nullptr), H5Sclose, dataset_error);
    const Handle create_properties = take(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, dataset_error);
    check(H5Pset_chunk(create_properties.get(), 3, chunk), dataset_error);
    // Every chunk is written exactly once: filling it with zeros first would write twice.
    check(H5Pset_fill_time(create_properties.get(), H5D_FILL_TIME_NEVER), dataset_error);
    hdf5_->dataset =
        take(H5Dcreate2(hdf5_->file.get(), kDatasetName, H5T_IEEE_F32LE, hdf5_->file_space.get(),
                        H5P_DEFAULT, create_properties.get(), H5P_DEFAULT),
             H5Dclose, dataset_error);
    for (const AttributeField& field : kAttributes) {
      write_attribute(hdf5_->dataset.get(), field, params, implementation,
                      in_quotes(temporary_path_));
    }
  } catch (...) {
    abandon();
    throw;
  }
}

FrameWriter::~FrameWriter() {
  if (!committed_) abandon();
  if (descriptor_ >= 0) ::close(descriptor_);
}

void FrameWriter::abandon() noexcept {
  hdf5_->dataset.close();
  hdf5_->memory_space.close();
  hdf5_->file_space.close();
  hdf5_->file.close();
  if (descriptor_ >= 0) {
    ::close(descriptor_);
    descriptor_ = -1;
  }
  if (owns_temporary_) {
    ::unlink(temporary_path_.c_str());
    owns_temporary_ = false;
  }
  forget_partial();
}

void FrameWriter::forget_partial() noexcept {
  // Only if the name is still ours (several writers may exist, e.g. in tests).
  if (!registered_partial_.empty() && partial_output() == registered_partial_) {
    set_partial_output("");
  }
  registered_partial_.clear();
}

void FrameWriter::write_frame(int index, const float* v) {
  prepare_hdf5();  // HDF5's error printing is set per thread: the writer may be another thread
  if (index < 0 || index >= frames_) {
    throw OutputError("frame index " + std::to_string(index) + " is outside [0, " +
                      std::to_string(frames_) + ")");
  }
  if (committed_ || hdf5_->dataset.get() < 0) {
    throw OutputError("frame " + std::to_string(index) + " written to a closed file " +
                      in_quotes(temporary_path_));
  }
  const hsize_t start[3] = {static_cast<hsize_t>(index), 0, 0};
  const hsize_t count[3] = {1, static_cast<hsize_t>(rows_), static_cast<hsize_t>(cols_)};
  check(
      H5Sselect_hyperslab(hdf5_->file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr),
      "cannot select frame " + std::to_string(index) + " in " + in_quotes(temporary_path_));
  errno = 0;
  const herr_t status = H5Dwrite(hdf5_->dataset.get(), H5T_NATIVE_FLOAT, hdf5_->memory_space.get(),
                                 hdf5_->file_space.get(), H5P_DEFAULT, v);
  if (status < 0) {
    throw OutputError("writing frame " + std::to_string(index) + " to " +
                      in_quotes(temporary_path_) + " failed" + reason_of(errno) +
                      "; is the disk full?");
  }
  if (!written_[static_cast<std::size_t>(index)]) {
    written_[static_cast<std::size_t>(index)] = true;
    ++frames_written_;
    bytes_written_ += std::int64_t{rows_} * cols_ * std::int64_t{sizeof(float)};
  }
}

void FrameWriter::commit(bool flush_to_disk) {
  prepare_hdf5();
  if (committed_) return;
  if (frames_written_ != frames_) {
    throw OutputError("only " + std::to_string(frames_written_) + " of " + std::to_string(frames_) +
                      " frames were written; '" + path_ + "' was not created");
  }
  const auto step = [this](const char* name) {
    if (on_commit_step_) on_commit_step_(name);
  };
  errno = 0;
  bool closed = hdf5_->dataset.close();
  closed = hdf5_->memory_space.close() && closed;
  closed = hdf5_->file_space.close() && closed;
  closed = hdf5_->file.close() && closed;  // writes HDF5's metadata
  if (!closed) {
    throw OutputError("closing " + in_quotes(temporary_path_) + " failed" + reason_of(errno) +
                      "; is the disk full?");
  }
  // The data must be on the disk before the final name points at it: after a crash or a power
  // loss the final name then holds either the old file or the complete new one. fsync through
  // the descriptor we created the file with flushes that very file, whatever its name is now.
  flush_seconds_ = 0.0;
  if (flush_to_disk) {
    step("fsync file");
    const auto start = std::chrono::steady_clock::now();
    if (::fsync(descriptor_) != 0) {
      const int error = errno;
      throw OutputError("flushing " + in_quotes(temporary_path_) + " to the disk failed" +
                        reason_of(error) + "; " + in_quotes(path_) + " was not created");
    }
    flush_seconds_ += seconds_since(start);
  }
  if (final_mode_ >= 0 && ::fchmod(descriptor_, static_cast<mode_t>(final_mode_)) != 0) {
    const int error = errno;
    throw OutputError("cannot give " + in_quotes(temporary_path_) + " the permissions of " +
                      in_quotes(target_path_) + reason_of(error));
  }
  const int descriptor = std::exchange(descriptor_, -1);
  if (::close(descriptor) != 0) {
    const int error = errno;
    throw OutputError("closing " + in_quotes(temporary_path_) + " failed" + reason_of(error));
  }
  step("rename");
  if (::rename(temporary_path_.c_str(), target_path_.c_str()) != 0) {
    const int error = errno;
    throw OutputError("cannot rename " + in_quotes(temporary_path_) + " to " +
                      in_quotes(target_path_) + reason_of(error));
  }
  owns_temporary_ = false;
  committed_ = true;
  forget_partial();
  if (flush_to_disk) {
    step("fsync directory");
    const auto start = std::chrono::steady_clock::now();
    flush_directory_of(target_path_);
    flush_seconds_ += seconds_since(start);
  }
}

// ---------------------------------------------------------------------------------------------
// What the readers refuse: a file that is not a simulation's
//
// HDF5 can make a dataset of more than its own file's bytes: the raw bytes of any other file
// (external storage, H5Pset_external: /etc/hostname read as frames), other files' datasets (a
// virtual dataset: a missing source reads as whatever the buffer held), chunks never written
// (read as the fill value), chunks past the end of a file cut short whose superblock was patched
// to match (read as zeros). None is a simulation: the readers refuse each, naming it, before
// they read a value. And a FIFO given as the input would block open() forever.

namespace {

std::string quoted_text(const std::string& text) {
  return "'" + printable(text) + "'";
}

// The first message HDF5 recorded for the call that just failed (the innermost function's, the
// one that says what was wrong), printable; empty when there is none.
std::string hdf5_first_error() {
  std::string first;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned depth, const H5E_error2_t* error, void* out) -> herr_t {
        if (depth == 0 && error->desc != nullptr) *static_cast<std::string*>(out) = error->desc;
        return 0;
      },
      &first);
  return printable(first);
}

const char* non_regular_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Opens @p path read-only after checking that it is a regular file (through symbolic links), with
// a message that says why it cannot be opened: missing, truncated, not HDF5.
hid_t open_for_reading(const std::string& path) {
  prepare_hdf5();
  const std::string file = quoted_text(path);
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) {
    throw OutputError("cannot open " + file + " as an HDF5 file" + reason_of(errno));
  }
  if (!S_ISREG(status.st_mode)) {
    throw OutputError("cannot open " + file + " as an HDF5 file: it is " +
                      non_regular_kind(status.st_mode) + ", not a regular file");
  }
  const hid_t opened = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (opened >= 0) return opened;
  const std::string detail = hdf5_first_error();
  unsigned long long size = 0;
  unsigned long long base = 0;
  unsigned long long declared = 0;
  if (std::sscanf(detail.c_str(),
                  "truncated file: eof = %llu, sblock->base_addr = %llu, stored_eof = %llu", &size,
                  &base, &declared) == 3) {
    throw OutputError("cannot open " + file + " as an HDF5 file: it is truncated: it has " +
                      std::to_string(size) + " bytes, and its superblock says " +
                      std::to_string(declared) + " (a copy or a run that did not finish?)");
  }
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    throw OutputError("cannot open " + file +
                      " as an HDF5 file: it is not one (no HDF5 signature)");
  }
  throw OutputError("cannot open " + file + " as an HDF5 file" +
                    (detail.empty() ? std::string() : " (HDF5: " + detail + ")"));
}

// The size of @p file on the disk. Not H5Fget_filesize(): that is the larger of the real size and
// the size the superblock declares, and the superblock is what a cut file lies about.
std::uint64_t size_on_disk(hid_t file, const std::string& what) {
  void* handle = nullptr;
  check(H5Fget_vfd_handle(file, H5P_DEFAULT, &handle), "cannot find the size of " + what);
  struct stat status {};
  if (handle == nullptr || ::fstat(*static_cast<int*>(handle), &status) != 0) {
    throw OutputError("cannot find the size of " + what + reason_of(errno));
  }
  return static_cast<std::uint64_t>(status.st_size);
}

// Refuses a dataset whose values are not in its own file: external storage, a virtual dataset.
// @p what names it ("dataset 'matrix' of 'run.h5'"). Returns its layout.
H5D_layout_t refuse_foreign_storage(hid_t dataset, const std::string& what) {
  const Handle create =
      take(H5Dget_create_plist(dataset), H5Pclose, "cannot read the layout of " + what);
  const int external = H5Pget_external_count(create.get());
  check(external, "cannot read the layout of " + what);
  if (external > 0) {
    char name[1024] = {};
    off_t offset = 0;
    hsize_t size = 0;
    check(H5Pget_external(create.get(), 0, sizeof name, name, &offset, &size),
          "cannot read the layout of " + what);
    throw OutputError(
        what + " keeps its values in " + std::to_string(external) + " other file(s), the first " +
        quoted_text(name) +
        " (HDF5 external storage): a simulation's file holds its own values; refused");
  }
  const H5D_layout_t layout = H5Pget_layout(create.get());
  check(layout < 0 ? -1 : 0, "cannot read the layout of " + what);
  if (layout == H5D_VIRTUAL) {
    std::size_t mappings = 0;
    std::string source = "?";
    if (H5Pget_virtual_count(create.get(), &mappings) >= 0 && mappings > 0) {
      char name[1024] = {};
      if (H5Pget_virtual_filename(create.get(), 0, name, sizeof name) >= 0) source = name;
    }
    throw OutputError(what + " is a virtual dataset: its values come from " +
                      std::to_string(mappings) + " other dataset(s), the first in " +
                      quoted_text(source) + "; a simulation's file holds its own values; refused");
  }
  return layout;
}

// Checks the chunk of @p dataset that starts at @p offset: it was written (HDF5 holds data for
// it), it has @p bytes bytes unless the dataset is @p filtered (compressed), and it lies inside
// the file's @p file_size bytes. @p what names the chunk ("frame 3 of 'run.h5'").
void check_chunk(hid_t dataset, const hsize_t* offset, std::uint64_t bytes, bool filtered,
                 std::uint64_t file_size, const std::string& what) {
  unsigned filter_mask = 0;
  haddr_t address = HADDR_UNDEF;
  hsize_t size = 0;
  check(H5Dget_chunk_info_by_coord(dataset, offset, &filter_mask, &address, &size),
        "cannot find where " + what + " is stored");
  if (address == HADDR_UNDEF) {
    throw OutputError(what +
                      " was never written (the file holds no data for it): the run that "
                      "wrote it did not finish");
  }
  if (!filtered && size != bytes) {
    throw OutputError(what + " is stored in " + std::to_string(size) + " bytes; its values take " +
                      std::to_string(bytes));
  }
  if (address > file_size || size > file_size - address) {
    throw OutputError(what + " lies at bytes " + std::to_string(address) + " to " +
                      std::to_string(address + size) + ", past the end of the file (" +
                      std::to_string(file_size) + " bytes): the file is truncated");
  }
}

// Checks that every value of @p dataset was written and lies inside the file (a contiguous or a
// chunked dataset; a compact one is inside its header). @p what names it.
void check_stored(hid_t dataset, H5D_layout_t layout, std::uint64_t file_size,
                  const std::string& what) {
  const Handle space = take(H5Dget_space(dataset), H5Sclose, "cannot read the shape of " + what);
  const Handle type = take(H5Dget_type(dataset), H5Tclose, "cannot read the type of " + what);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  check(rank, "cannot read the shape of " + what);
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  if (rank > 0) {
    check(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr),
          "cannot read the shape of " + what);
  }
  const std::uint64_t value_bytes = H5Tget_size(type.get());
  std::uint64_t values = 1;
  for (const hsize_t extent : dims) values *= extent;
  if (values == 0 || layout == H5D_COMPACT) return;
  if (layout == H5D_CONTIGUOUS) {
    const haddr_t address = H5Dget_offset(dataset);
    const hsize_t size = H5Dget_storage_size(dataset);
    if (address == HADDR_UNDEF) {
      throw OutputError(what + " was never written (the file holds no data for it)");
    }
    if (size != values * value_bytes) {
      throw OutputError(what + " is stored in " + std::to_string(size) +
                        " bytes; its values take " + std::to_string(values * value_bytes));
    }
    if (address > file_size || size > file_size - address) {
      throw OutputError(what + " lies at bytes " + std::to_string(address) + " to " +
                        std::to_string(address + size) + ", past the end of the file (" +
                        std::to_string(file_size) + " bytes): the file is truncated");
    }
    return;
  }
  if (layout != H5D_CHUNKED) throw OutputError(what + " has a layout this reader does not know");
  const Handle create =
      take(H5Dget_create_plist(dataset), H5Pclose, "cannot read the layout of " + what);
  std::vector<hsize_t> chunk(dims.size());
  check(H5Pget_chunk(create.get(), rank, chunk.data()), "cannot read the chunks of " + what);
  const int filters = H5Pget_nfilters(create.get());
  check(filters, "cannot read the filters of " + what);
  std::uint64_t chunk_bytes = value_bytes;
  for (const hsize_t extent : chunk) chunk_bytes *= extent;
  // Every chunk, in the order of its first index: an odometer over the grid of chunks.
  std::vector<hsize_t> offset(dims.size(), 0);
  while (true) {
    std::string at;
    for (const hsize_t coordinate : offset)
      at += (at.empty() ? "" : ", ") + std::to_string(coordinate);
    check_chunk(dataset, offset.data(), chunk_bytes, filters > 0, file_size,
                "the chunk at [" + at + "] of " + what);
    int axis = rank - 1;
    while (axis >= 0) {
      offset[axis] += chunk[axis];
      if (offset[axis] < dims[axis]) break;
      offset[axis] = 0;
      --axis;
    }
    if (axis < 0) break;
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// FrameReader

struct FrameReader::Hdf5 {
  Handle file;
  Handle dataset;
  Handle file_space;
  std::uint64_t file_size = 0;    // on the disk
  std::uint64_t frame_bytes = 0;  // one frame, in the file's type
  bool filtered = false;          // compressed chunks: their size says nothing
};

FrameReader::FrameReader(const std::string& path) : path_(path), hdf5_(std::make_unique<Hdf5>()) {
  const std::string file = quoted_text(path);
  hdf5_->file = Handle(open_for_reading(path), H5Fclose);
  hdf5_->file_size = size_on_disk(hdf5_->file.get(), file);
  const htri_t has_dataset = H5Lexists(hdf5_->file.get(), kDatasetName, H5P_DEFAULT);
  if (has_dataset <= 0) {
    throw OutputError(file + " has no dataset '" + kDatasetName + "'");
  }
  const std::string dataset_name = "dataset '" + std::string(kDatasetName) + "' of " + file;
  hdf5_->dataset = take(H5Dopen2(hdf5_->file.get(), kDatasetName, H5P_DEFAULT), H5Dclose,
                        "cannot open " + dataset_name);
  // Before anything else: the shape of a virtual dataset can mean opening its sources.
  const H5D_layout_t layout = refuse_foreign_storage(hdf5_->dataset.get(), dataset_name);
  std::size_t value_bytes = 0;
  {
    const Handle type = take(H5Dget_type(hdf5_->dataset.get()), H5Tclose,
                             "cannot read the type of " + dataset_name);
    const H5T_class_t type_class = H5Tget_class(type.get());
    if (type_class != H5T_FLOAT) {
      throw OutputError(dataset_name + " must hold floating-point numbers; it holds " +
                        type_class_name(type_class));
    }
    value_bytes = H5Tget_size(type.get());
  }
  hdf5_->file_space = take(H5Dget_space(hdf5_->dataset.get()), H5Sclose,
                           "cannot read the shape of " + dataset_name);
  const int rank = H5Sget_simple_extent_ndims(hdf5_->file_space.get());
  check(rank, "cannot read the shape of " + dataset_name);
  if (rank != 3) {
    throw OutputError(dataset_name + " must be three-dimensional [frames, rows, cols]; it has " +
                      std::to_string(rank) + " dimension(s)");
  }
  hsize_t dims[3] = {0, 0, 0};
  check(H5Sget_simple_extent_dims(hdf5_->file_space.get(), dims, nullptr),
        "cannot read the shape of " + dataset_name);
  // Each size is checked before it is narrowed to int: a cast alone would turn 2^32 + 2 rows
  // into 2.
  const auto shape =
      std::to_string(dims[0]) + " x " + std::to_string(dims[1]) + " x " + std::to_string(dims[2]);
  if (dims[0] == 0) {
    throw OutputError(dataset_name + " has no frames (its shape is " + shape + ")");
  }
  if (dims[0] > static_cast<hsize_t>(INT_MAX)) {
    throw OutputError(dataset_name + " has " + std::to_string(dims[0]) + " frames; at most " +
                      std::to_string(INT_MAX) + " can be read");
  }
  const auto max_cells = static_cast<hsize_t>(kMaxCells);
  if (dims[1] == 0 || dims[2] == 0 || dims[1] > max_cells || dims[2] > max_cells ||
      dims[1] * dims[2] > max_cells) {
    throw OutputError(dataset_name + " has frames of " + std::to_string(dims[1]) + " x " +
                      std::to_string(dims[2]) + " cells; a frame must have from 1 to " +
                      std::to_string(kMaxCells) + " cells");
  }
  info_.frames = static_cast<int>(dims[0]);
  info_.rows = static_cast<int>(dims[1]);
  info_.cols = static_cast<int>(dims[2]);
  // The course's layout: one chunk per frame, [1, rows, cols] (docs/PROBLEM.md), so that a frame
  // is one piece of the file whose presence and place read_frame() can check.
  if (layout != H5D_CHUNKED) {
    throw OutputError(dataset_name + " is stored " +
                      (layout == H5D_CONTIGUOUS ? "contiguously" : "compactly") +
                      "; the course's files store one chunk per frame, [1, rows, cols]");
  }
  {
    const Handle create = take(H5Dget_create_plist(hdf5_->dataset.get()), H5Pclose,
                               "cannot read the layout of " + dataset_name);
    hsize_t chunk[3] = {0, 0, 0};
    check(H5Pget_chunk(create.get(), 3, chunk), "cannot read the chunks of " + dataset_name);
    if (chunk[0] != 1 || chunk[1] != dims[1] || chunk[2] != dims[2]) {
      throw OutputError(dataset_name + " is stored in chunks of " + std::to_string(chunk[0]) +
                        " x " + std::to_string(chunk[1]) + " x " + std::to_string(chunk[2]) +
                        "; the course's files store one chunk per frame, 1 x " +
                        std::to_string(dims[1]) + " x " + std::to_string(dims[2]));
    }
    const int filters = H5Pget_nfilters(create.get());
    check(filters, "cannot read the filters of " + dataset_name);
    hdf5_->filtered = filters > 0;
  }
  hdf5_->frame_bytes = static_cast<std::uint64_t>(info_.rows) * info_.cols * value_bytes;
  for (const AttributeField& field : kAttributes) {
    read_attribute(hdf5_->dataset.get(), field, info_, file);
  }
  const struct {
    const char* name;
    int value;
    int size;
    const char* what;
  } agreements[] = {{"nbimage", info_.params.frames, info_.frames, "frames"},
                    {"nbrow", info_.params.rows, info_.rows, "rows"},
                    {"nbcol", info_.params.cols, info_.cols, "columns"}};
  for (const auto& agreement : agreements) {
    if (agreement.value != agreement.size) {
      throw OutputError("attribute '" + std::string(agreement.name) + "' of " + file + " is " +
                        std::to_string(agreement.value) + " but the dataset has " +
                        std::to_string(agreement.size) + " " + agreement.what);
    }
  }
  info_.params.output = path;
}

FrameReader::~FrameReader() = default;

std::vector<float> FrameReader::read_frame(int index) const {
  if (index < 0 || index >= info_.frames) {
    throw OutputError("frame " + std::to_string(index) + " is outside [0, " +
                      std::to_string(info_.frames) + ") of " + quoted_text(path_));
  }
  const hsize_t start[3] = {static_cast<hsize_t>(index), 0, 0};
  check_chunk(hdf5_->dataset.get(), start, hdf5_->frame_bytes, hdf5_->filtered, hdf5_->file_size,
              "frame " + std::to_string(index) + " of " + quoted_text(path_));
  std::vector<float> frame(static_cast<std::size_t>(info_.rows) * info_.cols);
  const std::string what =
      "cannot read frame " + std::to_string(index) + " of " + quoted_text(path_);
  const hsize_t count[3] = {1, static_cast<hsize_t>(info_.rows), static_cast<hsize_t>(info_.cols)};
  const Handle file_space = take(H5Scopy(hdf5_->file_space.get()), H5Sclose, what);
  const Handle memory_space = take(H5Screate_simple(3, count, nullptr), H5Sclose, what);
  check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr),
        what);
  if (H5Dread(hdf5_->dataset.get(), H5T_NATIVE_FLOAT, memory_space.get(), file_space.get(),
              H5P_DEFAULT, frame.data()) < 0) {
    const std::string detail = hdf5_first_error();
    throw OutputError(what + (detail.empty() ? std::string() : " (HDF5: " + detail + ")"));
  }
  return frame;
}

}  // namespace gs

// ---------------------------------------------------------------------------------------------
// Files of named datasets (lesson 09's parameter sweep): DatasetWriter and DatasetReader, with
// the same HDF5 set-up (prepare_hdf5) and error texts (reason_of) as the frame files above.
// ---------------------------------------------------------------------------------------------

namespace gs {
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

void dataset_file_fsync(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (directory ? O_DIRECTORY : 0));
  if (fd < 0 || ::fsync(fd) != 0) {
    const std::string reason = reason_of(errno);
    if (fd >= 0) ::close(fd);
    if (directory) return;  // the file itself is flushed; nothing more can be done
    throw OutputError("flushing '" + path + "' to the disk failed" + reason);
  }
  ::close(fd);
}

}  // namespace

DatasetWriter::DatasetWriter(const std::string& path)
    : path_(path), temporary_path_(path + ".partial-" + std::to_string(::getpid())) {
  prepare_hdf5();
  errno = 0;
  // Exclusively (O_CREAT | O_EXCL): nothing already under that name, a link planted there
  // included, is followed or truncated.
  file_ = H5Fcreate(temporary_path_.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
  if (file_ < 0) {
    const std::string reason = reason_of(errno);
    struct stat existing {};
    if (::lstat(temporary_path_.c_str(), &existing) == 0) {
      throw OutputError("cannot create '" + temporary_path_ +
                        "': something of that name already exists (delete it if no run is "
                        "writing it)");
    }
    throw OutputError("cannot create '" + temporary_path_ + "'" + reason);
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
  const std::string reason = reason_of(errno);
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
    throw OutputError("closing '" + temporary_path_ + "' failed" + reason_of(errno) +
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
  if (H5Lexists(file, name.c_str(), H5P_DEFAULT) <= 0) {
    throw OutputError(quoted_text(path) + " has no dataset " + quoted_text(name));
  }
  Handle dataset = take(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose, "cannot open " + what);
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
