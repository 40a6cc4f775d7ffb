// The pieces of a tape that backprop needs (internal to src/autodiff).
#pragma once

#include <unordered_set>
#include <vector>

#include "eagerflow/autodiff/gradient_tape.h"
#include "eagerflow/runtime/op_def.h"

namespace ef::detail {

// A tensor's identity on tapes, assigned on first use (Note [tape recording]).
int64_t tensor_id(const Tensor& t);

// One recorded op call.
struct TapeEntry {
  const OpDef* op;
  Attrs attrs;
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
};

// Computes d(targets · seeds)/d(sources) from `entries` (in execution order).
// Gradient functions run with public ops, so active tapes record them.
std::vector<Tensor> backprop(const std::vector<TapeEntry>& entries, std::span<const Tensor> targets,
                             std::span<const Tensor> seeds, std::span<const Tensor> sources,
                             UnconnectedGradients unconnected);

// Sums `grad` over the dimensions that broadcasting added or stretched, giving `shape`.
Tensor sum_to_shape(const Tensor& grad, const Shape& shape);

}  // namespace ef::detail
