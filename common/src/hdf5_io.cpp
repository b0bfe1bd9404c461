// The frame files through HDF5's C API: FrameWriter and FrameReader. The files are written through
// gs::OutputFile (output_file.cpp), which owns the temporary file, the checks and the commit
// sequence. Every HDF5 handle is owned by a Handle that closes it with the right H5*close; every
// HDF5 return code is checked; HDF5's own error printing is turned off so that the user sees one
// message that says what failed and where (hdf5_detail.hpp, shared with hdf5_datasets.cpp, the
// files of named datasets). The writer and the reader share one table of attributes
// (kAttributes), so a name or a type is spelled once.
#include "gs/hdf5_io.hpp"

#include <hdf5.h>
#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <sstream>
#include <utility>

#include "gs/format.hpp"
#include "hdf5_detail.hpp"

namespace gs {

using namespace hdf5_detail;

namespace {

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
                         const std::string& implementation, FrameWriterOptions options,
                         FrameLayout layout)
    : path_(path),
      hdf5_(std::make_unique<Hdf5>()),
      rows_(params.rows),
      cols_(params.cols),
      frames_(params.frames),
      layout_(layout) {
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
    if (layout_ == FrameLayout::chunks_allocated) {
      // Every chunk's space taken now (not written: no fill), so that each frame's place is
      // known before any frame, to every process that writes into it.
      check(H5Pset_alloc_time(create_properties.get(), H5D_ALLOC_TIME_EARLY), dataset_error);
    }
    // Every chunk is written exactly once: filling it with zeros first would write twice.
    check(H5Pset_fill_time(create_properties.get(), H5D_FILL_TIME_NEVER), dataset_error);
    hdf5_->dataset =
        take(H5Dcreate2(hdf5_->file.get(), kDatasetName, H5T_IEEE_F32LE, hdf5_->file_space.get(),
                        H5P_DEFAULT, create_properties.get(), H5P_DEFAULT),
             H5Dclose, dataset_error);
    for (const AttributeField& field : kAttributes) {
      write_attribute(hdf5_->dataset.get(), field, params, implementation, in_quotes(temporary));
    }
    if (layout_ == FrameLayout::chunks_allocated) {
      offsets_.reserve(static_cast<std::size_t>(frames_));
      for (int frame = 0; frame < frames_; ++frame) {
        const hsize_t origin[3] = {static_cast<hsize_t>(frame), 0, 0};
        unsigned filters = 0;
        haddr_t address = HADDR_UNDEF;
        hsize_t size = 0;
        check(H5Dget_chunk_info_by_coord(hdf5_->dataset.get(), origin, &filters, &address, &size),
              dataset_error + ": cannot find the chunk of frame " + std::to_string(frame));
        if (address == HADDR_UNDEF || static_cast<std::int64_t>(size) != frame_bytes) {
          throw OutputError(dataset_error + ": the chunk of frame " + std::to_string(frame) +
                            " was not allocated whole");
        }
        offsets_.push_back(static_cast<std::int64_t>(address));
      }
      check(H5Fflush(hdf5_->file.get(), H5F_SCOPE_LOCAL), "cannot flush " + in_quotes(temporary));
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

std::int64_t FrameWriter::frame_offset(int index) const {
  if (layout_ != FrameLayout::chunks_allocated) {
    throw OutputError("frame_offset: the file's chunks are allocated as frames are written");
  }
  if (index < 0 || index >= frames_) {
    throw OutputError("frame index " + std::to_string(index) + " is outside [0, " +
                      std::to_string(frames_) + ")");
  }
  return offsets_[static_cast<std::size_t>(index)];
}

void FrameWriter::mark_written_elsewhere() {
  if (layout_ != FrameLayout::chunks_allocated) {
    throw OutputError("mark_written_elsewhere: the file's frames are written by write_frame()");
  }
  written_.assign(static_cast<std::size_t>(frames_), true);
  frames_written_ = frames_;
  bytes_written_ = std::int64_t{frames_} * rows_ * cols_ * std::int64_t{sizeof(float)};
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
