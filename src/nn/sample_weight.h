// What losses (losses.cpp) and running means (metrics.cpp) share: sample weights lined
// up with the values they weight, as Keras' squeeze_or_expand_dimensions does.
#pragma once

#include "eagerflow/ops/array.h"

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

}  // namespace ef::nn::detail
