// What the HDF5 files of common/ share (internal to gs_output, not installed): a handle that closes
// itself, the checks of HDF5's return codes, the creation of a file's temporary through HDF5,
// and what the readers refuse before they read a value. Used by hdf5_io.cpp (the frame files:
// FrameWriter, FrameReader) and hdf5_datasets.cpp (the files of named datasets: DatasetWriter,
// DatasetReader); defined in hdf5_detail.cpp.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <utility>

#include "gs/output_file.hpp"
#include "output_detail.hpp"

namespace gs::hdf5_detail {

// The output mechanism's wording: " (<strerror>)" and a path between single quotes.
using output_detail::in_quotes;
using output_detail::reason_of;
// @p text between single quotes, printable (a name read from a file or given by a user).
std::string quoted_text(const std::string& text);

// Turns HDF5's own error printing off (per thread) and keeps HDF5 from closing files at exit.
void prepare_hdf5();
// The first message HDF5 recorded for the call that just failed, printable; empty when none.
std::string hdf5_first_error();

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
Handle take(hid_t id, Handle::Closer closer, const std::string& what);
// Throws OutputError(@p what) when @p status is an HDF5 error.
void check(herr_t status, const std::string& what);

// The end of the file behind @p descriptor (its size), or -1.
std::int64_t end_of_file(int descriptor);
// Tells @p file of the bytes written since the end of the file was @p before (writeback).
void note_written(OutputFile& file, std::int64_t before);
// Creates the temporary @p temporary of an HDF5 file through HDF5 (exclusively), leaves the HDF5
// file in @p file and returns a descriptor of that very file (OutputFile's creator).
int create_hdf5_file(const std::string& temporary, Handle& file);

// Opens @p path read-only when it is a regular file, or says why it cannot be opened.
hid_t open_for_reading(const std::string& path);
// The size of @p file on the disk (not what its superblock declares).
std::uint64_t size_on_disk(hid_t file, const std::string& what);
// Refuses a dataset whose values are not in its own file; returns its layout.
H5D_layout_t refuse_foreign_storage(hid_t dataset, const std::string& what);
// Opens dataset @p name of @p file only when it is a hard link of the file itself.
Handle open_own_dataset(hid_t file, const std::string& path, const std::string& name,
                        const std::string& what);
// Checks that the chunk at @p offset was written, has its size and lies inside the file.
void check_chunk(hid_t dataset, const hsize_t* offset, std::uint64_t bytes, bool filtered,
                 std::uint64_t file_size, const std::string& what);
// Checks that every value of @p dataset was written and lies inside the file.
void check_stored(hid_t dataset, H5D_layout_t layout, std::uint64_t file_size,
                  const std::string& what);

}  // namespace gs::hdf5_detail
