// HDF5 output and input through the C API; the files are written through gs::OutputFile
// (output_file.cpp), which owns the temporary file, the checks and the commit sequence. Every HDF5
// handle is owned by a Handle that closes it with the right H5*close; every HDF5 return code is
// checked; HDF5's own error printing is turned off so that the user sees one message that says what
// failed and where. The writer and the reader share one table of attributes (kAttributes), so a
// name or a type is spelled once.
#include "gs/hdf5_io.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <sstream>
#include <utility>

#include "gs/format.hpp"

namespace gs {

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
  // Gives the identifier up without closing it.
  hid_t release() noexcept { return std::exchange(id_, kInvalid); }
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

// The end of the file behind @p descriptor (its size), or -1. What HDF5 added to the file by
// one write is what lies between the end before it and the end after: HDF5 allocates each new
// chunk at the end of the file (fill time never: a chunk is written once, when its frame is),
// so a frame's bytes are exactly [end before, end after) (tests/test_hdf5.cpp checks it against
// the chunk's address). A chunk small enough for HDF5's chunk cache reaches the file only later;
// the range is then empty, and the final fsync writes it.
std::int64_t end_of_file(int descriptor) {
  struct stat status {};
  return ::fstat(descriptor, &status) == 0 ? static_cast<std::int64_t>(status.st_size) : -1;
}

// Tells @p file of the bytes written since the end of the file was @p before (writeback).
void note_written(OutputFile& file, std::int64_t before) {
  const std::int64_t after = end_of_file(file.descriptor());
  if (before >= 0 && after > before) file.written(before, after - before);
}

// ---------------------------------------------------------------------------------------------
// The temporary file, created by HDF5

// OutputFile's way to create the temporary file of an HDF5 file: HDF5 creates it itself,
// exclusively (H5F_ACC_EXCL opens with O_CREAT | O_EXCL, which neither truncates nor follows
// anything already there). Not a file we create and HDF5 then truncates (H5F_ACC_TRUNC): a file
// truncated to zero is one that ext4's auto_da_alloc flushes as it is closed, which cost the
// official run 4 s of its 2.5 s of writing (docs/BENCHMARKS.md, "Measured again"). Returns our
// own descriptor of that very file, a duplicate of the one HDF5 opened (never a second lookup of
// the name, which another user of the directory could have replaced meanwhile), and leaves the
// HDF5 file in @p file.
int create_hdf5_file(const std::string& temporary, Handle& file) {
  errno = 0;
  const hid_t id = H5Fcreate(temporary.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
  if (id < 0) return -1;  // errno as HDF5's open() left it; OutputFile looks at the name too
  file = Handle(id, H5Fclose);
  void* hdf5_descriptor = nullptr;
  int descriptor = -1;
  if (H5Fget_vfd_handle(id, H5P_DEFAULT, &hdf5_descriptor) >= 0 && hdf5_descriptor != nullptr) {
    descriptor = ::fcntl(*static_cast<int*>(hdf5_descriptor), F_DUPFD_CLOEXEC, 0);
  }
  if (descriptor < 0) {
    const int error = errno;
    file.close();
    ::unlink(temporary.c_str());  // ours: just created
    throw OutputError("cannot keep a descriptor of " + in_quotes(temporary) + reason_of(error));
  }
  return descriptor;
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
  options.bytes = output_file_bytes(params);
  if (options.room_hint.empty()) {
    options.room_hint = "use --no-output, fewer frames, or another " + options.flag;
  }
  file_ = std::make_unique<OutputFile>(path, std::move(options), [this](const std::string& name) {
    return create_hdf5_file(name, hdf5_->file);
  });
  written_.assign(static_cast<std::size_t>(frames_), false);
  const std::string& temporary = file_->temporary_path();
  try {
    const std::string in_file = " in " + in_quotes(temporary);
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
      write_attribute(hdf5_->dataset.get(), field, params, implementation, in_quotes(temporary));
    }
  } catch (...) {
    abandon();
    throw;
  }
}

FrameWriter::~FrameWriter() {
  if (!committed_) abandon();
}

void FrameWriter::abandon() noexcept {
  hdf5_->dataset.close();
  hdf5_->memory_space.close();
  hdf5_->file_space.close();
  hdf5_->file.close();
  if (file_) file_->abandon();
}

void FrameWriter::write_frame(int index, const float* v) {
  prepare_hdf5();  // HDF5's error printing is set per thread: the writer may be another thread
  if (index < 0 || index >= frames_) {
    throw OutputError("frame index " + std::to_string(index) + " is outside [0, " +
                      std::to_string(frames_) + ")");
  }
  const std::string& temporary = file_->temporary_path();
  if (committed_ || hdf5_->dataset.get() < 0) {
    throw OutputError("frame " + std::to_string(index) + " written to a closed file " +
                      in_quotes(temporary));
  }
  const hsize_t start[3] = {static_cast<hsize_t>(index), 0, 0};
  const hsize_t count[3] = {1, static_cast<hsize_t>(rows_), static_cast<hsize_t>(cols_)};
  check(
      H5Sselect_hyperslab(hdf5_->file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr),
      "cannot select frame " + std::to_string(index) + " in " + in_quotes(temporary));
  const std::int64_t end_before = end_of_file(file_->descriptor());
  errno = 0;
  const herr_t status = H5Dwrite(hdf5_->dataset.get(), H5T_NATIVE_FLOAT, hdf5_->memory_space.get(),
                                 hdf5_->file_space.get(), H5P_DEFAULT, v);
  if (status < 0) {
    throw OutputError("writing frame " + std::to_string(index) + " to " + in_quotes(temporary) +
                      " failed" + reason_of(errno) + "; is the disk full?");
  }
  // The frame is in the page cache: start its writeback, wait for frames written earlier.
  note_written(*file_, end_before);
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
  errno = 0;
  bool closed = hdf5_->dataset.close();
  closed = hdf5_->memory_space.close() && closed;
  closed = hdf5_->file_space.close() && closed;
  closed = hdf5_->file.close() && closed;  // writes HDF5's metadata
  if (!closed) {
    throw OutputError("closing " + in_quotes(file_->temporary_path()) + " failed" +
                      reason_of(errno) + "; is the disk full?");
  }
  // Then the common sequence: fsync (through our duplicate of HDF5's descriptor), the replaced
  // file's permission bits, rename over the target, fsync of the directory.
  file_->commit(flush_to_disk);
  committed_ = true;
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

// Refuses every external link met on the way to an object: HDF5 calls this before it opens the
// other file, so that file is never opened (a FIFO there would block open() forever).
herr_t refuse_external_link(const char* /*parent_file*/, const char* /*parent_group*/,
                            const char* /*child_file*/, const char* /*child_object*/,
                            unsigned* /*access_flags*/, hid_t /*access*/, void* /*data*/) {
  return -1;
}

// Opens dataset @p name of @p file only when it is a hard link of the file itself: an external
// link (its values in another file, which open() would reach, be it a FIFO) or a soft link
// (which may lead to one) is refused by its link type, before anything is opened. @p path names
// the file, @p what the dataset in messages.
Handle open_own_dataset(hid_t file, const std::string& path, const std::string& name,
                        const std::string& what) {
  // A dataset access list is also a link access list: one for the link queries and the open.
  const Handle access = take(H5Pcreate(H5P_DATASET_ACCESS), H5Pclose, "cannot open " + what);
  check(H5Pset_elink_cb(access.get(), refuse_external_link, nullptr), "cannot open " + what);
  if (H5Lexists(file, name.c_str(), access.get()) <= 0) {
    throw OutputError(quoted_text(path) + " has no dataset " + quoted_text(name));
  }
  H5L_info_t link{};
  check(H5Lget_info(file, name.c_str(), &link, access.get()), "cannot open " + what);
  if (link.type == H5L_TYPE_EXTERNAL) {
    std::string target = "?";
    std::vector<char> value(link.u.val_size + 1, '\0');
    const char* other_file = nullptr;
    const char* other_object = nullptr;
    if (H5Lget_val(file, name.c_str(), value.data(), value.size(), access.get()) >= 0 &&
        H5Lunpack_elink_val(value.data(), link.u.val_size, nullptr, &other_file, &other_object) >=
            0 &&
        other_file != nullptr && other_object != nullptr) {
      target = quoted_text(std::string(other_file) + ":" + other_object);
    }
    throw OutputError(what + " is an external link to " + target +
                      ": its values are in another file, which is not opened; a simulation's "
                      "file holds its own values; refused");
  }
  if (link.type != H5L_TYPE_HARD) {
    throw OutputError(what + " is a " + (link.type == H5L_TYPE_SOFT ? "soft" : "user-defined") +
                      " link, not a dataset of its own; a simulation's file holds its own "
                      "values; refused");
  }
  return take(H5Dopen2(file, name.c_str(), access.get()), H5Dclose, "cannot open " + what);
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
  const std::string dataset_name = "dataset '" + std::string(kDatasetName) + "' of " + file;
  hdf5_->dataset = open_own_dataset(hdf5_->file.get(), path, kDatasetName, dataset_name);
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
