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
    Tensor total = reduce_sum(v), count = fill({}, double(v.shape().num_elements()), total_.dtype());
    if (sample_weight) {
      Tensor w = cast(*sample_weight, total_.dtype());
      if (broadcast_shapes(w.shape(), v.shape(), name()) != v.shape())
        fail("metric '", name(), "': sample_weight of shape ", w.shape(), " does not broadcast to values of shape ",
             v.shape());
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

Tensor Accuracy::per_example(const Tensor& y_true, const Tensor& y_pred) const {
  if (y_true.shape() != y_pred.shape())
    fail("metric '", name(), "': y_true and y_pred must have the same shape, got ", y_true.shape(), " and ",
         y_pred.shape());
  return cast(equal(y_true, cast(y_pred, y_true.dtype())), DType::Float32);
}

Tensor BinaryAccuracy::per_example(const Tensor& y_true, const Tensor& y_pred) const {
  if (y_true.shape() != y_pred.shape() || y_pred.rank() == 0)
    fail("metric '", name(), "': y_true and y_pred must have the same shape of rank >= 1, got ", y_true.shape(),
         " and ", y_pred.shape());
  Tensor predicted = cast(greater(y_pred, threshold_), y_pred.dtype());
  return reduce_mean(cast(equal(cast(y_true, y_pred.dtype()), predicted), DType::Float32), -1);
}

Tensor CategoricalAccuracy::per_example(const Tensor& y_true, const Tensor& y_pred) const {
  if (y_true.shape() != y_pred.shape() || y_pred.rank() == 0)
    fail("metric '", name(), "': y_true and y_pred must have the same shape of rank >= 1, got ", y_true.shape(),
         " and ", y_pred.shape());
  return cast(equal(argmax(y_true, -1), argmax(y_pred, -1)), DType::Float32);
}

Tensor SparseCategoricalAccuracy::per_example(const Tensor& y_true, const Tensor& y_pred) const {
  if (y_pred.rank() == 0) fail("metric '", name(), "': y_pred must have a class axis, got a scalar");
  Tensor ids = y_true;
  if (ids.rank() == y_pred.rank() && ids.shape()[ids.rank() - 1] == 1) ids = squeeze(ids, -1);
  Tensor predicted = argmax(y_pred, -1);
  if (ids.shape() != predicted.shape())
    fail("metric '", name(), "': y_true of shape ", y_true.shape(), " does not match y_pred of shape ",
         y_pred.shape());
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
    if (y_true.shape() != y_pred.shape())
      fail("metric '", name(), "': y_true and y_pred must have the same shape, got ", y_true.shape(), " and ",
           y_pred.shape());
    ids = argmax(y_true, -1);
  }
  const Tensor classes =
      one_hot(cast(ids, DType::Int64), y_pred.shape()[y_pred.rank() - 1], 1.0, 0.0, -1, y_pred.dtype());
  if (classes.shape() != y_pred.shape())
    fail("metric '", name(), "': y_true of shape ", y_true.shape(), " does not match y_pred of shape ",
         y_pred.shape());
  const Tensor true_score = reduce_sum(classes * y_pred, -1, /*keepdims=*/true);
  const Tensor higher = reduce_sum(cast(greater(y_pred, true_score), DType::Int64), -1);
  return cast(less(higher, k_), DType::Float32);
}

}  // namespace ef::nn::metrics
