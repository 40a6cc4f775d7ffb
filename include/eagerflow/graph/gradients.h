// Symbolic gradients in graph mode (tf.gradients): adds the nodes that compute
// d(sum of ys · grad_ys)/d(xs) to the graph of `ys`, with the same per-op gradient
// functions a GradientTape uses.
//
//   ef::Tensor dy_dx = ef::gradients({y}, {x})[0];   // a symbolic tensor
#pragma once

#include <vector>

#include "eagerflow/autodiff/gradient_tape.h"
#include "eagerflow/graph/graph.h"

namespace ef {

// One gradient per x (undefined, or zeros with UnconnectedGradients::Zero, where y does
// not depend on x). `grad_ys` defaults to ones. All tensors must belong to one graph.
std::vector<Tensor> gradients(const std::vector<Tensor>& ys, const std::vector<Tensor>& xs,
                              const std::vector<Tensor>& grad_ys = {},
                              UnconnectedGradients unconnected = UnconnectedGradients::None,
                              CallSite where = CallSite::current());

// The same with respect to variables: every read of each variable in the graph.
std::vector<Tensor> gradients(const std::vector<Tensor>& ys, const std::vector<Variable>& xs,
                              const std::vector<Tensor>& grad_ys = {},
                              UnconnectedGradients unconnected = UnconnectedGradients::None,
                              CallSite where = CallSite::current());

}  // namespace ef
