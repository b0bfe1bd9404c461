// Lesson 08's program plumbing: the command line and the checks before the run (options.hpp).
#include "options.hpp"

#include <algorithm>
#include <charconv>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "gs/gpu.hpp"
#include "gs/hdf5_io.hpp"
#include "gs/output_file.hpp"
#include "gs/params.hpp"
#include "session.hpp"

namespace GS_LESSON_NAMESPACE {

namespace {

// The shortest text that reads back as `value` ("0.054", not "0.0540000014").
std::string shortest(float value) {
  char text[32];
  const std::to_chars_result written = std::to_chars(text, text + sizeof text, value);
  return std::string(text, written.ptr);
}

// The implementations a rank can run, as --list shows them.
std::string implementation_list(const std::vector<gs::Implementation>& all) {
  std::ostringstream text;
  text << "implementations every rank can run (--impl), default first (* = usable here):\n";
  for (const gs::Implementation& impl : all) {
    text << (gs::usable(impl) ? "  * " : "    ") << impl.name
         << (impl.device == gs::Device::gpu ? " [gpu] " : " [cpu] ") << impl.summary << "\n";
  }
  return text.str();
}

// What this rank runs, chosen as gs::select_implementation() does but without printing: the
// verdict says why none.
const gs::Implementation* choose_implementation(const std::vector<gs::Implementation>& all,
                                                const std::string& asked,
                                                const std::string& rank_prefix, Verdict& verdict) {
  if (!asked.empty()) {
    const gs::Implementation* chosen = gs::find_implementation(all, asked);
    if (chosen == nullptr) {
      verdict = stop_with(gs::kExitUsage, rank_prefix + "error: no implementation named '" + asked +
                                              "' (see --list)\n");
    } else if (!gs::usable(*chosen)) {
      verdict = stop_with(gs::kExitNoGpu, rank_prefix + "error: '" + chosen->name +
                                              "' needs a GPU: " + gs::gpu_status().reason + "\n");
      chosen = nullptr;
    }
    return chosen;
  }
  for (const gs::Implementation& impl : all) {
    if (gs::usable(impl)) return &impl;
  }
  const std::string none = "error: every implementation of this program needs a GPU: ";
  verdict = stop_with(gs::kExitNoGpu, rank_prefix + none + gs::gpu_status().reason + "\n");
  return nullptr;
}

}  // namespace

void add_flags(CLI::App& app, Options& options, const gs::FrameLoop& loop) {
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  gs::ProgramOptions& p = options.program;
  gs::add_grid_flags(app, p.params);
  app.add_option("-o,--output", p.params.output, "HDF5 output file (written by rank 0)")
      ->capture_default_str();
  gs::add_rate_flags(app, p.params.rates);
  app.add_flag_callback(
      "--no-output", [&p] { p.write_output = false; }, "compute only");
  app.add_flag_callback(
      "--no-fsync", [&p] { p.fsync = false; }, "do not flush the output");
  app.add_flag("--json", p.json, "one line of JSON on stdout at the end");
  app.add_flag("--progress", p.progress, "the progress line even when not a terminal");
  app.add_option("--impl", options.implementation_name,
                 "the single-device implementation every rank runs (default: the fastest usable)");
  app.add_option("--halo", options.halo,
                 "rows exchanged with each neighbour = steps between two exchanges, at least 1 "
                 "(default: the steps of a frame)");
  app.add_option(
         "--transport", options.transport,
         "halo exchange of GPU ranks: peer (each GPU writes its neighbours' halos; ranks on "
         "one node whose GPUs reach each other, else NCCL), nccl, mpi (staged through host "
         "memory) or auto (peer; nccl with --edge-first)")
      ->check(CLI::IsMember({"auto", "peer", "nccl", "mpi"}))
      ->capture_default_str();
  app.add_flag("--edge-first", options.edge_first,
               "GPU ranks with NCCL: the exchange behind the steps (the boundary rows computed "
               "first from thin strips and sent while the slab computes) instead of between them; "
               "slower on the machines measured (README, section 9)");
  app.add_flag("--list", options.list, "list the implementations a rank can run and exit");
  app.add_flag("--weak", options.weak,
               "benchmark: weak scaling (the grid given is one rank's share) instead of strong");
  app.add_option("--csv", options.csv, "benchmark: also append the result to this CSV file");
  app.add_flag("--frames-queued", options.frames_queued,
               "benchmark: queue every frame and wait once at the end (what a run without "
               "output waits for) instead of after every frame (what a run that writes them "
               "waits for); the one device is timed the same way");
  app.add_option("--output-by", options.output_by,
                 "who writes the frames: ranks (each rank its own rows, on a writer thread of its "
                 "own, into the one file), rank0 (gathered to rank 0, written by lesson 07's "
                 "pipeline) or auto (ranks for GPU ranks, rank0 for CPU ranks)")
      ->check(CLI::IsMember({"auto", "ranks", "rank0"}))
      ->capture_default_str();
  if (loop.add_flags) loop.add_flags(app);
}

bool ranks_write_own_rows(const Options& options, const gs::Implementation& chosen) {
  if (options.output_by == "auto") return chosen.device == gs::Device::gpu;
  return options.output_by == "ranks";
}

Verdict parse(int argc, char** argv, CLI::App& app, Options& options) {
  if (argc > 1 &&
      (std::string(argv[1]) == "benchmark" || std::string(argv[1]) == "exchange-check")) {
    options.mode = argv[1];
    --argc;
    ++argv;
  }
  gs::apply_value_rules(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    std::ostringstream out;
    std::ostringstream err;
    const int code = app.exit(error, out, err);
    if (code == 0) return stop_with(gs::kExitSuccess, out.str(), true);
    return stop_with(gs::kExitUsage, err.str() + out.str());
  }
  options.halo_given = app.count("--halo") > 0;
  if (!options.halo_given) options.halo = options.program.params.steps_per_frame;
  return Verdict{};
}

std::vector<Argument> arguments_of(const Options& options, const CLI::App& app) {
  const gs::Params& p = options.program.params;
  const auto yes_no = [](bool given) { return std::string(given ? "given" : "not given"); };
  const std::vector<Argument> known = {
      {"the mode (run, benchmark or exchange-check)", options.mode.empty() ? "run" : options.mode},
      {"-r/--nbrow", std::to_string(p.rows)},
      {"-c/--nbcol", std::to_string(p.cols)},
      {"-n/--nbimage", std::to_string(p.frames)},
      {"-e/--nbextrastep", std::to_string(p.steps_per_frame)},
      {"-o/--output", p.output},
      {"-k/--killrate", shortest(p.rates.kill)},
      {"-f/--feedrate", shortest(p.rates.feed)},
      {"-t/--deltat", shortest(p.rates.dt)},
      {"-u/--diffusion-u", shortest(p.rates.diffusion_u)},
      {"-v/--diffusion-v", shortest(p.rates.diffusion_v)},
      {"--no-output", yes_no(!options.program.write_output)},
      {"--no-fsync", yes_no(!options.program.fsync)},
      {"--impl", options.implementation_name.empty() ? "(not given)" : options.implementation_name},
      {"--halo", std::to_string(options.halo)},
      {"--transport", options.transport},
      {"--edge-first", yes_no(options.edge_first)},
      {"--list", yes_no(options.list)},
      {"--weak", yes_no(options.weak)},
      {"--csv", options.csv.empty() ? "(not given)" : options.csv},
      {"--frames-queued", yes_no(options.frames_queued)},
      {"--output-by", options.output_by}};
  std::vector<Argument> arguments = known;
  for (const CLI::Option* option : app.get_options()) {
    if (option == app.get_help_ptr()) continue;
    bool listed = false;
    for (const Argument& argument : known) {
      const std::string flag = argument.flag.substr(argument.flag.rfind('/') + 1);
      if (flag.rfind("--", 0) == 0 && option->check_name(flag)) listed = true;
    }
    if (listed) continue;
    std::string words = option->count() == 0 ? "(not given)" : "";
    for (const std::string& word : option->results()) words += (words.empty() ? "" : " ") + word;
    std::string flag = option->get_name(false, true);
    std::replace(flag.begin(), flag.end(), ',', '/');
    arguments.push_back({flag, words});
  }
  return arguments;
}

Verdict check_before_the_run(const Options& options, const std::vector<gs::Implementation>& all,
                             const std::string& name, int rank, int size,
                             const gs::Implementation*& chosen, Transport& transport) {
  const gs::Params& params = options.program.params;
  std::vector<std::string> problems = gs::find_problems(params);
  if (options.halo_given && options.halo < 1) {
    problems.push_back("--halo must be at least 1 (got " + std::to_string(options.halo) +
                       "): it is the rows exchanged with each neighbour and the steps between two "
                       "exchanges");
  } else {
    const int rows = options.mode == "benchmark" && options.weak ? params.rows * size : params.rows;
    const std::string too_fine = decomposition_problem(rows, size, options.halo);
    if (!too_fine.empty()) problems.push_back(too_fine);
  }
  if (!problems.empty()) {
    std::string text;
    for (const std::string& problem : problems) text += name + ": error: " + problem + "\n";
    return stop_with(gs::kExitUsage, text + "Run with --help for the flags and their defaults.\n");
  }
  if (options.list) return stop_with(gs::kExitSuccess, implementation_list(all), true);

  // Only these checks can differ between ranks (a GPU on one node, none on another): their
  // messages name the rank.
  const std::string rank_prefix =
      name + ": " + (size > 1 ? "rank " + std::to_string(rank) + ": " : "");
  Verdict verdict;
  chosen = choose_implementation(all, options.implementation_name, rank_prefix, verdict);
  if (chosen == nullptr) return verdict;
  try {
    transport = choose_transport(*chosen, options.transport, options.edge_first);
  } catch (const std::exception& error) {
    return stop_with(gs::kExitUsage, name + ": error: " + error.what() + "\n");
  }
  if (rank == 0 && options.mode.empty() && options.program.write_output) {
    try {
      gs::check_output_path(params.output, gs::output_file_bytes(params));
    } catch (const std::exception& error) {
      return stop_with(gs::kExitFailure, name + ": error: " + error.what() + "\n");
    }
  }
  if (rank == 0 && options.mode == "benchmark" && !options.csv.empty()) {
    try {  // the CSV the benchmark appends its row to
      gs::check_outputs(
          {{options.csv, "--csv", gs::appended_file_bytes(options.csv, 4096), kCsvHeader}});
    } catch (const std::exception& error) {
      return stop_with(gs::kExitFailure, name + ": error: " + error.what() + "\n");
    }
  }
  return Verdict{};
}

std::string warnings_of(const Options& options, const gs::Implementation& chosen,
                        const std::string& name) {
  std::string text;
  const std::string on_cpu =
      " has no effect: the ranks run '" + chosen.name +
      "' on the CPU, and CPU ranks exchange their halos through MPI in host memory, between the "
      "steps";
  if (chosen.device == gs::Device::cpu &&
      (options.transport == "nccl" || options.transport == "peer")) {
    text += name + ": warning: --transport " + options.transport + on_cpu + "\n";
  }
  if (chosen.device == gs::Device::cpu && options.edge_first) {
    text += name + ": warning: --edge-first" + on_cpu + "\n";
  }
  if (options.frames_queued && options.mode != "benchmark") {
    text += name + ": warning: --frames-queued has no effect outside benchmark (it says how " +
            "benchmark waits for the frames it times)\n";
  }
  return text;
}

}  // namespace GS_LESSON_NAMESPACE
