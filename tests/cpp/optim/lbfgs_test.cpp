// LBFGS: convergence, state across steps, outer tapes, errors. (Iterate-for-iterate
// agreement with torch.optim.LBFGS is tested in tests/python/test_lbfgs.py.)
#include "test_util.h"

namespace ef {
namespace {

using testing::expect_values;
using O = optim::LBFGSOptions;

// LBFGSOptions with some fields set: with(&LBFGSOptions::max_iter, 5, ...).
optim::LBFGSOptions with() { return {}; }
template <class T, class V, class... Rest>
optim::LBFGSOptions with(T optim::LBFGSOptions::*field, V value, Rest... rest) {
  optim::LBFGSOptions o = with(rest...);
  o.*field = static_cast<T>(value);
  return o;
}

// f(w) = sum_i c_i (w_i - i)^2 / 2 with condition number 100: minimum at w = (0, 1, ...).
Tensor quadratic(const Variable& w) {
  Tensor target = constant({0.0, 1.0, 2.0, 3.0});
  Tensor c = constant({1.0, 10.0, 50.0, 100.0});
  return reduce_sum(c * square(w - target)) * 0.5;
}

TEST(LBFGS, ConvergesOnAQuadratic) {
  for (std::string search : {"", "strong_wolfe"}) {
    Variable w(zeros({4}, DType::Float64), "w");
    optim::LBFGS lbfgs({w}, with(&O::max_iter, 100, &O::tolerance_grad, 1e-10, &O::tolerance_change, 0,
                                 &O::history_size, 5, &O::line_search_fn, search));
    Tensor first = lbfgs.step([&] { return quadratic(w); });
    EXPECT_DOUBLE_EQ(first.item<double>(), 0.5 * (10 + 200 + 900));  // the loss at the start
    expect_values(w.value(), {0, 1, 2, 3}, 1e-9);
    EXPECT_LE(lbfgs.history_length(), 5);
    EXPECT_GT(lbfgs.iterations(), 2);
    EXPECT_GE(lbfgs.function_evaluations(), lbfgs.iterations());
  }
}

TEST(LBFGS, SeveralVariablesAndFloat32) {
  // Two variables are optimised as one flat vector; one unused variable keeps its value.
  Variable a(fill({2, 2}, 1.0f, DType::Float32), "a"), b(fill({3}, -1.0f, DType::Float32), "b");
  Variable unused(fill({2}, 7.0f, DType::Float32), "unused");
  optim::LBFGS lbfgs({a, b, unused}, with(&O::max_iter, 50, &O::line_search_fn, "strong_wolfe"));
  auto loss = [&] { return reduce_sum(square(a - 2.0f)) + reduce_sum(square(b + 3.0f)) * 4.0f; };
  lbfgs.step(loss);
  expect_values(a.value(), {2, 2, 2, 2}, 1e-4);
  expect_values(b.value(), {-3, -3, -3}, 1e-4);
  expect_values(unused.value(), {7, 7});
}

TEST(LBFGS, StateCarriesAcrossSteps) {
  // max_iter = 1 per step, ten steps, equals ten iterations in one step (no line search:
  // each iteration evaluates once, the last one's evaluation happening in the next step).
  Variable w1(zeros({4}, DType::Float64), "w1"), w2(zeros({4}, DType::Float64), "w2");
  optim::LBFGS one_at_a_time(
      {w1}, with(&O::max_iter, 1, &O::tolerance_grad, 0, &O::tolerance_change, 0, &O::history_size, 3));
  optim::LBFGS all_at_once(
      {w2}, with(&O::max_iter, 10, &O::tolerance_grad, 0, &O::tolerance_change, 0, &O::history_size, 3));
  for (int i = 0; i < 10; ++i) one_at_a_time.step([&] { return quadratic(w1); });
  all_at_once.step([&] { return quadratic(w2); });
  EXPECT_EQ(one_at_a_time.iterations(), 10);
  EXPECT_EQ(all_at_once.iterations(), 10);
  EXPECT_EQ(one_at_a_time.history_length(), 3);
  EXPECT_EQ(one_at_a_time.function_evaluations(), 10);
  EXPECT_EQ(all_at_once.function_evaluations(), 10);
  std::vector<double> v1 = w1.value().to_vector<double>(), v2 = w2.value().to_vector<double>();
  for (size_t i = 0; i < v1.size(); ++i) EXPECT_DOUBLE_EQ(v1[i], v2[i]);
}

TEST(LBFGS, FirstStepIsScaledByTheGradientsL1Norm) {
  // No history yet: w moves by -g * min(1, 1/|g|_1) * lr.
  Variable w(constant({1.0, -2.0}), "w");
  optim::LBFGS lbfgs({w}, with(&O::learning_rate, 0.5, &O::max_iter, 1));
  lbfgs.step([&] { return reduce_sum(square(w)); });  // g = (2, -4), |g|_1 = 6
  expect_values(w.value(), {1 - 2 * 0.5 / 6, -2 + 4 * 0.5 / 6}, 1e-15);
}

TEST(LBFGS, StopsAtAnOptimum) {
  Variable w(constant({0.0, 0.0}), "w");
  optim::LBFGS lbfgs({w});
  lbfgs.step([&] { return reduce_sum(square(w)); });
  EXPECT_EQ(lbfgs.iterations(), 0);  // gradient 0 <= tolerance_grad: nothing to do
  EXPECT_EQ(lbfgs.function_evaluations(), 1);
  expect_values(w.value(), {0, 0});
}

TEST(LBFGS, OuterTapesDoNotRecordTheUpdates) {
  // Note [LBFGS and outer tapes]: a tape around step() sees no op of the update, so the
  // variable's new value is not connected to anything the tape watched.
  Variable w(constant({1.0, 2.0}), "w");
  Tensor x = constant(3.0);
  GradientTape outer(/*persistent=*/true);
  outer.watch(x);
  Tensor scaled = x * 2.0;
  optim::LBFGS lbfgs({w}, with(&O::max_iter, 3));
  lbfgs.step([&] { return reduce_sum(square(w - scaled)); });
  EXPECT_FALSE(outer.gradient(w.value() * 1.0, x).defined());
  // The outer tape still records afterwards.
  EXPECT_DOUBLE_EQ(outer.gradient(scaled * x, x).item<double>(), 12.0);
}

TEST(LBFGS, BadOptionsAndClosures) {
  Variable w(constant({1.0}), "w");
  EXPECT_ERROR(optim::LBFGS({}, {}), InvalidArgumentError, "at least one variable");
  EXPECT_ERROR(optim::LBFGS({w, w}), InvalidArgumentError, "listed twice");
  EXPECT_ERROR(optim::LBFGS({Variable(constant({1}), "i")}), InvalidArgumentError, "'i' has dtype int32");
  EXPECT_ERROR(optim::LBFGS({w, Variable(constant({1.0f}), "f")}), InvalidArgumentError, "one dtype");
  EXPECT_ERROR(optim::LBFGS({w}, with(&O::learning_rate, 0)), InvalidArgumentError, "learning_rate");
  EXPECT_ERROR(optim::LBFGS({w}, with(&O::max_iter, 0)), InvalidArgumentError,
               "max_iter must be >= 1, got 0");
  EXPECT_ERROR(optim::LBFGS({w}, with(&O::max_iter, 1, &O::max_eval, 0)), InvalidArgumentError, "max_eval");
  EXPECT_ERROR(optim::LBFGS({w}, with(&O::tolerance_grad, -1)), InvalidArgumentError, "tolerance_grad");
  EXPECT_ERROR(optim::LBFGS({w}, with(&O::tolerance_change, NAN)), InvalidArgumentError, "tolerance_change");
  EXPECT_ERROR(optim::LBFGS({w}, with(&O::history_size, 0)), InvalidArgumentError, "history_size");
  EXPECT_ERROR(optim::LBFGS({w}, with(&O::line_search_fn, "armijo")), InvalidArgumentError, "\"armijo\"");

  optim::LBFGS lbfgs({w});
  EXPECT_ERROR(lbfgs.step(nullptr), InvalidArgumentError, "closure is empty");
  EXPECT_ERROR(lbfgs.step([&] {
    return w * 2.0 + constant({1.0, 2.0});
  }),
               InvalidArgumentError, "one-element float tensor, got dtype float64 and shape");
  EXPECT_ERROR(lbfgs.step([&] { return Tensor(); }), InvalidArgumentError, "undefined");
  // Failed steps changed nothing.
  EXPECT_EQ(lbfgs.iterations(), 0);
  expect_values(w.value(), {1.0});
}

}  // namespace
}  // namespace ef
