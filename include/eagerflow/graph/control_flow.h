// Control flow that depends on tensor values: cond and while_loop. Eagerly they are an
// `if` and a `while` (a tape records the ops that ran); while a graph is built (graph
// mode, `function` tracing) they become one node whose branches or body are traced
// into sub-graphs, so only the taken branch runs and the loop runs as many times as
// its condition says when the graph runs.
//
//   ef::Tensor y = ef::cond(x > 0.f, [&] { return x * 2.f; }, [&] { return -x; });
//   auto [i, acc] = ef::while_loop([](auto& v) { return v[0] < 10; },
//                                  [](auto& v) { return std::vector{v[0] + 1, v[1] * 2.f}; },
//                                  {ef::constant(0), ef::constant(1.f)});
//
// Note [control flow sub-graphs]: a branch or loop body is traced once into its own
// graph, whose placeholders are the loop variables plus every tensor of an enclosing
// graph it uses (its captures, which become inputs of the node). Both branches of a
// cond must return the same number of tensors with the same dtypes; where their shapes
// differ the node's shape has unknown dimensions. A loop body must return tensors of
// its variables' dtypes and shapes. Gradients: eagerly the tape records what ran; in
// graphs (and so through `function` calls) both are differentiable to any order: a
// cond's gradient is a cond of the branches' gradients, a while_loop's is a backward
// while_loop over the loop variables' values stacked per iteration (Note [while_loop
// gradients] in src/graph/while_gradient.cpp). A graph loop's gradient needs each loop
// variable to keep one shape across iterations and a body without variable
// assignments or random ops; integer loop variables and captures get none. Variables
// read (and not assigned) inside get gradients too.
#pragma once

#include <functional>
#include <vector>

#include "eagerflow/core/tensor.h"

namespace ef {

using Branch = std::function<std::vector<Tensor>()>;
using LoopCondition = std::function<Tensor(const std::vector<Tensor>&)>;
using LoopBody = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// true_fn() when the scalar bool `pred` is true, else false_fn().
std::vector<Tensor> cond(const Tensor& pred, const Branch& true_fn, const Branch& false_fn,
                         CallSite where = CallSite::current());
Tensor cond(const Tensor& pred, const std::function<Tensor()>& true_fn, const std::function<Tensor()>& false_fn,
            CallSite where = CallSite::current());

// Repeats loop_vars = body(loop_vars) while condition(loop_vars) (a scalar bool) holds,
// and returns the final loop_vars. `maximum_iterations` (if >= 0) stops it earlier.
std::vector<Tensor> while_loop(const LoopCondition& condition, const LoopBody& body, std::vector<Tensor> loop_vars,
                               int64_t maximum_iterations = -1, CallSite where = CallSite::current());

}  // namespace ef
