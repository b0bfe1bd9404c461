// Lesson 07's pipeline, as its tests and programs see it: run one implementation with output,
// computing frame i + 1 while frame i travels to the disk. pipeline.cpp has the story.
#pragma once

#include <string>

#include "gs/program.hpp"

namespace GS_LESSON_NAMESPACE {

/// @brief How the pipeline runs; the command line sets the first three.
struct PipelineSettings {
  int slots = 4;                      ///< Host slots of the ring (`--slots`): frames in flight.
  bool overlap = true;                ///< False (`--no-overlap`): the computing thread writes
                                      ///< each frame itself, as the synchronous loop does.
  std::string timeline;               ///< `--timeline FILE`: when each frame was computed,
                                      ///< copied and written, as CSV (lane,frame,start,end).
  double writer_delay_seconds = 0.0;  ///< Tests: the writer sleeps this long before each frame.
};

/// @brief Runs @p implementation with @p options through the pipeline.
gs::RunResult run_pipelined(const gs::Implementation& implementation,
                            const gs::ProgramOptions& options, const PipelineSettings& settings);

}  // namespace GS_LESSON_NAMESPACE
