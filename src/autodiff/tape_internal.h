// The pieces of a tape that backprop needs (internal to src/autodiff).
#pragma once

#include <functional>
#include <memory>
#include <unordered_set>
#include <utility>
#include <vector>

#include "eagerflow/autodiff/gradient_hooks.h"
#include "eagerflow/autodiff/gradient_tape.h"
#include "eagerflow/runtime/op_def.h"

namespace ef::detail {

// The dtypes gradients and tangents flow through: the float dtypes and the complex
// ones (Note [complex dtypes] in core/dtype.h); integers and bool stop them.
constexpr bool is_differentiable(DType t) { return is_floating(t) || is_complex(t); }

// A tensor's identity on tapes, assigned on first use (Note [tape recording]).
int64_t tensor_id(const Tensor& t);

// A stand-in for `t` that keeps its tape identity, dtype, shape and device but not its
// value (Note [gradient uses] in op_def.h); `t` itself when symbolic.
Tensor released_stand_in(const Tensor& t);
// Whether `t` is such a stand-in.
bool is_released(const Tensor& t);

// A custom_gradient call's gradient: one gradient per output in, one per input out.
using CustomGradientFn = std::function<std::vector<Tensor>(std::span<const Tensor> output_grads)>;

// One recorded op call, or one custom_gradient call (op null, custom_gradient set).
struct TapeEntry {
  const OpDef* op = nullptr;
  std::shared_ptr<const Attrs> attrs;  // null when the op has none (an Attrs is ~700 bytes)
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
  std::shared_ptr<const CustomGradientFn> custom_gradient = nullptr;

  std::string_view name() const { return op ? op->name : std::string_view("custom_gradient"); }
};

// While set on this thread, backprop adds every op whose gradient function it runs
// (check_gradients learns from it which gradients it verified).
std::unordered_set<const OpDef*>*& gradient_functions_run();

// Collects into `ops` the ops whose gradient functions backprop runs while it lives.
class ObservedGradientFunctions {
 public:
  explicit ObservedGradientFunctions(std::unordered_set<const OpDef*>& ops)
      : saved_(std::exchange(gradient_functions_run(), &ops)) {}
  ~ObservedGradientFunctions() { gradient_functions_run() = saved_; }
  ObservedGradientFunctions(const ObservedGradientFunctions&) = delete;
  ObservedGradientFunctions& operator=(const ObservedGradientFunctions&) = delete;

 private:
  std::unordered_set<const OpDef*>* saved_;
};

// Whether some tape records, or some forward accumulator is active, on this thread
// (custom_gradient and function calls then record themselves as one entry).
bool tapes_recording();

// This thread's recorder (tapes and forward accumulators): installs it in the Context,
// or removes it when no tape and no accumulator is active any more.
void install_recorder();
void remove_recorder_if_idle();

// Forward mode (Note [forward mode] in forward_accumulator.h), called by the recorder:
// whether an accumulator is active, and the tangents of an op call's outputs, of a
// variable read and of a custom_gradient (or function) call.
bool accumulators_active();
void accumulate_op(const OpCall& call, std::span<const Tensor> outputs);
void accumulate_variable_read(const Variable& variable, const Tensor& value);
// Whether an active forward accumulator has a tangent for one of `inputs`.
bool tangents_reach(std::span<const Tensor> inputs);
// The tangents of a custom_gradient call's outputs from its inputs' tangents (one per
// input, undefined where an input has none): the function's own jvp, when it gave one.
using CustomJvpFn = std::function<std::vector<Tensor>(std::span<const Tensor> input_tangents)>;
void accumulate_custom(std::span<const Tensor> inputs, std::span<const Tensor> outputs,
                       const std::function<std::vector<Tensor>(std::span<const Tensor>)>& gradient,
                       const CustomJvpFn* jvp = nullptr);

// ef::vectorized_map (src/graph), which the tape's vectorized Jacobians call; null
// until the graph library has registered it.
using VectorizeFn =
    std::vector<Tensor> (*)(const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& f,
                            const std::vector<Tensor>& elems);
VectorizeFn& vectorize_hook();

// While set on this thread, forward mode adds every op whose jvp rule it runs
// (check_gradients learns from it which jvp rules it verified).
std::unordered_set<const OpDef*>*& jvp_rules_run();

// Records a custom_gradient call on every recording tape that watches one of `inputs`
// (Note [custom gradients] in custom_gradient.h).
// Forward accumulators get the outputs' tangents from `jvp` when given, else from the
// gradient (transposed).
void record_custom_gradient(std::span<const Tensor> inputs, std::span<const Tensor> outputs,
                            std::shared_ptr<const CustomGradientFn> gradient,
                            const CustomJvpFn* jvp = nullptr);

// While it lives, collects the trainable float variables read on this thread (each
// once, with the value first read), whether or not a tape watches them.
class VariableReadLog {
 public:
  VariableReadLog();
  ~VariableReadLog();
  VariableReadLog(const VariableReadLog&) = delete;
  VariableReadLog& operator=(const VariableReadLog&) = delete;

  void add(const Variable& variable, const Tensor& value);

  std::vector<Variable> variables;
  std::vector<Tensor> values;  // parallel to `variables`
};

// Note [gradient hooks] (eagerflow/autodiff/gradient_hooks.h): while a listener is set
// on this thread, the next backprop() takes it and calls it with each source's gradient
// as soon as it is final (undefined when none reaches the source). Nested backward
// passes, run by gradient functions, do not see it.
using FinalGradientFn = std::function<void(size_t source, const Tensor& gradient)>;
FinalGradientFn*& final_gradient_listener();

// Sets this thread's listener (null: none) while it lives, then puts back the one before.
class FinalGradientListenerScope {
 public:
  explicit FinalGradientListenerScope(FinalGradientFn* listener)
      : previous_(std::exchange(final_gradient_listener(), listener)) {}
  ~FinalGradientListenerScope() { final_gradient_listener() = previous_; }
  FinalGradientListenerScope(const FinalGradientListenerScope&) = delete;
  FinalGradientListenerScope& operator=(const FinalGradientListenerScope&) = delete;

  FinalGradientFn* previous() const { return previous_; }

 private:
  FinalGradientFn* previous_;
};

// The gradient hooks of one gradient() call: opened for the hooked variables among
// `sources` (whose read tensors are flat sources first[i] .. first[i + 1] - 1 of the
// backward pass), told when each flat source is final, and asked at the end for what
// gradient() returns for those variables.
class HookedGradients {
 public:
  HookedGradients(const std::vector<GradientTape::Source>& sources, const std::vector<size_t>& first,
                  bool recorded);
  ~HookedGradients();
  bool active() const { return !calls_.empty(); }
  // Whether source i is a hooked variable (its gradient is the hook's, not the sum here).
  bool hooks(size_t source) const { return source < sources_.size() && sources_[source].hook >= 0; }
  void source_final(size_t flat, const Tensor& gradient);
  // Replaces result[i] for each hooked variable source i.
  void finish(std::vector<Tensor>& result);

 private:
  struct Source {
    int hook = -1;          // index into calls_; -1: not hooked
    size_t index = 0;       // the variable's index in its hook's begin()
    size_t reads_left = 0;  // read tensors whose gradient is not final yet
    Tensor sum;             // of the final ones
  };
  std::vector<Source> sources_;
  std::vector<int> flat_to_source_;
  std::vector<std::unique_ptr<GradientHookCall>> calls_;
};

// Computes d(targets · seeds)/d(sources) from `entries` (in execution order).
// Gradient functions run with public ops, so active tapes record them. With
// `release_entries`, empties each entry once processed (a non-persistent tape's last
// use), also when it throws.
std::vector<Tensor> backprop(std::vector<TapeEntry>& entries, std::span<const Tensor> targets,
                             std::span<const Tensor> seeds, std::span<const Tensor> sources,
                             UnconnectedGradients unconnected, bool release_entries = false);

// Sums `grad` over the dimensions that broadcasting added or stretched, giving `input`'s
// shape (decided when the graph runs where a static shape is partial).
Tensor sum_to_shape(const Tensor& grad, const Tensor& input);

}  // namespace ef::detail
