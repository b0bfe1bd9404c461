// What a device allows, without the device: the GS_DEVICE_LIMITS profiles and their parsing, and
// the model of what fits one block and one multiprocessor. Plain C++, built in every build (the
// queries of the device are in gpu_cuda.cpp and gpu_none.cpp).
#include "gs/device_limits.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <string>
#include <vector>

#include "gs/params.hpp"

namespace gs {
namespace {

constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kMiB = 1024 * kKiB;
constexpr std::int64_t kGiB = 1024 * kMiB;

// A card a learner may bring, as cudaGetDeviceProperties describes it (compute capability 7.5,
// Turing: 64 KiB of shared memory per SM, all of it one block's with the opt-in; 48 KiB without;
// 64 K registers and 1024 threads per SM).
struct Profile {
  const char* name;  // what GS_DEVICE_LIMITS says
  const char* card;  // what messages say
  DeviceLimits limits;
};

DeviceLimits turing(int multiprocessors, std::int64_t memory) {
  DeviceLimits l;
  l.compute_major = 7;
  l.compute_minor = 5;
  l.multiprocessors = multiprocessors;
  l.shared_per_block = 48 * kKiB;
  l.shared_per_block_optin = 64 * kKiB;
  l.shared_per_multiprocessor = 64 * kKiB;
  l.reserved_shared_per_block = 0;
  l.registers_per_block = 65536;
  l.registers_per_multiprocessor = 65536;
  l.threads_per_block = 1024;
  l.threads_per_multiprocessor = 1024;
  l.blocks_per_multiprocessor = 16;
  l.memory = memory;
  return l;
}

const std::vector<Profile>& profiles() {
  // The T4's 16 GB of GDDR6 are 15843721216 bytes for the runtime; the GTX 1650 has 4 GiB.
  static const std::vector<Profile> all = {
      {"t4", "a Tesla T4", turing(40, 15843721216)},
      {"gtx1650", "a GeForce GTX 1650", turing(14, 4 * kGiB)},
  };
  return all;
}

// One limit GS_DEVICE_LIMITS can set: its key, whether it counts bytes (then K, M, G may
// follow the number), and the field (an int or an int64 one).
struct Key {
  const char* name;
  bool bytes;
  std::int64_t DeviceLimits::*wide;
  int DeviceLimits::*narrow;
};

const std::vector<Key>& keys() {
  static const std::vector<Key> all = {
      {"sms", false, nullptr, &DeviceLimits::multiprocessors},
      {"shared_per_block", true, &DeviceLimits::shared_per_block, nullptr},
      {"shared_per_block_optin", true, &DeviceLimits::shared_per_block_optin, nullptr},
      {"shared_per_sm", true, &DeviceLimits::shared_per_multiprocessor, nullptr},
      {"registers_per_block", false, nullptr, &DeviceLimits::registers_per_block},
      {"registers_per_sm", false, nullptr, &DeviceLimits::registers_per_multiprocessor},
      {"threads_per_block", false, nullptr, &DeviceLimits::threads_per_block},
      {"threads_per_sm", false, nullptr, &DeviceLimits::threads_per_multiprocessor},
      {"blocks_per_sm", false, nullptr, &DeviceLimits::blocks_per_multiprocessor},
      {"memory", true, &DeviceLimits::memory, nullptr},
  };
  return all;
}

std::int64_t get(const DeviceLimits& limits, const Key& key) {
  return key.wide != nullptr ? limits.*key.wide : limits.*key.narrow;
}

void set(DeviceLimits& limits, const Key& key, std::int64_t value) {
  if (key.wide != nullptr) {
    limits.*key.wide = value;
  } else {
    limits.*key.narrow = static_cast<int>(value);
  }
}

std::string trim(const std::string& text) {
  const auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  std::size_t begin = 0;
  std::size_t end = text.size();
  while (begin < end && is_space(text[begin])) ++begin;
  while (end > begin && is_space(text[end - 1])) --end;
  return text.substr(begin, end - begin);
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::string joined_names() {
  std::string names;
  for (const Key& key : keys()) names += (names.empty() ? "" : ", ") + std::string(key.name);
  return names;
}

// The value of `key`: a positive whole number, for a byte count optionally followed by K, M or G
// (KiB, MiB, GiB: binary). Returns the problem in `problem` when there is one.
std::int64_t parse_value(const Key& key, const std::string& text, std::string& problem) {
  std::int64_t number = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  const auto [end, error] = std::from_chars(first, last, number);
  if (error == std::errc::result_out_of_range) {
    problem = "the value '" + text + "' of " + key.name + " is too large";
    return 0;
  }
  if (error != std::errc() || end == first) {
    problem = std::string(key.name) + " takes a positive whole number" +
              (key.bytes ? " of bytes, optionally followed by K, M or G" : "") + ", not '" + text +
              "'";
    return 0;
  }
  const std::string unit = lower(std::string(end, last));
  std::int64_t scale = 1;
  if (unit == "k" || unit == "kib") {
    scale = kKiB;
  } else if (unit == "m" || unit == "mib") {
    scale = kMiB;
  } else if (unit == "g" || unit == "gib") {
    scale = kGiB;
  } else if (!unit.empty()) {
    problem = std::string(key.name) + " takes a positive whole number" +
              (key.bytes ? " of bytes, optionally followed by K, M or G" : "") + ", not '" + text +
              "'";
    return 0;
  }
  if (!key.bytes && scale != 1) {
    problem = std::string(key.name) + " is a count, not a size: '" + text + "'";
    return 0;
  }
  if (number < 1) {
    problem = std::string(key.name) + " must be at least 1 (got '" + text + "')";
    return 0;
  }
  const std::int64_t ceiling = key.bytes ? (std::int64_t{1} << 50) : INT_MAX;
  if (number > ceiling / scale) {
    problem = "the value '" + text + "' of " + key.name + " is too large";
    return 0;
  }
  return number * scale;
}

std::string count_text(std::int64_t value) {
  return std::to_string(value);
}

}  // namespace

std::string bytes_text(std::int64_t bytes) {
  const struct {
    std::int64_t size;
    const char* unit;
  } units[] = {{kGiB, "GiB"}, {kMiB, "MiB"}, {kKiB, "KiB"}};
  for (const auto& u : units) {
    if (bytes >= u.size) {
      if (bytes % u.size == 0) return std::to_string(bytes / u.size) + " " + u.unit;
      const std::int64_t tenths = bytes * 10 / u.size;  // rounded down
      return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + " " + u.unit;
    }
  }
  return std::to_string(bytes) + " B";
}

std::string DeviceLimits::source() const {
  if (!overridden()) return "";
  if (override_card.empty())
    return "the limits set by " + std::string(kDeviceLimitsVariable) + "=" + override_spec;
  return "the limits of " + override_card + " (" + kDeviceLimitsVariable + "=" + override_spec +
         ")";
}

std::string DeviceLimits::describe() const {
  return overridden() ? name + " with " + source() : name;
}

std::string DeviceLimits::summary() const {
  return count_text(multiprocessors) + " SMs, " + bytes_text(shared_per_block) +
         " of shared memory per block (" + bytes_text(shared_per_block_optin) + " opt-in), " +
         bytes_text(shared_per_multiprocessor) + " per SM, " +
         count_text(registers_per_multiprocessor) + " registers per SM, " +
         count_text(threads_per_block) + " threads per block, " +
         count_text(threads_per_multiprocessor) + " per SM, " + bytes_text(memory) +
         " of memory, compute capability " + std::to_string(compute_major) + "." +
         std::to_string(compute_minor);
}

std::vector<std::string> device_limit_profiles() {
  std::vector<std::string> names;
  for (const Profile& profile : profiles()) names.push_back(profile.name);
  return names;
}

DeviceLimits reduce_limits(const DeviceLimits& real, const std::string& spec) {
  const std::string text = trim(spec);
  if (text.empty()) return real;
  const auto refuse = [&text](const std::string& problem) {
    std::string names;
    for (const Profile& profile : profiles()) {
      names += (names.empty() ? "" : ", ") + std::string(profile.name);
    }
    return InvalidParameter(std::string(kDeviceLimitsVariable) + "=" + text + ": " + problem +
                            " (a profile, " + names + ", and/or key=value entries, keys " +
                            joined_names() + "; e.g. t4, or sms=40,shared_per_block_optin=64K)");
  };

  const Profile* profile = nullptr;
  std::vector<std::pair<const Key*, std::int64_t>> entries;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    std::size_t comma = text.find(',', begin);
    if (comma == std::string::npos) comma = text.size();
    const std::string entry = trim(text.substr(begin, comma - begin));
    begin = comma + 1;
    if (entry.empty()) throw refuse("an empty entry");
    const std::size_t equals = entry.find('=');
    if (equals == std::string::npos) {
      const std::string name = lower(entry);
      const auto found = std::find_if(profiles().begin(), profiles().end(),
                                      [&name](const Profile& p) { return name == p.name; });
      if (found == profiles().end()) throw refuse("no profile named '" + entry + "'");
      if (profile != nullptr)
        throw refuse("two profiles, '" + std::string(profile->name) + "' and '" + entry + "'");
      profile = &*found;
      continue;
    }
    const std::string name = lower(trim(entry.substr(0, equals)));
    const auto key = std::find_if(keys().begin(), keys().end(),
                                  [&name](const Key& k) { return name == k.name; });
    if (key == keys().end()) throw refuse("no limit named '" + name + "'");
    for (const auto& seen : entries) {
      if (seen.first == &*key) throw refuse(name + " is given twice");
    }
    std::string problem;
    const std::int64_t value = parse_value(*key, trim(entry.substr(equals + 1)), problem);
    if (!problem.empty()) throw refuse(problem);
    entries.emplace_back(&*key, value);
  }

  DeviceLimits limits = real;
  if (profile != nullptr) {
    // The profile's card where it is smaller, the device's where the device is.
    for (const Key& key : keys()) {
      set(limits, key, std::min(get(real, key), get(profile->limits, key)));
    }
    limits.reserved_shared_per_block =
        std::min(real.reserved_shared_per_block, profile->limits.reserved_shared_per_block);
    if (std::make_pair(profile->limits.compute_major, profile->limits.compute_minor) <
        std::make_pair(real.compute_major, real.compute_minor)) {
      limits.compute_major = profile->limits.compute_major;
      limits.compute_minor = profile->limits.compute_minor;
    }
    limits.override_card = profile->card;
  }
  for (const auto& [key, value] : entries) {
    if (value > get(real, *key)) {
      throw refuse(std::string(key->name) + "=" +
                   (key->bytes ? bytes_text(value) : count_text(value)) +
                   " is more than this device's " +
                   (key->bytes ? bytes_text(get(real, *key)) : count_text(get(real, *key))) + " (" +
                   real.name + "): the variable only makes limits smaller");
    }
    set(limits, *key, value);
  }
  // A block never gets more than its SM has (less the runtime's reserve for each block).
  limits.shared_per_block_optin =
      std::min(limits.shared_per_block_optin,
               limits.shared_per_multiprocessor - limits.reserved_shared_per_block);
  limits.shared_per_block = std::min(limits.shared_per_block, limits.shared_per_block_optin);
  limits.registers_per_block =
      std::min(limits.registers_per_block, limits.registers_per_multiprocessor);
  limits.threads_per_block = std::min(limits.threads_per_block, limits.threads_per_multiprocessor);
  limits.override_spec = text;
  return limits;
}

int blocks_per_multiprocessor(const DeviceLimits& limits, const KernelResources& resources,
                              int threads_per_block, std::int64_t dynamic_shared_bytes) {
  if (threads_per_block < 1) return 0;
  // Threads are scheduled, and registers given, by whole warps of 32.
  const std::int64_t threads = (std::int64_t{threads_per_block} + 31) / 32 * 32;
  std::int64_t blocks = limits.blocks_per_multiprocessor > 0 ? limits.blocks_per_multiprocessor
                                                             : std::int64_t{INT_MAX};
  blocks = std::min(blocks, limits.threads_per_multiprocessor / threads);
  const std::int64_t shared =
      resources.static_shared_bytes + dynamic_shared_bytes + limits.reserved_shared_per_block;
  if (shared > 0) blocks = std::min(blocks, limits.shared_per_multiprocessor / shared);
  if (resources.registers_per_thread > 0) {
    blocks = std::min(blocks, limits.registers_per_multiprocessor /
                                  (std::int64_t{resources.registers_per_thread} * threads));
  }
  return static_cast<int>(std::max<std::int64_t>(0, blocks));
}

std::string launch_problem(const DeviceLimits& limits, const KernelResources& resources,
                           int threads_per_block, std::int64_t dynamic_shared_bytes) {
  const std::string threads = std::to_string(threads_per_block);
  if (threads_per_block < 1) return "a block needs at least one thread (got " + threads + ")";
  if (threads_per_block > limits.threads_per_block) {
    return "blocks of " + threads + " threads, more than the " +
           std::to_string(limits.threads_per_block) + " a block may have";
  }
  if (resources.max_threads_per_block > 0 && threads_per_block > resources.max_threads_per_block) {
    return "blocks of " + threads + " threads, more than the " +
           std::to_string(resources.max_threads_per_block) +
           " this kernel allows (its registers or __launch_bounds__)";
  }
  const std::int64_t shared = resources.static_shared_bytes + dynamic_shared_bytes;
  if (shared > limits.shared_per_block_optin) {
    return bytes_text(shared) + " of shared memory per block, more than the " +
           bytes_text(limits.shared_per_block_optin) + " a block may have";
  }
  if (resources.static_shared_bytes > limits.shared_per_block) {
    return bytes_text(resources.static_shared_bytes) +
           " of static shared memory per block, more than the " +
           bytes_text(limits.shared_per_block) +
           " a block gets without the opt-in (which only dynamic shared memory can make)";
  }
  const std::int64_t registers = std::int64_t{resources.registers_per_thread} * threads_per_block;
  if (registers > limits.registers_per_block) {
    return std::to_string(registers) + " registers per block (" +
           std::to_string(resources.registers_per_thread) + " per thread), more than the " +
           std::to_string(limits.registers_per_block) + " a block may have";
  }
  if (blocks_per_multiprocessor(limits, resources, threads_per_block, dynamic_shared_bytes) < 1) {
    return "one block of " + threads + " threads with " + bytes_text(shared) +
           " of shared memory needs more than one SM holds (" +
           std::to_string(limits.threads_per_multiprocessor) + " threads, " +
           bytes_text(limits.shared_per_multiprocessor) + " of shared memory)";
  }
  return "";
}

}  // namespace gs
