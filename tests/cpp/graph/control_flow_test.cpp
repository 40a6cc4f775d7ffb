// cond and while_loop: eagerly, traced in functions and graphs, their gradients, and
// their errors.
#include "test_util.h"

namespace ef {
namespace {

using testing::expect_values;

// The Collatz sequence's length from n: the announcement seed's dynamic program.
std::vector<Tensor> collatz(const Tensor& n) {
  return while_loop([](const std::vector<Tensor>& v) { return v[0] > 1; },
                    [](const std::vector<Tensor>& v) {
                      Tensor next = cond(equal(floormod(v[0], 2), 0), [&] { return floordiv(v[0], 2); },
                                         [&] { return v[0] * 3 + 1; });
                      return std::vector<Tensor>{next, v[1] + 1};
                    },
                    {n, constant(0)});
}

TEST(ControlFlow, EagerCondAndWhileLoop) {
  expect_values(cond(constant(true), [] { return constant(1.f); }, [] { return constant(2.f); }), {1});
  expect_values(cond(constant(false), [] { return constant(1.f); }, [] { return constant(2.f); }), {2});
  EXPECT_EQ(collatz(constant(27))[1].item<int>(), 111);
  // maximum_iterations stops the loop early.
  auto counted = while_loop([](const std::vector<Tensor>&) { return constant(true); },
                            [](const std::vector<Tensor>& v) { return std::vector<Tensor>{v[0] + 1}; },
                            {constant(0)}, 5);
  EXPECT_EQ(counted[0].item<int>(), 5);
}

TEST(ControlFlow, EagerGradientsFollowTheBranchTaken) {
  const Tensor x = constant(3.0);
  GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  Tensor y = cond(x > 0.0, [&] { return x * x; }, [&] { return -3.0 * x; });
  Tensor z = while_loop([](const std::vector<Tensor>& v) { return v[1] < 3; },
                        [](const std::vector<Tensor>& v) { return std::vector<Tensor>{v[0] * v[0], v[1] + 1}; },
                        {x, constant(0)})[0];  // x^8
  expect_values(tape.gradient(y, x), {6}, 1e-12);
  expect_values(tape.gradient(z, x), {8 * std::pow(3.0, 7)}, 1e-9);
}

TEST(ControlFlow, TracedCollatzRunsTheLoopWhenCalled) {
  auto steps = function([](Tensor n) { return collatz(n)[1]; });
  EXPECT_EQ(steps(constant(27)).item<int>(), 111);
  EXPECT_EQ(steps(constant(6)).item<int>(), 8);
  EXPECT_EQ(steps(constant(1)).item<int>(), 0);
  EXPECT_EQ(steps.trace_count(), 1);
}

TEST(ControlFlow, OnlyTheTakenBranchRuns) {
  Variable taken_true(constant(0), "taken_true", false), taken_false(constant(0), "taken_false", false);
  auto f = function([&](Tensor x) {
    return cond(reduce_sum(x) > 0.f,
                [&] {
                  taken_true.assign_add(constant(1));
                  return x * 2.f;
                },
                [&] {
                  taken_false.assign_add(constant(1));
                  return -x;
                });
  });
  expect_values(f(constant({1.f, 2.f})), {2, 4});
  expect_values(f(constant({-1.f, -2.f})), {1, 2});
  expect_values(f(constant({3.f, 0.f})), {6, 0});
  EXPECT_EQ(taken_true.value().item<int>(), 2);
  EXPECT_EQ(taken_false.value().item<int>(), 1);
  EXPECT_EQ(f.trace_count(), 1);
}

// A cond run only for its assignments (its outputs unused) still runs on every call:
// once such a cond was pruned as dead code and the assignments silently never happened.
TEST(ControlFlow, ACondThatOnlyAssignsRunsOnEveryCall) {
  Variable positives(constant(0), "positives", false);
  auto f = function([&](Tensor x) {
    cond(
        reduce_sum(x) > 0.f,
        [&] {
          positives.assign_add(constant(1));
          return constant(0);
        },
        [&] { return constant(0); });
    return x * 2.f;
  });
  f(constant({1.f}));
  f(constant({-1.f}));
  f(constant({2.f}));
  EXPECT_EQ(positives.value().item<int>(), 2);
  EXPECT_EQ(f.trace_count(), 1);
}

TEST(ControlFlow, BranchesWithDifferentShapesGiveUnknownDimensions) {
  Graph g;
  Graph::Scope scope(g);
  Tensor p = placeholder(DType::Bool, {}, "p");
  Tensor y = cond(p, [] { return ones({2, 3}); }, [] { return ones({4, 3}); });
  EXPECT_EQ(y.shape(), (Shape{kUnknownDim, 3}));
}

TEST(ControlFlow, GradientsOfCondInFunctionsToSecondOrder) {
  auto f = function([](Tensor x) { return cond(x > 0.0, [&] { return x * x * x; }, [&] { return -3.0 * x; }); });
  for (double v : {2.0, -1.5}) {
    const Tensor x = constant(v);
    GradientTape outer;
    outer.watch(x);
    GradientTape inner;
    inner.watch(x);
    Tensor y = f(x);
    Tensor dy = inner.gradient(y, x);
    Tensor d2y = outer.gradient(dy, x);
    expect_values(dy, {v > 0 ? 3 * v * v : -3.0}, 1e-12);
    if (v > 0) expect_values(d2y, {6 * v}, 1e-12);
    else EXPECT_TRUE(!d2y.defined() || d2y.item<double>() == 0.0);  // -3x is linear
  }
}

// A tape inside a traced function sees cond and while_loop nodes (they are built, not
// dispatched); it used to give None through them.
TEST(ControlFlow, TapeInsideAFunctionDifferentiatesCondAndWhileLoop) {
  auto through_cond = function([](Tensor x) {
    GradientTape tape;
    tape.watch(x);
    Tensor y = cond(
        x > 0.0, [&] { return x * x * x; }, [&] { return x; });
    return tape.gradient(y, x);
  });
  auto through_loop = function([](Tensor x) {
    GradientTape tape;
    tape.watch(x);
    Tensor y = while_loop([](const std::vector<Tensor>& v) { return v[0] < 3; },
                          [&](const std::vector<Tensor>& v) {
                            return std::vector<Tensor>{v[0] + 1, v[1] * x};
                          },
                          {constant(0), constant(1.0)})[1];
    return tape.gradient(y, x);
  });
  const Tensor x = constant(1.5);
  EXPECT_DOUBLE_EQ(through_cond(x).item<double>(), 3 * 1.5 * 1.5);
  EXPECT_DOUBLE_EQ(through_loop(x).item<double>(), 3 * 1.5 * 1.5);
}

// Forward mode inside a traced function: a cond's tangent comes from its gradient; a
// loop's is refused rather than given as zero.
TEST(ControlFlow, ForwardModeInsideAFunction) {
  auto through_cond = function([](Tensor x) {
    ForwardAccumulator acc(x, ones_like(x));
    Tensor y = cond(
        x > 0.0, [&] { return sin(x) * x; }, [&] { return x; });
    return acc.jvp(y);
  });
  EXPECT_NEAR(through_cond(constant(0.7)).item<double>(), std::cos(0.7) * 0.7 + std::sin(0.7), 1e-15);
  EXPECT_DOUBLE_EQ(through_cond(constant(-0.7)).item<double>(), 1.0);
  auto through_loop = function([](Tensor x) {
    ForwardAccumulator acc(x, ones_like(x));
    Tensor y = while_loop([](const std::vector<Tensor>& v) { return v[0] < 3; },
                          [&](const std::vector<Tensor>& v) {
                            return std::vector<Tensor>{v[0] + 1, v[1] * x};
                          },
                          {constant(0), constant(1.0)})[1];
    return acc.jvp(y);
  });
  EXPECT_ERROR(through_loop(constant(1.5)), UnimplementedError, "while_loop", "forward-mode");
}

TEST(ControlFlow, SymbolicGradientsThroughCondCaptures) {
  Graph g;
  Tensor x, w, dx, dw;
  {
    Graph::Scope scope(g);
    x = placeholder(DType::Float64, {2}, "x");
    w = placeholder(DType::Float64, {2}, "w");
    Tensor y = reduce_sum(cond(reduce_sum(x) > 0.0, [&] { return x * w; }, [&] { return sin(x); }));
    std::vector<Tensor> grads = gradients({y}, {x, w});
    dx = grads[0];
    dw = grads[1];
  }
  Session sess(g);
  const Tensor xv = constant({1.0, 2.0}), wv = constant({3.0, -4.0});
  std::vector<Tensor> pos = sess.run({dx, dw}, {{x, xv}, {w, wv}});
  expect_values(pos[0], {3, -4}, 1e-12);
  expect_values(pos[1], {1, 2}, 1e-12);
  const Tensor xn = constant({-1.0, -2.0});
  std::vector<Tensor> neg = sess.run({dx, dw}, {{x, xn}, {w, wv}});
  expect_values(neg[0], cos(xn).to_vector<double>(), 1e-12);
  expect_values(neg[1], {0, 0}, 1e-12);
}

TEST(ControlFlow, NestedControlFlowCapturesFromEnclosingGraphs) {
  auto f = function([](Tensor x, Tensor limit) {
    return while_loop([&](const std::vector<Tensor>& v) { return v[0] < limit; },  // captures `limit`
                      [&](const std::vector<Tensor>& v) {
                        // captures `x` from two graphs up
                        return std::vector<Tensor>{cond(v[0] > 2.f, [&] { return v[0] + x; }, [&] { return v[0] + 1.f; })};
                      },
                      {constant(0.f)})[0];
  });
  expect_values(f(constant(10.f), constant(20.f)), {23});  // 0,1,2,3,13,23
}

TEST(ControlFlow, GradientThroughAVariableReadAndAssignedInsideCondIsRefused) {
  // The read inside the branch stays there (the branch assigns the variable), where no
  // gradient reaches it: a silent zero would be wrong, so asking for it raises.
  Variable v(constant(2.0), "v");
  auto read_and_assign = function([&](Tensor x) {
    return cond(
        x > 0.0,
        [&] {
          Tensor y = v * x;
          v.assign(y);
          return y;
        },
        [&] { return x; });
  });
  GradientTape tape;
  Tensor y = read_and_assign(constant(3.0));
  EXPECT_ERROR(tape.gradient(y, v), UnimplementedError, "variable 'v'", "both read and assigned inside cond");

  // A variable only read inside is hoisted out of the cond: its gradient flows.
  Variable w(constant(2.0), "w");
  auto read_only = function([&](Tensor x) {
    return cond(
        x > 0.0, [&] { return w * x; }, [&] { return x; });
  });
  GradientTape tape2;
  EXPECT_EQ(tape2.gradient(read_only(constant(3.0)), w).item<double>(), 3.0);
}

TEST(ControlFlow, CondGradientsThatWouldReplayStatefulNodesAreRefused) {
  // A cond's gradient replays the branch that ran. A random op there drew other numbers
  // (dy/dx of x * uniform() was y/x of the previous call), and an assignment happened a
  // second time (a counter went to 2 after one call, and the gradient read the value
  // it assigned again).
  auto noisy = function([](Tensor x) {
    return cond(
        x > 0.0, [&] { return x * random::uniform({}, 0, 1, DType::Float64); }, [&] { return x; });
  });
  const Tensor x = constant(3.0);
  GradientTape tape;
  tape.watch(x);
  const Tensor y = noisy(x);
  EXPECT_ERROR(tape.gradient(y, x), UnimplementedError, "cond", "true branch", "'random_uniform'",
               "random op");

  Variable counter(constant(0.0), "counter", /*trainable=*/false);
  auto counting = function([&](Tensor x) {
    return cond(
        x > 0.0,
        [&] {
          counter.assign_add(constant(1.0));
          return x * x;
        },
        [&] { return x; });
  });
  GradientTape tape2;
  tape2.watch(x);
  const Tensor z = counting(x);
  EXPECT_ERROR(tape2.gradient(z, x), UnimplementedError, "cond", "'assign_counter'", "second time");
  EXPECT_EQ(counter.value().item<double>(), 1.0);

  // Stateless random ops repeat: their conds still differentiate.
  auto fixed = function([](Tensor x) {
    return cond(
        x > 0.0,
        [&] {
          return x * random::stateless_uniform({}, {1, 2}, 0, 1, DType::Float64);
        },
        [&] { return x; });
  });
  GradientTape tape3;
  tape3.watch(x);
  const Tensor u = fixed(x);
  EXPECT_NEAR(tape3.gradient(u, x).item<double>(), u.item<double>() / 3.0, 1e-12);
}

TEST(ControlFlow, Errors) {
  EXPECT_ERROR(cond(constant(1.f), [] { return constant(1.f); }, [] { return constant(2.f); }), InvalidArgumentError,
               "cond", "'pred'", "bool");
  auto mismatched = function([](Tensor x) { return cond(x > 0.f, [&] { return x; }, [&] { return cast(x, DType::Float64); }); });
  EXPECT_ERROR(mismatched(constant(1.f)), InvalidArgumentError, "cond", "output 0", "float32", "float64");
  auto growing = function([](Tensor x) {
    return while_loop([](const std::vector<Tensor>& v) { return reduce_sum(v[0]) < 10.f; },
                      [](const std::vector<Tensor>& v) { return std::vector<Tensor>{concat({v[0], v[0]}, 0)}; }, {x})[0];
  });
  EXPECT_ERROR(growing(constant({1.f})), InvalidArgumentError, "while_loop", "loop variable 0", "float32[1]",
               "float32[2]");
  auto loop = function([](Tensor x) {
    return while_loop([](const std::vector<Tensor>& v) { return v[1] < 3; },
                      [](const std::vector<Tensor>& v) { return std::vector<Tensor>{v[0] * v[0], v[1] + 1}; },
                      {x, constant(0)})[0];
  });
  const Tensor x = constant(2.0);
  GradientTape tape;
  tape.watch(x);
  Tensor y = loop(x);
  expect_values(y, {256});
  expect_values(tape.gradient(y, x), {8 * 128});  // differentiable (while_gradient_test.cpp)
}

}  // namespace
}  // namespace ef
