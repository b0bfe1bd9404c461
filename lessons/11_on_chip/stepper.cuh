// Lesson 11's stepper: what turns the kernel into a gs::Stepper (the plan for the device, the
// cooperative launch of a frame; the buffers and the copies in and out on common/'s
// gs::DeviceStepper). Plumbing around the lesson's idea; included once, by on_chip.cpp, after the
// kernel.
#pragma once

namespace on_chip {
namespace {

// The kernel instance for a plan: the lanes' columns follow the kept width.
struct KernelChoice {
  const void* kernel = nullptr;
  int threads = 0;
};

template <bool kPairedRows>
const void* kernel_for(int columns) {
  switch (columns) {
    case 2:
      return reinterpret_cast<const void*>(&on_chip_kernel<2, kPairedRows>);
    case 4:
      return reinterpret_cast<const void*>(&on_chip_kernel<4, kPairedRows>);
    case 6:
      return reinterpret_cast<const void*>(&on_chip_kernel<6, kPairedRows>);
    default:
      return reinterpret_cast<const void*>(&on_chip_kernel<8, kPairedRows>);
  }
}

KernelChoice choose_kernel(const TilePlan& p) {
  const int columns = p.shared_pitch / kWarpSize;
  // Knobs for measuring (README.md, Results), unset in normal runs: GS_L11_PAIRED_ROWS=0 or 1
  // walks the rows one or two at a time; GS_L11_WARPS=n runs n warps a block (at most the
  // registers' limit). Unset: paired_rows_for() and the most warps the registers allow.
  bool paired_rows = paired_rows_for(columns);
  if (const char* paired = std::getenv("GS_L11_PAIRED_ROWS")) paired_rows = std::atoi(paired) != 0;
  int threads = threads_for(p, paired_rows);
  if (const char* warps = std::getenv("GS_L11_WARPS")) {
    threads = std::clamp(kWarpSize * std::atoi(warps), kWarpSize, threads);
  }
  return {paired_rows ? kernel_for<true>(columns) : kernel_for<false>(columns), threads};
}

// The plan for this device (or the smaller card GS_DEVICE_LIMITS names): one block per SM, the
// shared memory a block may opt into; std::nullopt and why when the state does not fit.
std::optional<TilePlan> plan_for_device(int rows, int cols, int halo, std::string* why) {
  const gs::DeviceLimits& limits = gs::device_limits();
  std::optional<TilePlan> plan =
      plan_tiles(rows, cols, halo, limits.multiprocessors, limits.shared_per_block_optin, why);
  if (!plan && why != nullptr && limits.overridden()) *why += " (" + limits.source() + ")";
  return plan;
}

// The buffers (u and v of two pairs, rows of the plan's pitch), the stream, the copies in and
// out are gs::DeviceStepper's (common/); here the plan, the kernel's choice and a frame's launch.
class OnChipStepper : public gs::DeviceStepper {
 public:
  explicit OnChipStepper(int halo) : gs::DeviceStepper(gs::DeviceStream::own), halo_(halo) {}
  ~OnChipStepper() override { drop_graphs(); }

  void load(const gs::State& state, const gs::Rates& rates) override {
    gs::require_unit_stencil(rates, "l11-on-chip");
    std::string why;
    const std::optional<TilePlan> plan = plan_for_device(state.rows, state.cols, halo_, &why);
    if (!plan) throw gs::InvalidParameter("l11-on-chip: " + why);
    plan_ = *plan;
    kernel_ = choose_kernel(plan_);
    const std::int64_t shared = kept_bytes(plan_);
    GS_CUDA_CHECK(cudaFuncSetAttribute(kernel_.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(shared)));
    int resident = 0;
    GS_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &resident, kernel_.kernel, kernel_.threads, static_cast<std::size_t>(shared)));
    int sms = 0, device = 0;
    GS_CUDA_CHECK(cudaGetDevice(&device));
    GS_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    if (static_cast<std::int64_t>(resident) * sms < plan_.tiles()) {
      throw gs::InvalidParameter("l11-on-chip: " + std::to_string(plan_.tiles()) + " blocks of " +
                                 std::to_string(kernel_.threads) +
                                 " threads cannot all be resident at once on this GPU");
    }
    synchronize();
    drop_graphs();  // they hold the old buffers, plan and rates
    load_fields(state, plan_.pitch);
    coefficients_ = gs::step_coefficients(rates);
    const char* graphs = std::getenv("GS_L11_GRAPHS");  // a knob for measuring: 0 launches directly
    use_graphs_ = graphs == nullptr || std::atoi(graphs) != 0;
  }

  // A frame's launch, replayed from a CUDA graph recorded the first time its (steps, pair) comes:
  // a graph's launch costs the host less than a cooperative launch made afresh, and each frame
  // of a run that waits for every frame pays it (as gs_benchmark's do).
  void advance(int steps) override {
    if (steps <= 0) return;
    if (!use_graphs_) {
      GS_CUDA_CHECK(launch_frame(steps));
      GS_CUDA_CHECK_LAUNCH();
    } else {
      const std::pair<int, int> key{steps, parity()};
      auto recorded = graphs_.find(key);
      if (recorded == graphs_.end()) {
        GS_CUDA_CHECK(cudaStreamBeginCapture(stream(), cudaStreamCaptureModeThreadLocal));
        const cudaError_t launched = launch_frame(steps);
        cudaGraph_t graph = nullptr;
        const cudaError_t ended = cudaStreamEndCapture(stream(), &graph);
        GS_CUDA_CHECK(launched);
        GS_CUDA_CHECK(ended);
        cudaGraphExec_t exec = nullptr;
        const cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
        cudaGraphDestroy(graph);
        GS_CUDA_CHECK(instantiated);
        recorded = graphs_.emplace(key, exec).first;
      }
      GS_CUDA_CHECK(cudaGraphLaunch(recorded->second, stream()));
    }
    // The tiles went back into the buffer of exchange number `rounds` (1: the other pair).
    const int rounds = (steps + plan_.halo - 1) / plan_.halo;
    if (rounds % 2 == 1) swap();
  }

 private:
  // The kernel's launch for a frame of `steps` from the current pair, cooperative (every block
  // resident at once); its error, not thrown, so that a recording can be ended first.
  cudaError_t launch_frame(int steps) {
    float* u0 = current().u;
    float* v0 = current().v;
    float* u1 = next().u;
    float* v1 = next().v;
    void* arguments[] = {&plan_, &coefficients_, &u0, &v0, &u1, &v1, &steps};
    cudaLaunchAttribute cooperative{};
    cooperative.id = cudaLaunchAttributeCooperative;
    cooperative.val.cooperative = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(static_cast<unsigned>(plan_.tiles()));
    config.blockDim = dim3(static_cast<unsigned>(kernel_.threads));
    config.dynamicSmemBytes = static_cast<std::size_t>(kept_bytes(plan_));
    config.stream = stream();
    config.attrs = &cooperative;
    config.numAttrs = 1;
    return cudaLaunchKernelExC(&config, kernel_.kernel, arguments);
  }
  void drop_graphs() {
    for (auto& [key, exec] : graphs_) cudaGraphExecDestroy(exec);
    graphs_.clear();
  }

  int halo_;
  bool use_graphs_ = true;
  std::map<std::pair<int, int>, cudaGraphExec_t> graphs_;  // by (steps, pair the state is in)
  TilePlan plan_{};
  KernelChoice kernel_{};
  Coefficients coefficients_{};
};

}  // namespace
}  // namespace on_chip
