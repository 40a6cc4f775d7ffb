// Keras' losses over public ops (eagerflow/nn/losses.h): gradients and graph mode come
// from the ops they are made of.
#include "eagerflow/nn/losses.h"

#include <cmath>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/nn.h"
#include "eagerflow/ops/operators.h"
#include "eagerflow/ops/reduction.h"
#include "nn/sample_weight.h"

namespace ef::nn::losses {

namespace {

// Keras' backend epsilon: probabilities are kept inside [kEpsilon, 1 - kEpsilon].
constexpr double kEpsilon = 1e-7;

// y_true cast to y_pred's dtype, checked to have y_pred's shape: by an op, so that a
// traced loss checks the shapes it runs with (Note [runtime shape checks]).
Tensor matching_labels(const char* loss, const Tensor& y_true, const Tensor& y_pred) {
  if (!y_true.defined() || !y_pred.defined()) fail(loss, ": y_true and y_pred must be defined tensors");
  if (!is_floating(y_pred.dtype())) fail(loss, ": y_pred must be float32 or float64, got ", y_pred.dtype());
  Tensor labels =
      ensure_same_shape(y_true, y_pred, std::string(loss) + ": y_true and y_pred must have the same shape");
  if (y_pred.rank() == 0) fail(loss, ": y_pred must have rank >= 1 (the last axis is reduced), got a scalar");
  return labels.dtype() == y_pred.dtype() ? labels : cast(labels, y_pred.dtype());
}

template <class Fn>
Tensor with_call_site(CallSite where, Fn fn) {
  try {
    return fn();
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

}  // namespace

Tensor mean_squared_error(const Tensor& y_true, const Tensor& y_pred, CallSite where) {
  return with_call_site(where, [&] {
    Tensor labels = matching_labels("mean_squared_error", y_true, y_pred);
    return reduce_mean(squared_difference(y_pred, labels), -1);
  });
}

Tensor mean_absolute_error(const Tensor& y_true, const Tensor& y_pred, CallSite where) {
  return with_call_site(where, [&] {
    Tensor labels = matching_labels("mean_absolute_error", y_true, y_pred);
    return reduce_mean(abs(y_pred - labels), -1);
  });
}

Tensor binary_crossentropy(const Tensor& y_true, const Tensor& y_pred, bool from_logits, CallSite where) {
  return with_call_site(where, [&] {
    Tensor labels = matching_labels("binary_crossentropy", y_true, y_pred);
    if (from_logits) return reduce_mean(sigmoid_cross_entropy_with_logits(labels, y_pred), -1);
    Tensor p = clip_by_value(y_pred, kEpsilon, 1 - kEpsilon);
    Tensor bce = labels * log(p + kEpsilon) + (1.0 - labels) * log(1.0 - p + kEpsilon);
    return -reduce_mean(bce, -1);
  });
}

Tensor categorical_crossentropy(const Tensor& y_true, const Tensor& y_pred, bool from_logits, CallSite where) {
  return with_call_site(where, [&] {
    Tensor labels = matching_labels("categorical_crossentropy", y_true, y_pred);
    if (from_logits) return softmax_cross_entropy_with_logits(labels, y_pred);
    Tensor p = clip_by_value(y_pred / reduce_sum(y_pred, -1, /*keepdims=*/true), kEpsilon, 1 - kEpsilon);
    return -reduce_sum(labels * log(p), -1);
  });
}

Tensor sparse_categorical_crossentropy(const Tensor& y_true, const Tensor& y_pred, bool from_logits,
                                       CallSite where) {
  return with_call_site(where, [&] {
    if (!y_true.defined() || !y_pred.defined())
      fail("sparse_categorical_crossentropy: y_true and y_pred must be defined tensors");
    if (!is_floating(y_pred.dtype()))
      fail("sparse_categorical_crossentropy: y_pred must be float32 or float64, got ", y_pred.dtype());
    if (y_pred.rank() == 0)
      fail("sparse_categorical_crossentropy: y_pred must have a class axis, got a scalar");
    Tensor ids = y_true;
    // Keras accepts labels of shape [batch, 1] for predictions [batch, classes].
    if (ids.rank() == y_pred.rank() && ids.rank() > 0 && ids.shape()[ids.rank() - 1] == 1) ids = squeeze(ids, -1);
    if (ids.dtype() != DType::Int32 && ids.dtype() != DType::Int64) ids = cast(ids, DType::Int64);
    Dims expected;
    for (int d = 0; d + 1 < y_pred.rank(); ++d) expected.push_back(y_pred.shape()[d]);
    if (ids.shape() != Shape(expected))
      fail("sparse_categorical_crossentropy: y_true of shape ", y_true.shape(), " does not match y_pred of shape ",
           y_pred.shape(), " (expected ", Shape(expected), ")");
    // log of the clipped probabilities are logits whose softmax gives them back.
    Tensor logits = from_logits ? y_pred : log(clip_by_value(y_pred, kEpsilon, 1 - kEpsilon));
    return sparse_softmax_cross_entropy_with_logits(ids, logits);
  });
}

Tensor huber(const Tensor& y_true, const Tensor& y_pred, double delta, CallSite where) {
  return with_call_site(where, [&] {
    if (!(delta > 0)) fail("huber: delta must be > 0, got ", delta);
    const Tensor x = abs(y_pred - matching_labels("huber", y_true, y_pred));
    return reduce_mean(ef::where(x <= delta, square(x) * 0.5, (x - 0.5 * delta) * delta), -1);
  });
}

Tensor kl_divergence(const Tensor& y_true, const Tensor& y_pred, CallSite where) {
  return with_call_site(where, [&] {
    const Tensor t = clip_by_value(matching_labels("kl_divergence", y_true, y_pred), kEpsilon, 1);
    const Tensor p = clip_by_value(y_pred, kEpsilon, 1);
    return reduce_sum(t * log(t / p), -1);
  });
}

Tensor poisson(const Tensor& y_true, const Tensor& y_pred, CallSite where) {
  return with_call_site(where, [&] {
    const Tensor t = matching_labels("poisson", y_true, y_pred);
    return reduce_mean(y_pred - t * log(y_pred + kEpsilon), -1);
  });
}

Tensor log_cosh(const Tensor& y_true, const Tensor& y_pred, CallSite where) {
  return with_call_site(where, [&] {
    const Tensor x = y_pred - matching_labels("log_cosh", y_true, y_pred);
    return reduce_mean(x + softplus(x * -2.0) - std::log(2.0), -1);
  });
}

Tensor cosine_similarity(const Tensor& y_true, const Tensor& y_pred, CallSite where) {
  return with_call_site(where, [&] {
    const Tensor t = matching_labels("cosine_similarity", y_true, y_pred);
    return -reduce_sum(l2_normalize(t, -1) * l2_normalize(y_pred, -1), -1);
  });
}

Tensor Loss::operator()(const Tensor& y_true, const Tensor& y_pred, const std::optional<Tensor>& sample_weight,
                        CallSite where) const {
  return with_call_site(where, [&] {
    // Half-precision predictions (a mixed-precision model's) give a float32 loss.
    auto widened = [](const Tensor& t) { return is_half(t.dtype()) ? cast(t, DType::Float32) : t; };
    Tensor losses = per_example(widened(y_true), widened(y_pred));
    if (sample_weight) {
      Tensor weight = sample_weight->dtype() == losses.dtype() ? *sample_weight : cast(*sample_weight, losses.dtype());
      weight = ensure_broadcastable_to(detail::aligned_sample_weight(weight, losses), losses,
                                       name_ + ": sample_weight must broadcast to the per-example losses");
      losses = losses * weight;
    }
    switch (options_.reduction) {
      case Reduction::kNone:
        return losses;
      case Reduction::kSum:
        return reduce_sum(losses);
      case Reduction::kSumOverBatchSize:
        // Keras divides by the number of losses, giving 0 (not NaN) for an empty batch.
        return losses.shape().num_elements() == 0 ? reduce_sum(losses) : reduce_mean(losses);
    }
    fail<InternalError>(name_, ": unknown reduction");
  });
}

Tensor MeanSquaredError::per_example(const Tensor& t, const Tensor& p) const { return mean_squared_error(t, p); }
Tensor MeanAbsoluteError::per_example(const Tensor& t, const Tensor& p) const { return mean_absolute_error(t, p); }
Tensor BinaryCrossentropy::per_example(const Tensor& t, const Tensor& p) const {
  return binary_crossentropy(t, p, options().from_logits);
}
Tensor CategoricalCrossentropy::per_example(const Tensor& t, const Tensor& p) const {
  return categorical_crossentropy(t, p, options().from_logits);
}
Tensor SparseCategoricalCrossentropy::per_example(const Tensor& t, const Tensor& p) const {
  return sparse_categorical_crossentropy(t, p, options().from_logits);
}

Tensor KLDivergence::per_example(const Tensor& t, const Tensor& p) const { return kl_divergence(t, p); }
Tensor Poisson::per_example(const Tensor& t, const Tensor& p) const { return poisson(t, p); }
Tensor LogCosh::per_example(const Tensor& t, const Tensor& p) const { return log_cosh(t, p); }
Tensor CosineSimilarity::per_example(const Tensor& t, const Tensor& p) const {
  return cosine_similarity(t, p);
}

Huber::Huber(double delta, LossOptions options) : Loss("huber_loss", options), delta_(delta) {
  if (!(delta > 0)) fail("Huber: delta must be > 0, got ", delta);
}
Tensor Huber::per_example(const Tensor& t, const Tensor& p) const { return huber(t, p, delta_); }

}  // namespace ef::nn::losses
