// What losses (losses.cpp), running means (metrics.cpp) and Model's steps share: sample
// weights lined up with the values they weight, as Keras' squeeze_or_expand_dimensions
// does, and combined with an output's mask.
#pragma once

#include <optional>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/operators.h"
#include "eagerflow/ops/reduction.h"

namespace ef::nn::detail {

// `weight` aligned to `values` from the batch axis: weights [batch] scale every value of
// their example (the [batch, steps] losses of a sequence output), and [batch, 1] weights
// of [batch] values lose their last axis. NumPy's broadcasting alone would line a
// [batch] weight up with the LAST axis of [batch, steps] values, and silently weight the
// steps when there are as many steps as examples. A scalar is left as it is. The result
// still has to broadcast to `values`.
inline Tensor aligned_sample_weight(Tensor weight, const Tensor& values) {
  if (weight.rank() == 0) return weight;
  if (weight.rank() == values.rank() + 1 && weight.shape()[weight.rank() - 1] == 1)
    return squeeze(weight, {-1});
  while (weight.rank() < values.rank()) weight = expand_dims(weight, -1);
  return weight;
}

// Keras' weights for the per-step values of an output that carries a mask [batch,
// steps] (Note [masks] in layer.h): the mask, times the sample weights when given. For
// a loss that averages its values, the mask is divided by its mean (Keras'
// apply_valid_mask), so that the average is over the real steps only; a batch with no
// real step weighs everything 0.
inline Tensor masked_sample_weight(const Tensor& mask, const std::optional<Tensor>& sample_weight,
                                   DType dtype, bool averaged) {
  Tensor weight = cast(mask, dtype);
  if (averaged) {
    weight = weight / maximum(reduce_mean(weight), dtype == DType::Float64 ? 1e-300 : 1e-30);
  }
  if (sample_weight)
    weight =
        weight * aligned_sample_weight(
                     sample_weight->dtype() == dtype ? *sample_weight : cast(*sample_weight, dtype), weight);
  return weight;
}

}  // namespace ef::nn::detail
