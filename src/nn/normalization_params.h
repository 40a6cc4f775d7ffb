// What LayerNormalization (core_layers.cpp) and BatchNormalization (conv_layers.cpp)
// share: the feature axis, resolved against the input's rank at build time, and the
// learned per-feature scale gamma and offset beta along it.
#pragma once

#include <cstdint>
#include <optional>

#include "eagerflow/nn/layer.h"

namespace ef::nn::detail {

struct NormalizationParams {
  int axis = -1;                        // in [0, rank of the input)
  std::optional<Variable> gamma, beta;  // [size of axis]; absent unless options.scale / options.center
};

// Throws InvalidArgumentError naming the layer `type` unless epsilon > 0.
inline void check_epsilon(const char* type, double epsilon) {
  if (!(epsilon > 0)) fail(type, ": argument 'epsilon' must be positive, got ", epsilon);
}

// Resolves options.axis against `input_shape` (InvalidArgumentError naming the layer when it
// is out of range) and adds "gamma" and "beta" to `layer` as options.scale and options.center
// ask. `Options` is LayerNormalizationOptions or BatchNormalizationOptions: they repeat these
// fields rather than inherit them, so that designated initializers keep working.
template <class Options>
NormalizationParams build_normalization_params(Layer& layer, const char* type, const Shape& input_shape,
                                               const Options& options) {
  const int64_t rank = input_shape.rank();
  if (options.axis < -rank || options.axis >= rank)
    fail("layer '", layer.name(), "' (", type, "): axis ", options.axis, " is out of range for inputs of shape ",
         input_shape);
  NormalizationParams params;
  params.axis = static_cast<int>(options.axis < 0 ? options.axis + rank : options.axis);
  const Shape param_shape{input_shape[params.axis]};
  if (options.scale) params.gamma = layer.add_weight("gamma", param_shape, options.gamma_initializer);
  if (options.center) params.beta = layer.add_weight("beta", param_shape, options.beta_initializer);
  return params;
}

// [1, ..., inputs.shape()[axis], ..., 1] of the inputs' rank: per-feature parameters
// reshaped to it broadcast against the inputs.
inline Shape broadcast_along(const Tensor& inputs, int axis) {
  Dims dims(inputs.rank(), 1);
  dims[axis] = inputs.shape()[axis];
  return Shape(dims);
}

}  // namespace ef::nn::detail
