// gs_benchmark: every solution of this build on the same grid in one markdown table, compute
// only, or end to end with output through the best frame loop beside a raw write of the same
// bytes (common/src/benchmark.cpp). Speed is measured here, never in a test.
#include "gs/benchmark.hpp"
#include "gs/registry.hpp"
#include "gs_commit.hpp"  // GS_GIT_COMMIT, generated at build time (apps/CMakeLists.txt)

int main(int argc, char** argv) {
  return gs::run_benchmark(argc, argv, gs::all_implementations(), "gs_benchmark", GS_GIT_COMMIT,
                           gs::best_frame_loop());
}
