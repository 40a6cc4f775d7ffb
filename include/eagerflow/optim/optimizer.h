// Optimizer: updates variables from their gradients (Keras' interface, PyTorch's update
// rules, so results match torch.optim step for step).
//
//   ef::optim::Adam adam(1e-3);
//   for (...) {
//     ef::GradientTape tape;
//     ef::Tensor loss = ...;
//     std::vector<ef::Tensor> grads = tape.gradient(loss, model_variables);
//     adam.apply_gradients(grads, model_variables);
//   }
//   // or: adam.minimize([&] { return loss_of(model); }, model_variables);
//
// Per-variable state lives in slot variables (Adam's "m" and "v", ...), created at a
// variable's first update; slot_variables() lists them in creation order for checkpoints.
//
// Note [optimizer state lives in variables]: the update count (iterations), each
// variable's step (Adam's bias corrections) and the slots are variables, not C++
// numbers, so that a training step traced into a graph or an ef::function reads and
// advances them on every run. A count kept in C++ would be read once, when the graph
// was built, and every run would use that step's learning rate and bias corrections.
// Eagerly the counts are read and advanced on the host (StepScalar): no ops run for
// them. Slots and counters are created under an InitScope, so a function creates them
// on its first trace (Note [variables created by functions] in graph/function.h).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "eagerflow/core/tensor.h"
#include "eagerflow/graph/graph.h"
#include "eagerflow/nn/config.h"
#include "eagerflow/optim/schedules.h"
#include "eagerflow/runtime/variable.h"

namespace ef::optim {

// Gradient clipping applied by apply_gradients before the update (Keras' options): at
// most one may be set (InvalidArgumentError otherwise, as Keras), and 0 means off.
struct Clipping {
  std::optional<double> clipnorm;         // each gradient to this L2 norm
  std::optional<double> global_clipnorm;  // all gradients together to this L2 norm
  std::optional<double> clipvalue;        // each element to [-clipvalue, clipvalue]
};

// Dynamic loss scaling's settings: TensorFlow's defaults (PyTorch's GradScaler starts
// at 2^16 with the same rule).
struct LossScaleOptions {
  double initial_scale = 32768;  // 2^15
  int64_t growth_steps = 2000;   // finite steps in a row before the scale doubles
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;

  // One step: updates variables[i] from gradients[i] (an undefined gradient skips its
  // variable). Throws InvalidArgumentError, before changing anything, for lists of
  // different lengths, a gradient whose dtype or shape differs from its variable's, or
  // when no variable has a gradient (a step that would silently do nothing).
  // In graph mode it returns the training operation (every assignment of the step) for
  // Session::run; eagerly the step is done and the Operation is undefined.
  Operation apply_gradients(const std::vector<Tensor>& gradients, const std::vector<Variable>& variables,
                            CallSite where = CallSite::current());
  Operation apply_gradients(const std::vector<std::pair<Tensor, Variable>>& gradients_and_variables,
                            CallSite where = CallSite::current());

  // Computes loss() under a tape, applies the gradients for `variables`, returns the loss.
  // Eagerly and inside functions; graph mode needs the training operation that
  // apply_gradients returns, so there it is a FailedPreconditionError.
  Tensor minimize(const std::function<Tensor()>& loss, const std::vector<Variable>& variables,
                  CallSite where = CallSite::current());
  // The same for every trainable variable loss() reads (TensorFlow's eager minimize
  // without var_list). Throws InvalidArgumentError when it reads none.
  Tensor minimize(const std::function<Tensor()>& loss, CallSite where = CallSite::current());

  // Updates applied so far (the step the learning-rate schedule sees next), read now.
  // Throws FailedPreconditionError while the counter is a graph-mode variable whose
  // initializer has not run.
  int64_t iterations() const;
  // The counter itself, an int64 scalar variable (TensorFlow's optimizer.iterations):
  // inside a graph or function, read it rather than iterations().
  Variable iterations_variable();
  // The learning rate the next update uses.
  double current_learning_rate() const;
  // Replaces a constant learning rate (Keras' optimizer.learning_rate = x), also for
  // functions already traced: a constant rate is read from a variable. An optimizer made
  // with a schedule throws InvalidArgumentError, as Keras does.
  void set_learning_rate(double learning_rate);
  // The class name ("Adam"), under which optimizer_from_config makes it again.
  const std::string& name() const { return name_; }
  // Keras' get_config: the hyperparameters (learning_rate when it is a constant; an
  // optimizer with a schedule gives none, and optimizer_from_config refuses that), the
  // clipping, and dynamic loss scaling's settings when it is on.
  virtual nn::Config get_config() const;

  // Variable `var`'s slot called `slot` (e.g. "m"); throws NotFoundError if none yet.
  Variable slot(const Variable& var, const std::string& slot) const;
  std::vector<Variable> slot_variables() const { return slot_order_; }

  // ---- dynamic loss scaling (Note [dynamic loss scaling]) ----
  // Turns it on (LossScaleOptimizer does). Throws FailedPreconditionError once the
  // optimizer has updated anything, and InvalidArgumentError for a scale that is not a
  // positive finite number or growth_steps < 1.
  void enable_loss_scaling(LossScaleOptions options = {});
  bool loss_scaling() const { return loss_scale_.has_value(); }
  // The scale now; 1 without loss scaling.
  double loss_scale() const;
  // loss * scale, computed in float32 at least; the loss itself without loss scaling.
  Tensor get_scaled_loss(const Tensor& loss) const;
  // Each gradient / scale (in its own dtype); the gradients themselves without.
  std::vector<Tensor> get_unscaled_gradients(const std::vector<Tensor>& gradients) const;
  // The scale and the count of finite steps since it last changed, for checkpoints
  // (none without loss scaling); restore_loss_scale puts them back.
  struct LossScaleState {
    double scale = 1;
    int64_t good_steps = 0;
  };
  std::optional<LossScaleState> loss_scale_state() const;
  void restore_loss_scale(const LossScaleState& state);

  // ---- checkpointing (ef::io::Checkpoint) ----
  // The state kept for one variable: its update count and its slots' values by name.
  struct VariableState {
    Variable variable;
    int64_t steps = 0;
    std::map<std::string, Tensor> slots;
  };
  // The state of every variable this optimizer has updated, in order of first update.
  std::vector<VariableState> variable_states() const;
  // The slots this optimizer, as configured, keeps for each variable it updates (e.g.
  // Adam: "m", "v"). The base version lists those created so far; every optimizer with
  // slots overrides it so that a fresh one can be restored.
  virtual std::vector<std::string> slot_names() const;
  // Replaces the whole state, as a restore does: iterations, and for the variables in
  // `states` (all others forget theirs) the steps and slot values, creating missing
  // slots and assigning existing ones in place. Throws InvalidArgumentError, before
  // changing anything, for a slot not in slot_names(), a value whose dtype or shape
  // differs from its variable's, or a negative count.
  void restore_state(int64_t iterations, const std::vector<VariableState>& states,
                     CallSite where = CallSite::current());

 protected:
  Optimizer(std::string name, LearningRate learning_rate, Clipping clipping);

  // Applies one update of `var` with `grad` at learning rate `lr`; `step` counts this
  // variable's updates from 1 (bias corrections). Both are host numbers eagerly and
  // graph values while building (Note [optimizer state lives in variables]).
  virtual void update(Variable var, const Tensor& grad, const StepScalar& lr, const StepScalar& step) = 0;

  // The slot `slot` of `var`, created from `initial` (same shape and dtype) on first use.
  Variable slot_for(const Variable& var, const std::string& slot, double initial = 0.0);

 private:
  std::string name_;
  LearningRate learning_rate_;
  Clipping clipping_;
  std::optional<Variable> iterations_;  // created by the first update (or restore)
  std::optional<Variable> constant_rate_;  // a constant rate, created by the first update
  struct DynamicLossScale {
    LossScaleOptions options;
    Variable scale;       // float32 scalar
    Variable good_steps;  // int64 scalar
  };
  std::optional<DynamicLossScale> loss_scale_;
  // The update of apply_gradients, for gradients already checked.
  void apply_checked(const std::vector<Tensor>& gradients, const std::vector<Variable>& variables);
  // With loss scaling: applies the step only when every gradient is finite, and moves
  // the scale (Note [dynamic loss scaling]).
  void apply_scaled(const std::vector<Tensor>& gradients, const std::vector<Variable>& variables);
  StepScalar learning_rate_now(const Variable& iterations);
  // minimize for `variables`, or for every trainable variable the loss reads.
  Tensor minimize_variables(const std::function<Tensor()>& loss,
                            std::optional<std::vector<Variable>> variables, CallSite where);
  struct PerVariable {
    std::optional<Variable> steps;  // created by the variable's first update (or restore)
    std::map<std::string, Variable> slots;
  };
  PerVariable& state_of(const Variable& var);
  Variable& steps_of(const Variable& var, PerVariable& state);

  std::unordered_map<const void*, PerVariable> state_;
  std::vector<Variable> state_order_;  // the variables in state_, in order of first update
  std::vector<Variable> slot_order_;
};

// A new optimizer of `class_name` ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad") from
// its get_config(). InvalidArgumentError for another class or a config without a
// constant learning rate.
std::shared_ptr<Optimizer> optimizer_from_config(const std::string& class_name, const nn::Config& config);

// TensorFlow's keras.mixed_precision.LossScaleOptimizer(inner): turns on dynamic loss
// scaling (Note [dynamic loss scaling]) in `inner` and returns it.
template <class O>
std::shared_ptr<O> loss_scale_optimizer(std::shared_ptr<O> inner, LossScaleOptions options = {}) {
  inner->enable_loss_scaling(options);
  return inner;
}

}  // namespace ef::optim
