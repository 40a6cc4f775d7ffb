// vectorized_map and vmap: run a function written for one example on a whole batch at
// once, as TensorFlow's tf.vectorized_map and JAX's vmap do.
//
//   // Per-example gradients of a loss, in one vectorized pass instead of a loop:
//   auto per_example = ef::vmap([&](const std::vector<ef::Tensor>& a) {
//     ef::GradientTape tape;
//     tape.watch(w);
//     ef::Tensor loss = ef::reduce_sum(ef::square(ef::matmul(a[0], w) - a[1]));
//     return std::vector<ef::Tensor>{tape.gradient(loss, {w})[0]};
//   }, {0, 0});
//   ef::Tensor grads = per_example({xs, ys})[0];   // [batch, ...w's shape]
//
// Note [vectorization]: f is traced once into a graph on one element's dtypes and
// shapes (the batched arguments without their batch axis); the graph is then run
// node by node, in order, on batched values. A node whose inputs are all the same for
// every element runs once, as it is. A node with a batched input runs its op's batching
// rule (OpDef::batch): the op again, on inputs that carry the batch as their first
// axis, with its attributes adjusted (an axis shifted past the batch, a shape with the
// batch in front), so the batch costs one kernel call instead of one per element. An op
// without a rule, or whose rule declines the combination, runs once per element and the
// results are stacked (the loop vectorized_map replaces); each such op is reported once
// per process on stderr, and fallback_to_loop = false makes it an error instead. Random
// ops draw independent numbers for every element.
//
// The nodes run through the ordinary dispatch, so everything composes: tapes around a
// vectorized call record its ops (gradients of vmap), tapes inside f are traced with it
// (vmap of gradients: per-example gradients), forward accumulators see the ops, and
// inside ef::function the whole computation becomes part of the traced graph.
//
// What tracing implies (as for ef::function): C++ side effects happen once per call, not
// per element; converting a traced value to bool throws (use ef::cond, which is
// vectorized too: a batched predicate runs each element's branch). f may read
// variables; an assignment throws UnimplementedError, since a loop would assign once
// per element, in order. Ops run for their effect (print) run once when nothing they
// read differs by element.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "eagerflow/core/tensor.h"
#include "eagerflow/runtime/context.h"

namespace ef {

using VectorizableFunction = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// Stacks f(element) over the elements of `elems` (each unstacked along its first axis;
// all with the same first dimension, the batch). f gets one tensor per entry of elems,
// without the batch axis; each output of the result has the batch first.
std::vector<Tensor> vectorized_map(const VectorizableFunction& f, const std::vector<Tensor>& elems,
                                   bool fallback_to_loop = true, CallSite where = CallSite::current());
Tensor vectorized_map(const std::function<Tensor(const Tensor&)>& f, const Tensor& elems,
                      bool fallback_to_loop = true, CallSite where = CallSite::current());

// JAX's vmap: the function mapping batched arguments to batched results. in_axes holds,
// per argument, the axis that carries the batch (negative from the end), or nullopt
// for an argument passed whole to every element; empty: axis 0 of every argument.
// out_axes, per output, where the result's batch goes; empty: axis 0.
VectorizableFunction vmap(VectorizableFunction f, std::vector<std::optional<int64_t>> in_axes = {},
                          std::vector<int64_t> out_axes = {});

// The Hessian of sum(f(xs)) with respect to each x, shaped x.shape + x.shape
// (TensorFlow's tf.hessians: the gradient's Jacobian, computed as one vectorized
// backward pass instead of one per element).
std::vector<Tensor> hessians(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                             const std::vector<Tensor>& xs);

namespace detail {
// The op names that ran once per element in this process (for tests).
std::vector<std::string> vectorized_map_loop_ops();
}  // namespace detail

}  // namespace ef
