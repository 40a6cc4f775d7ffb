// Gradient clipping (TensorFlow's clip_by_norm and clip_by_global_norm).
#pragma once

#include <utility>
#include <vector>

#include "eagerflow/core/tensor.h"

namespace ef {

// t scaled down so that its L2 norm is at most clip_norm (unchanged when it already is).
// Throws InvalidArgumentError for a negative clip_norm or a non-float tensor.
Tensor clip_by_norm(const Tensor& t, double clip_norm, CallSite where = CallSite::current());

// Every tensor scaled by clip_norm / max(global_norm, clip_norm), where global_norm is the L2 norm of all
// of them together (in float64). Returns the clipped tensors and global_norm in their dtype (TensorFlow's;
// mixed: the wider; none: float32). Undefined tensors (no gradient) stay undefined and do not count.
std::pair<std::vector<Tensor>, Tensor> clip_by_global_norm(const std::vector<Tensor>& tensors, double clip_norm,
                                                           CallSite where = CallSite::current());

}  // namespace ef
