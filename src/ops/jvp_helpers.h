// Builders of forward-mode (jvp) rules shared by op definitions (Note [forward mode] in
// eagerflow/autodiff/forward_accumulator.h). Internal to src/ops.
#pragma once

#include <vector>

#include "eagerflow/runtime/op_def.h"

namespace ef::detail {

// The tangent of input i, or zeros like the input where it has none.
Tensor tangent_or_zeros(const JvpCall& call, size_t input);

// `t` broadcast to the shape of `like` (an output of the op), or `t` itself when the
// shapes are equal.
Tensor broadcast_like(const Tensor& t, const Tensor& like);

// For ops linear in the inputs of `linear` (bit i: input i) jointly, and not
// differentiable in the others (integer indices, shapes): the op itself applied to
// those inputs' tangents, the others as they are.
std::vector<Tensor> jvp_linear(const JvpCall& call, uint64_t linear);
template <uint64_t Linear = kAllValues>
std::vector<Tensor> jvp_linear(const JvpCall& call) {
  return jvp_linear(call, Linear);
}

// For ops linear in each of the inputs of `inputs` separately (matmul, conv2d): the sum,
// over those inputs with a tangent, of the op with that input replaced by its tangent.
std::vector<Tensor> jvp_multilinear(const JvpCall& call, uint64_t inputs);
template <uint64_t Inputs = kAllValues>
std::vector<Tensor> jvp_multilinear(const JvpCall& call) {
  return jvp_multilinear(call, Inputs);
}

// For elementwise ops with one output: the Jacobian with respect to each input is
// diagonal, so it equals its transpose, and the op's gradient function applied to an
// input's tangent (broadcast to the output's shape) is that input's term of the jvp.
std::vector<Tensor> jvp_elementwise(const JvpCall& call);

// For ops whose output element o depends only on a group of input elements that no
// other output element reads (reductions, segment reductions) of input 0: Jᵀ applied
// to ones gives each input element's partial derivative, so the jvp is the same
// reduction's sum (`sum`) of those partials times the tangent.
std::vector<Tensor> jvp_grouped(const JvpCall& call, Tensor (*sum)(const JvpCall& call, const Tensor& terms));

}  // namespace ef::detail
