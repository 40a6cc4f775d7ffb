// The strong-Wolfe line search of torch.optim.LBFGS (a port of torch7's lswolfe.lua),
// internal to LBFGS.
#pragma once

#include <functional>

#include "eagerflow/core/tensor.h"

namespace ef::optim::detail {

// The loss and flattened gradient at x + t * d, for a step length t.
struct DirectionalValue {
  double loss;
  Tensor flat_grad;
};
using DirectionalEvaluate = std::function<DirectionalValue(double t)>;

struct LineSearchResult {
  double loss;
  Tensor flat_grad;
  double t;
  int64_t evaluations;
};

// Finds a step t along the descent direction d from x (loss f, gradient g, directional
// derivative gtd = gᵀd < 0) satisfying the strong Wolfe conditions
//   f(x + t d) <= f + c1 t gtd  and  |∇f(x + t d)ᵀ d| <= -c2 gtd,
// by bracketing then zooming with cubic interpolation; at most max_ls evaluations.
LineSearchResult strong_wolfe(const DirectionalEvaluate& evaluate, double t, const Tensor& d, double f,
                              const Tensor& g, double gtd, double c1 = 1e-4, double c2 = 0.9,
                              double tolerance_change = 1e-9, int max_ls = 25);

// aᵀb of two equal-length vectors, as a double.
double dot(const Tensor& a, const Tensor& b);
// max |x_i|.
double max_abs(const Tensor& x);

}  // namespace ef::optim::detail
