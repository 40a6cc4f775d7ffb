// Metrics of the confusion matrix at thresholds: Precision, Recall, AUC
// (eagerflow/nn/metrics.h), with Keras' definitions. Updates run with recording paused
// and compute every increment before changing any variable, so an error leaves the
// state as it was.
#include <cmath>

#include "eagerflow/nn/metrics.h"
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/nn.h"
#include "eagerflow/ops/operators.h"
#include "eagerflow/ops/reduction.h"
#include "eagerflow/runtime/context.h"

namespace ef::nn::metrics {
namespace {

Variable counter(Module& m, const char* name, size_t n) {
  return m.track_variable(name, Variable(zeros({static_cast<int64_t>(n)}, DType::Float32),
                                         m.name() + "/" + name, /*trainable=*/false));
}

// num / den, 0 where den is 0 (Keras' divide_no_nan).
Tensor divide_no_nan(const Tensor& num, const Tensor& den) {
  const Tensor zero = equal(den, 0.0);
  return where(zero, zeros_like(num), num / where(zero, ones_like(den), den));
}

// TP / (TP + other).
Tensor ratio(const Tensor& tp, const Tensor& other) { return divide_no_nan(tp, tp + other); }

// One threshold gives a scalar.
Tensor per_threshold(const Tensor& values, size_t thresholds) {
  return thresholds == 1 ? reshape(values, {}) : values;
}

}  // namespace

ConfusionMetric::ConfusionMetric(std::string name, std::vector<double> thresholds,
                                 std::optional<int64_t> top_k, std::optional<int64_t> class_id)
    : Metric(std::move(name)),
      true_positives_(counter(*this, "true_positives", std::max<size_t>(thresholds.size(), 1))),
      false_positives_(counter(*this, "false_positives", std::max<size_t>(thresholds.size(), 1))),
      true_negatives_(counter(*this, "true_negatives", std::max<size_t>(thresholds.size(), 1))),
      false_negatives_(counter(*this, "false_negatives", std::max<size_t>(thresholds.size(), 1))),
      thresholds_(std::move(thresholds)),
      default_thresholds_(thresholds_.empty()),
      top_k_(top_k),
      class_id_(class_id) {
  // Keras' default: 0.5, but -inf with top_k, so that each of the k highest predictions
  // counts as positive whatever its score.
  if (default_thresholds_) thresholds_ = {top_k_ ? -INFINITY : 0.5};
  for (double t : thresholds_)
    if (!(t >= -1e-6 && t <= 1 + 1e-6) && !std::isinf(t))
      fail("metric '", this->name(), "': thresholds must lie in [0, 1], got ", t);
  if (top_k_ && *top_k_ <= 0) fail("metric '", this->name(), "': top_k must be positive, got ", *top_k_);
  if (class_id_ && *class_id_ < 0)
    fail("metric '", this->name(), "': class_id must be >= 0, got ", *class_id_);
}

void ConfusionMetric::update(const Tensor& y_true, const Tensor& y_pred,
                             const std::optional<Tensor>& sample_weight, CallSite where) {
  try {
    if (!y_true.defined() || !y_pred.defined())
      fail("metric '", name(), "': y_true and y_pred must be defined");
    RecordingPaused paused;
    // An op checks the shapes, so that a traced update checks those it runs with (Note
    // [runtime shape checks]).
    const Tensor labels = ensure_same_shape(
        y_true, y_pred, "metric '" + name() + "': y_true and y_pred must have the same shape");
    Tensor pred = cast(y_pred, DType::Float32), truth = cast(labels, DType::Bool);
    if (top_k_) {  // everything below each row's k-th highest score counts as negative
      if (pred.rank() == 0) fail("metric '", name(), "': top_k needs predictions with a class axis");
      const int64_t classes = pred.shape()[pred.rank() - 1];
      const Tensor kept = reduce_max(
          one_hot(top_k(pred, std::min(*top_k_, classes)).indices, classes, 1.0f, 0.0f, -1, DType::Float32),
          -2);
      pred = ef::where(greater(kept, 0.0), pred, -INFINITY);
    }
    std::optional<Tensor> weight;
    if (sample_weight) {
      weight = cast(*sample_weight, DType::Float32);
      // Per-example weights [batch] scale every column of that example.
      if (weight->rank() == 1 && pred.rank() == 2 && weight->shape()[0] == pred.shape()[0])
        weight = expand_dims(*weight, 1);
      Shape common;
      try {
        common = broadcast_shapes(weight->shape(), pred.shape(), name());
      } catch (const InvalidArgumentError&) {
      }
      if (common != pred.shape())
        fail("metric '", name(), "': sample_weight of shape ", sample_weight->shape(),
             " does not broadcast to y_pred of shape ", y_pred.shape());
      weight = broadcast_to(*weight, pred.shape());
    }
    if (class_id_) {
      if (pred.rank() == 0 || *class_id_ >= pred.shape()[pred.rank() - 1])
        fail("metric '", name(), "': class_id ", *class_id_, " is out of range for y_pred of shape ",
             y_pred.shape());
      auto column = [&](const Tensor& t) { return gather(t, constant(*class_id_), -1); };
      pred = column(pred);
      truth = column(truth);
      if (weight) weight = column(*weight);
    }
    // [elements, 1] against [thresholds]: every element at every threshold.
    const Tensor p = reshape(pred, {-1, 1}), t = reshape(truth, {-1, 1});
    if (weight) weight = reshape(*weight, {-1, 1});
    Tensor levels = constant(std::vector<float>(thresholds_.begin(), thresholds_.end()),
                             Shape{static_cast<int64_t>(thresholds_.size())})
                        .to(p.device());
    const Tensor predicted = greater(p, levels);
    auto count = [&](const Tensor& truth_is, const Tensor& predicted_is) {
      const Tensor hits = cast(logical_and(truth_is, predicted_is), DType::Float32);
      return reduce_sum(weight ? hits * *weight : hits, 0);
    };
    const Tensor not_t = logical_not(t), not_predicted = logical_not(predicted);
    const Tensor tp = count(t, predicted), fp = count(not_t, predicted);
    const Tensor tn = count(not_t, not_predicted), fn = count(t, not_predicted);
    true_positives_.assign_add(tp);
    false_positives_.assign_add(fp);
    true_negatives_.assign_add(tn);
    false_negatives_.assign_add(fn);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

void ConfusionMetric::reset_state() {
  for (Variable* v : {&true_positives_, &false_positives_, &true_negatives_, &false_negatives_})
    v->assign(zeros_like(v->value()));
}

Precision::Precision(std::vector<double> thresholds, std::optional<int64_t> top_k,
                     std::optional<int64_t> class_id, std::string name)
    : ConfusionMetric(std::move(name), std::move(thresholds), top_k, class_id) {}

Tensor Precision::result() const {
  return per_threshold(ratio(true_positives_.value(), false_positives_.value()), thresholds().size());
}

Recall::Recall(std::vector<double> thresholds, std::optional<int64_t> top_k, std::optional<int64_t> class_id,
               std::string name)
    : ConfusionMetric(std::move(name), std::move(thresholds), top_k, class_id) {}

Tensor Recall::result() const {
  return per_threshold(ratio(true_positives_.value(), false_negatives_.value()), thresholds().size());
}

namespace {

// Keras' AUC thresholds: i / (n - 1) for i = 1 .. n - 2, and one just outside [0, 1] at
// each end, so that predictions of exactly 0 and 1 are counted.
std::vector<double> auc_thresholds(int64_t n) {
  if (n <= 1) fail("AUC: num_thresholds must be > 1, got ", n);
  constexpr double kEpsilon = 1e-7;
  std::vector<double> t{-kEpsilon};
  for (int64_t i = 1; i <= n - 2; ++i) t.push_back(static_cast<double>(i) / static_cast<double>(n - 1));
  t.push_back(1 + kEpsilon);
  return t;
}

}  // namespace

AUC::AUC(int64_t num_thresholds, Curve curve, Summation summation, std::string name, bool from_logits)
    : ConfusionMetric(std::move(name), auc_thresholds(num_thresholds), std::nullopt, std::nullopt),
      curve_(curve),
      summation_(summation),
      from_logits_(from_logits) {}

void AUC::update(const Tensor& y_true, const Tensor& y_pred, const std::optional<Tensor>& sample_weight,
                 CallSite where) {
  ConfusionMetric::update(y_true, from_logits_ && y_pred.defined() ? sigmoid(y_pred) : y_pred, sample_weight,
                          where);
}

Tensor AUC::result() const {
  const int64_t n = static_cast<int64_t>(thresholds().size());
  // Thresholds rise, so the curve runs from (1, 1) towards (0, 0): consecutive points
  // [0, n-1) and [1, n).
  auto head = [&](const Tensor& t) { return slice(t, {0}, {n - 1}); };
  auto tail = [&](const Tensor& t) { return slice(t, {1}, {n - 1}); };
  const Tensor tp = true_positives_.value(), fp = false_positives_.value();
  const Tensor tn = true_negatives_.value(), fn = false_negatives_.value();
  if (curve_ == Curve::kPR && summation_ == Summation::kInterpolation) {
    // Davis & Goadrich (2006): precision interpolated along each step of true positives.
    const Tensor dtp = head(tp) - tail(tp);
    const Tensor p = tp + fp;
    const Tensor dp = head(p) - tail(p);
    const Tensor slope = divide_no_nan(dtp, maximum(dp, 0.0));
    const Tensor intercept = tail(tp) - slope * tail(p);
    const Tensor both_positive = logical_and(greater(head(p), 0.0), greater(tail(p), 0.0));
    const Tensor p_ratio =
        where(both_positive, divide_no_nan(head(p), maximum(tail(p), 0.0)), ones_like(tail(p)));
    return reduce_sum(
        divide_no_nan(slope * (dtp + intercept * log(p_ratio)), maximum(tail(tp) + tail(fn), 0.0)));
  }
  Tensor x, y;
  if (curve_ == Curve::kROC) {
    x = ratio(fp, tn);  // false positive rate
    y = ratio(tp, fn);  // recall
  } else {
    x = ratio(tp, fn);  // recall
    y = ratio(tp, fp);  // precision
  }
  const Tensor heights = summation_ == Summation::kInterpolation ? (head(y) + tail(y)) / 2.0
                         : summation_ == Summation::kMinoring    ? minimum(head(y), tail(y))
                                                                 : maximum(head(y), tail(y));
  return reduce_sum((head(x) - tail(x)) * heights);
}

}  // namespace ef::nn::metrics
