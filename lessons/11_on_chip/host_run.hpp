// Lesson 11's run of the kernel made on the host (advance_on_host): every tile kept apart, each
// step every warp reading the rows around its band and then walking it with the kernel's own
// code (32 lanes in lockstep, HostWarp), the learner's exchange between the tiles through
// mailboxes poisoned with NaN. How the tests check the kernel's walk and the exchange without a
// GPU. Plumbing for the tests; included once, by on_chip.cpp, after the walk.
#pragma once

namespace on_chip {
namespace {

// The host's run of the kernel for kColumns columns per lane (advance_on_host).
template <int kColumns>
void advance_tiles_on_host(const TilePlan& p, gs::State& state, const gs::Rates& rates, int steps,
                           int threads) {
  const Coefficients k = gs::step_coefficients(rates);
  const std::size_t kept_size = static_cast<std::size_t>(p.padded_rows) * p.shared_pitch;
  const std::size_t global_size = static_cast<std::size_t>(p.rows) * p.pitch;
  const float poison = std::numeric_limits<float>::quiet_NaN();
  // The two mailboxes of each field, global layout; the state starts in mailbox 0.
  std::vector<float> mailbox_u[2] = {std::vector<float>(global_size, poison),
                                     std::vector<float>(global_size, poison)};
  std::vector<float> mailbox_v[2] = {mailbox_u[0], mailbox_u[0]};
  for (int row = 0; row < p.rows; ++row) {
    for (int col = 0; col < p.cols; ++col) {
      mailbox_u[0][p.global(row, col)] = state.u[state.index(row, col)];
      mailbox_v[0][p.global(row, col)] = state.v[state.index(row, col)];
    }
  }
  // Every tile loads its kept part (cells outside the grid, and past the kept width: 0).
  std::vector<std::vector<float>> kept_u(p.tiles(), std::vector<float>(kept_size, 0.0f));
  std::vector<std::vector<float>> kept_v = kept_u;
  for (int tile = 0; tile < p.tiles(); ++tile) {
    for (int r = 0; r < p.padded_rows; ++r) {
      for (int c = 0; c < p.padded_cols; ++c) {
        const int row = p.first_row(tile) + r, col = p.first_col(tile) + c;
        if (!p.in_grid(row, col)) continue;
        kept_u[tile][p.kept(r, c)] = mailbox_u[0][p.global(row, col)];
        kept_v[tile][p.kept(r, c)] = mailbox_v[0][p.global(row, col)];
      }
    }
  }
  // From here on the mailboxes hold only what is posted: a halo collected from a cell nobody
  // posted reads NaN.
  std::fill(mailbox_u[0].begin(), mailbox_u[0].end(), poison);
  std::fill(mailbox_v[0].begin(), mailbox_v[0].end(), poison);

  // The kernel's warps: each step, every warp reads the rows around its band (the barrier), then
  // every warp walks its band.
  constexpr bool kPairedRows = paired_rows_for(kColumns);
  const int warps = threads_for(p, kPairedRows) / kWarpSize;
  std::vector<BandEdges<kColumns, HostWarp>> edges(warps);
  int mailbox = 1;
  for (int done = 0; done < steps;) {
    const int burst = std::min(p.halo, steps - done);
    for (int tile = 0; tile < p.tiles(); ++tile) {
      ColumnRates<kColumns, HostWarp> inner_rates;  // the tile's, for its inner rows
      column_rates<kColumns, HostWarp>(p, k, tile, 3, inner_rates);
      for (int s = 0; s < burst; ++s) {
        for (int warp = 0; warp < warps; ++warp) {
          int first = 0, end = 0;
          band_of(p, warp, warps, first, end);
          read_band_edges<kColumns, HostWarp>(p, kept_u[tile].data(), kept_v[tile].data(), first,
                                              end, edges[warp]);
        }
        // (__syncthreads())
        for (int warp = 0; warp < warps; ++warp) {
          int first = 0, end = 0;
          band_of(p, warp, warps, first, end);
          walk_band<kColumns, HostWarp, kPairedRows>(p, k, tile, kept_u[tile].data(),
                                                     kept_v[tile].data(), first, end, edges[warp],
                                                     inner_rates);
        }
      }
    }
    done += burst;
    if (done == steps) break;
    for (int tile = 0; tile < p.tiles(); ++tile) {
      for (int thread = 0; thread < threads; ++thread) {
        post_edges(p, tile, thread, threads, kept_u[tile].data(), mailbox_u[mailbox].data());
        post_edges(p, tile, thread, threads, kept_v[tile].data(), mailbox_v[mailbox].data());
      }
    }
    // (grid.sync())
    for (int tile = 0; tile < p.tiles(); ++tile) {
      for (int thread = 0; thread < threads; ++thread) {
        collect_halo(p, tile, thread, threads, mailbox_u[mailbox].data(), kept_u[tile].data());
        collect_halo(p, tile, thread, threads, mailbox_v[mailbox].data(), kept_v[tile].data());
      }
    }
    mailbox ^= 1;
  }
  // Each tile's owned cells back into the state.
  for (int tile = 0; tile < p.tiles(); ++tile) {
    for (int r = p.halo; r < p.halo + p.tile_rows; ++r) {
      for (int c = p.halo; c < p.halo + p.tile_cols; ++c) {
        const int row = p.first_row(tile) + r, col = p.first_col(tile) + c;
        if (!p.in_grid(row, col)) continue;
        state.u[state.index(row, col)] = kept_u[tile][p.kept(r, c)];
        state.v[state.index(row, col)] = kept_v[tile][p.kept(r, c)];
      }
    }
  }
}

}  // namespace

void advance_on_host(const TilePlan& p, gs::State& state, const gs::Rates& rates, int steps,
                     int threads) {
  if (steps <= 0) return;
  switch (p.shared_pitch / kWarpSize) {
    case 2:
      return advance_tiles_on_host<2>(p, state, rates, steps, threads);
    case 4:
      return advance_tiles_on_host<4>(p, state, rates, steps, threads);
    case 6:
      return advance_tiles_on_host<6>(p, state, rates, steps, threads);
    default:
      return advance_tiles_on_host<8>(p, state, rates, steps, threads);
  }
}

}  // namespace on_chip
