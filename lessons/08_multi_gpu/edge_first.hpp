// Lesson 08: the exchange behind the compute ("edge first"), for GPU ranks that exchange through
// NCCL. Included by ranks.cpp after halo_exchange.hpp (your exchange_with_nccl() does the
// exchange here too).
//
// Without it, a period of `halo` steps is: exchange (the GPU waits for the neighbour's rows),
// then the steps. With it, the rows a neighbour needs at the END of a period are computed first,
// on a second stream, from a thin strip of the slab, and sent while the slab itself computes:
//
//   state at t (halos exact) --+--> main stream:  the whole slab, `halo` steps  --> state at t+halo
//                              |                                                      ^
//                              +--> edge stream:  strips of 3*halo rows, `halo` steps, |
//                                   their middle rows = own boundary rows at t+halo,  |
//                                   exchanged (NCCL) ------------------------------> halos
//
// After `halo` steps a strip of 3*halo rows is wrong `halo` rows deep at both of its ends (it
// treats them as edges of the grid), so its middle third is exact: the top strip (slab rows
// [0, 3 halo)) gives the first `halo` own rows, the bottom strip (the last 3 halo rows) the last
// ones. The price is the strips' steps, computed twice (2 * 3 halo rows per period, against the
// slab's top + rows + bottom), plus a few small device copies; the gain, the exchange's time,
// hidden. The README's section "The exchange behind the compute" has the model and what was
// measured.
//
// The exchange itself goes through a "mailbox", a small field laid out like a slab of 2 * halo
// own rows (what goes up, then what goes down) between the two halos, so that
// exchange_with_nccl() serves unchanged:
//
//   mailbox rows [0, top)                        received from the rank above
//   mailbox rows [top, top + halo)               sent up   (own rows [top, top + halo) at t+halo)
//   mailbox rows [top + halo, top + 2 halo)      sent down (the last `halo` own rows at t+halo)
//   mailbox rows [top + 2 halo, ... + bottom)    received from the rank below
//
// The strips' steps and the sends are recorded once as a CUDA graph (NCCL's calls included) and
// replayed every period: a period costs the host a handful of calls, not dozens.
#pragma once

#if GS_HAVE_NCCL

class EdgeFirst {
 public:
  // Why the edge-first exchange cannot serve this slab, or "" when it can: it needs strips of
  // 3 * halo rows inside the extended slab.
  static std::string problem(const HaloPlan& plan) {
    if (plan.up < 0 && plan.down < 0) return "one rank: nothing to exchange";
    const int extended = plan.top + plan.rows + plan.bottom;
    if (extended < 3 * plan.halo) {
      return "a slab of " + std::to_string(extended) + " rows (halos included) is thinner than " +
             "the strips of 3 x " + std::to_string(plan.halo) + " rows";
    }
    return "";
  }

  // `edge` is a second stepper of the implementation the slab runs (for the strips); it must be
  // able to step fields it does not own (gs::CallersFields): std::invalid_argument if not.
  EdgeFirst(const HaloPlan& plan, std::unique_ptr<gs::Stepper> edge, ncclComm_t comm)
      : plan_(plan), edge_(std::move(edge)), comm_(comm) {
    int least = 0;
    int greatest = 0;
    GS_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    GS_CUDA_CHECK(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, greatest));
    for (cudaEvent_t* event : {&main_done_, &edges_read_}) {
      GS_CUDA_CHECK(cudaEventCreateWithFlags(event, cudaEventDisableTiming));
    }
  }
  ~EdgeFirst() {
    if (stream_ != nullptr) cudaStreamSynchronize(stream_);  // NCCL transfers in flight
    if (graph_ != nullptr) cudaGraphExecDestroy(graph_);
    for (cudaEvent_t event : {main_done_, edges_read_}) {
      if (event != nullptr) cudaEventDestroy(event);
    }
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  EdgeFirst(const EdgeFirst&) = delete;
  EdgeFirst& operator=(const EdgeFirst&) = delete;

  // After the slab was loaded (its halos exact): the strip stepper takes the same rates, the
  // buffers follow the slab's pitch, and nothing received is pending.
  void load(const gs::Rates& rates, const gs::FieldView& slab) {
    GS_CUDA_CHECK(cudaStreamSynchronize(stream_));
    if (graph_ != nullptr) GS_CUDA_CHECK(cudaGraphExecDestroy(graph_));
    graph_ = nullptr;
    const int strip_rows = 3 * plan_.halo;
    edge_->load(gs::State(strip_rows, plan_.cols), rates);
    pitch_ = slab.pitch;
    const std::size_t strip = static_cast<std::size_t>(strip_rows) * pitch_;
    const std::size_t mailbox = static_cast<std::size_t>(mailbox_rows()) * pitch_;
    for (int field = 0; field < 2; ++field) {
      top_strip_[field] = gs::device_floats(strip);
      bottom_strip_[field] = gs::device_floats(strip);
      mailbox_[field] = gs::device_floats(mailbox);
      GS_CUDA_CHECK(cudaMemsetAsync(mailbox_[field].get(), 0, mailbox * sizeof(float), stream_));
    }
    const gs::FieldView probe = strip_view(top_strip_);
    edge_fields_ = gs::callers_fields_of(*edge_);
    if (edge_fields_ == nullptr || !edge_fields_->advance_fields(probe, 0).advanced) {
      throw std::invalid_argument("the implementation cannot step the strips in place");
    }
    received_ = false;
  }

  // A period boundary: `slab` holds the state at t (its last steps queued on its stream). Queues,
  // on the edge stream: the halos received for t (if any) into the slab; the strips copied out of
  // the slab; then, while the slab's next steps run, the strips' `halo` steps and the exchange of
  // the boundary rows at t + halo. The slab's stream waits only for the copies out of it.
  void period(const gs::FieldView& slab) {
    const auto main = static_cast<cudaStream_t>(slab.stream);
    GS_CUDA_CHECK(cudaEventRecord(main_done_, main));
    GS_CUDA_CHECK(cudaStreamWaitEvent(stream_, main_done_, 0));
    float* const fields[2] = {slab.u, slab.v};
    const int extended = plan_.top + plan_.rows + plan_.bottom;
    for (int field = 0; field < 2; ++field) {
      if (received_) {  // the halos at t, received during the last period
        copy_rows(fields[field], 0, mailbox_[field].get(), 0, plan_.top);
        copy_rows(fields[field], plan_.top + plan_.rows, mailbox_[field].get(),
                  plan_.top + 2 * plan_.halo, plan_.bottom);
      }
      if (plan_.up >= 0) copy_rows(top_strip_[field].get(), 0, fields[field], 0, 3 * plan_.halo);
      if (plan_.down >= 0) {
        copy_rows(bottom_strip_[field].get(), 0, fields[field], extended - 3 * plan_.halo,
                  3 * plan_.halo);
      }
    }
    GS_CUDA_CHECK(cudaEventRecord(edges_read_, stream_));
    GS_CUDA_CHECK(cudaStreamWaitEvent(main, edges_read_, 0));  // before the slab overwrites them
    if (graph_ == nullptr) record();
    GS_CUDA_CHECK(cudaGraphLaunch(graph_, stream_));
    received_ = true;
  }

  cudaStream_t stream() const { return stream_; }

 private:
  int mailbox_rows() const { return plan_.top + 2 * plan_.halo + plan_.bottom; }

  gs::FieldView strip_view(const gs::DeviceFloats (&strip)[2]) const {
    return {strip[0].get(), strip[1].get(),  pitch_, 3 * plan_.halo,
            plan_.cols,     gs::Device::gpu, stream_};
  }

  // `count` rows from row `from` of `source` to row `to` of `target`, both of this pitch.
  void copy_rows(float* target, int to, const float* source, int from, int count) {
    if (count <= 0) return;
    const std::size_t pitch_bytes = static_cast<std::size_t>(pitch_) * sizeof(float);
    GS_CUDA_CHECK(
        cudaMemcpy2DAsync(target + static_cast<std::ptrdiff_t>(to) * pitch_, pitch_bytes,
                          source + static_cast<std::ptrdiff_t>(from) * pitch_, pitch_bytes,
                          static_cast<std::size_t>(plan_.cols) * sizeof(float),
                          static_cast<std::size_t>(count), cudaMemcpyDeviceToDevice, stream_));
  }

  // What every period repeats on the edge stream, recorded once: each strip's `halo` steps, its
  // exact middle rows into the mailbox, and the exchange of the mailbox (the NCCL exchange).
  void record() {
    GS_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    try {
      const int halo = plan_.halo;
      if (plan_.up >= 0) {
        edge_fields_->advance_fields(strip_view(top_strip_), halo);
        for (int field = 0; field < 2; ++field) {
          copy_rows(mailbox_[field].get(), plan_.top, top_strip_[field].get(), halo, halo);
        }
      }
      if (plan_.down >= 0) {
        edge_fields_->advance_fields(strip_view(bottom_strip_), halo);
        for (int field = 0; field < 2; ++field) {
          copy_rows(mailbox_[field].get(), plan_.top + halo, bottom_strip_[field].get(), halo,
                    halo);
        }
      }
      HaloPlan mailbox = plan_;
      mailbox.rows = 2 * halo;
      GS_NCCL_CHECK(ncclGroupStart());
      exchange_with_nccl(mailbox, mailbox_[0].get(), pitch_, comm_, stream_);
      exchange_with_nccl(mailbox, mailbox_[1].get(), pitch_, comm_, stream_);
      GS_NCCL_CHECK(ncclGroupEnd());
    } catch (...) {
      cudaGraph_t broken = nullptr;
      cudaStreamEndCapture(stream_, &broken);
      if (broken != nullptr) cudaGraphDestroy(broken);
      throw;
    }
    cudaGraph_t graph = nullptr;
    GS_CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
    const cudaError_t made = cudaGraphInstantiate(&graph_, graph, 0);
    cudaGraphDestroy(graph);
    GS_CUDA_CHECK(made);
  }

  HaloPlan plan_;
  std::unique_ptr<gs::Stepper> edge_;
  gs::CallersFields* edge_fields_ = nullptr;  // edge_'s, asked for in load(): it steps the strips
  ncclComm_t comm_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t main_done_ = nullptr;   // the slab's state at t is queued
  cudaEvent_t edges_read_ = nullptr;  // the strips (and the halos) are copied: the slab may go on
  cudaGraphExec_t graph_ = nullptr;
  std::ptrdiff_t pitch_ = 0;
  gs::DeviceFloats top_strip_[2], bottom_strip_[2], mailbox_[2];  // u, v each
  bool received_ = false;  // the mailbox holds halos for the state of the next period()
};

#endif
