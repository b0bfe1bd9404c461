// gs::DeviceStepper: the device fields every GPU lesson's stepper keeps. Built where CMake found
// the CUDA toolkit. Only runtime API calls: no kernels, so plain C++.
#include "gs/device_stepper.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <limits>

namespace gs {

DeviceStepper::~DeviceStepper() {
  if (caller_ready_ != nullptr) cudaEventDestroy(caller_ready_);
  if (stepper_done_ != nullptr) cudaEventDestroy(stepper_done_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

void DeviceStepper::load_fields(const State& state, int pitch) {
  // Every copy and memset goes to the kernels' stream: an own stream does not wait for the
  // legacy default stream (cudaStreamNonBlocking), so a plain cudaMemcpy there could still be
  // writing the state while the first kernel reads it.
  if (own_stream_ && stream_ == nullptr) {
    GS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  synchronize();  // earlier work may still read the old buffers
  return_to_own();
  rows_ = state.rows;
  cols_ = state.cols;
  pitch_ = pitch;
  const std::size_t count = static_cast<std::size_t>(rows_) * static_cast<std::size_t>(pitch_);
  for (DeviceFloats& buffer : own_) buffer.reset();  // free the old ones first
  for (DeviceFloats& buffer : scratch_) buffer.reset();
  scratch_pitch_ = 0;
  for (DeviceFloats& buffer : own_) {
    buffer = device_floats(count);
    if (pitch_ != cols_) {  // the padding columns hold zeros
      GS_CUDA_CHECK(cudaMemsetAsync(buffer.get(), 0, count * sizeof(float), stream_));
    }
  }
  parity_ = 0;
  loaded_ = true;
  copy_in(current().u, state.u.data());
  copy_in(current().v, state.v.data());
}

void DeviceStepper::fetch(State& state) {
  synchronize();
  state.rows = rows_;
  state.cols = cols_;
  state.u.resize(static_cast<std::size_t>(rows_) * static_cast<std::size_t>(cols_));
  state.v.resize(state.u.size());
  copy_out(state.u.data(), current().u);
  copy_out(state.v.data(), current().v);
}

void DeviceStepper::fetch_v(float* v) {
  synchronize();
  copy_out(v, current().v);
}

void DeviceStepper::synchronize() {
  if (!own_stream_) {
    GS_CUDA_CHECK(cudaDeviceSynchronize());
  } else if (stream_ != nullptr) {
    GS_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
}

FieldView DeviceStepper::fields() {
  const DevicePair state = current();
  return {state.u, state.v, pitch_, rows_, cols_, Device::gpu, stream_};
}

void DeviceStepper::copy_in(float* device, const float* host) {
  const std::size_t row = static_cast<std::size_t>(cols_) * sizeof(float);
  GS_CUDA_CHECK(cudaMemcpy2DAsync(device, static_cast<std::size_t>(pitch_) * sizeof(float), host,
                                  row, row, static_cast<std::size_t>(rows_), cudaMemcpyHostToDevice,
                                  stream_));
  GS_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void DeviceStepper::copy_out(float* host, const float* device) const {
  const std::size_t row = static_cast<std::size_t>(cols_) * sizeof(float);
  GS_CUDA_CHECK(
      cudaMemcpy2DAsync(host, row, device, static_cast<std::size_t>(pitch_) * sizeof(float), row,
                        static_cast<std::size_t>(rows_), cudaMemcpyDeviceToHost, stream_));
  GS_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

bool DeviceStepper::takes_in_place(const FieldView& caller, int vector_columns) const {
  const auto aligned = [vector_columns](const float* p) {
    return reinterpret_cast<std::uintptr_t>(p) % (sizeof(float) * vector_columns) == 0;
  };
  return caller.available() && caller.v != nullptr && caller.device == Device::gpu &&
         caller.rows == rows_ && caller.cols == cols_ && caller.pitch >= cols_ &&
         caller.pitch <= std::numeric_limits<int>::max() && caller.cols % vector_columns == 0 &&
         caller.pitch % vector_columns == 0 && aligned(caller.u) && aligned(caller.v);
}

FieldsAdvance DeviceStepper::advance_callers_fields(const FieldView& caller, int steps,
                                                    int vector_columns, const Enqueue& enqueue) {
  if (!loaded_ || !takes_in_place(caller, vector_columns)) return {};
  if (steps <= 0) return {true, 0};
  const auto caller_stream = static_cast<cudaStream_t>(caller.stream);
  if (caller_ready_ == nullptr) {
    GS_CUDA_CHECK(cudaEventCreateWithFlags(&caller_ready_, cudaEventDisableTiming));
    GS_CUDA_CHECK(cudaEventCreateWithFlags(&stepper_done_, cudaEventDisableTiming));
  }
  GS_CUDA_CHECK(cudaEventRecord(caller_ready_, caller_stream));
  GS_CUDA_CHECK(cudaStreamWaitEvent(stream_, caller_ready_, 0));
  borrow({caller.u, caller.v}, static_cast<int>(caller.pitch));
  std::int64_t copied = 0;
  try {
    enqueue(steps);
    copied = give_back();
  } catch (...) {
    return_to_own();
    throw;
  }
  GS_CUDA_CHECK(cudaEventRecord(stepper_done_, stream_));
  GS_CUDA_CHECK(cudaStreamWaitEvent(caller_stream, stepper_done_, 0));
  return {true, copied};
}

// The caller's fields as the current pair, in their own pitch; the next pair is scratch of that
// pitch: this stepper's next pair when the pitch is its own, else a pair kept for that pitch.
// The launches then read and write them as their own; give_back() returns to the own buffers,
// their state untouched.
void DeviceStepper::borrow(DevicePair caller, int pitch) {
  DevicePair scratch = next();
  if (pitch != pitch_) {
    if (scratch_pitch_ != pitch) {
      for (DeviceFloats& buffer : scratch_) buffer.reset();
      for (DeviceFloats& buffer : scratch_) {
        buffer = device_floats(static_cast<std::size_t>(rows_) * static_cast<std::size_t>(pitch));
      }
      scratch_pitch_ = pitch;
    }
    scratch = {scratch_[0].get(), scratch_[1].get()};
  }
  own_pitch_ = pitch_;
  own_parity_ = parity_;
  lent_[0] = caller.u;
  lent_[1] = caller.v;
  lent_[2] = scratch.u;
  lent_[3] = scratch.v;
  lending_ = true;
  pitch_ = pitch;
  parity_ = 0;
}

// Ends borrow(): after an odd number of launches the result is in the scratch pair and is copied
// into the caller's fields (in stream order). Returns the bytes copied.
std::int64_t DeviceStepper::give_back() {
  std::int64_t copied = 0;
  if (parity_ == 1) {
    const std::size_t pitch_bytes = static_cast<std::size_t>(pitch_) * sizeof(float);
    const std::size_t row_bytes = static_cast<std::size_t>(cols_) * sizeof(float);
    for (int field = 0; field < 2; ++field) {
      GS_CUDA_CHECK(cudaMemcpy2DAsync(lent_[field], pitch_bytes, lent_[2 + field], pitch_bytes,
                                      row_bytes, static_cast<std::size_t>(rows_),
                                      cudaMemcpyDeviceToDevice, stream_));
      copied += static_cast<std::int64_t>(row_bytes) * rows_;
    }
  }
  return_to_own();
  return copied;
}

// Back to the own buffers, without copying (also when a launch failed).
void DeviceStepper::return_to_own() {
  if (!lending_) return;
  lending_ = false;
  pitch_ = own_pitch_;
  parity_ = own_parity_;
}

}  // namespace gs
