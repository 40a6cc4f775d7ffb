// linearize: a function's value at a point and its Jacobian-vector product there, as a
// traced linear function (JAX's jax.linearize).
//
//   auto sine = [](const std::vector<ef::Tensor>& a) { return std::vector{ef::sin(a[0])}; };
//   ef::Linearized l = ef::linearize(sine, {x});   // l.outputs: {sin(x)}
//   l.jvp({v});                                     // {cos(x) * v}, without sin or cos again
//
// The JVP is traced once into a graph (a ForwardAccumulator around f, the primals
// captured as constants, the tangents as placeholders); the graph optimizer folds
// everything that depends on the primals alone, so each call does only the linear part.
#pragma once

#include <functional>
#include <vector>

#include "eagerflow/core/tensor.h"

namespace ef {

struct Linearized {
  std::vector<Tensor> outputs;  // f(primals)
  // tangents (one per primal, of its dtype and shape) -> the outputs' tangents
  std::function<std::vector<Tensor>(const std::vector<Tensor>&)> jvp;
};

// f's outputs at `primals` and its linearization there. Throws InvalidArgumentError for a
// primal that is not a float tensor or an output that is not one, and UnimplementedError
// when f uses an op without a forward-mode rule, or when the JVP would need a random op,
// a state change or a read of a variable f assigns (it stays at the point where
// linearize ran f: variables it reads keep those values, and f's assignments run once).
Linearized linearize(const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& f,
                     const std::vector<Tensor>& primals);

}  // namespace ef
