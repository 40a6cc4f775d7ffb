// Dynamic loss scaling of Optimizer (eagerflow/optim/optimizer.h).
//
// Note [dynamic loss scaling]: float16 holds nothing below 2^-24, and small gradients
// of a mixed_float16 model flush to zero. Scaling the loss by S scales every gradient
// by S, so training scales, differentiates and unscales:
//   scaled = optimizer.get_scaled_loss(loss)
//   grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, variables))
//   optimizer.apply_gradients(grads, variables)
// With loss scaling, apply_gradients first checks that every gradient is finite. If so
// it applies the step and counts it; after growth_steps finite steps in a row the scale
// doubles (unless that overflows). If not, the step is skipped (no variable, slot or
// counter changes) and the scale halves, to no less than 1. This is the rule of
// TensorFlow's LossScaleOptimizer and PyTorch's GradScaler (backoff 0.5, growth 2).
// Inside a function or graph the decision is a cond, taken on every call; the scale
// and the count live in variables, so traced steps and checkpoints see them.
#include <cmath>

#include "eagerflow/graph/control_flow.h"
#include "eagerflow/graph/function.h"
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/operators.h"
#include "eagerflow/ops/reduction.h"
#include "eagerflow/optim/optimizer.h"
#include "eagerflow/runtime/context.h"

namespace ef::optim {
namespace {

// Whether every element of every defined gradient is finite (x * 0 is 0 exactly for
// finite x and NaN for inf and NaN, so their sum is 0 or NaN): a bool scalar tensor.
Tensor all_finite(const std::vector<Tensor>& gradients) {
  Tensor finite = constant(true);
  for (const Tensor& g : gradients)
    if (g.defined()) finite = logical_and(finite, equal(reduce_sum(g * 0), 0));
  return finite;
}

}  // namespace

void Optimizer::enable_loss_scaling(LossScaleOptions options) {
  if (!(options.initial_scale > 0 && std::isfinite(options.initial_scale)))
    fail(name_, ": the initial loss scale must be a positive finite number, got ", options.initial_scale);
  if (options.growth_steps < 1)
    fail(name_, ": dynamic_growth_steps must be >= 1, got ", options.growth_steps);
  if (!state_order_.empty() || iterations_)
    fail<FailedPreconditionError>(name_,
                                  ": loss scaling must be enabled before the optimizer's first update");
  InitScope init;  // Note [variables created by functions]
  loss_scale_ =
      DynamicLossScale{options,
                       Variable(constant(static_cast<float>(options.initial_scale)), name_ + "/loss_scale",
                                /*trainable=*/false),
                       Variable(constant(int64_t{0}), name_ + "/loss_scale_good_steps", /*trainable=*/false)};
}

double Optimizer::loss_scale() const {
  if (!loss_scale_) return 1.0;
  EagerScope eager;
  return loss_scale_->scale.value().item<double>();
}

Tensor Optimizer::get_scaled_loss(const Tensor& loss) const {
  if (!loss_scale_) return loss;
  const Tensor wide = is_half(loss.dtype()) ? cast(loss, DType::Float32) : loss;
  return wide * cast(loss_scale_->scale.value(), wide.dtype());
}

std::vector<Tensor> Optimizer::get_unscaled_gradients(const std::vector<Tensor>& gradients) const {
  if (!loss_scale_) return gradients;
  const Tensor inverse = reciprocal(loss_scale_->scale.value());
  std::vector<Tensor> out;
  out.reserve(gradients.size());
  for (const Tensor& g : gradients) out.push_back(g.defined() ? g * cast(inverse, g.dtype()) : g);
  return out;
}

std::optional<Optimizer::LossScaleState> Optimizer::loss_scale_state() const {
  if (!loss_scale_) return std::nullopt;
  EagerScope eager;
  return LossScaleState{loss_scale_->scale.value().item<double>(),
                        loss_scale_->good_steps.value().item<int64_t>()};
}

void Optimizer::restore_loss_scale(const LossScaleState& state) {
  if (!loss_scale_) fail<FailedPreconditionError>(name_, ": restore_loss_scale without loss scaling enabled");
  if (!(state.scale > 0 && std::isfinite(state.scale)) || state.good_steps < 0)
    fail(name_, ": a loss scale of ", state.scale, " with ", state.good_steps,
         " good steps cannot be restored");
  EagerScope eager;
  loss_scale_->scale.assign(constant(static_cast<float>(state.scale)));
  loss_scale_->good_steps.assign(constant(state.good_steps));
}

void Optimizer::apply_scaled(const std::vector<Tensor>& gradients, const std::vector<Variable>& variables) {
  Variable& scale = loss_scale_->scale;
  Variable& good = loss_scale_->good_steps;
  const int64_t growth = loss_scale_->options.growth_steps;
  if (!Context::current().builder) {
    const float s = scale.value().item<float>();
    if (!all_finite(gradients).item<bool>()) {
      scale.assign(constant(std::max(s / 2, 1.f)));
      good.assign(constant(int64_t{0}));
      return;
    }
    apply_checked(gradients, variables);
    const int64_t next = good.value().item<int64_t>() + 1;
    if (next >= growth && std::isfinite(s * 2)) scale.assign(constant(s * 2));
    good.assign(constant(next >= growth ? int64_t{0} : next));
    return;
  }
  const Tensor finite = all_finite(gradients);
  cond(
      finite,
      [&] {
        apply_checked(gradients, variables);
        const Tensor s = scale.value();
        const Tensor next = good.value() + int64_t{1};
        const Tensor due = greater_equal(next, growth);
        const Tensor doubled = s * 2.f;
        scale.assign(where(logical_and(due, equal(doubled * 0.f, 0.f)), doubled, s));
        good.assign(where(due, zeros_like(next), next));
        return constant(true);
      },
      [&] {
        scale.assign(maximum(scale.value() * 0.5f, 1.f));
        good.assign(constant(int64_t{0}));
        return constant(false);
      });
}

}  // namespace ef::optim
