// What the HDF5 files of common/ share (hdf5_detail.hpp): HDF5's set-up, handles and return codes,
// the creation of a file's temporary through HDF5, and what the readers refuse.
#include "hdf5_detail.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gs/format.hpp"

namespace gs::hdf5_detail {

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

// Takes ownership of @p id, or throws OutputError(@p what) when HDF5 returned an error.
Handle take(hid_t id, Handle::Closer closer, const std::string& what) {
  if (id < 0) throw OutputError(what);
  return Handle(id, closer);
}

void check(herr_t status, const std::string& what) {
  if (status < 0) throw OutputError(what);
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

// ---------------------------------------------------------------------------------------------
// What the readers refuse: a file that is not a simulation's
//
// HDF5 can make a dataset of more than its own file's bytes: the raw bytes of any other file
// (external storage, H5Pset_external: /etc/hostname read as frames), other files' datasets (a
// virtual dataset: a missing source reads as whatever the buffer held), chunks never written
// (read as the fill value), chunks past the end of a file cut short whose superblock was patched
// to match (read as zeros). None is a simulation: the readers refuse each, naming it, before
// they read a value. And a FIFO given as the input would block open() forever.

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

namespace {

// A descriptor closed when it goes out of scope.
class Descriptor {
 public:
  explicit Descriptor(int descriptor) : descriptor_(descriptor) {}
  ~Descriptor() {
    if (descriptor_ >= 0) ::close(descriptor_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return descriptor_; }

 private:
  int descriptor_;
};

// Every occurrence of @p from in @p text replaced by @p to.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
    text.replace(at, from.size(), to);
    at += to.size();
  }
  return text;
}

}  // namespace

// Opens @p path read-only once it is known to be a regular file (through symbolic links), with a
// message that says why it cannot be opened: missing, truncated, not HDF5. The file is opened
// first, without waiting (O_NONBLOCK: a FIFO opens at once instead of waiting for a writer), the
// descriptor checked (fstat), and HDF5 then reads that very file: /proc/self/fd/N names the open
// file, not the path, which another process may have swapped for a FIFO since (a check of the
// path followed by an open of the path would then block forever).
hid_t open_for_reading(const std::string& path) {
  prepare_hdf5();
  const std::string file = quoted_text(path);
  const Descriptor descriptor(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (descriptor.get() < 0) {
    throw OutputError("cannot open " + file + " as an HDF5 file" + reason_of(errno));
  }
  struct stat status {};
  if (::fstat(descriptor.get(), &status) != 0) {
    throw OutputError("cannot open " + file + " as an HDF5 file" + reason_of(errno));
  }
  if (!S_ISREG(status.st_mode)) {
    throw OutputError("cannot open " + file + " as an HDF5 file: it is " +
                      output_detail::kind_of(status.st_mode) + ", not a regular file");
  }
  const std::string opened_file = "/proc/self/fd/" + std::to_string(descriptor.get());
  struct stat through {};
  if (::stat(opened_file.c_str(), &through) != 0 || through.st_dev != status.st_dev ||
      through.st_ino != status.st_ino) {
    throw OutputError("cannot open " + file + " as an HDF5 file: " + opened_file +
                      " does not lead to the file opened (is /proc mounted?)");
  }
  const hid_t opened = H5Fopen(opened_file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (opened >= 0) return opened;
  // HDF5 resolves the name it is given (realpath), which fails once the file opened has no name
  // left: the path was replaced (a FIFO renamed over it) or deleted since it was opened.
  struct stat now {};
  if (::fstat(descriptor.get(), &now) == 0 && now.st_nlink == 0) {
    throw OutputError("cannot open " + file +
                      " as an HDF5 file: it was replaced or deleted while it was being opened "
                      "(the file checked has no name any more); nothing was read from what is "
                      "there now");
  }
  const std::string detail = replaced(hdf5_first_error(), opened_file, path);
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
  if (H5Fis_hdf5(opened_file.c_str()) <= 0) {
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

namespace {

// Refuses every external link met on the way to an object: HDF5 calls this before it opens the
// other file, so that file is never opened (a FIFO there would block open() forever).
herr_t refuse_external_link(const char* /*parent_file*/, const char* /*parent_group*/,
                            const char* /*child_file*/, const char* /*child_object*/,
                            unsigned* /*access_flags*/, hid_t /*access*/, void* /*data*/) {
  return -1;
}

}  // namespace

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

}  // namespace gs::hdf5_detail
