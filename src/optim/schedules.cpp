#include "eagerflow/optim/schedules.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "eagerflow/core/error.h"

namespace ef::optim {

double ExponentialDecay::operator()(int64_t step) const {
  double p = static_cast<double>(step) / static_cast<double>(decay_steps);
  if (staircase) p = std::floor(p);
  return initial_learning_rate * std::pow(decay_rate, p);
}

double CosineDecay::operator()(int64_t step) const {
  const double t = static_cast<double>(std::min(step, decay_steps)) / static_cast<double>(decay_steps);
  const double cosine = 0.5 * (1.0 + std::cos(std::numbers::pi * t));
  return initial_learning_rate * ((1.0 - alpha) * cosine + alpha);
}

LearningRate::LearningRate(double constant) : schedule_([constant](int64_t) { return constant; }) {}

LearningRate::LearningRate(ExponentialDecay schedule) : schedule_(schedule) {
  if (schedule.decay_steps <= 0)
    fail("ExponentialDecay: decay_steps must be positive, got ", schedule.decay_steps);
}

LearningRate::LearningRate(CosineDecay schedule) : schedule_(schedule) {
  if (schedule.decay_steps <= 0) fail("CosineDecay: decay_steps must be positive, got ", schedule.decay_steps);
}

LearningRate::LearningRate(std::function<double(int64_t)> schedule) : schedule_(std::move(schedule)) {
  if (!schedule_) fail("LearningRate: the schedule is an empty function");
}

}  // namespace ef::optim
