// Lesson 08's interface: what an exchange is given. HaloPlan (what one rank sends and receives),
// and the Block, what the learner's round (halo_exchange.hpp) works with. ranks.hpp includes it;
// so does halo_exchange.hpp, which then compiles on its own (no MPI, no CUDA needed).
//
// The Block: one block of the peer exchange's kernel (peer_exchange.hpp), on one rank. Block b of
// every rank moves the same part of the rows, so each operation is about block b alone and its
// counterpart, block b, on each neighbour. The round is a template over the Block: the kernel
// hands it a block of the GPU, the point test and the judge a Recorder (round_record.hpp) that
// writes the operations down, and walk them on a model of the ranks. Its operations:
//
//   unsigned long long done()   the rounds this block has finished: it lives in the GPU's memory
//                               (0 at the start) and survives from one kernel to the next, so
//                               no host thread counts anything;
//   void post(int slot)         writes this rank's boundary rows (its first `halo` own rows for
//                               the rank above, its last ones for the rank below) into slot
//                               `slot` (0 or 1) of each neighbour's mailbox, over NVLink; the
//                               neighbour may see these stores late, or in part;
//   void fence()                a barrier of the block's threads, then a system-scope fence:
//                               the block's stores so far are ordered before anything it
//                               stores after (a GPU that sees a later flag sees them too);
//   void signal(n)              sets this block's flag in each neighbour's memory to n (a release
//                               store at system scope);
//   void wait_for(n)            returns once each neighbour's flag in this rank's memory is n or
//                               more (one thread spins on this GPU's own memory with acquire
//                               loads, then a barrier; after GS_PEER_TIMEOUT_S it ends the
//                               kernel with a trap);
//   void unpack(int slot)       copies slot `slot` of this rank's own mailbox into its halos (its
//                               threads are done reading at the block's next barrier);
//   void finish(n)              a barrier, then done() set to n for the next kernel: the
//                               round's last operation.
//
// A rank's kernels run one after another (one stream); two ranks' kernels run at the same time,
// at any relative speed.
#pragma once

#include "gs/host_device.hpp"

// What one rank sends and receives in an exchange.
struct HaloPlan {
  int up;      // the rank above (holding the rows before ours), or -1
  int down;    // the rank below, or -1
  int rows;    // this rank's own rows
  int cols;    // columns of the grid
  int halo;    // rows exchanged with each neighbour (the steps between two exchanges)
  int top;     // halo rows above the own rows: halo, or 0 for the first rank
  int bottom;  // halo rows below: halo, or 0 for the last rank
};
