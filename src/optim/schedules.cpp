#include "eagerflow/optim/schedules.h"

#include <cmath>
#include <numbers>

#include "eagerflow/core/error.h"
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/scalar.h"

namespace ef::optim {

// ---- StepScalar ----

StepScalar::StepScalar(const Tensor& value) {
  if (!value.defined()) fail("StepScalar: the value is an undefined tensor");
  if (value.rank() != 0) fail("StepScalar: expected a 0-d tensor, got shape ", value.shape());
  if (value.is_symbolic())
    graph_ = value.dtype() == DType::Float64 ? value : cast(value, DType::Float64);
  else
    host_ = value.item<double>();
}

double StepScalar::host(std::string_view what) const {
  if (!on_host())
    fail<UnimplementedError>(what,
                             ": the value depends on the optimizer's step inside a graph or function, "
                             "so it has no number until the graph runs");
  return host_;
}

Tensor StepScalar::as(DType dtype) const {
  if (on_host()) return scalar_tensor(host_, dtype);
  return dtype == DType::Float64 ? graph_ : cast(graph_, dtype);
}

namespace {

// Host numbers combine on the host; otherwise both become float64 graph values.
template <class OnHost, class OnGraph>
StepScalar combined(const StepScalar& a, const StepScalar& b, OnHost on_host, OnGraph on_graph) {
  if (a.on_host() && b.on_host()) return on_host(a.host("StepScalar"), b.host("StepScalar"));
  return StepScalar(on_graph(a.as(DType::Float64), b.as(DType::Float64)));
}

template <class OnHost, class OnGraph>
StepScalar mapped(const StepScalar& x, OnHost on_host, OnGraph on_graph) {
  if (x.on_host()) return on_host(x.host("StepScalar"));
  return StepScalar(on_graph(x.as(DType::Float64)));
}

}  // namespace

StepScalar operator+(const StepScalar& a, const StepScalar& b) {
  return combined(a, b, std::plus<double>(), [](const Tensor& x, const Tensor& y) { return add(x, y); });
}
StepScalar operator-(const StepScalar& a, const StepScalar& b) {
  return combined(a, b, std::minus<double>(),
                  [](const Tensor& x, const Tensor& y) { return subtract(x, y); });
}
StepScalar operator*(const StepScalar& a, const StepScalar& b) {
  return combined(a, b, std::multiplies<double>(),
                  [](const Tensor& x, const Tensor& y) { return multiply(x, y); });
}
StepScalar operator/(const StepScalar& a, const StepScalar& b) {
  return combined(a, b, std::divides<double>(),
                  [](const Tensor& x, const Tensor& y) { return divide(x, y); });
}
StepScalar pow(const StepScalar& base, const StepScalar& exponent) {
  return combined(
      base, exponent, [](double x, double y) { return std::pow(x, y); },
      [](const Tensor& x, const Tensor& y) { return ef::pow(x, y); });
}
StepScalar minimum(const StepScalar& a, const StepScalar& b) {
  return combined(
      a, b, [](double x, double y) { return std::min(x, y); },
      [](const Tensor& x, const Tensor& y) { return ef::minimum(x, y); });
}
StepScalar sqrt(const StepScalar& x) {
  return mapped(
      x, [](double v) { return std::sqrt(v); }, [](const Tensor& t) { return ef::sqrt(t); });
}
StepScalar floor(const StepScalar& x) {
  return mapped(
      x, [](double v) { return std::floor(v); }, [](const Tensor& t) { return ef::floor(t); });
}
StepScalar ceil(const StepScalar& x) {
  return mapped(
      x, [](double v) { return std::ceil(v); }, [](const Tensor& t) { return ef::ceil(t); });
}
StepScalar log(const StepScalar& x) {
  return mapped(
      x, [](double v) { return std::log(v); }, [](const Tensor& t) { return ef::log(t); });
}
StepScalar if_less_equal(const StepScalar& a, const StepScalar& b, const StepScalar& then_value,
                         const StepScalar& else_value) {
  if (a.on_host() && b.on_host())
    return a.host("StepScalar") <= b.host("StepScalar") ? then_value : else_value;
  return StepScalar(where(less_equal(a.as(DType::Float64), b.as(DType::Float64)),
                          then_value.as(DType::Float64), else_value.as(DType::Float64)));
}
StepScalar cos(const StepScalar& x) {
  return mapped(
      x, [](double v) { return std::cos(v); }, [](const Tensor& t) { return ef::cos(t); });
}

// ---- schedules ----

StepScalar ExponentialDecay::operator()(const StepScalar& step) const {
  StepScalar p = step / static_cast<double>(decay_steps);
  if (staircase) p = floor(p);
  return initial_learning_rate * pow(decay_rate, p);
}

StepScalar CosineDecay::operator()(const StepScalar& step) const {
  // As Keras: no warmup without a warmup_target.
  const bool warms_up = warmup_target.has_value() && warmup_steps > 0;
  const double peak = warmup_target.value_or(initial_learning_rate);
  const StepScalar after_warmup = warms_up ? step - static_cast<double>(warmup_steps) : step;
  const StepScalar t =
      minimum(after_warmup, static_cast<double>(decay_steps)) / static_cast<double>(decay_steps);
  const StepScalar cosine = 0.5 * (1.0 + cos(std::numbers::pi * t));
  const StepScalar decayed = peak * ((1.0 - alpha) * cosine + alpha);
  if (!warms_up) return decayed;
  const StepScalar warming =
      initial_learning_rate + (peak - initial_learning_rate) * (step / static_cast<double>(warmup_steps));
  // Below warmup_steps (step <= warmup_steps - 1, steps being whole numbers) the warmup.
  return if_less_equal(step, static_cast<double>(warmup_steps) - 0.5, warming, decayed);
}

StepScalar PiecewiseConstantDecay::operator()(const StepScalar& step) const {
  StepScalar rate = values.back();
  for (size_t i = boundaries.size(); i-- > 0;)
    rate = if_less_equal(step, static_cast<double>(boundaries[i]), values[i], rate);
  return rate;
}

StepScalar PolynomialDecay::operator()(const StepScalar& step) const {
  StepScalar steps = static_cast<double>(decay_steps), s = step;
  if (cycle) {
    // The first multiple of decay_steps at or after the step (one period at step 0).
    const StepScalar periods = ceil(step / static_cast<double>(decay_steps));
    steps = steps * if_less_equal(periods, 0.0, 1.0, periods);
  } else {
    s = minimum(step, steps);
  }
  return (initial_learning_rate - end_learning_rate) * pow(1.0 - s / steps, power) + end_learning_rate;
}

StepScalar InverseTimeDecay::operator()(const StepScalar& step) const {
  StepScalar p = step / static_cast<double>(decay_steps);
  if (staircase) p = floor(p);
  return initial_learning_rate / (1.0 + decay_rate * p);
}

StepScalar CosineDecayRestarts::operator()(const StepScalar& step) const {
  StepScalar fraction = step / static_cast<double>(first_decay_steps);
  StepScalar restarts = 0.0;
  if (t_mul == 1.0) {
    restarts = floor(fraction);
    fraction = fraction - restarts;
  } else {
    // Periods grow geometrically: restart i begins at (1 - t_mul^i) / (1 - t_mul) periods.
    restarts = floor(log(1.0 - fraction * (1.0 - t_mul)) / std::log(t_mul));
    const StepScalar begun = (1.0 - pow(t_mul, restarts)) / (1.0 - t_mul);
    fraction = (fraction - begun) / pow(t_mul, restarts);
  }
  const StepScalar cosine = 0.5 * pow(m_mul, restarts) * (1.0 + cos(std::numbers::pi * fraction));
  return initial_learning_rate * ((1.0 - alpha) * cosine + alpha);
}

LearningRate::LearningRate(double constant)
    : schedule_([constant](const StepScalar&) { return constant; }), constant_(constant) {}

LearningRate::LearningRate(ExponentialDecay schedule) : schedule_(schedule) {
  if (schedule.decay_steps <= 0)
    fail("ExponentialDecay: decay_steps must be positive, got ", schedule.decay_steps);
}

LearningRate::LearningRate(CosineDecay schedule) : schedule_(schedule) {
  if (schedule.decay_steps <= 0) fail("CosineDecay: decay_steps must be positive, got ", schedule.decay_steps);
  if (schedule.warmup_steps < 0) fail("CosineDecay: warmup_steps must be >= 0, got ", schedule.warmup_steps);
}

LearningRate::LearningRate(PiecewiseConstantDecay schedule) : schedule_(schedule) {
  if (schedule.values.size() != schedule.boundaries.size() + 1)
    fail("PiecewiseConstantDecay: needs one more value than boundaries, got ", schedule.values.size(),
         " values and ", schedule.boundaries.size(), " boundaries");
  for (size_t i = 1; i < schedule.boundaries.size(); ++i)
    if (schedule.boundaries[i] <= schedule.boundaries[i - 1])
      fail("PiecewiseConstantDecay: boundaries must increase, got ", schedule.boundaries[i - 1], " then ",
           schedule.boundaries[i]);
}

LearningRate::LearningRate(PolynomialDecay schedule) : schedule_(schedule) {
  if (schedule.decay_steps <= 0)
    fail("PolynomialDecay: decay_steps must be positive, got ", schedule.decay_steps);
}

LearningRate::LearningRate(InverseTimeDecay schedule) : schedule_(schedule) {
  if (schedule.decay_steps <= 0)
    fail("InverseTimeDecay: decay_steps must be positive, got ", schedule.decay_steps);
}

LearningRate::LearningRate(CosineDecayRestarts schedule) : schedule_(schedule) {
  if (schedule.first_decay_steps <= 0)
    fail("CosineDecayRestarts: first_decay_steps must be positive, got ", schedule.first_decay_steps);
  if (schedule.t_mul <= 0) fail("CosineDecayRestarts: t_mul must be positive, got ", schedule.t_mul);
}

namespace {

double run_host(const LearningRate::HostSchedule& schedule, const StepScalar& step) {
  if (!step.on_host())
    fail<UnimplementedError>(
        "learning rate: a schedule given as a function of a number cannot run inside a graph or function "
        "(its "
        "rate would be fixed when the graph is built); use a built-in schedule (ExponentialDecay, "
        "CosineDecay, "
        "...) or a schedule of the step tensor, or run the training step eagerly");
  return schedule(static_cast<int64_t>(step.host("learning rate")));
}

StepScalar run_tensor(const LearningRate::TensorSchedule& schedule, const StepScalar& step) {
  Tensor rate = schedule(cast(step.as(DType::Float64), DType::Int64));
  if (!rate.defined()) fail("learning rate: the schedule returned an undefined tensor");
  if (rate.rank() != 0 || !is_floating(rate.dtype()))
    fail("learning rate: the schedule must return a float scalar, got ", rate.dtype(), " of shape ",
         rate.shape());
  return StepScalar(rate);
}

}  // namespace

LearningRate::LearningRate(HostSchedule schedule) {
  if (!schedule) fail("LearningRate: the schedule is an empty function");
  schedule_ = [schedule = std::move(schedule)](const StepScalar& step) { return run_host(schedule, step); };
}

LearningRate::LearningRate(TensorSchedule schedule) {
  if (!schedule) fail("LearningRate: the schedule is an empty function");
  schedule_ = [schedule = std::move(schedule)](const StepScalar& step) { return run_tensor(schedule, step); };
}

LearningRate::LearningRate(HostSchedule host, TensorSchedule tensor) {
  if (!host || !tensor) fail("LearningRate: the schedule is an empty function");
  schedule_ = [host = std::move(host), tensor = std::move(tensor)](const StepScalar& step) {
    return step.on_host() ? StepScalar(run_host(host, step)) : run_tensor(tensor, step);
  };
}

}  // namespace ef::optim
