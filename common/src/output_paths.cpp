// The output mechanism's paths (output_file.hpp): where an output path leads (through its links),
// what may be written there, the room it needs, the temporary names beside it and the leftovers of
// killed runs, checked for every output of a run before any work. The file itself, its writing
// and its commit: output_file.cpp.
#include "gs/output_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "gs/format.hpp"
#include "output_detail.hpp"

namespace gs {
namespace fs = std::filesystem;

namespace output_detail {

std::string reason_of(int error_number) {
  return error_number != 0 ? std::string(" (") + std::strerror(error_number) + ")" : std::string();
}

std::string in_quotes(const std::string& path) {
  return "'" + path + "'";
}

// "-o 'out.h5'": how every message names an output.
std::string named(const std::string& flag, const std::string& path) {
  return flag + " " + in_quotes(path);
}

void require_header(int descriptor, const std::string& header, const std::string& flag,
                    const std::string& given) {
  // The header and one more byte: enough to tell a longer first line from it.
  std::string start(header.size() + 1, '\0');
  std::size_t got = 0;
  while (got < start.size()) {
    const ssize_t now =
        ::pread(descriptor, &start[got], start.size() - got, static_cast<off_t>(got));
    if (now < 0 && errno == EINTR) continue;
    if (now < 0) {
      const int error = errno;
      throw OutputError("cannot read " + named(flag, given) + " to append to it" +
                        reason_of(error));
    }
    if (now == 0) break;
    got += static_cast<std::size_t>(now);
  }
  start.resize(got);
  if (got == 0 || start.compare(0, header.size(), header) == 0) return;
  std::string first_line = start.substr(0, start.find('\n'));
  constexpr std::size_t kShown = 60;
  if (first_line.size() > kShown) first_line = first_line.substr(0, kShown) + "...";
  std::string expected = header;
  if (!expected.empty() && expected.back() == '\n') expected.pop_back();
  throw OutputError("refusing to append to " + named(flag, given) +
                    ": its first line is not this program's header '" + expected +
                    "' but begins '" + printable(first_line) +
                    "' (another program's file, or not a CSV file); it was left as it was: give " +
                    flag + " a new file or one this program wrote");
}

// ---------------------------------------------------------------------------------------------
// The target: what a path names, through its symbolic links

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

fs::path directory_of(const fs::path& path) {
  return path.has_parent_path() ? path.parent_path() : fs::path(".");
}

// The name, the directory and the room of @p target (resolve_output() checked what it is).
// Returns the directory's status.
struct stat check_place(const OutputTarget& target) {
  const std::string& given = target.given;
  const std::string& flag = target.flag;
  const std::string name = target.path.filename().string();  // at most NAME_MAX: resolved
  if (name.empty() || name == "." || name == "..") {
    throw OutputError(named(flag, given) + " names no file; give " + flag + " a file name");
  }
  const fs::path directory = directory_of(target.path);
  struct stat status {};
  if (::stat(directory.c_str(), &status) != 0) {
    const int error = errno;
    throw OutputError("cannot write " + named(flag, given) + ": directory " +
                      in_quotes(directory.string()) +
                      (error == ENOENT ? std::string(" does not exist") : reason_of(error)));
  }
  if (!S_ISDIR(status.st_mode)) {
    throw OutputError("cannot write " + named(flag, given) + ": " + in_quotes(directory.string()) +
                      " is not a directory");
  }
  if (::access(directory.c_str(), W_OK | X_OK) != 0) {
    const int error = errno;
    throw OutputError("cannot write " + named(flag, given) + ": directory " +
                      in_quotes(directory.string()) + " is not writable" + reason_of(error));
  }
  return status;
}

namespace {

// Bytes free for an ordinary user in the file system of @p directory, or -1 when unknown.
long double free_bytes_in(const fs::path& directory) {
  struct statvfs file_system {};
  if (::statvfs(directory.c_str(), &file_system) != 0) return -1.0L;
  return static_cast<long double>(file_system.f_bavail) * file_system.f_frsize;
}

}  // namespace

void check_room(const OutputTarget& target, std::int64_t bytes, const std::string& hint) {
  const fs::path directory = directory_of(target.path);
  const long double free_bytes = free_bytes_in(directory);
  if (free_bytes >= 0.0L && free_bytes < static_cast<long double>(bytes)) {
    throw OutputError(
        "not enough space for " + named(target.flag, target.given) + ": the run writes " +
        si(static_cast<double>(bytes), "B") + ", " + si(static_cast<double>(free_bytes), "B") +
        " free in " + in_quotes(directory.string()) + " (" +
        (hint.empty() ? "free some, or give " + target.flag + " another place" : hint) + ")");
  }
}

// ---------------------------------------------------------------------------------------------
// Temporary names: <base>.partial-<host>-<pid>-<unique> (the lengths: output_detail.hpp)

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

namespace {

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

// The temporary files left by dead processes of this host beside the outputs @p names of
// @p directory, by output, in one pass over the directory (gs_render declares thousands of
// frames in one directory).
std::map<std::string, std::vector<StalePartial>> stale_partials_in(
    const fs::path& directory, const std::set<std::string>& names) {
  std::map<std::string, std::vector<StalePartial>> stale;
  std::map<std::string, std::string> name_of_prefix;
  for (const std::string& name : names) name_of_prefix.emplace(partial_prefix(name), name);
  const std::string host = host_part();
  DIR* listing = ::opendir(directory.c_str());
  if (listing == nullptr) return stale;
  while (const dirent* entry = ::readdir(listing)) {
    const std::string name = entry->d_name;
    // The prefix ends at a ".partial-" (an output's own name may hold one too: try each).
    for (std::size_t mark = name.find(kPartialMark); mark != std::string::npos;
         mark = name.find(kPartialMark, mark + 1)) {
      const std::size_t prefix_size = mark + sizeof kPartialMark - 1;
      const auto output = name_of_prefix.find(name.substr(0, prefix_size));
      if (output == name_of_prefix.end()) continue;
      // What follows the prefix is host-pid-unique; the host may itself contain '-'.
      const std::string rest = name.substr(prefix_size);
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
      stale[output->second].push_back(
          {path.string(), pid, static_cast<std::int64_t>(status.st_size)});
      break;
    }
  }
  ::closedir(listing);
  for (auto& [name, partials] : stale) {
    (void)name;
    std::sort(partials.begin(), partials.end(),
              [](const StalePartial& a, const StalePartial& b) { return a.path < b.path; });
  }
  return stale;
}

}  // namespace

std::vector<StalePartial> stale_partials_of(const fs::path& target) {
  const std::string name = target.filename().string();
  auto stale = stale_partials_in(directory_of(target), {name});
  return stale[name];
}

}  // namespace output_detail

using namespace output_detail;

// ---------------------------------------------------------------------------------------------
// Paths and checks

OutputTarget resolve_output(const std::string& given, const std::string& flag) {
  OutputTarget target;
  target.given = given;
  target.flag = flag;
  target.path = fs::path(given);
  for (int links = 0;; ++links) {
    const std::string name = target.path.filename().string();
    if (name.size() > kMaxFileNameBytes) {
      throw OutputError(
          "cannot write " + named(flag, given) + ": the file name " +
          (target.path.string() == given ? std::string() : in_quotes(target.path.string()) + " ") +
          "is " + std::to_string(name.size()) + " bytes long; the limit is " +
          std::to_string(kMaxFileNameBytes) + " (NAME_MAX)");
    }
    struct stat status {};
    if (::lstat(target.path.c_str(), &status) != 0) {
      const int error = errno;
      if (error == ENOENT) return target;  // a new file; its directory is checked next
      throw OutputError("cannot examine " + named(flag, target.path.string()) + reason_of(error));
    }
    if (S_ISLNK(status.st_mode)) {
      if (links == 40) {
        throw OutputError(named(flag, given) +
                          " is a chain of more than 40 symbolic links (a loop?)");
      }
      std::error_code error;
      const fs::path next = fs::read_symlink(target.path, error);
      if (error) {
        throw OutputError("cannot read the symbolic link " + in_quotes(target.path.string()) +
                          " (" + flag + "): " + error.message());
      }
      target.path = next.is_absolute() ? next : target.path.parent_path() / next;
      continue;
    }
    const std::string described =
        target.path.string() == given
            ? named(flag, given)
            : named(flag, given) + " (a symbolic link to " + in_quotes(target.path.string()) + ")";
    if (S_ISDIR(status.st_mode)) {
      throw OutputError(described + " is a directory; give " + flag + " a file name");
    }
    if (!S_ISREG(status.st_mode)) {
      // Never opened: opening a FIFO for writing waits for a reader, a device may do anything.
      throw OutputError("refusing to write " + described + ": it is " + kind_of(status.st_mode) +
                        "; " + flag +
                        " must name a regular file or a new one (the output is written "
                        "beside it and renamed over it, which would replace it)");
    }
    target.exists = true;
    target.status = status;
    return target;
  }
}

void check_output_path(const std::string& path, std::int64_t bytes, const std::string& flag) {
  const OutputTarget target = resolve_output(path, flag);
  check_place(target);
  check_room(target, bytes, "");
}

std::vector<OutputTarget> check_outputs(const std::vector<PlannedOutput>& outputs,
                                        std::ostream* warnings) {
  struct Checked {
    OutputTarget target;
    struct stat directory {};
    std::int64_t bytes = 0;
  };
  std::vector<Checked> checked;
  checked.reserve(outputs.size());
  for (const PlannedOutput& output : outputs) {
    Checked entry;
    entry.target = resolve_output(output.path, output.flag);
    entry.directory = check_place(entry.target);
    if (!output.appended_header.empty() && entry.target.exists) {
      // resolve_output() refused what is not a regular file; O_NONBLOCK: never waiting on a FIFO
      // put there since.
      const int descriptor = ::open(entry.target.path.c_str(),
                                    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
      if (descriptor >= 0) {
        struct stat status {};
        try {
          if (::fstat(descriptor, &status) == 0 && S_ISREG(status.st_mode)) {
            require_header(descriptor, output.appended_header, output.flag, output.path);
          }
        } catch (...) {
          ::close(descriptor);
          throw;
        }
        ::close(descriptor);
      }  // else: the append itself says why it cannot read it
    }
    entry.bytes = std::max<std::int64_t>(output.bytes, 0);
    checked.push_back(std::move(entry));
  }
  // The same file: the same directory (by device and inode, so `..`, `.` and links to it do not
  // hide it) and the same name, or the same existing file (a hard link to it too).
  using Place = std::tuple<dev_t, ino_t, std::string>;
  using Inode = std::pair<dev_t, ino_t>;
  std::map<Place, std::size_t> by_place;
  std::map<Inode, std::size_t> by_inode;
  const auto refuse_pair = [&checked](std::size_t first, std::size_t second) {
    const OutputTarget& a = checked[first].target;
    const OutputTarget& b = checked[second].target;
    throw OutputError(named(a.flag, a.given) + " and " + named(b.flag, b.given) +
                      " name the same file" +
                      (a.path.string() != a.given || b.path.string() != b.given
                           ? " (" + in_quotes(a.path.string()) + ")"
                           : std::string()) +
                      "; give each output a name of its own");
  };
  for (std::size_t i = 0; i < checked.size(); ++i) {
    const Checked& entry = checked[i];
    const Place place{entry.directory.st_dev, entry.directory.st_ino,
                      entry.target.path.filename().string()};
    const auto [at, fresh] = by_place.emplace(place, i);
    if (!fresh) refuse_pair(at->second, i);
    if (entry.target.exists) {
      const auto [same, new_inode] =
          by_inode.emplace(Inode{entry.target.status.st_dev, entry.target.status.st_ino}, i);
      if (!new_inode) refuse_pair(same->second, i);
    }
  }
  // The room, per file system: outputs that share one need the sum of their sizes.
  std::map<dev_t, std::vector<std::size_t>> by_file_system;
  for (std::size_t i = 0; i < checked.size(); ++i) {
    by_file_system[checked[i].directory.st_dev].push_back(i);
  }
  for (const auto& [device, all_members] : by_file_system) {
    (void)device;
    std::vector<std::size_t> members;  // those whose size is known
    for (const std::size_t i : all_members) {
      if (checked[i].bytes > 0) members.push_back(i);
    }
    if (members.empty()) continue;
    if (members.size() == 1) {
      check_room(checked[members[0]].target, checked[members[0]].bytes, "");
      continue;
    }
    long double total = 0.0L;
    std::string names;
    for (const std::size_t i : members) {
      total += static_cast<long double>(checked[i].bytes);
      names += (names.empty() ? "" : ", ") + named(checked[i].target.flag, checked[i].target.given);
    }
    const fs::path directory = directory_of(checked[members[0]].target.path);
    const long double free_bytes = free_bytes_in(directory);
    if (free_bytes >= 0.0L && free_bytes < total) {
      throw OutputError("not enough space for " + names + ": together they need " +
                        si(static_cast<double>(total), "B") + ", " +
                        si(static_cast<double>(free_bytes), "B") + " free in " +
                        in_quotes(directory.string()) +
                        " (free some, or give them places on other disks)");
    }
  }
  if (warnings != nullptr) {
    // One pass over each directory, one warning per output that has leftovers.
    std::map<std::string, std::set<std::string>> names_by_directory;
    for (const Checked& entry : checked) {
      names_by_directory[directory_of(entry.target.path).string()].insert(
          entry.target.path.filename().string());
    }
    for (const auto& [directory, names] : names_by_directory) {
      for (const auto& [name, stale] : stale_partials_in(directory, names)) {
        (void)name;
        warn_about_stale_partials(*warnings, stale);
      }
    }
  }
  std::vector<OutputTarget> targets;
  targets.reserve(checked.size());
  for (Checked& entry : checked) targets.push_back(std::move(entry.target));
  return targets;
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

}  // namespace gs
