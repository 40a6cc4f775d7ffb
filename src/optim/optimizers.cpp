// The update rules (see optimizers.h), written with public ops.
#include "eagerflow/optim/optimizers.h"

#include <cmath>

#include "eagerflow/ops/math.h"
#include "eagerflow/ops/operators.h"

namespace ef::optim {
namespace {

void check_range(const std::string& optimizer, const char* what, double value, double lo, double hi) {
  if (!(value >= lo && value <= hi)) fail(optimizer, ": ", what, " must be in [", lo, ", ", hi, "], got ", value);
}

// A moment's decay: 1 would keep the moment at 0 and divide by a bias correction of 0
// (every update NaN), so it is refused, as in PyTorch.
void check_decay(const std::string& optimizer, const char* what, double value) {
  if (!(value >= 0 && value < 1)) fail(optimizer, ": ", what, " must be in [0, 1), got ", value);
}

}  // namespace

SGD::SGD(LearningRate learning_rate, double momentum, bool nesterov, Clipping clipping)
    : Optimizer("SGD", std::move(learning_rate), clipping), momentum_(momentum), nesterov_(nesterov) {
  check_range(name(), "momentum", momentum, 0, 1);
  if (nesterov && momentum == 0) fail("SGD: nesterov needs a momentum > 0");
}

std::vector<std::string> SGD::slot_names() const {
  if (momentum_ == 0) return {};
  return {"momentum"};
}

void SGD::update(Variable var, const Tensor& grad, const StepScalar& lr, const StepScalar&) {
  if (momentum_ == 0) {
    var.assign_sub(grad * lr.as(var.dtype()));
    return;
  }
  Variable buf = slot_for(var, "momentum");
  buf.assign(buf.value() * momentum_ + grad);
  var.assign_sub((nesterov_ ? grad + buf.value() * momentum_ : buf.value()) * lr.as(var.dtype()));
}

Adam::Adam(LearningRate learning_rate, double beta_1, double beta_2, double epsilon, bool amsgrad, Clipping clipping)
    : Adam("Adam", std::move(learning_rate), beta_1, beta_2, epsilon, amsgrad, clipping) {}

Adam::Adam(std::string name, LearningRate learning_rate, double beta_1, double beta_2, double epsilon, bool amsgrad,
           Clipping clipping)
    : Optimizer(std::move(name), std::move(learning_rate), clipping),
      beta_1_(beta_1), beta_2_(beta_2), epsilon_(epsilon), amsgrad_(amsgrad) {
  check_decay(this->name(), "beta_1", beta_1);
  check_decay(this->name(), "beta_2", beta_2);
  check_range(this->name(), "epsilon", epsilon, 0, INFINITY);
}

std::vector<std::string> Adam::slot_names() const {
  if (amsgrad_) return {"m", "v", "vhat"};
  return {"m", "v"};
}

void Adam::update(Variable var, const Tensor& grad, const StepScalar& lr, const StepScalar& step) {
  Variable m = slot_for(var, "m"), v = slot_for(var, "v");
  m.assign(m.value() * beta_1_ + grad * (1 - beta_1_));
  v.assign(v.value() * beta_2_ + square(grad) * (1 - beta_2_));
  Tensor second = v.value();
  if (amsgrad_) {
    Variable v_max = slot_for(var, "vhat");
    v_max.assign(maximum(v_max.value(), second));
    second = v_max.value();
  }
  const StepScalar step_size = lr / (1 - pow(beta_1_, step));
  const StepScalar bias_correction2_sqrt = sqrt(1 - pow(beta_2_, step));
  Tensor denominator = sqrt(second) / bias_correction2_sqrt.as(var.dtype()) + epsilon_;
  var.assign_sub(m.value() / denominator * step_size.as(var.dtype()));
}

AdamW::AdamW(LearningRate learning_rate, double weight_decay, double beta_1, double beta_2, double epsilon,
             bool amsgrad, Clipping clipping)
    : Adam("AdamW", std::move(learning_rate), beta_1, beta_2, epsilon, amsgrad, clipping),
      weight_decay_(weight_decay) {
  check_range(name(), "weight_decay", weight_decay, 0, INFINITY);
}

void AdamW::update(Variable var, const Tensor& grad, const StepScalar& lr, const StepScalar& step) {
  var.assign(var.value() * (1 - lr * weight_decay_).as(var.dtype()));
  Adam::update(var, grad, lr, step);
}

RMSprop::RMSprop(LearningRate learning_rate, double rho, double momentum, double epsilon, bool centered,
                 Clipping clipping)
    : Optimizer("RMSprop", std::move(learning_rate), clipping),
      rho_(rho), momentum_(momentum), epsilon_(epsilon), centered_(centered) {
  check_range(name(), "rho", rho, 0, 1);
  check_range(name(), "momentum", momentum, 0, 1);
  check_range(name(), "epsilon", epsilon, 0, INFINITY);
}

std::vector<std::string> RMSprop::slot_names() const {
  std::vector<std::string> names = {"rms"};
  if (centered_) names.push_back("mg");
  if (momentum_ > 0) names.push_back("momentum");
  return names;
}

void RMSprop::update(Variable var, const Tensor& grad, const StepScalar& lr, const StepScalar&) {
  Variable square_avg = slot_for(var, "rms");
  square_avg.assign(square_avg.value() * rho_ + square(grad) * (1 - rho_));
  Tensor denominator;
  if (centered_) {
    Variable grad_avg = slot_for(var, "mg");
    grad_avg.assign(grad_avg.value() * rho_ + grad * (1 - rho_));
    denominator = sqrt(square_avg.value() - square(grad_avg.value())) + epsilon_;
  } else {
    denominator = sqrt(square_avg.value()) + epsilon_;
  }
  if (momentum_ > 0) {
    Variable buf = slot_for(var, "momentum");
    buf.assign(buf.value() * momentum_ + grad / denominator);
    var.assign_sub(buf.value() * lr.as(var.dtype()));
  } else {
    var.assign_sub(grad / denominator * lr.as(var.dtype()));
  }
}

Adagrad::Adagrad(LearningRate learning_rate, double initial_accumulator_value, double epsilon, Clipping clipping)
    : Optimizer("Adagrad", std::move(learning_rate), clipping),
      initial_accumulator_value_(initial_accumulator_value), epsilon_(epsilon) {
  check_range(name(), "initial_accumulator_value", initial_accumulator_value, 0, INFINITY);
  check_range(name(), "epsilon", epsilon, 0, INFINITY);
}

std::vector<std::string> Adagrad::slot_names() const { return {"accumulator"}; }

void Adagrad::update(Variable var, const Tensor& grad, const StepScalar& lr, const StepScalar&) {
  Variable sum = slot_for(var, "accumulator", initial_accumulator_value_);
  sum.assign(sum.value() + square(grad));
  var.assign_sub(grad / (sqrt(sum.value()) + epsilon_) * lr.as(var.dtype()));
}

}  // namespace ef::optim
