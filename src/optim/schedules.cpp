#include "eagerflow/optim/schedules.h"

#include <cmath>
#include <numbers>

#include "eagerflow/core/error.h"
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
  const StepScalar t = minimum(step, static_cast<double>(decay_steps)) / static_cast<double>(decay_steps);
  const StepScalar cosine = 0.5 * (1.0 + cos(std::numbers::pi * t));
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
}

namespace {

double run_host(const LearningRate::HostSchedule& schedule, const StepScalar& step) {
  if (!step.on_host())
    fail<UnimplementedError>(
        "learning rate: a schedule given as a function of a number cannot run inside a graph or function "
        "(its "
        "rate would be fixed when the graph is built); use ExponentialDecay, CosineDecay or a schedule of "
        "the "
        "step tensor, or run the training step eagerly");
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
