// Learning rates: a constant, or a schedule of the optimizer's step (Keras' names).
//
//   ef::optim::Adam adam(ef::optim::CosineDecay(1e-3, /*decay_steps=*/1000));
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace ef::optim {

// lr(step) = initial_learning_rate * decay_rate ^ (step / decay_steps), the exponent
// rounded down when `staircase`.
struct ExponentialDecay {
  double initial_learning_rate;
  int64_t decay_steps;
  double decay_rate;
  bool staircase = false;
  double operator()(int64_t step) const;
};

// Cosine from initial_learning_rate down to alpha * initial_learning_rate over
// decay_steps, then flat: initial * ((1 - alpha) * (1 + cos(pi * min(step, decay_steps)
// / decay_steps)) / 2 + alpha).
struct CosineDecay {
  double initial_learning_rate;
  int64_t decay_steps;
  double alpha = 0.0;
  double operator()(int64_t step) const;
};

// A constant learning rate or any schedule: a function of the step (0 for the first
// update). Throws InvalidArgumentError for a schedule with decay_steps <= 0.
class LearningRate {
 public:
  LearningRate(double constant);           // NOLINT: implicit by design
  LearningRate(ExponentialDecay schedule);  // NOLINT
  LearningRate(CosineDecay schedule);       // NOLINT
  explicit LearningRate(std::function<double(int64_t step)> schedule);

  double operator()(int64_t step) const { return schedule_(step); }

 private:
  std::function<double(int64_t)> schedule_;
};

}  // namespace ef::optim
