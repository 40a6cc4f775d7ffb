// How check_gradients reaches graph mode (Note [graph-mode gradient checks]).
#pragma once

#include <functional>
#include <string>
#include <unordered_set>
#include <vector>

#include "eagerflow/runtime/op_def.h"

namespace ef::testing::detail {

// Note [graph-mode gradient checks]: check_gradients also differentiates f on a traced
// graph (placeholders for the inputs, gradients() nodes, one Session run) and expects
// the value and the gradients of both orders to equal the tape's, which it has just
// compared with central differences. The ops whose gradient functions built those
// graphs get the "graph mode" mark of docs/gradient_coverage.md. graph/ sits above
// autodiff, so it registers the graph side here when the library loads
// (src/graph/gradient_check_graph.cpp) instead of autodiff calling upwards.
struct GraphGradients {
  Tensor total;                             // sum(f(inputs))
  std::vector<Tensor> first, second;        // as check_gradients' tape computes them
  std::unordered_set<const OpDef*> first_order_ops, second_order_ops;  // gradient functions run
};
using GraphGradientsFn = GraphGradients (*)(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                                            const std::vector<Tensor>& inputs,
                                            const std::vector<Tensor>& directions, int order);
// Null until graph mode registers itself.
GraphGradientsFn& graph_gradients();

// Forward mode on a traced graph (Note [forward-mode checks]): f's tangent along the
// directions, built as graph nodes by a ForwardAccumulator around f's trace
// (placeholders for the inputs and the directions) and computed by one Session run.
struct GraphJvp {
  Tensor tangent;
  std::unordered_set<const OpDef*> rules;  // the jvp rules that built it
};
using GraphJvpFn = GraphJvp (*)(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                                const std::vector<Tensor>& inputs, const std::vector<Tensor>& directions);
// Null until graph mode registers itself.
GraphJvpFn& graph_jvp();

// Vectorization (Note [vectorization checks] in gradient_check.cpp): f, and the tape's
// gradient of sum(f), vectorized over a batch of inputs near `inputs` against the same
// computed one element at a time. `checked` is false when the check does not apply
// (f draws random numbers, or its elements' outputs differ in shape); `error` says
// what disagreed.
struct VectorizedCheck {
  bool checked = false;
  std::string error;
  std::unordered_set<const OpDef*> rules;  // the batching rules that ran
};
using GraphVectorizeCheckFn = VectorizedCheck (*)(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                                                  const std::vector<Tensor>& inputs);
// Null until graph mode registers itself.
GraphVectorizeCheckFn& graph_vectorize_check();

}  // namespace ef::testing::detail
