// Lesson 08's program plumbing (you need not read it for the exercise): how the ranks agree, one
// verdict for all, decided together, and how they compare their command lines.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "gs/main_guard.hpp"
#include "gs/program.hpp"

namespace GS_LESSON_NAMESPACE {

// What one rank concluded at a point every rank reaches: go on, or stop with an exit code and a
// message.
struct Verdict {
  bool stop = false;
  int code = gs::kExitSuccess;
  std::string text;        // whole lines; rank 0 prints the agreed one
  bool to_stdout = false;  // --help and --list answer on stdout, errors on stderr
};

inline Verdict stop_with(int code, std::string text, bool to_stdout = false) {
  return Verdict{true, code, std::move(text), to_stdout};
}

// A rank's ending as gs::guarded_ending() words it (the ladder every program ends with), as the
// verdict the rank brings to the agreement: a success goes on.
inline Verdict verdict_of(const gs::Ending& ending) {
  if (ending.exit_code == gs::kExitSuccess) return Verdict{};
  return stop_with(ending.exit_code, ending.message);
}

// Every rank's verdict, agreed: the lowest rank that stops decides for all (its exit code and its
// message), or every rank goes on. A collective that every rank calls at the same point whatever
// it concluded, so a rank that refuses never leaves the others waiting in a later collective:
// an MPI_Allreduce finds the deciding rank, which broadcasts its code and message.
Verdict agree(const Verdict& mine, int rank, int size);

// The end of an agreed verdict: rank 0 prints its message (once for the whole run), every rank
// returns its exit code (mpirun returns that code too: the lowest rank's non-zero one).
int conclude(const Verdict& agreed, int rank);

// The last resort, for a rank that fails inside a step every rank takes together (an exchange, a
// gather), where the others may be waiting for it: no verdict can be agreed there, so it deletes
// its partial outputs, if it writes any, and ends every rank through MPI_Abort (mpirun then ends
// the others and says which rank aborted).
[[noreturn]] void abort_every_rank(const std::string& message);

// One flag as a rank understood it: the parsed value, not the words typed ("-n 2" and
// "--nbimage 02" agree).
struct Argument {
  std::string flag;
  std::string value;
};

// Every rank's arguments against every other rank's: one line per flag whose values differ,
// naming each value and the ranks that hold it; "" when all agree. A collective (the arguments of
// every rank gathered to every rank, MPI_Allgatherv), after which every rank holds the same
// answer, so no further agreement is needed.
std::string differing_arguments(const std::vector<Argument>& mine, int size);

// Prints one line per rank, in rank order, from rank 0.
void print_in_rank_order(const std::string& line, int rank, int size);

}  // namespace GS_LESSON_NAMESPACE
