// Lesson 11's interface beyond its steppers, for its tests: the cut of a grid into tiles that
// fit the chip, and the kernel's run made on the host with the kernel's own warp code, which is
// how the walk and the learner's exchange are checked on a machine without a GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "gs/params.hpp"
#include "gs/state.hpp"
#include "tiles.hpp"

namespace on_chip {

/// @brief The widest kept tile a warp spans: 32 lanes of at most 8 columns.
inline constexpr int kMaxKeptCols = 32 * 8;

/// @brief The steps between two exchanges the lesson's stepper uses (README.md: the model).
inline constexpr int kDefaultHalo = 4;

/// @brief The cut of a @p rows x @p cols grid into at most @p blocks tiles whose kept part (two
///        fields, padded by @p halo) fits @p shared_bytes each and at most kMaxKeptCols columns,
///        with the fewest kept cells per tile (the work of every step). std::nullopt when none
///        fits, and then @p why (when given) says so in a sentence.
std::optional<TilePlan> plan_tiles(int rows, int cols, int halo, int blocks,
                                   std::int64_t shared_bytes, std::string* why = nullptr);

/// @brief Shared memory a block of @p plan keeps: both fields, plan.padded_rows x shared_pitch.
std::int64_t kept_bytes(const TilePlan& plan);

/// @brief Advances @p state by @p steps as the kernel does with @p plan, with the kernel's own
///        code: every tile kept apart with its halo; plan.halo steps at a time, each step every
///        warp reading the rows around its band, then every warp walking its band (a warp's 32
///        lanes in lockstep); then post_edges() of every tile into the mailbox and
///        collect_halo() of every tile from it, each by @p threads pretend threads. The
///        mailboxes alternate between two buffers as the kernel's do.
void advance_on_host(const TilePlan& plan, gs::State& state, const gs::Rates& rates, int steps,
                     int threads = 3);

}  // namespace on_chip
