/// @file stepper.hpp
/// @brief The one abstraction every lesson implements: something that owns the state in its
///        own layout and advances it. Everything around it (flags, output, timing) is common.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "gs/params.hpp"
#include "gs/state.hpp"

namespace gs {

/// @brief Where an implementation runs.
enum class Device { cpu, gpu };

/// @brief Thrown when the state stops being finite (an unstable choice of rates).
class Diverged : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// @brief Where a stepper keeps its current state (HoldsFields), for code that works on the
///        fields in place instead of copying them through fetch(): lesson 07's asynchronous
///        frame copies, lesson 08's halo exchange. Valid until the next load() or advance(). The
///        cells may be read and written (on a GPU, in order on `stream`); the next advance()
///        continues from what they hold. The padding between `cols` and `pitch` must not be
///        written.
struct FieldView {
  float* u = nullptr;           ///< Cell (0, 0) of u; nullptr when the stepper offers no view.
  float* v = nullptr;           ///< Cell (0, 0) of v.
  std::ptrdiff_t pitch = 0;     ///< Floats from the start of one row to the start of the next.
  int rows = 0;                 ///< Rows of the state.
  int cols = 0;                 ///< Columns of the state.
  Device device = Device::cpu;  ///< Where u and v point: host or device memory.
  void* stream = nullptr;       ///< GPU: the cudaStream_t the stepper computes on (nullptr:
                                ///< the legacy default stream). Held as void* so that plain
                                ///< C++ can pass it on.
  /// @brief Whether the stepper offered a view at all.
  bool available() const { return u != nullptr; }
};

/// @brief What CallersFields::advance_fields() did with fields the caller owns.
struct FieldsAdvance {
  bool advanced = false;          ///< false: this stepper cannot work on that memory; nothing done
  std::int64_t bytes_copied = 0;  ///< Device bytes the stepper copied to leave the result in the
                                  ///< caller's fields (0: computed in place, no copy at all)
};

/// @brief Advances a Gray-Scott state; each lesson variant is one Stepper.
///
/// The life cycle is load() once, then advance() and fetch_v() per frame. A GPU stepper uploads
/// in load(), keeps the fields on the device, and downloads only in fetch_v() and fetch():
/// the data crosses PCIe once each way, not once per step. What only some steppers can do is a
/// capability beside this interface, which the code that uses it asks for: a view of the fields
/// where they lie (HoldsFields, fields_of()), the advance of fields the caller owns
/// (CallersFields, callers_fields_of()).
class Stepper {
 public:
  virtual ~Stepper() = default;

  /// @brief Takes a copy of @p state and the @p rates of every step; later calls start from it.
  ///        A specialised stepper (Implementation::generic false) refuses weights other than the
  ///        unit stencil with InvalidParameter (see require_unit_stencil()).
  virtual void load(const State& state, const Rates& rates) = 0;

  /// @brief Advances the loaded state by @p steps explicit Euler steps (steps >= 0).
  ///        May return before the work is finished (asynchronous devices).
  virtual void advance(int steps) = 0;

  /// @brief Writes the current u and v into @p state (resized to the grid); waits for pending
  ///        work first.
  virtual void fetch(State& state) = 0;

  /// @brief Writes the current v (rows * cols values) to @p v; waits for pending work first.
  ///        The default goes through fetch(); steppers override it to copy v alone.
  virtual void fetch_v(float* v);

  /// @brief Waits until every step asked for so far is done (a no-op on the CPU).
  virtual void synchronize() {}
};

/// @brief A capability a stepper may add to Stepper: a view of the state where it keeps it.
///        Most steppers of the course have one (every gs::DeviceStepper does); the code that
///        can use it asks for it with fields_of() and falls back to fetch() where it is absent.
class HoldsFields {
 public:
  virtual ~HoldsFields() = default;

  /// @brief The current state in the stepper's own memory (see FieldView).
  virtual FieldView fields() = 0;
};

/// @brief The HoldsFields capability of @p stepper, or nullptr when it has none.
inline HoldsFields* holds_fields_of(Stepper& stepper) {
  return dynamic_cast<HoldsFields*>(&stepper);
}

/// @brief The current state of @p stepper where it keeps it (HoldsFields::fields()), or a view
///        that is not available() when the stepper offers none.
inline FieldView fields_of(Stepper& stepper) {
  HoldsFields* holds = holds_fields_of(stepper);
  return holds != nullptr ? holds->fields() : FieldView{};
}

/// @brief A capability a stepper may add to Stepper: advancing fields the caller owns, where they
///        lie. Most steppers work on their own buffers only; the code that can use this asks for
///        it with callers_fields_of() and copies through fields_of() where it is absent.
class CallersFields {
 public:
  virtual ~CallersFields() = default;

  /// @brief Advances by @p steps the state held in @p fields, memory the caller owns (a Python
  ///        caller's CuPy array; another stepper's strips), in place: with the rates of the last
  ///        load(), whose grid must have the same size. On a GPU the work is ordered after what
  ///        was queued on @p fields.stream before the call, and what is queued there after the
  ///        call waits for it; no byte crosses between host and device. Answers
  ///        `advanced == false`, doing nothing, for memory it cannot work on (a layout its
  ///        kernels do not take).
  virtual FieldsAdvance advance_fields(const FieldView& fields, int steps) = 0;
};

/// @brief The CallersFields capability of @p stepper, or nullptr when it has none.
inline CallersFields* callers_fields_of(Stepper& stepper) {
  return dynamic_cast<CallersFields*>(&stepper);
}

/// @brief Throws InvalidParameter unless @p rates.weights is the unit stencil: what a specialised
///        implementation named @p implementation calls in load().
void require_unit_stencil(const Rates& rates, const std::string& implementation);

/// @brief A named, selectable implementation: what `--impl`, `--list` and the benchmark see.
struct Implementation {
  std::string name;             ///< Unique, short, used on the command line (e.g. "l04-generic").
  std::string lesson;           ///< The lesson it belongs to (e.g. "04_cuda_kernels"), or "common".
  std::string summary;          ///< One line: what it does and what it teaches.
  Device device = Device::cpu;  ///< Where it runs.
  std::function<std::unique_ptr<Stepper>()> create;  ///< Makes a fresh stepper.
  bool generic = false;  ///< Takes any stencil weights (Rates::weights); false: unit weights only.
  /// @brief Empty, or why this machine cannot run a grid of (rows, cols) this way ("" when it
  ///        can): lesson 11 keeps the whole state on the chip, which a large grid or a small GPU
  ///        does not hold. The default choice passes over an implementation that refuses the
  ///        grid, saying why; `--impl` naming it is refused with the reason.
  std::function<std::string(int rows, int cols)> refuses_grid = nullptr;
  /// @brief Empty, or why the default choice (gray_scott without `--impl`) tries this
  ///        implementation first for a grid of (rows, cols) on this machine: where it was
  ///        measured faster than the registry's first (lesson 11 on a Hopper GPU's official grid).
  std::function<std::string(int rows, int cols)> leads_on = nullptr;
};

/// @brief Why @p implementation cannot run a @p rows x @p cols grid here, or "" when it can.
inline std::string grid_refusal(const Implementation& implementation, int rows, int cols) {
  return implementation.refuses_grid ? implementation.refuses_grid(rows, cols) : std::string();
}

/// @brief The scalar reference wrapped as a Stepper (the oracle, and the slowest path).
Implementation reference_implementation();

/// @brief Finds @p name in @p implementations; nullptr when absent.
const Implementation* find_implementation(const std::vector<Implementation>& implementations,
                                          const std::string& name);

}  // namespace gs
