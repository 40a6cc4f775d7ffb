// Learning-rate schedules against their published formulas (TensorFlow's / Keras'
// documentation, written out here independently, step by step), eagerly and as graph
// values inside a function.
#include <cmath>
#include <numbers>

#include "test_util.h"

namespace ef::optim {
namespace {

using std::numbers::pi;

// The schedule's rate at `step` computed inside a traced function (the graph path).
template <class Schedule>
double in_function(const Schedule& schedule, int64_t step) {
  auto rate = function([&](Tensor s) { return LearningRate(schedule)(StepScalar(s)).as(DType::Float64); });
  return rate(constant(step)).template item<double>();
}

template <class Schedule, class Reference>
void expect_schedule(const Schedule& schedule, Reference reference, int64_t last_step) {
  const LearningRate rate(schedule);
  for (int64_t step = 0; step <= last_step; ++step) {
    const double want = reference(static_cast<double>(step));
    EXPECT_NEAR(rate(step), want, 1e-12 * std::max(1.0, std::fabs(want))) << "step " << step;
  }
  for (int64_t step : {int64_t{0}, last_step / 3, last_step}) {
    const double want = reference(static_cast<double>(step));
    EXPECT_NEAR(in_function(schedule, step), want, 1e-12 * std::max(1.0, std::fabs(want))) << "step " << step;
  }
}

TEST(Schedules, PiecewiseConstantDecay) {
  expect_schedule(
      PiecewiseConstantDecay{{10, 20}, {1.0, 0.5, 0.1}},
      [](double s) { return s <= 10   ? 1.0
                            : s <= 20 ? 0.5
                                      : 0.1; }, 30);
  EXPECT_ERROR(LearningRate(PiecewiseConstantDecay{{10}, {1.0}}), InvalidArgumentError, "one more value");
  EXPECT_ERROR(LearningRate(PiecewiseConstantDecay{{10, 5}, {1.0, 0.5, 0.1}}), InvalidArgumentError,
               "increase");
}

TEST(Schedules, PolynomialDecay) {
  expect_schedule(
      PolynomialDecay{0.1, 10, 0.01, 2.0},
      [](double s) { return (0.1 - 0.01) * std::pow(1 - std::min(s, 10.0) / 10, 2.0) + 0.01; }, 25);
  // cycle: decay_steps becomes the first multiple of itself at or after the step.
  expect_schedule(
      PolynomialDecay{0.1, 10, 0.0, 1.0, true},
      [](double s) {
        const double steps = 10 * std::max(1.0, std::ceil(s / 10));
        return 0.1 * (1 - s / steps);
      },
      35);
}

TEST(Schedules, InverseTimeDecay) {
  expect_schedule(
      InverseTimeDecay{0.5, 4, 2.0}, [](double s) { return 0.5 / (1 + 2.0 * s / 4); }, 20);
  expect_schedule(
      InverseTimeDecay{0.5, 4, 2.0, true}, [](double s) { return 0.5 / (1 + 2.0 * std::floor(s / 4)); }, 20);
}

// SGDR: period i lasts first * t_mul^i steps and peaks at initial * m_mul^i.
double restarts_reference(double s, double initial, double first, double t_mul, double m_mul, double alpha) {
  double start = 0, length = first, peak = 1;
  while (s >= start + length) {
    start += length;
    length *= t_mul;
    peak *= m_mul;
  }
  const double cosine = 0.5 * peak * (1 + std::cos(pi * (s - start) / length));
  return initial * ((1 - alpha) * cosine + alpha);
}

TEST(Schedules, CosineDecayRestarts) {
  expect_schedule(
      CosineDecayRestarts{1.0, 5, 2.0, 0.5, 0.1},
      [](double s) { return restarts_reference(s, 1.0, 5, 2.0, 0.5, 0.1); }, 40);
  expect_schedule(
      CosineDecayRestarts{0.3, 4, 1.0, 1.0, 0.0},
      [](double s) { return restarts_reference(s, 0.3, 4, 1.0, 1.0, 0.0); }, 20);
  EXPECT_ERROR(LearningRate(CosineDecayRestarts{1.0, 0}), InvalidArgumentError, "first_decay_steps");
}

TEST(Schedules, CosineDecayWithWarmup) {
  const CosineDecay schedule{
      .initial_learning_rate = 0.0, .decay_steps = 10, .alpha = 0.1, .warmup_target = 1.0, .warmup_steps = 5};
  expect_schedule(
      schedule,
      [](double s) {
        if (s < 5) return 1.0 * s / 5;
        const double t = std::min(s - 5, 10.0) / 10;
        return (1 - 0.1) * 0.5 * (1 + std::cos(pi * t)) + 0.1;
      },
      20);
  // Without a warmup_target there is no warmup, as in Keras.
  const CosineDecay plain{.initial_learning_rate = 1.0, .decay_steps = 10, .warmup_steps = 5};
  EXPECT_NEAR(LearningRate(plain)(0), 1.0, 1e-15);
}

}  // namespace
}  // namespace ef::optim
