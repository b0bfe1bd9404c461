// gray_scott: the simulation, the fastest way this build and machine allow: an implementation
// measured fastest on this grid and GPU (Implementation::leads_on: lesson 11 on a Hopper GPU),
// else the first usable implementation of the registry (GPU first), through the best frame loop
// (lesson 07's asynchronous output when built). The course's flags, an HDF5 file, a report;
// `--list` shows every implementation, `--impl` picks one.
#include "gs/program.hpp"
#include "gs/registry.hpp"

int main(int argc, char** argv) {
  return gs::run_program(argc, argv, gs::all_implementations(), "gray_scott",
                         "Gray-Scott reaction-diffusion: runs the fastest implementation this "
                         "build and machine offer and writes the frames of v to HDF5.",
                         gs::best_frame_loop());
}
