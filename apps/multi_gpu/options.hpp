// Lesson 08's program plumbing (you need not read it for the exercise): the command line, what
// every rank must agree on, and everything a rank can refuse before any work.
#pragma once

#include <string>
#include <vector>

#include "agreement.hpp"
#include "gs/program.hpp"
#include "gs/stepper.hpp"
#include "ranks.hpp"  // lessons/08_multi_gpu/

namespace CLI {
class App;
}  // namespace CLI

namespace GS_LESSON_NAMESPACE {

struct Options {
  gs::ProgramOptions program;
  int halo = 0;             // given, or the steps of a frame
  bool halo_given = false;  // --halo was given (0 or less is then refused)
  std::string transport = "auto";
  std::string mode;  // "", "benchmark", "exchange-check"
  bool weak = false;
  std::string implementation_name;
  std::string csv;  // benchmark: append the result as CSV rows
  bool list = false;
  bool edge_first = false;         // the exchange behind the steps (edge first), not between them
  bool frames_queued = false;      // benchmark: wait once at the end, not after every frame
  std::string output_by = "auto";  // ranks (each its own rows), rank0 (gathered), auto
};

// Whether each rank writes its own rows of the frames (--output-by ranks; auto: GPU ranks), or
// rank 0 writes every frame, gathered (rank0; auto: CPU ranks).
bool ranks_write_own_rows(const Options& options, const gs::Implementation& chosen);

// The header of benchmark's CSV (--csv), its own schema: an existing file must begin with it.
inline constexpr const char* kCsvHeader =
    "implementation,scaling,ranks,rows,cols,frames,steps_per_frame,halo,exchange,one_device_s,"
    "all_ranks_s,efficiency,wait\n";

// The program's flags (the course's, --halo, --transport, the modes') and the frame loop's.
void add_flags(CLI::App& app, Options& options, const gs::FrameLoop& loop);

// Parses this rank's command line. Stops for --help (the help, on stdout, exit 0) and for what
// CLI11 refuses (its message); prints nothing itself: the ranks agree first (agree()), then rank
// 0 prints the verdict that stops.
Verdict parse(int argc, char** argv, CLI::App& app, Options& options);

// What must be the same on every rank: every flag of the command line, as this rank parsed it.
// The course's flags and this program's by their values; any other flag (the frame loop's own,
// --json, --progress) by the words given, or "(not given)".
std::vector<Argument> arguments_of(const Options& options, const CLI::App& app);

// Everything one rank can refuse before any work, in the order a user fixes it: the parameters,
// --halo and the slabs, --list, the implementation and the exchange, and on rank 0, which writes
// the file, the output path and the room for the file (gs::check_output_path(), the check the
// writer makes again as it opens the file).
Verdict check_before_the_run(const Options& options, const std::vector<gs::Implementation>& all,
                             const std::string& name, int rank, int size,
                             const gs::Implementation*& chosen, Transport& transport);

// The warnings about flags given that have no effect on this run, one line each, every line
// starting with "NAME: warning: " (empty: none): --transport nccl and --edge-first with
// @p chosen on the CPU (its ranks exchange through MPI in host memory, between the steps),
// --frames-queued outside benchmark (it says how benchmark waits for the frames).
std::string warnings_of(const Options& options, const gs::Implementation& chosen,
                        const std::string& name);

}  // namespace GS_LESSON_NAMESPACE
