// Learning rates: a constant, or a schedule of the optimizer's step (Keras' names:
// ExponentialDecay, CosineDecay with warmup, PiecewiseConstantDecay, PolynomialDecay,
// InverseTimeDecay, CosineDecayRestarts).
//
//   ef::optim::Adam adam(ef::optim::CosineDecay(1e-3, /*decay_steps=*/1000));
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "eagerflow/core/tensor.h"

namespace ef::optim {

// A number computed from an optimizer's step count (Note [optimizer state lives in
// variables] in optimizer.h): a host double when the update runs eagerly, so that no op
// runs for it, and a float64 scalar of the graph while a graph or function is built, so
// that every run of the graph uses the step it runs at. The arithmetic below works on
// both; mixing a host number with a graph value gives a graph value.
class StepScalar {
 public:
  StepScalar(double value) : host_(value) {}  // NOLINT: numbers mix in freely
  // A 0-d tensor: an eager one becomes its host number, a symbolic one is cast to float64.
  // Throws InvalidArgumentError for any other shape.
  explicit StepScalar(const Tensor& value);

  bool on_host() const { return !graph_.defined(); }
  // The host number; throws UnimplementedError naming `what` for a graph value.
  double host(std::string_view what) const;
  // A 0-d tensor of `dtype` holding the value, as an operand of the update rules' ops.
  Tensor as(DType dtype) const;

  friend StepScalar operator+(const StepScalar& a, const StepScalar& b);
  friend StepScalar operator-(const StepScalar& a, const StepScalar& b);
  friend StepScalar operator*(const StepScalar& a, const StepScalar& b);
  friend StepScalar operator/(const StepScalar& a, const StepScalar& b);
  friend StepScalar pow(const StepScalar& base, const StepScalar& exponent);
  friend StepScalar minimum(const StepScalar& a, const StepScalar& b);
  friend StepScalar sqrt(const StepScalar& x);
  friend StepScalar floor(const StepScalar& x);
  friend StepScalar ceil(const StepScalar& x);
  friend StepScalar cos(const StepScalar& x);
  friend StepScalar log(const StepScalar& x);
  // `then_value` where a <= b, else `else_value`.
  friend StepScalar if_less_equal(const StepScalar& a, const StepScalar& b, const StepScalar& then_value,
                                  const StepScalar& else_value);

 private:
  double host_ = 0;
  Tensor graph_;  // float64, 0-d; undefined for a host number
};

// lr(step) = initial_learning_rate * decay_rate ^ (step / decay_steps), the exponent
// rounded down when `staircase`.
struct ExponentialDecay {
  double initial_learning_rate;
  int64_t decay_steps;
  double decay_rate;
  bool staircase = false;
  double operator()(int64_t step) const { return (*this)(StepScalar(static_cast<double>(step))).host("lr"); }
  StepScalar operator()(const StepScalar& step) const;
};

// Cosine from initial_learning_rate down to alpha * initial_learning_rate over
// decay_steps, then flat: initial * ((1 - alpha) * (1 + cos(pi * min(step, decay_steps)
// / decay_steps)) / 2 + alpha). With a warmup_target (Keras 3), the rate first rises
// linearly from initial_learning_rate to warmup_target over warmup_steps, then decays
// from warmup_target as above, counting steps from the end of the warmup.
struct CosineDecay {
  double initial_learning_rate;
  int64_t decay_steps;
  double alpha = 0.0;
  std::optional<double> warmup_target;
  int64_t warmup_steps = 0;
  double operator()(int64_t step) const { return (*this)(StepScalar(static_cast<double>(step))).host("lr"); }
  StepScalar operator()(const StepScalar& step) const;
};

// values[0] while step <= boundaries[0], values[i] while boundaries[i-1] < step <=
// boundaries[i], values.back() after the last boundary. Needs one more value than
// boundaries, boundaries increasing.
struct PiecewiseConstantDecay {
  std::vector<int64_t> boundaries;
  std::vector<double> values;
  double operator()(int64_t step) const { return (*this)(StepScalar(static_cast<double>(step))).host("lr"); }
  StepScalar operator()(const StepScalar& step) const;
};

// (initial - end) * (1 - s / decay_steps) ^ power + end, with s = min(step, decay_steps);
// with `cycle`, decay_steps grows to the first multiple of itself >= step instead.
struct PolynomialDecay {
  double initial_learning_rate;
  int64_t decay_steps;
  double end_learning_rate = 1e-4;
  double power = 1.0;
  bool cycle = false;
  double operator()(int64_t step) const { return (*this)(StepScalar(static_cast<double>(step))).host("lr"); }
  StepScalar operator()(const StepScalar& step) const;
};

// initial / (1 + decay_rate * step / decay_steps), the quotient rounded down when
// `staircase`.
struct InverseTimeDecay {
  double initial_learning_rate;
  int64_t decay_steps;
  double decay_rate;
  bool staircase = false;
  double operator()(int64_t step) const { return (*this)(StepScalar(static_cast<double>(step))).host("lr"); }
  StepScalar operator()(const StepScalar& step) const;
};

// Cosine decay with warm restarts (SGDR, Loshchilov & Hutter): a cosine from the
// initial rate to alpha * it over first_decay_steps, then again over t_mul times as
// many steps, each period's peak m_mul times the previous one's.
struct CosineDecayRestarts {
  double initial_learning_rate;
  int64_t first_decay_steps;
  double t_mul = 2.0;
  double m_mul = 1.0;
  double alpha = 0.0;
  double operator()(int64_t step) const { return (*this)(StepScalar(static_cast<double>(step))).host("lr"); }
  StepScalar operator()(const StepScalar& step) const;
};

// A constant learning rate or any schedule: a function of the step (0 for the first
// update). Throws InvalidArgumentError for a schedule with decay_steps <= 0.
class LearningRate {
 public:
  using HostSchedule = std::function<double(int64_t step)>;
  // Ops on the step (an int64 scalar) giving the rate (any float scalar): TensorFlow's
  // LearningRateSchedule. Runs eagerly and inside graphs alike.
  using TensorSchedule = std::function<Tensor(const Tensor& step)>;

  LearningRate(double constant);           // NOLINT: implicit by design
  LearningRate(ExponentialDecay schedule);  // NOLINT
  LearningRate(CosineDecay schedule);       // NOLINT
  LearningRate(PiecewiseConstantDecay schedule);  // NOLINT
  LearningRate(PolynomialDecay schedule);         // NOLINT
  LearningRate(InverseTimeDecay schedule);        // NOLINT
  LearningRate(CosineDecayRestarts schedule);     // NOLINT
  // A C++ function of the step runs only eagerly: inside a graph or function its result
  // would be fixed when the graph is built, so that is an UnimplementedError.
  explicit LearningRate(HostSchedule schedule);
  explicit LearningRate(TensorSchedule schedule);
  // `host` eagerly, `tensor` while building (the same schedule written twice, e.g. a
  // Python callable given a number or a tensor).
  LearningRate(HostSchedule host, TensorSchedule tensor);

  double operator()(int64_t step) const { return (*this)(StepScalar(static_cast<double>(step))).host("lr"); }
  StepScalar operator()(const StepScalar& step) const { return schedule_(step); }
  // The rate when it is a constant rather than a schedule.
  std::optional<double> constant() const { return constant_; }

 private:
  std::function<StepScalar(const StepScalar&)> schedule_;
  std::optional<double> constant_;
};

}  // namespace ef::optim
