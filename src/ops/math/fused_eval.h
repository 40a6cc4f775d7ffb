// Elementwise expressions in gradient functions, fused where that saves memory.
//
// Note [fused gradient expressions]: a gradient such as square's, g * (x * 2), run op
// by op allocates a full-size temporary (x * 2) beside its result. For large tensors
// those temporaries set the peak memory of a backward pass: in the seed's autoencoder
// (188 MB activations) square's gradient alone held two. evaluate_elementwise runs the
// expression, written once as a FusedProgram, as one fused_elementwise pass when it is
// eager, of one float dtype and large; otherwise (small tensors, integers, graph
// building, shapes fused_elementwise does not take) it runs the instructions as the
// ordinary ops, so graphs get ordinary nodes for their own fusion pass. Both ways give
// the same values bit for bit, and both are differentiable (fused_elementwise's
// gradient replays the instructions' own gradients).
#pragma once

#include <span>
#include <vector>

#include "eagerflow/ops/fused_elementwise.h"

namespace ef::detail {

Tensor evaluate_elementwise(const FusedProgram& program, std::span<const Tensor> inputs);

// Every value of `program` (its inputs, then each instruction's result) computed op by
// op through public dispatch, on the inputs' device.
std::vector<Tensor> fused_values_one_by_one(const FusedProgram& program, std::span<const Tensor> inputs);

}  // namespace ef::detail
