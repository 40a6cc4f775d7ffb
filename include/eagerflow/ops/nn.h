// Neural-network ops: activations, softmax, cross-entropy losses, bias_add,
// l2_normalize and dropout (TensorFlow's tf.nn names, in namespace ef).
//
//   ef::Tensor h = ef::relu(ef::bias_add(ef::matmul(x, w), b));
//   ef::Tensor loss = ef::sparse_softmax_cross_entropy_with_logits(labels, logits);
//
// Unless stated otherwise the ops take float32 or float64 and throw
// InvalidArgumentError naming the op for other dtypes.
#pragma once

#include <optional>
#include <string>

#include "eagerflow/core/tensor.h"
#include "eagerflow/ops/axes.h"
#include "eagerflow/ops/scalar.h"

namespace ef {

// ---- Activations (elementwise) ----
// 1 / (1 + exp(-x)), without overflow for large |x|.
Tensor sigmoid(const Tensor& x, CallSite where = CallSite::current());
// dy * y * (1 - y): the gradient of sigmoid given its output y and the upstream gradient
// dy, in one pass (TensorFlow's SigmoidGrad). float32/float64 of one dtype; shapes
// broadcast. Throws InvalidArgumentError for other dtypes or incompatible shapes.
Tensor sigmoid_grad(const Tensor& y, const Tensor& dy, CallSite where = CallSite::current());
// max(x, 0); NaN stays NaN.
Tensor relu(const Tensor& x, CallSite where = CallSite::current());
// min(max(x, 0), 6).
Tensor relu6(const Tensor& x, CallSite where = CallSite::current());
// x for x > 0, alpha * x otherwise.
Tensor leaky_relu(const Tensor& x, double alpha = 0.2, CallSite where = CallSite::current());
// x for x > 0, exp(x) - 1 otherwise.
Tensor elu(const Tensor& x, CallSite where = CallSite::current());
// scale * elu(x) with alpha, scale = 1.67326324, 1.05070098 (Klambauer et al., as TensorFlow).
Tensor selu(const Tensor& x, CallSite where = CallSite::current());
// x * Phi(x) with the erf form of the normal CDF; the tanh approximation when `approximate`.
Tensor gelu(const Tensor& x, bool approximate = false, CallSite where = CallSite::current());
// log(1 + exp(x)), computed as max(x, 0) + log1p(exp(-|x|)): no overflow, exact tails.
Tensor softplus(const Tensor& x, CallSite where = CallSite::current());
// x / (1 + |x|).
Tensor softsign(const Tensor& x, CallSite where = CallSite::current());

// ---- Softmax ----
// exp(x) / sum(exp(x)) along `axis` (default last), computed stably. Throws for a bad
// axis or a scalar input.
Tensor softmax(const Tensor& logits, int64_t axis = -1, CallSite where = CallSite::current());
// x - log(sum(exp(x))) along `axis`, computed stably.
Tensor log_softmax(const Tensor& logits, int64_t axis = -1, CallSite where = CallSite::current());

// ---- Losses ----
// Per-example -sum(labels * log_softmax(logits)) along `axis`: the result has the shape
// of logits without `axis`. labels and logits must have the same shape and dtype.
Tensor softmax_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits, int64_t axis = -1,
                                         CallSite where = CallSite::current());
// Per-example -log_softmax(logits)[label] for int32/int64 class ids `labels` of shape
// logits.shape[:-1]. A label outside [0, num_classes) throws InvalidArgumentError naming it.
Tensor sparse_softmax_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits,
                                                CallSite where = CallSite::current());
// Elementwise logistic loss max(x, 0) - x * z + log1p(exp(-|x|)) for logits x and
// labels z of the same shape and dtype.
Tensor sigmoid_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits,
                                         CallSite where = CallSite::current());
// Connectionist temporal classification loss (tf.nn.ctc_loss with dense labels): per
// sequence b, -log p(labels[b, :label_length[b]] | logits[:logit_length[b], b, :]) summed
// over every alignment, the logits unnormalized ([frames, batch, classes], or [batch,
// frames, classes] unless logits_time_major). Labels are integer class ids other than
// blank_index (negative: counted from the end). A sequence that no alignment fits has
// loss +inf (and a NaN gradient). Differentiable once; a second derivative raises
// UnimplementedError. Throws InvalidArgumentError naming the argument for bad shapes,
// lengths or labels.
Tensor ctc_loss(const Tensor& labels, const Tensor& logits, const Tensor& label_length,
                const Tensor& logit_length, bool logits_time_major = true, int64_t blank_index = 0,
                CallSite where = CallSite::current());

// ---- Layers' building blocks ----
// value + bias along the channel dimension: the last for "NHWC", dimension 1 for
// "NCHW". value must have rank >= 2, bias must be 1-D of the channel size, same dtype.
Tensor bias_add(const Tensor& value, const Tensor& bias, const std::string& data_format = "NHWC",
                CallSite where = CallSite::current());
// x / sqrt(max(sum(x^2, axis), epsilon)) along `axis` (all axes by default).
Tensor l2_normalize(const Tensor& x, const Axes& axis = {}, double epsilon = 1e-12,
                    CallSite where = CallSite::current());
// Local response normalization (tf.nn.local_response_normalization) of NHWC `x`:
// x / (bias + alpha * s)^beta, s the sum of squares over the channels within
// depth_radius of each channel. Float dtypes; depth_radius >= 0.
Tensor local_response_normalization(const Tensor& x, int64_t depth_radius = 5, double bias = 1.0,
                                    double alpha = 1.0, double beta = 0.5,
                                    CallSite where = CallSite::current());
// Zeroes each element with probability `rate` and scales the rest by 1 / (1 - rate).
// `noise_shape` (broadcastable to x's shape) shares one decision across broadcast
// dimensions. rate must be in [0, 1); seeds as in eagerflow/ops/random.h.
Tensor dropout(const Tensor& x, double rate, std::optional<int64_t> seed = std::nullopt,
               const std::optional<Shape>& noise_shape = std::nullopt, CallSite where = CallSite::current());

}  // namespace ef
