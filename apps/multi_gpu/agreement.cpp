// Lesson 08's program plumbing: the ranks' agreement (agreement.hpp says what each part does).
#include "agreement.hpp"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gs/interrupt.hpp"

namespace GS_LESSON_NAMESPACE {

namespace {

// "rank 3", "ranks 0, 2-4".
std::string rank_list(const std::vector<int>& ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t last = i;
    while (last + 1 < ranks.size() && ranks[last + 1] == ranks[last] + 1) ++last;
    if (i > 0) text += ", ";
    text += std::to_string(ranks[i]);
    if (last > i) text += "-" + std::to_string(ranks[last]);
    i = last + 1;
  }
  return text;
}

}  // namespace

Verdict agree(const Verdict& mine, int rank, int size) {
  const int candidate = mine.stop ? rank : size;
  int decider = size;
  MPI_Allreduce(&candidate, &decider, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (decider == size) return Verdict{};
  int header[3] = {mine.code, mine.to_stdout ? 1 : 0, static_cast<int>(mine.text.size())};
  MPI_Bcast(header, 3, MPI_INT, decider, MPI_COMM_WORLD);
  Verdict agreed = mine;
  agreed.stop = true;
  agreed.code = header[0];
  agreed.to_stdout = header[1] != 0;
  agreed.text.resize(static_cast<std::size_t>(header[2]));
  MPI_Bcast(agreed.text.data(), header[2], MPI_CHAR, decider, MPI_COMM_WORLD);
  return agreed;
}

int conclude(const Verdict& agreed, int rank) {
  if (!agreed.stop) return gs::kExitSuccess;
  if (rank == 0 && !agreed.text.empty()) {
    (agreed.to_stdout ? std::cout : std::cerr) << agreed.text << std::flush;
  }
  return agreed.code;
}

[[noreturn]] void abort_every_rank(const std::string& message) {
  std::cerr << message << std::flush;
  for (const std::string& partial : gs::partial_outputs()) ::unlink(partial.c_str());
  MPI_Abort(MPI_COMM_WORLD, gs::kExitFailure);
  std::abort();  // MPI_Abort does not return
}

std::string differing_arguments(const std::vector<Argument>& mine, int size) {
  std::string packed;  // flag NUL value NUL ... (command-line words never hold a NUL)
  for (const Argument& argument : mine) {
    packed += argument.flag;
    packed += '\0';
    packed += argument.value;
    packed += '\0';
  }
  const int length = static_cast<int>(packed.size());
  std::vector<int> lengths(static_cast<std::size_t>(size));
  MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> offsets(static_cast<std::size_t>(size), 0);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    offsets[static_cast<std::size_t>(r)] = total;
    total += lengths[static_cast<std::size_t>(r)];
  }
  std::string all(static_cast<std::size_t>(std::max(total, 1)), '\0');
  MPI_Allgatherv(packed.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
                 MPI_CHAR, MPI_COMM_WORLD);

  // flag -> value -> the ranks that hold it; flags in the order of the lowest rank that has them.
  std::vector<std::string> flags;
  std::map<std::string, std::map<std::string, std::vector<int>>> holders;
  for (int r = 0; r < size; ++r) {
    std::size_t at = static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)]);
    const std::size_t end = at + static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)]);
    while (at < end) {
      const std::size_t flag_end = all.find('\0', at);
      const std::size_t value_end = all.find('\0', flag_end + 1);
      const std::string flag = all.substr(at, flag_end - at);
      if (holders.find(flag) == holders.end()) flags.push_back(flag);
      holders[flag][all.substr(flag_end + 1, value_end - flag_end - 1)].push_back(r);
      at = value_end + 1;
    }
  }
  std::string lines;
  for (const std::string& flag : flags) {
    const auto& values = holders[flag];
    std::vector<std::pair<std::vector<int>, std::string>> groups;  // by their lowest rank
    std::vector<bool> has(static_cast<std::size_t>(size), false);
    for (const auto& [value, ranks] : values) {
      groups.emplace_back(ranks, value.empty() ? "(empty)" : value);
      for (const int r : ranks) has[static_cast<std::size_t>(r)] = true;
    }
    std::vector<int> without;  // ranks whose program has no such flag (different programs)
    for (int r = 0; r < size; ++r) {
      if (!has[static_cast<std::size_t>(r)]) without.push_back(r);
    }
    if (!without.empty()) groups.emplace_back(without, "(no such flag)");
    if (groups.size() == 1) continue;
    std::sort(groups.begin(), groups.end());
    lines += "  " + flag + ": ";
    for (std::size_t g = 0; g < groups.size(); ++g) {
      lines += (g > 0 ? "; " : "") + groups[g].second + " on " + rank_list(groups[g].first);
    }
    lines += "\n";
  }
  return lines;
}

void print_in_rank_order(const std::string& line, int rank, int size) {
  const int length = static_cast<int>(line.size());
  std::vector<int> lengths(static_cast<std::size_t>(size));
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(static_cast<std::size_t>(size), 0);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    offsets[static_cast<std::size_t>(r)] = total;
    total += lengths[static_cast<std::size_t>(r)];
  }
  std::vector<char> all(static_cast<std::size_t>(std::max(total, 1)));
  MPI_Gatherv(line.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
              0, MPI_COMM_WORLD);
  if (rank != 0) return;
  for (int r = 0; r < size; ++r) {
    std::cerr << std::string(all.data() + offsets[static_cast<std::size_t>(r)],
                             static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)]))
              << "\n";
  }
}

}  // namespace GS_LESSON_NAMESPACE
