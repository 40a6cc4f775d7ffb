// Gradient hooks: code that hears each variable's gradient during the backward pass,
// as soon as it is final, and decides what GradientTape::gradient() returns for it.
//
//   class Print : public ef::GradientHook { ... };
//   auto registration = ef::register_gradient_hook(model.trainable_variables(), std::make_shared<Print>());
//   tape.gradient(loss, model.trainable_variables());   // the hook hears every gradient
//
// Note [gradient hooks]: data-parallel training all-reduces each variable's gradient
// while the backward pass is still running (PyTorch DDP's buckets); the pass tells it
// when a gradient is final. A variable's gradient is final once the backward pass has
// run the gradient function of the earliest recorded op that read the variable: nothing
// later adds to it. A tape's gradient() call that asks for hooked variables opens a
// GradientHookCall on each hook (begin), passes it each such variable's gradient when
// final (ready: in the order the pass finishes them, undefined for a variable the
// target does not depend on), and returns what finish() gives for them. Only gradient()
// calls with the variables themselves as sources are hooked, not those with tensors
// read from them.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "eagerflow/core/tensor.h"
#include "eagerflow/runtime/variable.h"

namespace ef {

// One gradient() call, as one hook sees it. Destroyed without finish() when the
// backward pass fails.
class GradientHookCall {
 public:
  virtual ~GradientHookCall() = default;
  // The gradient of begin()'s variables[index] is final: `gradient` (undefined when the
  // target does not depend on the variable). Called once per variable.
  virtual void ready(size_t index, const Tensor& gradient) = 0;
  // After every ready(): the gradients gradient() returns, one per variable of begin().
  virtual std::vector<Tensor> finish() = 0;
};

class GradientHook {
 public:
  virtual ~GradientHook() = default;
  // A gradient() call asks for `variables` (this hook's, in the call's order). With
  // `recorded`, a tape or forward accumulator records the gradient computation: what
  // the hook computes must then be differentiable ops. (Traced into a graph, the
  // gradients are symbolic, and whatever the hook computes must be ops too.)
  virtual std::unique_ptr<GradientHookCall> begin(std::span<const Variable> variables, bool recorded) = 0;
};

// Keeps `hook` registered for its variables until destroyed (or moved from).
class GradientHookRegistration {
 public:
  GradientHookRegistration() = default;
  ~GradientHookRegistration();
  GradientHookRegistration(GradientHookRegistration&& other) noexcept;
  GradientHookRegistration& operator=(GradientHookRegistration&& other) noexcept;
  GradientHookRegistration(const GradientHookRegistration&) = delete;
  GradientHookRegistration& operator=(const GradientHookRegistration&) = delete;

 private:
  friend GradientHookRegistration register_gradient_hook(const std::vector<Variable>&,
                                                         std::shared_ptr<GradientHook>);
  explicit GradientHookRegistration(std::vector<Variable> variables) : variables_(std::move(variables)) {}
  std::vector<Variable> variables_;
};

// While it lives, `hook` hears, on this thread's gradient() calls, the gradients of
// every variable that has no hook registered for it (a training step's "synchronize
// whatever is differentiated here"). Scopes nest: the innermost one wins. Destroy it on
// the thread that made it.
class GradientHookScope {
 public:
  explicit GradientHookScope(std::shared_ptr<GradientHook> hook);
  ~GradientHookScope();
  GradientHookScope(const GradientHookScope&) = delete;
  GradientHookScope& operator=(const GradientHookScope&) = delete;

  const std::shared_ptr<GradientHook>& hook() const { return hook_; }

 private:
  std::shared_ptr<GradientHook> hook_;
  GradientHookScope* outer_;
};

// Registers `hook` for `variables`, for every thread's tapes. A variable has at most one
// hook: registering a second throws FailedPreconditionError naming the variable.
[[nodiscard]] GradientHookRegistration register_gradient_hook(const std::vector<Variable>& variables,
                                                              std::shared_ptr<GradientHook> hook);

}  // namespace ef
