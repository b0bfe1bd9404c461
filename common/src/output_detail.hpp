// What the output mechanism's two files share (internal to gs_output, not installed): how a message
// names an output, what a path names, the room it needs, and the temporary names beside it.
// output_paths.cpp defines them (with the checks of every output path of a run);
// output_file.cpp (OutputFile) and hdf5_detail.cpp use them.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "gs/output_file.hpp"

namespace gs::output_detail {

// " (<strerror>)" for a nonzero errno, or nothing.
std::string reason_of(int error_number);
// @p path between single quotes.
std::string in_quotes(const std::string& path);
// "-o 'out.h5'": how every message names an output.
std::string named(const std::string& flag, const std::string& path);

// Throws unless the file open as @p descriptor is empty or begins with exactly @p header (a line
// with its '\n'): the check of a file rows are appended to (PlannedOutput::appended_header).
void require_header(int descriptor, const std::string& header, const std::string& flag,
                    const std::string& given);

// "a directory", "a FIFO (named pipe)", ...: what a file of @p mode is, for a message.
const char* kind_of(mode_t mode);
// The directory that holds @p path ("." for a bare name).
std::filesystem::path directory_of(const std::filesystem::path& path);
// The name, the directory and the room of @p target; returns the directory's status.
struct stat check_place(const OutputTarget& target);
// Throws when the file system of @p target has less than @p bytes free (@p hint: what to do).
void check_room(const OutputTarget& target, std::int64_t bytes, const std::string& hint);

// Temporary names: <base>.partial-<host>-<pid>-<unique>.
inline constexpr std::size_t kHostChars = 32;
inline constexpr std::size_t kPidChars = 10;
inline constexpr std::size_t kUniqueChars = 8;
inline constexpr char kPartialMark[] = ".partial-";
// The longest suffix: ".partial-" host "-" pid "-" unique.
inline constexpr std::size_t kSuffixBudget =
    (sizeof kPartialMark - 1) + kHostChars + 1 + kPidChars + 1 + kUniqueChars;
static_assert(kSuffixBudget < kMaxFileNameBytes, "the suffix must leave room for a base name");
// This host's name as it appears in temporary names; 8 random hexadecimal digits.
std::string host_part();
std::string random_unique_part();
// The start every temporary name of output file @p name has, ".partial-" included.
std::string partial_prefix(const std::string& name);
// The temporary files left beside @p target by dead processes of this host.
std::vector<StalePartial> stale_partials_of(const std::filesystem::path& target);

}  // namespace gs::output_detail
