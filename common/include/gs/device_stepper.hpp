/// @file device_stepper.hpp
/// @brief What every GPU lesson's stepper shares (04, 05, 06, 11): u and v on the device in a
///        current and a next pair, the copies in and out, the wait, the view of the fields, and
///        the advance of fields a caller owns where they lie. A lesson adds what it teaches: its
///        load() (its checks and plans, then load_fields()) and its advance() (its kernels, on
///        stream(), each launch from current() into next() and then swap()). Built where CUDA
///        is (gs_device); only runtime API calls, no kernel.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>

#include "gs/cuda_check.hpp"
#include "gs/state.hpp"
#include "gs/stepper.hpp"

namespace gs {

/// @brief The stream a DeviceStepper's kernels and copies run on.
enum class DeviceStream {
  legacy_default,  ///< the legacy default stream (lessons 04 and 05: launches without a stream)
  own              ///< a stream of its own that does not wait for the default stream
};

/// @brief u and v of one pair of device buffers.
struct DevicePair {
  float* u;  ///< cell (0, 0) of u
  float* v;  ///< cell (0, 0) of v
};

/// @brief A GPU stepper's device fields and everything around them but the kernels.
///
/// Each field is `rows` rows of `pitch()` floats (pitch = cols for an unpitched layout), twice:
/// the current pair holds the state, the next pair is what a launch writes; swap() makes the
/// next pair current (the ping-pong). Copies go to stream() and wait for it, so the host memory
/// may be reused once they return.
class DeviceStepper : public Stepper, public HoldsFields {
 public:
  /// @brief A stepper whose work runs on @p stream (created at the first load() when `own`).
  explicit DeviceStepper(DeviceStream stream) : own_stream_(stream == DeviceStream::own) {}
  ~DeviceStepper() override;
  DeviceStepper(const DeviceStepper&) = delete;             ///< owns device memory and a stream
  DeviceStepper& operator=(const DeviceStepper&) = delete;  ///< owns device memory and a stream

  /// @brief Waits for the work queued so far, then downloads u and v into @p state.
  void fetch(State& state) override;
  /// @brief Waits for the work queued so far, then downloads v alone (half of fetch()'s bytes).
  void fetch_v(float* v) override;
  /// @brief Waits for stream() (the whole device on the legacy default stream, as
  ///        cudaDeviceSynchronize).
  void synchronize() override;
  /// @brief The current pair, its pitch, and stream() (HoldsFields).
  FieldView fields() override;

 protected:
  /// @brief Waits for earlier work, (re)allocates the four buffers of @p state's grid with rows
  ///        of @p pitch floats (>= cols; the padding set to 0), and uploads @p state into the
  ///        current pair. The first call makes the stream when it is the stepper's own.
  void load_fields(const State& state, int pitch);

  /// @brief The stream the kernels run on (nullptr: the legacy default stream).
  cudaStream_t stream() const { return stream_; }
  /// @brief Rows of the grid.
  int rows() const { return rows_; }
  /// @brief Columns of the grid.
  int cols() const { return cols_; }
  /// @brief Floats from one row to the next in the pairs a launch reads and writes now (the
  ///        caller's pitch during advance_callers_fields()).
  int pitch() const { return pitch_; }
  /// @brief The pair that holds the state.
  DevicePair current() const { return {buffer(2 * parity_), buffer(2 * parity_ + 1)}; }
  /// @brief The pair the next launch writes.
  DevicePair next() const { return {buffer(2 * (1 - parity_)), buffer(2 * (1 - parity_) + 1)}; }
  /// @brief After a launch: what it wrote becomes the state (the ping-pong).
  void swap() { parity_ = 1 - parity_; }
  /// @brief Which pair holds the state, 0 or 1: what a recorded graph must know, and set.
  int& parity() { return parity_; }

  /// @brief The launches of @p steps steps, enqueued on stream() from current(), swap() after
  ///        each (what advance_callers_fields() runs on the caller's fields).
  using Enqueue = std::function<void(int steps)>;

  /// @brief CallersFields::advance_fields() for a lesson that offers it: the caller's fields
  ///        become the current pair (a scratch pair of their pitch the next), @p enqueue runs
  ///        the launches, and after an odd number of launches one device copy puts the result
  ///        back into the caller's fields. stream() starts after what @p caller.stream holds,
  ///        and @p caller.stream waits for stream(): no wait on the host. Answers
  ///        `advanced == false` for a layout the kernels cannot take (takes_in_place()) or before
  ///        any load(). The launches are enqueued one by one: a recorded graph names the
  ///        buffers it was recorded with.
  FieldsAdvance advance_callers_fields(const FieldView& caller, int steps, int vector_columns,
                                       const Enqueue& enqueue);

  /// @brief Whether kernels that load and store @p vector_columns floats as one vector can
  ///        work on @p caller as it lies: device memory of this grid's size, u and v with one
  ///        pitch, rows starting on a vector's boundary and a column count of whole vectors (no
  ///        vector reaches past the last column into memory the caller did not hand over).
  bool takes_in_place(const FieldView& caller, int vector_columns) const;

 private:
  float* buffer(int index) const { return lending_ ? lent_[index] : own_[index].get(); }
  void copy_in(float* device, const float* host);
  void copy_out(float* host, const float* device) const;
  void borrow(DevicePair caller, int pitch);
  std::int64_t give_back();
  void return_to_own();

  bool own_stream_;
  cudaStream_t stream_ = nullptr;
  bool loaded_ = false;
  int rows_ = 0;
  int cols_ = 0;
  int pitch_ = 0;
  int parity_ = 0;
  DeviceFloats own_[4];  // u and v of pair 0, then of pair 1
  // advance_callers_fields(): the caller's u, v and the scratch u, v; the own pitch and parity
  // to return to; a scratch pair for a pitch other than the own; the events the two streams
  // wait on.
  bool lending_ = false;
  float* lent_[4] = {nullptr, nullptr, nullptr, nullptr};
  int own_pitch_ = 0;
  int own_parity_ = 0;
  DeviceFloats scratch_[2];
  int scratch_pitch_ = 0;
  cudaEvent_t caller_ready_ = nullptr;
  cudaEvent_t stepper_done_ = nullptr;
};

}  // namespace gs
