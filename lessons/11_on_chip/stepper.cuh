// Lesson 11's stepper: what turns the kernel into a gs::Stepper (the plan for the device, the
// buffers, the cooperative launch of a frame, the copies in and out). Plumbing around the
// lesson's idea; included once, by on_chip.cpp, after the kernel.
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

class OnChipStepper : public gs::Stepper {
 public:
  explicit OnChipStepper(int halo) : halo_(halo) {}
  OnChipStepper(const OnChipStepper&) = delete;
  OnChipStepper& operator=(const OnChipStepper&) = delete;
  ~OnChipStepper() override {
    drop_graphs();
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

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
    if (stream_ == nullptr) {
      GS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    }
    GS_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const std::size_t count = static_cast<std::size_t>(plan_.rows) * plan_.pitch;
    for (gs::DeviceFloats& buffer : buffers_) buffer = gs::device_floats(count);
    current_ = 0;
    copy_in(buffer(0, 0), state.u.data());
    copy_in(buffer(0, 1), state.v.data());
    coefficients_ = gs::step_coefficients(rates);
    drop_graphs();                                      // they hold the old buffers, plan and rates
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
      const std::pair<int, int> key{steps, current_};
      auto recorded = graphs_.find(key);
      if (recorded == graphs_.end()) {
        GS_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
        const cudaError_t launched = launch_frame(steps);
        cudaGraph_t graph = nullptr;
        const cudaError_t ended = cudaStreamEndCapture(stream_, &graph);
        GS_CUDA_CHECK(launched);
        GS_CUDA_CHECK(ended);
        cudaGraphExec_t exec = nullptr;
        const cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
        cudaGraphDestroy(graph);
        GS_CUDA_CHECK(instantiated);
        recorded = graphs_.emplace(key, exec).first;
      }
      GS_CUDA_CHECK(cudaGraphLaunch(recorded->second, stream_));
    }
    // The tiles went back into the buffer of exchange number `rounds` (1: the other pair).
    const int rounds = (steps + plan_.halo - 1) / plan_.halo;
    if (rounds % 2 == 1) current_ = 1 - current_;
  }

  void fetch(gs::State& state) override {
    synchronize();
    state.rows = plan_.rows;
    state.cols = plan_.cols;
    state.u.resize(static_cast<std::size_t>(plan_.rows) * plan_.cols);
    state.v.resize(state.u.size());
    copy_out(state.u.data(), buffer(current_, 0));
    copy_out(state.v.data(), buffer(current_, 1));
  }

  void fetch_v(float* v) override {
    synchronize();
    copy_out(v, buffer(current_, 1));
  }

  void synchronize() override {
    if (stream_ != nullptr) GS_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  gs::FieldView fields() override {
    return {buffer(current_, 0), buffer(current_, 1), plan_.pitch, plan_.rows,
            plan_.cols,          gs::Device::gpu,     stream_};
  }

 private:
  float* buffer(int pair, int field) const { return buffers_[2 * pair + field].get(); }
  std::size_t pitch_bytes() const { return static_cast<std::size_t>(plan_.pitch) * sizeof(float); }
  std::size_t row_bytes() const { return static_cast<std::size_t>(plan_.cols) * sizeof(float); }
  void copy_in(float* device, const float* host) {
    GS_CUDA_CHECK(cudaMemcpy2DAsync(device, pitch_bytes(), host, row_bytes(), row_bytes(),
                                    static_cast<std::size_t>(plan_.rows), cudaMemcpyHostToDevice,
                                    stream_));
    GS_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void copy_out(float* host, const float* device) const {
    GS_CUDA_CHECK(cudaMemcpy2DAsync(host, row_bytes(), device, pitch_bytes(), row_bytes(),
                                    static_cast<std::size_t>(plan_.rows), cudaMemcpyDeviceToHost,
                                    stream_));
    GS_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  // The kernel's launch for a frame of `steps` from the pair current_, cooperative (every block
  // resident at once); its error, not thrown, so that a recording can be ended first.
  cudaError_t launch_frame(int steps) {
    float* u0 = buffer(current_, 0);
    float* v0 = buffer(current_, 1);
    float* u1 = buffer(1 - current_, 0);
    float* v1 = buffer(1 - current_, 1);
    void* arguments[] = {&plan_, &coefficients_, &u0, &v0, &u1, &v1, &steps};
    cudaLaunchAttribute cooperative{};
    cooperative.id = cudaLaunchAttributeCooperative;
    cooperative.val.cooperative = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(static_cast<unsigned>(plan_.tiles()));
    config.blockDim = dim3(static_cast<unsigned>(kernel_.threads));
    config.dynamicSmemBytes = static_cast<std::size_t>(kept_bytes(plan_));
    config.stream = stream_;
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
  cudaStream_t stream_ = nullptr;
  gs::DeviceFloats buffers_[4];  // u and v of pair 0, then of pair 1
  int current_ = 0;              // the pair that holds the state
};

}  // namespace
}  // namespace on_chip
