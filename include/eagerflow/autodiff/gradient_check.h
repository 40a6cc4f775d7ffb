// check_gradients: compares the tape's gradients with float64 central differences,
// at first and second order. The test of every differentiable op uses it.
//
//   auto result = ef::testing::check_gradients(
//       [](const std::vector<ef::Tensor>& in) { return ef::tanh(in[0]) * in[1]; },
//       {ef::random::normal({3}, 0, 1, ef::DType::Float64, 1), ef::constant({1.0, 2.0, 3.0})});
//   EXPECT_TRUE(result.ok) << result.message;
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "eagerflow/core/tensor.h"

namespace ef::testing {

struct GradientCheckResult {
  bool ok = true;
  double max_error = 0;  // largest |tape - numeric| / (1 + |numeric|) seen
  std::string message;   // the worst mismatch, when !ok
};

// f maps the inputs to a tensor whose sum is differentiated. Inputs are converted to
// float64. Order 1 checks d(sum f)/d(input) for every input element; order 2 also
// checks the gradient of <tape gradient, v> (v a fixed random direction), computed by
// nesting tapes, against central differences of the tape gradient. Forward mode is
// checked too when every op f reaches has a jvp rule (Note [forward-mode checks] in
// gradient_check.cpp): f's tangent along v, and at order 2 the Hessian-vector product
// forward-over-reverse and reverse-over-forward.
GradientCheckResult check_gradients(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                                    const std::vector<Tensor>& inputs, int order = 2,
                                    double tolerance = 1e-6);

// The gradient coverage table of docs/gradient_coverage.md (Markdown): every registered
// op, whether it has a gradient (or why not), and whether check_gradients has verified
// its gradient function at first and at second order in this process.
std::string gradient_coverage_table();

// The ops with a jvp rule that no check_gradients call of this process has verified.
std::vector<std::string> unverified_jvp_rules();
// The same for batching rules (random ops aside, whose draws no loop repeats).
std::vector<std::string> unverified_batch_rules();

}  // namespace ef::testing
