// linearize: the JVP traced once with the primals as constants (see linearize.h).
#include "eagerflow/graph/linearize.h"

#include <memory>

#include "autodiff/tape_internal.h"
#include "eagerflow/autodiff/forward_accumulator.h"
#include "eagerflow/graph/function.h"

namespace ef {

Linearized linearize(const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& f,
                     const std::vector<Tensor>& primals) {
  for (size_t i = 0; i < primals.size(); ++i)
    if (!primals[i].defined() || !detail::is_differentiable(primals[i].dtype()))
      fail("linearize: primal ", i, " must be a float tensor, got ",
           primals[i].defined() ? std::string(name(primals[i].dtype())) : std::string("an undefined tensor"));
  Linearized result;
  result.outputs = f(primals);
  for (size_t k = 0; k < result.outputs.size(); ++k)
    if (!result.outputs[k].defined() || !detail::is_differentiable(result.outputs[k].dtype()))
      fail("linearize: output ", k, " of f is not a float tensor, so it has no tangent");
  auto traced = std::make_shared<Function>(
      [f, primals](const std::vector<Tensor>& tangents) {
        ForwardAccumulator acc(primals, tangents);
        return acc.jvp(f(primals), UnconnectedGradients::Zero);
      },
      "linearize");
  result.jvp = [traced, n = primals.size()](const std::vector<Tensor>& tangents) {
    if (tangents.size() != n) fail("linearize: ", tangents.size(), " tangents for ", n, " primals");
    return (*traced)(tangents);
  };
  return result;
}

}  // namespace ef
