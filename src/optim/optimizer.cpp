#include "eagerflow/optim/optimizer.h"

#include "eagerflow/runtime/context.h"

#include <algorithm>
#include <cmath>

#include "eagerflow/autodiff/gradient_tape.h"
#include "eagerflow/graph/function.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/operators.h"
#include "eagerflow/optim/clipping.h"

namespace ef::optim {
namespace {

// A new int64 counter at 0, created outside any function being traced.
Variable counter(const std::string& name) {
  InitScope init;
  return Variable(constant(int64_t{0}), name, /*trainable=*/false);
}

// counter += 1; returns the new count: on the host eagerly, a graph value while building.
StepScalar advanced(Variable& counter) {
  const Tensor current = counter.value();
  if (current.is_symbolic()) return StepScalar(counter.assign_add(constant(int64_t{1})));
  const int64_t next = current.item<int64_t>() + 1;
  counter.assign(constant(next));
  return StepScalar(static_cast<double>(next));
}

// minimize returns the loss, so in graph mode (not inside a function, whose assignments
// run on every call) its update could never be run: say so instead.
void check_not_graph_mode(const std::string& optimizer) {
  const Context& context = Context::current();
  if (context.builder && !context.function_trace)
    fail<FailedPreconditionError>(
        optimizer,
        ".minimize: in graph mode, run the training operation that apply_gradients returns "
        "(train = optimizer.apply_gradients(gradients(loss, variables), variables)); minimize returns only "
        "the loss, so running it would not train");
}

}  // namespace

Optimizer::Optimizer(std::string name, LearningRate learning_rate, Clipping clipping)
    : name_(std::move(name)), learning_rate_(std::move(learning_rate)), clipping_(clipping) {
  int options = 0;
  for (auto [what, value] :
       {std::pair{"clipnorm", clipping.clipnorm}, std::pair{"global_clipnorm", clipping.global_clipnorm},
        std::pair{"clipvalue", clipping.clipvalue}}) {
    if (value && !(*value >= 0)) fail(name_, ": ", what, " must be >= 0, got ", *value);
    options += value.has_value();
  }
  // Keras 3 refuses more than one. Older Kerases took some together but disagreed
  // on what that means (OptimizerV2: by value, then by norm; TF 2.11's optimizer:
  // only the first set), so any fixed rule here would silently differ from one.
  if (options > 1)
    fail(name_, ": only one of clipnorm, global_clipnorm and clipvalue can be set (as in Keras), got ",
         clipping.clipnorm ? "clipnorm " : "", clipping.global_clipnorm ? "global_clipnorm " : "",
         clipping.clipvalue ? "clipvalue" : "");
}

Operation Optimizer::apply_gradients(const std::vector<Tensor>& gradients,
                                     const std::vector<Variable>& variables, CallSite where) {
  try {
    if (gradients.size() != variables.size())
      fail(name_, ".apply_gradients: ", gradients.size(), " gradients for ", variables.size(), " variables");
    if (!variables.empty() &&
        std::none_of(gradients.begin(), gradients.end(), [](const Tensor& g) { return g.defined(); })) {
      std::string names;
      for (size_t i = 0; i < variables.size() && i < 5; ++i)
        names += (i ? ", '" : "'") + variables[i].name() + "'";
      fail(name_, ".apply_gradients: no gradient for any variable (", names,
           variables.size() > 5 ? ", ..." : "", "): the loss does not depend on them");
    }
    // Check everything first, so a bad gradient changes nothing.
    for (size_t i = 0; i < gradients.size(); ++i) {
      const Tensor& g = gradients[i];
      const Variable& v = variables[i];
      if (!g.defined()) continue;
      if (!is_floating(v.dtype()))
        fail(name_, ".apply_gradients: variable '", v.name(), "' has dtype ", v.dtype(), "; only float variables train");
      if (g.dtype() != v.dtype() || g.shape() != v.shape())
        fail(name_, ".apply_gradients: the gradient for variable '", v.name(), "' has dtype ", g.dtype(), " and shape ",
             g.shape(), " but the variable has dtype ", v.dtype(), " and shape ", v.shape());
    }
    RecordingPaused paused;   // Note [state updates are not recorded]
    const StateUpdates step;  // graph mode: what the training operation runs
    if (loss_scale_)
      apply_scaled(gradients, variables);
    else
      apply_checked(gradients, variables);
    return step.operation(name_ + "_step");
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

void Optimizer::apply_checked(const std::vector<Tensor>& gradients, const std::vector<Variable>& variables) {
  std::vector<Tensor> grads = gradients;
  // A clipping option of 0 is off, as in Keras (clipping to norm 0 would zero the
  // gradients, and turn an all-zero one into NaN: 0 / max(0, 0)).
  const auto on = [](const std::optional<double>& option) { return option && *option > 0; };
  if (on(clipping_.global_clipnorm)) grads = clip_by_global_norm(grads, *clipping_.global_clipnorm).first;
  Variable iterations = iterations_variable();
  const StepScalar lr = learning_rate_now(iterations);
  for (size_t i = 0; i < grads.size(); ++i) {
    Tensor g = grads[i];
    if (!g.defined()) continue;
    if (on(clipping_.clipnorm)) g = clip_by_norm(g, *clipping_.clipnorm);
    if (on(clipping_.clipvalue)) g = clip_by_value(g, -*clipping_.clipvalue, *clipping_.clipvalue);
    PerVariable& state = state_of(variables[i]);
    update(variables[i], g, lr, advanced(steps_of(variables[i], state)));
  }
  advanced(iterations);
}

Operation Optimizer::apply_gradients(const std::vector<std::pair<Tensor, Variable>>& gradients_and_variables,
                                     CallSite where) {
  std::vector<Tensor> grads;
  std::vector<Variable> vars;
  for (const auto& [g, v] : gradients_and_variables) {
    grads.push_back(g);
    vars.push_back(v);
  }
  return apply_gradients(grads, vars, where);
}

Tensor Optimizer::minimize(const std::function<Tensor()>& loss, const std::vector<Variable>& variables,
                           CallSite where) {
  return minimize_variables(loss, variables, where);
}

Tensor Optimizer::minimize(const std::function<Tensor()>& loss, CallSite where) {
  return minimize_variables(loss, std::nullopt, where);
}

Tensor Optimizer::minimize_variables(const std::function<Tensor()>& loss,
                                     std::optional<std::vector<Variable>> variables, CallSite where) {
  check_not_graph_mode(name_);
  Tensor value;
  std::vector<Tensor> grads;
  {
    GradientTape tape;  // without a variable list it watches every trainable variable the loss reads
    if (variables)
      for (const Variable& v : *variables) tape.watch(v);
    value = loss();
    if (!variables) {
      variables = tape.watched_variables();
      if (variables->empty())
        fail(name_,
             ".minimize: the loss function read no trainable variables; pass var_list or read them "
             "inside the function");
    }
    grads = tape.gradient(value, *variables, Tensor(), UnconnectedGradients::None, where);
  }
  apply_gradients(grads, *variables, where);
  return value;
}

Variable Optimizer::slot(const Variable& var, const std::string& slot) const {
  auto it = state_.find(var.key());
  if (it != state_.end()) {
    auto found = it->second.slots.find(slot);
    if (found != it->second.slots.end()) return found->second;
  }
  fail<NotFoundError>(name_, ": variable '", var.name(), "' has no slot '", slot, "' (yet)");
}

Variable Optimizer::slot_for(const Variable& var, const std::string& slot, double initial) {
  auto& slots = state_of(var).slots;
  auto it = slots.find(slot);
  if (it != slots.end()) return it->second;
  InitScope init;  // Note [optimizer state lives in variables]
  // A slot lives on its variable's device, whatever device scope is current.
  const DeviceScope on_variable(var.initialized() ? var.value().device() : Context::current().device);
  Variable created(fill(var.shape(), initial, var.dtype()), var.name() + "/" + slot, /*trainable=*/false);
  slots.emplace(slot, created);
  slot_order_.push_back(created);
  return created;
}

StepScalar Optimizer::learning_rate_now(const Variable& iterations) {
  const std::optional<double> constant = learning_rate_.constant();
  if (!constant) return learning_rate_(StepScalar(iterations.value()));
  if (!constant_rate_) {
    InitScope init;
    constant_rate_ = Variable(ef::constant(*constant), name_ + "/learning_rate", /*trainable=*/false);
  }
  return StepScalar(constant_rate_->value());
}

double Optimizer::current_learning_rate() const {
  if (constant_rate_) {
    EagerScope eager;
    return constant_rate_->value().item<double>();
  }
  return learning_rate_(iterations());
}

void Optimizer::set_learning_rate(double learning_rate) {
  if (!learning_rate_.constant())
    fail(name_,
         ": the learning rate is a schedule, so it cannot be set; make the optimizer with a constant rate");
  if (!std::isfinite(learning_rate) || learning_rate < 0)
    fail(name_, ": a learning rate must be finite and >= 0, got ", learning_rate);
  learning_rate_ = LearningRate(learning_rate);
  if (constant_rate_) {
    EagerScope eager;
    constant_rate_->assign(ef::constant(learning_rate));
  }
}

int64_t Optimizer::iterations() const {
  if (!iterations_) return 0;
  EagerScope eager;
  return iterations_->value().item<int64_t>();
}

Variable Optimizer::iterations_variable() {
  if (!iterations_) iterations_ = counter(name_ + "/iterations");
  return *iterations_;
}

Variable& Optimizer::steps_of(const Variable& var, PerVariable& state) {
  if (!state.steps) state.steps = counter(var.name() + "/steps");
  return *state.steps;
}

Optimizer::PerVariable& Optimizer::state_of(const Variable& var) {
  auto [it, inserted] = state_.try_emplace(var.key());
  if (inserted) state_order_.push_back(var);
  return it->second;
}

std::vector<Optimizer::VariableState> Optimizer::variable_states() const {
  EagerScope eager;  // the counters' values now
  std::vector<VariableState> out;
  for (const Variable& var : state_order_) {
    const PerVariable& state = state_.at(var.key());
    VariableState s{var, 0, {}};
    if (state.steps) s.steps = state.steps->value().item<int64_t>();
    for (const auto& [name, slot] : state.slots) s.slots.emplace(name, slot.value());
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::string> Optimizer::slot_names() const {
  std::vector<std::string> names;
  for (const Variable& var : state_order_)
    for (const auto& [name, slot] : state_.at(var.key()).slots)
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  return names;
}

void Optimizer::restore_state(int64_t iterations, const std::vector<VariableState>& states, CallSite where) {
  try {
    const std::vector<std::string> names = slot_names();
    if (iterations < 0) fail(name_, ".restore_state: iterations must be >= 0, got ", iterations);
    for (const VariableState& s : states) {
      if (s.steps < 0) fail(name_, ".restore_state: variable '", s.variable.name(), "' has steps ", s.steps, " < 0");
      for (const auto& [slot, value] : s.slots) {
        if (std::find(names.begin(), names.end(), slot) == names.end())
          fail(name_, ".restore_state: variable '", s.variable.name(), "' has slot '", slot, "', which ", name_,
               " does not use");
        if (!value.defined() || value.dtype() != s.variable.dtype() || value.shape() != s.variable.shape())
          fail(name_, ".restore_state: slot '", slot, "' of variable '", s.variable.name(), "' has dtype ",
               value.defined() ? value.dtype() : s.variable.dtype(), " and shape ",
               value.defined() ? value.shape().to_string() : "(undefined)", " but the variable has dtype ",
               s.variable.dtype(), " and shape ", s.variable.shape());
      }
    }
    // Valid: forget the state of variables not restored, then set the rest.
    std::unordered_map<const void*, const VariableState*> incoming;
    for (const VariableState& s : states) incoming[s.variable.key()] = &s;
    std::vector<Variable> kept;
    for (const Variable& var : state_order_)
      if (incoming.count(var.key())) kept.push_back(var);
      else state_.erase(var.key());
    state_order_ = std::move(kept);
    std::erase_if(slot_order_, [&](const Variable& slot) {
      for (const Variable& var : state_order_)
        for (const auto& [n, v] : state_.at(var.key()).slots)
          if (v.same_as(slot)) return false;
      return true;
    });
    EagerScope eager;  // a restore sets the state now, whatever mode the caller is in
    for (const VariableState& s : states) {
      PerVariable& state = state_of(s.variable);
      steps_of(s.variable, state).assign(constant(s.steps));
      for (const auto& [slot, value] : s.slots) slot_for(s.variable, slot).assign(value);
    }
    iterations_variable().assign(constant(iterations));
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

}  // namespace ef::optim
