// Lesson 08, the file you edit: one round of the peer exchange, as one block of the exchange
// kernel plays it.
//
// After every `halo` steps each GPU rank must replace its halos with its neighbours' boundary rows
// (README, section 5). Here the GPUs do it among themselves, with no host thread, no MPI and no
// NCCL call in the way: each rank's kernel writes its rows straight into a mailbox in each
// neighbour's memory, raises a flag there, waits for the neighbours' flags in its own memory and
// copies what they posted into its halos. The kernel (peer_exchange.hpp) calls exchange_round()
// once per exchange, in every block, and hands it the block's operations; exchange_api.hpp says
// what each one does and what it guarantees (and what it does not: another GPU may see stores
// late, or in part).
//
// The contract your round must keep, on any number of ranks running at any relative speed, for
// as many exchanges in a row as the run needs (the point test walks every order in which two and
// three ranks' operations can interleave):
//   - every exchange, each rank posts its rows to each neighbour and fills its halos from each
//     neighbour, and what it reads there is what that neighbour posted in the same exchange,
//     fully visible;
//   - no rank ever writes over rows a neighbour has not yet read (the mailbox has two slots);
//   - no rank waits for something that can never happen;
//   - nothing is counted on the host: the same kernel is queued again and again (even captured in
//     a CUDA graph), so a round learns which exchange it is from the block itself.
#pragma once

#include "exchange_api.hpp"

namespace halo {

// Round n (counted on the device) uses slot n % 2. Its rows are fenced before the flag says they
// are there; the wait comes after our own post and signal (waiting first, every rank would wait
// for the others: a deadlock). Slot n % 2 is free when we post round n: the neighbour has posted
// round n - 1 (we waited for it), so it had finished its kernel n - 2, unpack included, and one
// stream runs its kernels in order.
template <typename Block>
GS_HOST_DEVICE void exchange_round(Block& block) {
  const unsigned long long round = block.done() + 1;
  const int slot = static_cast<int>(round % 2);
  block.post(slot);
  block.fence();
  block.signal(round);
  block.wait_for(round);
  block.unpack(slot);
  block.finish(round);
}

}  // namespace halo
