// Keras' metrics (eagerflow/nn/metrics.h). Updates run with recording paused, so no
// tape records the bookkeeping even when the predictions are being watched
// (Note [state updates are not recorded] in runtime/context.h).
#include "eagerflow/nn/metrics.h"

#include "eagerflow/nn/losses.h"

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/operators.h"
#include "eagerflow/ops/reduction.h"
#include "eagerflow/runtime/context.h"
#include "nn/sample_weight.h"

namespace ef::nn::metrics {

Mean::Mean(std::string name, DType dtype)
    : Metric(std::move(name)),
      total_(track_variable("total", Variable(zeros({}, dtype), this->name() + "/total", false))),
      count_(track_variable("count", Variable(zeros({}, dtype), this->name() + "/count", false))) {
  if (!is_floating(dtype)) fail("metric '", this->name(), "': dtype must be float32 or float64, got ", dtype);
}

void Mean::update_state(const Tensor& values, const std::optional<Tensor>& sample_weight, CallSite where) {
  try {
    if (!values.defined()) fail("metric '", name(), "': update_state got an undefined tensor");
    RecordingPaused paused;
    Tensor v = cast(values, total_.dtype());
    // A traced update counts the elements it is fed (its static shape may leave them unknown).
    Tensor total = reduce_sum(v);
    Tensor count = v.shape().is_fully_defined() ? fill({}, double(v.shape().num_elements()), total_.dtype())
                                                : cast(size(v, DType::Int64), total_.dtype());
    if (sample_weight) {
      Tensor w =
          ensure_broadcastable_to(detail::aligned_sample_weight(cast(*sample_weight, total_.dtype()), v), v,
                                  "metric '" + name() + "': sample_weight must broadcast to the values");
      Tensor weights = broadcast_to(w, v.shape());
      total = reduce_sum(v * weights);
      count = reduce_sum(weights);
    }
    // Both sums are computed before either variable changes: an error leaves the state as it was.
    total_.assign_add(total);
    count_.assign_add(count);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

Tensor Mean::result() const {
  // 0 before any update (Keras' divide_no_nan).
  Tensor count = count_.value();
  return where(equal(count, 0.0), zeros({}, count.dtype()), total_.value() / maximum(count, 1e-30));
}

void Mean::update(const Tensor&, const Tensor&, const std::optional<Tensor>&, CallSite where) {
  try {
    fail("metric '", name(),
         "': a Mean averages values (update_state(values)); it cannot score (y_true, y_pred)");
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

void Mean::reset_state() {
  total_.assign(zeros({}, total_.dtype()));
  count_.assign(zeros({}, count_.dtype()));
}

void MeanMetricWrapper::update_state(const Tensor& y_true, const Tensor& y_pred,
                                     const std::optional<Tensor>& sample_weight, CallSite where) {
  try {
    if (!y_true.defined() || !y_pred.defined()) fail("metric '", name(), "': y_true and y_pred must be defined");
    RecordingPaused paused;
    Mean::update_state(per_example(y_true, y_pred), sample_weight, where);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

// The shape checks below are ops (Note [runtime shape checks]): a traced update compares
// the shapes it runs with, which its static shapes may leave unknown.
namespace {
std::string same_shape_message(const std::string& metric) {
  return "metric '" + metric + "': y_true and y_pred must have the same shape";
}
}  // namespace

Tensor Accuracy::per_example(const Tensor& y_true, const Tensor& y_pred) const {
  Tensor labels = ensure_same_shape(y_true, y_pred, same_shape_message(name()));
  return cast(equal(labels, cast(y_pred, y_true.dtype())), DType::Float32);
}

Tensor BinaryAccuracy::per_example(const Tensor& y_true, const Tensor& y_pred) const {
  Tensor labels = ensure_same_shape(y_true, y_pred, same_shape_message(name()));
  if (y_pred.rank() == 0) fail("metric '", name(), "': y_pred must have rank >= 1, got a scalar");
  Tensor predicted = cast(greater(y_pred, threshold_), y_pred.dtype());
  return reduce_mean(cast(equal(cast(labels, y_pred.dtype()), predicted), DType::Float32), -1);
}

Tensor CategoricalAccuracy::per_example(const Tensor& y_true, const Tensor& y_pred) const {
  Tensor labels = ensure_same_shape(y_true, y_pred, same_shape_message(name()));
  if (y_pred.rank() == 0) fail("metric '", name(), "': y_pred must have rank >= 1, got a scalar");
  return cast(equal(argmax(labels, -1), argmax(y_pred, -1)), DType::Float32);
}

Tensor SparseCategoricalAccuracy::per_example(const Tensor& y_true, const Tensor& y_pred) const {
  if (y_pred.rank() == 0) fail("metric '", name(), "': y_pred must have a class axis, got a scalar");
  Tensor ids = y_true;
  if (ids.rank() == y_pred.rank() && ids.shape()[ids.rank() - 1] == 1) ids = squeeze(ids, -1);
  Tensor predicted = argmax(y_pred, -1);
  const std::string message =
      "metric '" + name() +
      "': y_true's class ids and y_pred without its class axis must have the same shape";
  ids = ensure_same_shape(ids, predicted, message);
  return cast(equal(cast(ids, DType::Int64), predicted), DType::Float32);
}

Tensor MeanSquaredError::per_example(const Tensor& y_true, const Tensor& y_pred) const {
  return losses::mean_squared_error(y_true, y_pred);
}

Tensor MeanAbsoluteError::per_example(const Tensor& y_true, const Tensor& y_pred) const {
  return losses::mean_absolute_error(y_true, y_pred);
}

Tensor RootMeanSquaredError::per_example(const Tensor& y_true, const Tensor& y_pred) const {
  if (y_pred.rank() <= 1) return losses::mean_squared_error(expand_dims(y_true, -1), expand_dims(y_pred, -1));
  return losses::mean_squared_error(y_true, y_pred);
}

Tensor RootMeanSquaredError::result() const { return sqrt(Mean::result()); }

TopKCategoricalAccuracy::TopKCategoricalAccuracy(int64_t k, bool sparse, std::string name, DType dtype)
    : MeanMetricWrapper(name.empty()
                            ? (sparse ? "sparse_top_k_categorical_accuracy" : "top_k_categorical_accuracy")
                            : std::move(name),
                        dtype),
      k_(k),
      sparse_(sparse) {
  if (k <= 0) fail("TopKCategoricalAccuracy: k must be positive, got ", k);
}

Tensor TopKCategoricalAccuracy::per_example(const Tensor& y_true, const Tensor& y_pred) const {
  if (y_pred.rank() == 0 || !is_floating(y_pred.dtype()))
    fail("metric '", name(), "': y_pred must be float scores with a class axis, got ", y_pred.dtype(), " ",
         y_pred.shape());
  Tensor ids = y_true;
  if (sparse_) {
    if (ids.rank() == y_pred.rank() && ids.shape()[ids.rank() - 1] == 1) ids = squeeze(ids, -1);
  } else {
    ids = argmax(ensure_same_shape(y_true, y_pred, same_shape_message(name())), -1);
  }
  const Tensor classes =
      one_hot(cast(ids, DType::Int64), y_pred.shape()[y_pred.rank() - 1], 1.0, 0.0, -1, y_pred.dtype());
  const Tensor checked = ensure_same_shape(
      classes, y_pred,
      "metric '" + name() + "': y_true's classes (one-hot) and y_pred must have the same shape");
  const Tensor true_score = reduce_sum(checked * y_pred, -1, /*keepdims=*/true);
  const Tensor higher = reduce_sum(cast(greater(y_pred, true_score), DType::Int64), -1);
  return cast(less(higher, k_), DType::Float32);
}

}  // namespace ef::nn::metrics
