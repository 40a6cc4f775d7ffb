// ef.keras.metrics over eagerflow/nn/metrics.h.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "convert.h"
#include "py_layer.h"

namespace efpy {

using namespace pybind11::literals;
namespace nn = ef::nn;
namespace {
constexpr ef::CallSite kPython{};
}  // namespace

void bind_metrics(py::module_& m) {
  namespace metrics = nn::metrics;
  py::module_ sub = m.def_submodule("metrics");
  py::class_<metrics::Metric, nn::Module, std::shared_ptr<metrics::Metric>>(
      sub, "Metric",
      R"doc(The base class of every metric Model.compile takes: update_state(y_true, y_pred,
sample_weight) adds a batch, result() gives the value, reset_state() starts over.
It is not constructible itself; Mean, the MeanMetricWrapper metrics, Precision,
Recall and AUC derive from it.
)doc")
      .def("result", &metrics::Metric::result, "The metric's current value, a Tensor.")
      .def("reset_state", &metrics::Metric::reset_state, "Forgets every update.");
  py::class_<metrics::Mean, metrics::Metric, std::shared_ptr<metrics::Mean>>(
      sub, "Mean", R"doc(The (weighted) running mean of every value passed to update_state.

The state lives in non-trainable variables ("total" and "count"), so a
checkpoint of a module holding the metric keeps it; updates are never recorded
by tapes.

>>> m = ef.keras.metrics.Mean()
>>> m.update_state([1., 2., 3.])
>>> m.result().numpy()
array(2., dtype=float32)

Args:
  name: The metric's name (default "mean").
  dtype: The dtype of the state and result (default float32).
)doc")
      .def(py::init([](py::handle name, DTypeArg dtype) {
             return std::make_shared<metrics::Mean>(name_or(name, "mean"),
                                                    dtype.value.value_or(ef::DType::Float32));
           }),
           "name"_a = py::none(), "dtype"_a = py::none())
      .def(
          "update_state",
          [](metrics::Mean& self, TensorArg values, py::handle sample_weight) {
            self.update_state(values.value, optional_tensor(sample_weight), kPython);
          },
          R"doc(Adds `values` to the running mean.

Args:
  values: A tensor-like of numbers.
  sample_weight: None, or weights that broadcast to values.
)doc",
          "values"_a, "sample_weight"_a = py::none())
      .def(
          "result", &metrics::Mean::result,
          "The current value, total / count, as a scalar Tensor of the metric's dtype (0 before any update).")
      .def("reset_state", &metrics::Mean::reset_state, "Forgets every update (the result becomes 0).");
  py::class_<metrics::MeanMetricWrapper, metrics::Mean, std::shared_ptr<metrics::MeanMetricWrapper>>(
      sub, "MeanMetricWrapper",
      R"doc(The base class of the metrics that average a per-example value of (y_true, y_pred).

Accuracy, BinaryAccuracy, CategoricalAccuracy, SparseCategoricalAccuracy,
TopKCategoricalAccuracy, MeanSquaredError, MeanAbsoluteError and RootMeanSquaredError derive from it;
it is not constructible itself.
)doc")
      .def(
          "update_state",
          [](metrics::MeanMetricWrapper& self, TensorArg y_true, TensorArg y_pred, py::handle sample_weight) {
            self.update_state(y_true.value, y_pred.value, optional_tensor(sample_weight), kPython);
          },
          R"doc(Adds the per-example values of (y_true, y_pred) to the running mean.

Args:
  y_true: The labels or targets, a tensor-like.
  y_pred: The predictions, a tensor-like.
  sample_weight: None, or per-example weights that broadcast to the values.
)doc",
          "y_true"_a, "y_pred"_a, "sample_weight"_a = py::none());
  auto wrapper = [&]<class Metric>(const char* name, const char* default_name, const char* doc) {
    py::class_<Metric, metrics::MeanMetricWrapper, std::shared_ptr<Metric>>(sub, name, doc)
        .def(py::init([default_name](py::handle metric_name, DTypeArg dtype) {
               return std::make_shared<Metric>(name_or(metric_name, default_name),
                                               dtype.value.value_or(ef::DType::Float32));
             }),
             "name"_a = py::none(), "dtype"_a = py::none());
  };
  wrapper.operator()<metrics::Accuracy>(
      "Accuracy", "accuracy",
      R"doc(How often predictions equal the labels (exact equality, elementwise).

>>> m = ef.keras.metrics.Accuracy()
>>> m.update_state([1, 2, 3, 4], [1, 2, 0, 4])
>>> m.result().numpy()
array(0.75, dtype=float32)

Args:
  name: The metric's name (default "accuracy").
  dtype: The dtype of the state and result (default float32).
)doc");
  wrapper.operator()<metrics::RootMeanSquaredError>(
      "RootMeanSquaredError", "root_mean_squared_error",
      R"doc(The square root of the mean squared error over every batch seen.

Squares are averaged over the last axis per example (inputs of rank <= 1 are one
value per example), so a sample_weight weighs examples.

>>> m = ef.keras.metrics.RootMeanSquaredError()
>>> m.update_state([[0., 1.], [1., 1.]], [[1., 1.], [1., 0.]])
>>> m.result().numpy()
array(0.70710677, dtype=float32)

Args:
  name: The metric's name (default "root_mean_squared_error").
  dtype: The dtype of the state and result (default float32).
)doc");
  wrapper.operator()<metrics::CategoricalAccuracy>(
      "CategoricalAccuracy", "categorical_accuracy",
      R"doc(How often argmax(y_pred) equals argmax(y_true), for one-hot labels.

>>> m = ef.keras.metrics.CategoricalAccuracy()
>>> m.update_state([[0., 1.], [1., 0.]], [[0.2, 0.8], [0.3, 0.7]])
>>> m.result().numpy()
array(0.5, dtype=float32)

Args:
  name: The metric's name (default "categorical_accuracy").
  dtype: The dtype of the state and result (default float32).
)doc");
  wrapper.operator()<metrics::SparseCategoricalAccuracy>(
      "SparseCategoricalAccuracy", "sparse_categorical_accuracy",
      R"doc(How often argmax(y_pred) equals the integer class id y_true.

y_true has shape y_pred.shape[:-1] (a trailing dimension of 1 is allowed).

>>> m = ef.keras.metrics.SparseCategoricalAccuracy()
>>> m.update_state([1, 0], [[0.2, 0.8], [0.3, 0.7]])
>>> m.result().numpy()
array(0.5, dtype=float32)

Args:
  name: The metric's name (default "sparse_categorical_accuracy").
  dtype: The dtype of the state and result (default float32).
)doc");
  wrapper.operator()<metrics::MeanSquaredError>(
      "MeanSquaredError", "mean_squared_error",
      R"doc(The running mean of mean((y_true - y_pred) ** 2) over the last axis.

>>> m = ef.keras.metrics.MeanSquaredError()
>>> m.update_state([[0., 1.]], [[1., 1.]])
>>> m.result().numpy()
array(0.5, dtype=float32)

Args:
  name: The metric's name (default "mean_squared_error").
  dtype: The dtype of the state and result (default float32).
)doc");
  wrapper.operator()<metrics::MeanAbsoluteError>(
      "MeanAbsoluteError", "mean_absolute_error",
      R"doc(The running mean of mean(|y_true - y_pred|) over the last axis.

>>> m = ef.keras.metrics.MeanAbsoluteError()
>>> m.update_state([[0., 1.]], [[1., 3.]])
>>> m.result().numpy()
array(1.5, dtype=float32)

Args:
  name: The metric's name (default "mean_absolute_error").
  dtype: The dtype of the state and result (default float32).
)doc");
  py::class_<metrics::TopKCategoricalAccuracy, metrics::MeanMetricWrapper,
             std::shared_ptr<metrics::TopKCategoricalAccuracy>>(
      sub, "TopKCategoricalAccuracy",
      R"doc(How often the true class (one-hot y_true) is among the k highest predictions.

A class tied with the true one's score does not push it out (as tf.math.in_top_k).

>>> m = ef.keras.metrics.TopKCategoricalAccuracy(k=1)
>>> m.update_state([[0., 1.], [1., 0.]], [[0.2, 0.8], [0.3, 0.7]])
>>> m.result().numpy()
array(0.5, dtype=float32)

Args:
  k: How many of the highest predictions count (default 5).
  name: The metric's name (default "top_k_categorical_accuracy").
  dtype: The dtype of the state and result (default float32).
)doc")
      .def(py::init([](int64_t k, py::handle name, DTypeArg dtype) {
             return std::make_shared<metrics::TopKCategoricalAccuracy>(
                 k, false, name_or(name, "top_k_categorical_accuracy"),
                 dtype.value.value_or(ef::DType::Float32));
           }),
           "k"_a = 5, "name"_a = py::none(), "dtype"_a = py::none());
  sub.def(
      "SparseTopKCategoricalAccuracy",
      [](int64_t k, py::handle name, DTypeArg dtype) {
        return std::make_shared<metrics::TopKCategoricalAccuracy>(
            k, true, name_or(name, "sparse_top_k_categorical_accuracy"),
            dtype.value.value_or(ef::DType::Float32));
      },
      R"doc(How often the integer class id y_true is among the k highest predictions.

Makes a TopKCategoricalAccuracy that reads class ids (a function, so
isinstance checks see that class).

>>> m = ef.keras.metrics.SparseTopKCategoricalAccuracy(k=2)
>>> m.update_state([1, 0], [[0.2, 0.8], [0.3, 0.7]])
>>> m.result().numpy()
array(1., dtype=float32)

Args:
  k: How many of the highest predictions count (default 5).
  name: The metric's name (default "sparse_top_k_categorical_accuracy").
  dtype: The dtype of the state and result (default float32).

Returns:
  A TopKCategoricalAccuracy metric.
)doc",
      "k"_a = 5, "name"_a = py::none(), "dtype"_a = py::none());
  py::class_<metrics::BinaryAccuracy, metrics::MeanMetricWrapper, std::shared_ptr<metrics::BinaryAccuracy>>(
      sub, "BinaryAccuracy", R"doc(How often (y_pred > threshold) equals y_true, averaged over the last axis.

>>> m = ef.keras.metrics.BinaryAccuracy()
>>> m.update_state([[1.], [0.]], [[0.7], [0.6]])
>>> m.result().numpy()
array(0.5, dtype=float32)

Args:
  name: The metric's name (default "binary_accuracy").
  dtype: The dtype of the state and result (default float32).
  threshold: Predictions above it count as 1 (default 0.5).
)doc")
      .def(py::init([](py::handle name, DTypeArg dtype, double threshold) {
             return std::make_shared<metrics::BinaryAccuracy>(threshold, name_or(name, "binary_accuracy"),
                                                              dtype.value.value_or(ef::DType::Float32));
           }),
           "name"_a = py::none(), "dtype"_a = py::none(), "threshold"_a = 0.5);
  py::class_<metrics::ConfusionMetric, metrics::Metric, std::shared_ptr<metrics::ConfusionMetric>>(
      sub, "_ConfusionMetric",
      "The base of Precision, Recall and AUC: counts of the confusion matrix at thresholds.")
      .def(
          "update_state",
          [](metrics::ConfusionMetric& self, TensorArg y_true, TensorArg y_pred, py::handle sample_weight) {
            self.update_state(y_true.value, y_pred.value, optional_tensor(sample_weight), kPython);
          },
          R"doc(Adds a batch: y_true (cast to bool) against y_pred > each threshold.

Args:
  y_true: The labels, a tensor-like (0/1 or bool).
  y_pred: Probabilities in [0, 1], the same shape as y_true.
  sample_weight: None, or weights that broadcast to y_pred (or one per example).
)doc",
          "y_true"_a, "y_pred"_a, "sample_weight"_a = py::none())
      .def_property_readonly("thresholds", &metrics::ConfusionMetric::thresholds,
                             "The thresholds, in order.");
  auto thresholds_of = [](py::handle thresholds) {
    if (thresholds.is_none()) return std::vector<double>{};  // Keras' default (0.5, -inf with top_k)
    if (PyFloat_Check(thresholds.ptr()) || PyLong_Check(thresholds.ptr()))
      return std::vector<double>{thresholds.cast<double>()};
    auto list = thresholds.cast<std::vector<double>>();
    if (list.empty()) throw py::value_error("thresholds is empty; pass None for the default");
    return list;
  };
  py::class_<metrics::Precision, metrics::ConfusionMetric, std::shared_ptr<metrics::Precision>>(
      sub, "Precision", R"doc(The fraction of positive predictions that are right: TP / (TP + FP).

A prediction is positive when y_pred > threshold; with several thresholds the
result has one value per threshold. 0 while nothing was predicted positive.

>>> m = ef.keras.metrics.Precision()
>>> m.update_state([0, 1, 1, 1], [1., 0., 1., 1.])
>>> float(m.result())
0.6666666865348816

Args:
  thresholds: A float or a list of floats in [0, 1] (default 0.5; with top_k,
    -inf, so that each of the k highest predictions is positive).
  top_k: Only each example's k highest predictions can be positive.
  class_id: Score only this class (a column of the last axis).
  name: The metric's name (default "precision").
)doc")
      .def(py::init([thresholds_of](py::handle thresholds, std::optional<int64_t> top_k,
                                    std::optional<int64_t> class_id, py::handle name) {
             return std::make_shared<metrics::Precision>(thresholds_of(thresholds), top_k, class_id,
                                                         name_or(name, "precision"));
           }),
           "thresholds"_a = py::none(), "top_k"_a = py::none(), "class_id"_a = py::none(),
           "name"_a = py::none());
  py::class_<metrics::Recall, metrics::ConfusionMetric, std::shared_ptr<metrics::Recall>>(
      sub, "Recall", R"doc(The fraction of positive labels predicted positive: TP / (TP + FN).

A prediction is positive when y_pred > threshold; with several thresholds the
result has one value per threshold. 0 while no label was positive.

>>> m = ef.keras.metrics.Recall()
>>> m.update_state([0, 1, 1, 1], [1., 0., 1., 1.])
>>> float(m.result())
0.6666666865348816

Args:
  thresholds: A float or a list of floats in [0, 1] (default 0.5; with top_k,
    -inf, so that each of the k highest predictions is positive).
  top_k: Only each example's k highest predictions can be positive.
  class_id: Score only this class (a column of the last axis).
  name: The metric's name (default "recall").
)doc")
      .def(py::init([thresholds_of](py::handle thresholds, std::optional<int64_t> top_k,
                                    std::optional<int64_t> class_id, py::handle name) {
             return std::make_shared<metrics::Recall>(thresholds_of(thresholds), top_k, class_id,
                                                      name_or(name, "recall"));
           }),
           "thresholds"_a = py::none(), "top_k"_a = py::none(), "class_id"_a = py::none(),
           "name"_a = py::none());
  py::class_<metrics::AUC, metrics::ConfusionMetric, std::shared_ptr<metrics::AUC>>(
      sub, "AUC", R"doc(The area under the ROC or precision-recall curve (Keras' AUC).

Counts the confusion matrix at num_thresholds thresholds spread evenly over [0, 1]
and sums the curve's area between them: trapezoids for ROC, Davis & Goadrich's
interpolation for PR ("interpolation"), or the lower / upper heights ("minoring" /
"majoring").

>>> m = ef.keras.metrics.AUC(num_thresholds=3)
>>> m.update_state([0, 0, 1, 1], [0., 0.5, 0.3, 0.9])
>>> float(m.result())
0.75

Args:
  num_thresholds: How many thresholds (default 200; more is closer to the exact area).
  curve: "ROC" (default) or "PR".
  summation_method: "interpolation" (default), "minoring" or "majoring".
  name: The metric's name (default "auc").
  from_logits: y_pred are logits (a sigmoid is applied first).

Raises:
  InvalidArgumentError: num_thresholds <= 1, or an unknown curve or method.
)doc")
      .def(py::init([](int64_t num_thresholds, const std::string& curve, const std::string& summation,
                       py::handle name, bool from_logits) {
             using A = metrics::AUC;
             if (curve != "ROC" && curve != "PR")
               throw ef::InvalidArgumentError("AUC: curve must be 'ROC' or 'PR', got '" + curve + "'");
             const A::Summation method =
                 summation == "interpolation" ? A::Summation::kInterpolation
                 : summation == "minoring"    ? A::Summation::kMinoring
                 : summation == "majoring"
                     ? A::Summation::kMajoring
                     : throw ef::InvalidArgumentError(
                           "AUC: summation_method must be 'interpolation', 'minoring' or "
                           "'majoring', got '" +
                           summation + "'");
             return std::make_shared<A>(num_thresholds, curve == "ROC" ? A::Curve::kROC : A::Curve::kPR,
                                        method, name_or(name, "auc"), from_logits);
           }),
           "num_thresholds"_a = 200, "curve"_a = "ROC", "summation_method"_a = "interpolation",
           "name"_a = py::none(), "from_logits"_a = false);
}

}  // namespace efpy
