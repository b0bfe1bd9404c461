/// @file registry.hpp
/// @brief Every implementation this build contains, fastest first: what `gray_scott` picks from
///        and what `gs_benchmark` measures.
#pragma once

#include <vector>

#include "gs/stepper.hpp"

namespace gs {

/// @brief The lessons' solutions that were built, GPU lessons first (fastest first within the
///        GPU and the CPU group, as measured in docs/BENCHMARKS.md), then the reference.
std::vector<Implementation> all_implementations();

}  // namespace gs
