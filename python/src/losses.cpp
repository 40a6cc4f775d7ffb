// ef.keras.losses over eagerflow/nn/losses.h.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "convert.h"
#include "py_layer.h"

namespace efpy {
namespace {

using namespace pybind11::literals;
namespace nn = ef::nn;
constexpr ef::CallSite kPython{};

nn::losses::Reduction reduction_of(const std::string& name) {
  if (name == "none") return nn::losses::Reduction::kNone;
  if (name == "sum") return nn::losses::Reduction::kSum;
  if (name == "sum_over_batch_size" || name == "auto") return nn::losses::Reduction::kSumOverBatchSize;
  throw ef::InvalidArgumentError("reduction must be \"sum_over_batch_size\", \"sum\" or \"none\", got \"" +
                                 name + "\"");
}

template <class LossClass>
void bind_loss_class(py::module_& m, const char* name, const char* doc) {
  py::class_<LossClass, nn::losses::Loss, std::shared_ptr<LossClass>>(m, name, doc)
      .def(py::init([](bool from_logits, const std::string& reduction) {
             return LossClass(nn::losses::LossOptions{from_logits, reduction_of(reduction)});
           }),
           "from_logits"_a = false, "reduction"_a = "sum_over_batch_size");
}

}  // namespace

void bind_losses(py::module_& m) {
  py::module_ sub = m.def_submodule("losses");
  py::class_<nn::losses::Loss, std::shared_ptr<nn::losses::Loss>>(
      sub, "Loss", R"doc(The base class of the Keras loss classes: a per-example loss, weighted and reduced.

Not constructible itself (use a subclass such as MeanSquaredError; Model.compile
also takes a function (y_true, y_pred) -> per-example losses). y_true is cast to
y_pred's dtype; probabilities are clipped to [1e-7, 1 - 1e-7] before logs.
)doc")
      .def(
          "__call__",
          [](const nn::losses::Loss& self, TensorArg y_true, TensorArg y_pred, py::handle sample_weight) {
            return self(y_true.value, y_pred.value, optional_tensor(sample_weight), kPython);
          },
          R"doc(Computes the reduced loss.

Args:
  y_true: The targets, a tensor-like (cast to y_pred's dtype; class ids for the
    sparse loss).
  y_pred: The predictions, a float tensor-like [batch, ...].
  sample_weight: None, or weights that broadcast to the per-example losses
    (y_pred.shape[:-1]).

Returns:
  A scalar Tensor for "sum_over_batch_size" and "sum"; the per-example losses
  for "none".

Raises:
  InvalidArgumentError: shapes that do not match (naming the loss and both).
)doc",
          "y_true"_a, "y_pred"_a, "sample_weight"_a = py::none())
      .def_property_readonly("name", &nn::losses::Loss::name,
                             "The loss' name (\"mean_squared_error\", ...).");
  bind_loss_class<nn::losses::MeanSquaredError>(
      sub, "MeanSquaredError", R"doc(Mean of squared errors over the last axis, per example, then reduced.

>>> ef.keras.losses.MeanSquaredError()([[0., 1.], [1., 1.]], [[1., 1.], [1., 0.]]).numpy()
array(0.5, dtype=float32)

Args:
  from_logits: Ignored (regression losses take values, not logits).
  reduction: "sum_over_batch_size" (default; "auto" means it too), "sum" or
    "none" (the per-example losses, weighted).
)doc");
  bind_loss_class<nn::losses::MeanAbsoluteError>(
      sub, "MeanAbsoluteError", R"doc(Mean of absolute errors over the last axis, per example, then reduced.

>>> ef.keras.losses.MeanAbsoluteError()([[0., 1.]], [[1., 3.]]).numpy()
array(1.5, dtype=float32)

Args:
  from_logits: Ignored (regression losses take values, not logits).
  reduction: "sum_over_batch_size" (default; "auto" means it too), "sum" or
    "none" (the per-example losses, weighted).
)doc");
  bind_loss_class<nn::losses::BinaryCrossentropy>(
      sub, "BinaryCrossentropy",
      R"doc(Binary cross-entropy, -(y log p + (1 - y) log(1 - p)), averaged over the last axis.

>>> ef.keras.losses.BinaryCrossentropy(from_logits=True)([[1., 0.]], [[0., 0.]]).numpy()
array(0.6931472, dtype=float32)

Args:
  from_logits: Whether y_pred holds logits (sigmoid is applied) rather than
    probabilities (default False).
  reduction: "sum_over_batch_size" (default; "auto" means it too), "sum" or
    "none" (the per-example losses, weighted).
)doc");
  bind_loss_class<nn::losses::CategoricalCrossentropy>(
      sub, "CategoricalCrossentropy",
      R"doc(Cross-entropy -sum(y_true * log p) over the last axis, for one-hot (or soft) labels.

>>> ef.keras.losses.CategoricalCrossentropy()([[0., 1.]], [[0.5, 0.5]]).numpy()
array(0.6931472, dtype=float32)

Args:
  from_logits: Whether y_pred holds logits (softmax is applied) rather than
    probabilities, which are normalized to sum 1 (default False).
  reduction: "sum_over_batch_size" (default; "auto" means it too), "sum" or
    "none" (the per-example losses, weighted).
)doc");
  bind_loss_class<nn::losses::SparseCategoricalCrossentropy>(
      sub, "SparseCategoricalCrossentropy",
      R"doc(Cross-entropy -log p[y_true] for integer class ids y_true of shape y_pred.shape[:-1].

A trailing dimension of 1 in y_true is allowed; ids outside [0, classes) raise.

>>> ef.keras.losses.SparseCategoricalCrossentropy(from_logits=True)([1], [[0., 0.]]).numpy()
array(0.6931472, dtype=float32)

Args:
  from_logits: Whether y_pred holds logits (softmax is applied) rather than
    probabilities (default False).
  reduction: "sum_over_batch_size" (default; "auto" means it too), "sum" or
    "none" (the per-example losses, weighted).
)doc");
  bind_loss_class<nn::losses::KLDivergence>(
      sub, "KLDivergence",
      R"doc(Kullback-Leibler divergence sum(t * log(t / p)) over the last axis, t and p clipped to [1e-7, 1].

>>> ef.keras.losses.KLDivergence()([[0.5, 0.5]], [[0.5, 0.5]]).numpy()
array(0., dtype=float32)

Args:
  from_logits: Ignored (regression losses take values, not logits).
  reduction: "sum_over_batch_size" (default; "auto" means it too), "sum" or
    "none" (the per-example losses, weighted).
)doc");
  bind_loss_class<nn::losses::Poisson>(sub, "Poisson",
                                       R"doc(Poisson loss mean(p - t * log(p + 1e-7)) over the last axis.

>>> ef.keras.losses.Poisson()([[0.]], [[1.]]).numpy()
array(1., dtype=float32)

Args:
  from_logits: Ignored (regression losses take values, not logits).
  reduction: "sum_over_batch_size" (default; "auto" means it too), "sum" or
    "none" (the per-example losses, weighted).
)doc");
  bind_loss_class<nn::losses::LogCosh>(
      sub, "LogCosh", R"doc(mean(log(cosh(p - t))) over the last axis, computed without overflow.

>>> ef.keras.losses.LogCosh()([[0.]], [[0.]]).numpy()
array(0., dtype=float32)

Args:
  from_logits: Ignored (regression losses take values, not logits).
  reduction: "sum_over_batch_size" (default; "auto" means it too), "sum" or
    "none" (the per-example losses, weighted).
)doc");
  bind_loss_class<nn::losses::CosineSimilarity>(
      sub, "CosineSimilarity",
      R"doc(Negative cosine similarity over the last axis: -1 for vectors of equal direction (as Keras).

>>> ef.keras.losses.CosineSimilarity()([[1., 0.]], [[2., 0.]]).numpy()
array(-1., dtype=float32)

Args:
  from_logits: Ignored (regression losses take values, not logits).
  reduction: "sum_over_batch_size" (default; "auto" means it too), "sum" or
    "none" (the per-example losses, weighted).
)doc");
  py::class_<nn::losses::Huber, nn::losses::Loss, std::shared_ptr<nn::losses::Huber>>(
      sub, "Huber",
      R"doc(Huber loss: quadratic for small errors, linear for large ones, averaged over the last axis.

0.5 x^2 where |x| <= delta, delta * (|x| - 0.5 delta) elsewhere, x = y_pred - y_true.

>>> ef.keras.losses.Huber(delta=0.5)([[0.]], [[2.]]).numpy()
array(0.875, dtype=float32)

Args:
  delta: The threshold between the two regimes, > 0 (default 1).
  reduction: "sum_over_batch_size" (default), "sum" or "none".

Raises:
  InvalidArgumentError: delta <= 0.
)doc")
      .def(py::init([](double delta, const std::string& reduction) {
             return std::make_shared<nn::losses::Huber>(
                 delta, nn::losses::LossOptions{false, reduction_of(reduction)});
           }),
           "delta"_a = 1.0, "reduction"_a = "sum_over_batch_size");
  sub.def(
      "huber",
      [](TensorArg y_true, TensorArg y_pred, double delta) {
        return nn::losses::huber(y_true.value, y_pred.value, delta, kPython);
      },
      R"doc(Per-example Huber loss over the last axis (see Huber).

>>> ef.keras.losses.huber([[0., 0.]], [[0.5, 2.]]).numpy()
array([0.8125], dtype=float32)

Args:
  y_true: A tensor-like (cast to y_pred's dtype) of y_pred's shape.
  y_pred: A float tensor-like.
  delta: The threshold, > 0 (default 1).

Returns:
  A Tensor of shape y_pred.shape[:-1].
)doc",
      "y_true"_a, "y_pred"_a, "delta"_a = 1.0);
  auto regression = [&](const char* name, auto fn, const char* doc) {
    sub.def(
        name, [fn](TensorArg y_true, TensorArg y_pred) { return fn(y_true.value, y_pred.value, kPython); },
        doc, "y_true"_a, "y_pred"_a);
  };
  regression("mean_squared_error", &nn::losses::mean_squared_error,
             R"doc(Returns mean((y_true - y_pred) ** 2) over the last axis. Also MSE and mse.

>>> ef.keras.losses.mean_squared_error([[0., 1.], [1., 1.]], [[1., 1.], [1., 0.]]).numpy()
array([0.5, 0.5], dtype=float32)

Args:
  y_true: A tensor-like of y_pred's shape (cast to y_pred's dtype).
  y_pred: A float tensor-like.

Returns:
  A Tensor of shape y_pred.shape[:-1] (one loss per example).

Raises:
  InvalidArgumentError: the shapes differ.
)doc");
  regression("mean_absolute_error", &nn::losses::mean_absolute_error,
             R"doc(Returns mean(|y_true - y_pred|) over the last axis. Also MAE and mae.

>>> ef.keras.losses.mean_absolute_error([[0., 1.]], [[1., 3.]]).numpy()
array([1.5], dtype=float32)

Args:
  y_true: A tensor-like of y_pred's shape (cast to y_pred's dtype).
  y_pred: A float tensor-like.

Returns:
  A Tensor of shape y_pred.shape[:-1] (one loss per example).

Raises:
  InvalidArgumentError: the shapes differ.
)doc");
  regression(
      "kl_divergence", &nn::losses::kl_divergence,
      R"doc(Returns sum(t * log(t / p)) over the last axis, t and p clipped to [1e-7, 1]. Also KLD and kld.

>>> ef.keras.losses.kl_divergence([[0.5, 0.5]], [[0.5, 0.5]]).numpy()
array([0.], dtype=float32)

Args:
  y_true: A tensor-like of y_pred's shape (cast to y_pred's dtype).
  y_pred: A float tensor-like.

Returns:
  A Tensor of shape y_pred.shape[:-1] (one loss per example).

Raises:
  InvalidArgumentError: the shapes differ.
)doc");
  regression("poisson", &nn::losses::poisson, R"doc(Returns mean(p - t * log(p + 1e-7)) over the last axis.

>>> ef.keras.losses.poisson([[0.]], [[1.]]).numpy()
array([1.], dtype=float32)

Args:
  y_true: A tensor-like of y_pred's shape (cast to y_pred's dtype).
  y_pred: A float tensor-like.

Returns:
  A Tensor of shape y_pred.shape[:-1] (one loss per example).

Raises:
  InvalidArgumentError: the shapes differ.
)doc");
  regression("log_cosh", &nn::losses::log_cosh,
             R"doc(Returns mean(log(cosh(p - t))) over the last axis, computed as x + softplus(-2x) - log 2.

>>> ef.keras.losses.log_cosh([[0.]], [[0.]]).numpy()
array([0.], dtype=float32)

Args:
  y_true: A tensor-like of y_pred's shape (cast to y_pred's dtype).
  y_pred: A float tensor-like.

Returns:
  A Tensor of shape y_pred.shape[:-1] (one loss per example).

Raises:
  InvalidArgumentError: the shapes differ.
)doc");
  regression("cosine_similarity", &nn::losses::cosine_similarity,
             R"doc(Returns -sum(l2_normalize(t) * l2_normalize(p)) over the last axis (-1: same direction).

>>> ef.keras.losses.cosine_similarity([[1., 0.]], [[2., 0.]]).numpy()
array([-1.], dtype=float32)

Args:
  y_true: A tensor-like of y_pred's shape (cast to y_pred's dtype).
  y_pred: A float tensor-like.

Returns:
  A Tensor of shape y_pred.shape[:-1] (one loss per example).

Raises:
  InvalidArgumentError: the shapes differ.
)doc");
  auto classification = [&](const char* name, auto fn, const char* doc) {
    sub.def(
        name,
        [fn](TensorArg y_true, TensorArg y_pred, bool from_logits) {
          return fn(y_true.value, y_pred.value, from_logits, kPython);
        },
        doc, "y_true"_a, "y_pred"_a, "from_logits"_a = false);
  };
  classification("binary_crossentropy", &nn::losses::binary_crossentropy,
                 R"doc(Returns mean(-(y log p + (1 - y) log(1 - p))) over the last axis.

p is y_pred clipped to [1e-7, 1 - 1e-7], or sigmoid(y_pred) when from_logits.

>>> ef.keras.losses.binary_crossentropy([[1., 0.]], [[0., 0.]], from_logits=True).numpy()
array([0.6931472], dtype=float32)

Args:
  y_true: A tensor-like of y_pred's shape (cast to y_pred's dtype).
  y_pred: A float tensor-like.
  from_logits: Whether y_pred holds logits rather than probabilities.

Returns:
  A Tensor of shape y_pred.shape[:-1] (one loss per example).

Raises:
  InvalidArgumentError: the shapes differ.
)doc");
  classification("categorical_crossentropy", &nn::losses::categorical_crossentropy,
                 R"doc(Returns -sum(y_true * log p) over the last axis.

p is y_pred normalized to sum 1, or softmax(y_pred) when from_logits.

>>> ef.keras.losses.categorical_crossentropy([[0., 1.]], [[0.5, 0.5]]).numpy()
array([0.6931472], dtype=float32)

Args:
  y_true: A tensor-like of y_pred's shape (cast to y_pred's dtype).
  y_pred: A float tensor-like.
  from_logits: Whether y_pred holds logits rather than probabilities.

Returns:
  A Tensor of shape y_pred.shape[:-1] (one loss per example).

Raises:
  InvalidArgumentError: the shapes differ.
)doc");
  classification("sparse_categorical_crossentropy", &nn::losses::sparse_categorical_crossentropy,
                 R"doc(Returns -log p[y_true] per example, for integer class ids.

p is y_pred (probabilities), or softmax(y_pred) when from_logits.

>>> ef.keras.losses.sparse_categorical_crossentropy([1], [[0., 0.]], from_logits=True).numpy()
array([0.6931472], dtype=float32)

Args:
  y_true: Integer class ids of shape y_pred.shape[:-1] (a trailing dimension of
    1 is allowed), each in [0, classes).
  y_pred: A [..., classes] float tensor-like.
  from_logits: Whether y_pred holds logits rather than probabilities.

Returns:
  A Tensor of shape y_pred.shape[:-1].

Raises:
  InvalidArgumentError: an id outside [0, classes), or shapes that do not fit.
)doc");
}

}  // namespace efpy
