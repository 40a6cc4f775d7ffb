// The optimizers. Defaults are Keras'; update rules are PyTorch's (the comments give
// each), so a run matches torch.optim's optimizer of the same name given the same
// hyperparameters.
#pragma once

#include "eagerflow/optim/optimizer.h"

namespace ef::optim {

// buf = momentum * buf + g; p -= lr * (nesterov ? g + momentum * buf : buf).
class SGD : public Optimizer {
 public:
  nn::Config get_config() const override;
  explicit SGD(LearningRate learning_rate = 0.01, double momentum = 0.0, bool nesterov = false,
               Clipping clipping = {});
  std::vector<std::string> slot_names() const override;

 private:
  void update(Variable var, const Tensor& grad, const StepScalar& lr, const StepScalar& step) override;
  double momentum_;
  bool nesterov_;
};

// m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2 (amsgrad: v_max = max(v_max, v));
// p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + epsilon).
class Adam : public Optimizer {
 public:
  nn::Config get_config() const override;
  explicit Adam(LearningRate learning_rate = 0.001, double beta_1 = 0.9, double beta_2 = 0.999,
                double epsilon = 1e-7, bool amsgrad = false, Clipping clipping = {});
  std::vector<std::string> slot_names() const override;

 protected:
  Adam(std::string name, LearningRate learning_rate, double beta_1, double beta_2, double epsilon, bool amsgrad,
       Clipping clipping);
  void update(Variable var, const Tensor& grad, const StepScalar& lr, const StepScalar& step) override;

 private:
  double beta_1_, beta_2_, epsilon_;
  bool amsgrad_;
};

// Adam with decoupled weight decay: p *= 1 - lr * weight_decay, then Adam's update.
class AdamW : public Adam {
 public:
  nn::Config get_config() const override;
  explicit AdamW(LearningRate learning_rate = 0.001, double weight_decay = 0.004, double beta_1 = 0.9,
                 double beta_2 = 0.999, double epsilon = 1e-7, bool amsgrad = false, Clipping clipping = {});

 private:
  void update(Variable var, const Tensor& grad, const StepScalar& lr, const StepScalar& step) override;
  double weight_decay_;
};

// v = rho v + (1 - rho) g^2; centered: a = rho a + (1 - rho) g, denominator
// sqrt(v - a^2) + epsilon, else sqrt(v) + epsilon; with momentum:
// buf = momentum buf + g / denominator, p -= lr buf; without: p -= lr g / denominator.
class RMSprop : public Optimizer {
 public:
  nn::Config get_config() const override;
  explicit RMSprop(LearningRate learning_rate = 0.001, double rho = 0.9, double momentum = 0.0,
                   double epsilon = 1e-7, bool centered = false, Clipping clipping = {});
  std::vector<std::string> slot_names() const override;

 private:
  void update(Variable var, const Tensor& grad, const StepScalar& lr, const StepScalar& step) override;
  double rho_, momentum_, epsilon_;
  bool centered_;
};

// sum = initial_accumulator_value + sum of g^2; p -= lr * g / (sqrt(sum) + epsilon).
class Adagrad : public Optimizer {
 public:
  nn::Config get_config() const override;
  explicit Adagrad(LearningRate learning_rate = 0.001, double initial_accumulator_value = 0.1,
                   double epsilon = 1e-7, Clipping clipping = {});
  std::vector<std::string> slot_names() const override;

 private:
  void update(Variable var, const Tensor& grad, const StepScalar& lr, const StepScalar& step) override;
  double initial_accumulator_value_, epsilon_;
};

}  // namespace ef::optim
