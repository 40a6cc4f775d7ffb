// Dense, Flatten, Dropout, LayerNormalization, Embedding: compositions of public ops,
// so their gradients, graph mode and devices come from the ops.
#include <algorithm>

#include "eagerflow/nn/layers.h"
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/linalg.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/nn.h"
#include "eagerflow/ops/operators.h"
#include "eagerflow/ops/reduction.h"
#include "nn/normalization_params.h"

namespace ef::nn {

// ---- Dense ----

Dense::Dense(int64_t units, DenseOptions options)
    : Layer(options.name), units_(units), options_(std::move(options)) {
  if (units <= 0) fail("Dense: argument 'units' must be positive, got ", units);
}

Variable Dense::kernel() const { return built_variable(kernel_, "kernel"); }
Variable Dense::bias() const { return built_variable(bias_, "bias"); }

void Dense::build(const Shape& input_shape) {
  if (input_shape.rank() < 2)
    fail("layer '", name(), "' (Dense) needs inputs of rank >= 2 ([batch, features]), got shape ", input_shape);
  const int64_t features = input_shape[input_shape.rank() - 1];
  if (features < 0) fail("layer '", name(), "' (Dense): the last dimension of the input must be known, got ", input_shape);
  kernel_ = add_weight("kernel", {features, units_}, options_.kernel_initializer);
  if (options_.use_bias) bias_ = add_weight("bias", {units_}, options_.bias_initializer);
}

Tensor Dense::call(const Tensor& inputs, bool) {
  const Shape& kernel_shape = kernel_->shape();
  if (inputs.rank() < 2 || inputs.shape()[inputs.rank() - 1] != kernel_shape[0])
    fail("layer '", name(), "' (Dense) was built for ", kernel_shape[0], " input features, got inputs of shape ",
         inputs.shape());
  if (inputs.dtype() != compute_dtype())
    fail("layer '", name(), "' (Dense) computes in dtype ", compute_dtype(), ", got inputs of dtype ",
         inputs.dtype());
  Tensor y;
  if (inputs.rank() == 2) {
    y = matmul(inputs, *kernel_);
  } else if (inputs.shape().is_fully_defined()) {
    y = tensordot(inputs, *kernel_, 1);
  } else {
    // A symbolic input ([?, steps, features] in a functional model): with one unknown
    // dimension, one matrix product over the rows and a reshape back (-1 for it);
    // with several, the broadcasting matmul.
    std::vector<int64_t> out_dims;
    int unknown = 0;
    for (int d = 0; d < inputs.rank() - 1; ++d) {
      out_dims.push_back(inputs.shape()[d] == kUnknownDim ? -1 : inputs.shape()[d]);
      if (inputs.shape()[d] == kUnknownDim) ++unknown;
    }
    out_dims.push_back(units_);
    y = unknown == 1 ? reshape(matmul(reshape(inputs, {-1, kernel_shape[0]}), *kernel_), Shape(out_dims))
                     : matmul(inputs, *kernel_);
  }
  if (bias_) y = y + *bias_;
  return options_.activation(y);
}

// ---- Flatten ----

Tensor Flatten::call(const Tensor& inputs, bool) {
  if (inputs.rank() == 0) fail("layer '", name(), "' (Flatten) needs inputs with a batch dimension, got a scalar");
  // The feature count is computed, not inferred with -1, so an empty batch works too.
  int64_t features = 1;
  for (int d = 1; d < inputs.rank(); ++d) features *= inputs.shape()[d];
  return reshape(inputs, {inputs.shape()[0], features});
}

// ---- Dropout ----

Dropout::Dropout(double rate, std::optional<int64_t> seed, std::string name)
    : Layer(std::move(name)), rate_(rate), seed_(seed) {
  if (!(rate >= 0 && rate < 1)) fail("Dropout: argument 'rate' must be in [0, 1), got ", rate);
}

Tensor Dropout::call(const Tensor& inputs, bool training) {
  return training ? dropout(inputs, rate_, seed_) : inputs;
}

// ---- LayerNormalization ----

LayerNormalization::LayerNormalization(LayerNormalizationOptions options)
    : Layer(options.name), options_(std::move(options)) {
  detail::check_epsilon("LayerNormalization", options_.epsilon);
}

void LayerNormalization::build(const Shape& input_shape) {
  detail::NormalizationParams params =
      detail::build_normalization_params(*this, "LayerNormalization", input_shape, options_);
  axis_ = params.axis;
  gamma_ = params.gamma;
  beta_ = params.beta;
}

Tensor LayerNormalization::call(const Tensor& inputs, bool) {
  if (inputs.rank() <= axis_) fail("layer '", name(), "' (LayerNormalization) got inputs of shape ", inputs.shape());
  Tensor mean = reduce_mean(inputs, axis_, /*keepdims=*/true);
  Tensor centered = inputs - mean;
  Tensor variance = reduce_mean(square(centered), axis_, /*keepdims=*/true);
  Tensor y = centered * rsqrt(variance + options_.epsilon);
  const Shape broadcast = detail::broadcast_along(inputs, axis_);
  if (gamma_) y = y * reshape(*gamma_, broadcast);
  if (beta_) y = y + reshape(*beta_, broadcast);
  return y;
}

// ---- Embedding ----

Embedding::Embedding(int64_t input_dim, int64_t output_dim, EmbeddingOptions options)
    : Layer(options.name), input_dim_(input_dim), output_dim_(output_dim), options_(std::move(options)) {
  if (input_dim <= 0 || output_dim <= 0)
    fail("Embedding: 'input_dim' and 'output_dim' must be positive, got ", input_dim, " and ", output_dim);
}

Variable Embedding::embeddings() const { return built_variable(embeddings_, "embeddings"); }

void Embedding::build(const Shape&) {
  embeddings_ = add_weight("embeddings", {input_dim_, output_dim_}, options_.embeddings_initializer);
}

Tensor Embedding::call(const Tensor& inputs, bool) {
  if (inputs.dtype() != DType::Int32 && inputs.dtype() != DType::Int64)
    fail("layer '", name(), "' (Embedding) needs int32 or int64 ids, got ", inputs.dtype());
  return gather(*embeddings_, inputs);
}

std::optional<Tensor> Embedding::compute_mask(const std::vector<Tensor>& inputs,
                                              const std::optional<Tensor>&) const {
  if (!options_.mask_zero) return std::nullopt;
  return not_equal(inputs.at(0), 0);
}

}  // namespace ef::nn
