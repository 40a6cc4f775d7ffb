// Gradients through while_loop nodes of graphs and functions (Note [while_loop
// gradients]): against the eager tape, against float64 finite differences at first and
// second order, in graph mode with gradients(), and the errors.
#include "test_util.h"

namespace ef {
namespace {

using testing::expect_gradients;
using testing::expect_values;
using testing::rand64;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;
using Vars = std::vector<Tensor>;

// x * w repeated while the counter is below n (a data-dependent iteration count).
Vars power_loop(const Tensor& x, const Tensor& w, const Tensor& n, int64_t maximum_iterations = -1) {
  return while_loop([&](const Vars& v) { return v[0] < n; },
                    [&](const Vars& v) {
                      return Vars{v[0] + 1, v[1] * w};
                    },
                    {constant(0), x}, maximum_iterations);
}

// The gradients of sum(f(inputs)) by a tape (zeros where f does not depend on one).
Vars tape_gradients(const Fn& f, const Vars& inputs) {
  GradientTape tape;
  for (const Tensor& x : inputs) tape.watch(x);
  const Tensor y = reduce_sum(f(inputs));
  Vars grads = tape.gradient(y, inputs);
  for (size_t i = 0; i < grads.size(); ++i)
    if (!grads[i].defined()) grads[i] = zeros_like(inputs[i]);
  return grads;
}

// f traced into a function (its while_loop becomes a graph node): the tape's gradients
// through a call equal the eager tape's, and pass check_gradients at first and second
// order. Returns the traced function's gradients.
Vars expect_traced_gradients(const Fn& f, const Vars& inputs) {
  Function traced([f](const Vars& in) { return Vars{f(in)}; }, "traced");
  const Fn call = [traced](const Vars& in) { return traced(in)[0]; };
  const Vars eager = tape_gradients(f, inputs);
  const Vars graphed = tape_gradients(call, inputs);
  for (size_t i = 0; i < inputs.size(); ++i) expect_values(graphed[i], eager[i].to_vector<double>(), 1e-10);
  expect_gradients(call, inputs);
  return graphed;
}

TEST(WhileGradient, LoopMultiplyingByACapturedTensor) {
  const Tensor x = rand64({3}, 1), w = rand64({3}, 2, 0.5, 1.5);
  const Vars g = expect_traced_gradients(
      [](const Vars& in) { return power_loop(in[0], in[1], constant(4))[1]; }, {x, w});
  // d/dx sum(x w^4) = w^4, d/dw = 4 x w^3.
  expect_values(g[0], pow(w, 4.0).to_vector<double>(), 1e-12);
  expect_values(g[1], (4.0 * x * pow(w, 3.0)).to_vector<double>(), 1e-12);
}

TEST(WhileGradient, DataDependentIterationCount) {
  // Doubles x until its norm passes a threshold: how often depends on x's value.
  const Fn f = [](const Vars& in) {
    const Tensor w = in[1];
    return while_loop([](const Vars& v) { return reduce_sum(v[0] * v[0]) < 50.0; },
                      [&](const Vars& v) { return Vars{v[0] * 2.0 + sin(w) * v[0]}; }, {in[0]})[0];
  };
  expect_traced_gradients(f, {constant({0.3, -0.2}), constant({0.1, 0.4})});
  expect_traced_gradients(f, {constant({3.0, 2.0}), constant({0.7, 0.4})});
}

TEST(WhileGradient, SeveralLoopVariablesWithAnIntegerCounter) {
  const Fn f = [](const Vars& in) {
    const Tensor c = in[2];
    const Vars out = while_loop(
        [](const Vars& v) { return v[0] < 3; },
        [&](const Vars& v) {
          return Vars{v[0] + 1, v[1] * v[2] + sin(v[2]) * c, v[2] * 0.5 + v[1] * cast(v[0], DType::Float64)};
        },
        {constant(0), in[0], in[1]});
    return out[1] + 2.0 * out[2];
  };
  expect_traced_gradients(f, {rand64({2}, 3), rand64({2}, 4), rand64({2}, 5)});
}

TEST(WhileGradient, ZeroIterationsPassTheGradientThrough) {
  const Vars g =
      expect_traced_gradients([](const Vars& in) { return power_loop(in[0], in[1], constant(0))[1] * 3.0; },
                              {rand64({2}, 6), rand64({2}, 7)});
  expect_values(g[0], {3, 3}, 1e-12);
  expect_values(g[1], {0, 0}, 1e-12);
}

TEST(WhileGradient, MaximumIterationsIsRespected) {
  // The condition alone would run 10 times; maximum_iterations stops it after 2.
  const Tensor x = rand64({3}, 8), w = rand64({3}, 9, 0.5, 1.5);
  const Vars g = expect_traced_gradients(
      [](const Vars& in) { return power_loop(in[0], in[1], constant(10), 2)[1]; }, {x, w});
  expect_values(g[0], (w * w).to_vector<double>(), 1e-12);
  expect_values(g[1], (2.0 * x * w).to_vector<double>(), 1e-12);
}

TEST(WhileGradient, WhileInsideCondAndCondInsideWhile) {
  const Fn while_in_cond = [](const Vars& in) {
    const Tensor x = in[0], w = in[1];
    return cond(
        reduce_sum(x) > 0.0, [&] { return power_loop(x, w, constant(3))[1]; }, [&] { return x * w; });
  };
  expect_traced_gradients(while_in_cond, {constant({0.5, 0.2}), rand64({2}, 10)});
  expect_traced_gradients(while_in_cond, {constant({-0.5, 0.2}), rand64({2}, 11)});
  const Fn cond_in_while = [](const Vars& in) {
    const Tensor w = in[1];
    return while_loop([](const Vars& v) { return v[0] < 4; },
                      [&](const Vars& v) {
                        Tensor next = cond(
                            reduce_sum(v[1]) > 0.0, [&] { return v[1] * w; }, [&] { return sin(v[1]) + w; });
                        return Vars{v[0] + 1, next};
                      },
                      {constant(0), in[0]})[1];
  };
  expect_traced_gradients(cond_in_while, {constant({0.5, 0.2}), rand64({2}, 12)});
  expect_traced_gradients(cond_in_while, {constant({-0.5, -0.2}), rand64({2}, 13)});
}

TEST(WhileGradient, NestedWhileLoops) {
  const Fn f = [](const Vars& in) {
    const Tensor w = in[1];
    return while_loop([](const Vars& v) { return v[0] < 2; },
                      [&](const Vars& v) {
                        return Vars{v[0] + 1, power_loop(v[1], w, v[0] + 2)[1] + w};
                      },
                      {constant(0), in[0]})[1];
  };
  expect_traced_gradients(f, {rand64({2}, 14), rand64({2}, 15, 0.5, 1.0)});
}

TEST(WhileGradient, SymbolicGradientsInGraphMode) {
  Graph g;
  Tensor x, w, n, y, dx, dw, ddx, dddw;
  {
    Graph::Scope scope(g);
    x = placeholder(DType::Float64, {kUnknownDim}, "x");
    w = placeholder(DType::Float64, {kUnknownDim}, "w");
    n = placeholder(DType::Int32, {}, "n");
    y = reduce_sum(power_loop(x, w, n)[1]);
    const Vars grads = gradients({y}, {x, w});
    dx = grads[0];
    dw = grads[1];
    // Second order: d/dx sum(dw) = d/dx sum(n x w^(n-1)) = n w^(n-1).
    ddx = gradients({reduce_sum(dw)}, {x})[0];
    // Third order: d/dw sum(n w^(n-1)) = n (n-1) w^(n-2).
    dddw = gradients({reduce_sum(ddx)}, {w})[0];
  }
  // The gradient runs an accumulating copy of the loop (Note [while_loop gradients]).
  EXPECT_THAT(g.to_string(), ::testing::HasSubstr("= while accumulating("));
  Session sess(g);
  const Tensor xv = constant({1.5, -2.0, 0.5}), wv = constant({0.5, 2.0, -1.0});
  for (int iterations : {0, 1, 3}) {
    const Vars got = sess.run({y, dx, dw, ddx, dddw}, {{x, xv}, {w, wv}, {n, constant(iterations)}});
    const double k = iterations;
    expect_values(got[0], {reduce_sum(xv * pow(wv, k)).item<double>()}, 1e-12);
    expect_values(got[1], pow(wv, k).to_vector<double>(), 1e-12);
    expect_values(got[2], (k * xv * pow(wv, k - 1)).to_vector<double>(), 1e-12);
    expect_values(got[3], (k * pow(wv, k - 1)).to_vector<double>(), 1e-12);
    expect_values(got[4], (k * (k - 1) * pow(wv, k - 2)).to_vector<double>(), 1e-12);
  }
}

TEST(WhileGradient, FunctionUnderNestedTapes) {
  auto cube = function([](Tensor x) {
    return while_loop([](const Vars& v) { return v[0] < 3; },
                      [&](const Vars& v) {
                        return Vars{v[0] + 1, v[1] * x};
                      },
                      {constant(0), ones_like(x)})[1];
  });
  const Tensor x = constant(1.5);
  GradientTape outer;
  outer.watch(x);
  GradientTape inner;
  inner.watch(x);
  const Tensor y = cube(x);
  const Tensor dy = inner.gradient(y, x);
  const Tensor d2y = outer.gradient(dy, x);
  expect_values(y, {3.375}, 1e-12);
  expect_values(dy, {3 * 1.5 * 1.5}, 1e-12);
  expect_values(d2y, {6 * 1.5}, 1e-12);
  EXPECT_EQ(cube.trace_count(), 1);
}

TEST(WhileGradient, VariablesReadInsideTheLoop) {
  // Reads of variables the loop never assigns see the value at the loop's start
  // (Note [variable reads in control flow]), so the tape's gradient reaches them.
  Variable w(constant({0.5, 1.5}), "w"), b(constant({0.1, -0.2}), "b");
  const auto loop = [&](const Tensor& x) {
    return while_loop([](const Vars& v) { return v[0] < 3; },
                      [&](const Vars& v) {
                        Tensor next = cond(
                            reduce_sum(v[1]) > 0.0, [&] { return tanh(v[1] * w.value() + b.value()); },
                            [&] { return v[1] * w.value(); });
                        return Vars{v[0] + 1, next};
                      },
                      {constant(0), x})[1];
  };
  auto traced = function(loop);
  const std::vector<Variable> vars{w, b};
  for (const Tensor& x : {constant({0.3, 0.4}), constant({-0.3, -0.4})}) {
    GradientTape eager_tape, traced_tape;
    const Vars eager = eager_tape.gradient(reduce_sum(loop(x)), vars);
    const Vars graphed = traced_tape.gradient(reduce_sum(traced(x)), vars);
    ASSERT_TRUE(graphed[0].defined());
    expect_values(graphed[0], eager[0].to_vector<double>(), 1e-12);
    // b is read in one branch only: no gradient eagerly, zeros or none through the cond node.
    const Tensor want_b = eager[1].defined() ? eager[1] : zeros_like(b.value());
    expect_values(graphed[1].defined() ? graphed[1] : zeros_like(b.value()), want_b.to_vector<double>(),
                  1e-12);
  }

  // A variable the body assigns is read inside, in every iteration.
  Variable acc(constant(1.0), "acc");
  auto doubling = function([&](Tensor n) {
    return while_loop([&](const Vars& v) { return v[0] < n; },
                      [&](const Vars& v) {
                        acc.assign(acc.value() * 2.0);
                        return Vars{v[0] + 1, v[1] + acc.value()};
                      },
                      {constant(0), constant(0.0)})[1];
  });
  expect_values(doubling(constant(3)), {2 + 4 + 8});
  expect_values(acc.value(), {8});
}

TEST(WhileGradient, Errors) {
  // A loop variable that grows: fine to run, but its gradient needs one shape per variable.
  auto growing = function(
      [](Tensor x) {
        return while_loop([](const Vars& v) { return reduce_sum(v[0]) < 6.0; },
                          [](const Vars& v) {
                            return Vars{concat({v[0], constant({1.0})}, 0)};
                          },
                          {x})[0];
      },
      "growing", std::vector<TensorSpec>{{DType::Float64, Shape{kUnknownDim}, "x"}});
  const Tensor x = constant({1.0, 2.0});
  expect_values(growing(x), {1, 2, 1, 1, 1});
  GradientTape tape;
  tape.watch(x);
  const Tensor y = reduce_sum(growing(x));
  EXPECT_ERROR(tape.gradient(y, x), InvalidArgumentError, "while_loop's gradient", "loop variable 0", "[2]",
               "[3] in iteration 1");

  // A body that assigns a variable would run it twice.
  Variable counter(constant(0), "counter", false);
  auto counting = function([&](Tensor x) {
    return while_loop([](const Vars& v) { return v[0] < 2; },
                      [&](const Vars& v) {
                        counter.assign_add(constant(1));
                        return Vars{v[0] + 1, v[1] * 2.0};
                      },
                      {constant(0), x})[1];
  });
  const Tensor s = constant(1.0);
  GradientTape tape2;
  tape2.watch(s);
  const Tensor z = counting(s);
  expect_values(z, {4});
  EXPECT_ERROR(tape2.gradient(z, s), UnimplementedError, "while_loop", "stateful", "eagerly");
  // Also when the assignment is in control flow nested in the body.
  auto nested = function([&](Tensor x) {
    return while_loop([](const Vars& v) { return v[0] < 2; },
                      [&](const Vars& v) {
                        Tensor next = cond(
                            v[0] > 0,
                            [&] {
                              counter.assign_add(constant(1));
                              return v[1] * 2.0;
                            },
                            [&] { return v[1] * 3.0; });
                        return Vars{v[0] + 1, next};
                      },
                      {constant(0), x})[1];
  });
  GradientTape tape3;
  tape3.watch(s);
  const Tensor u = nested(s);
  expect_values(u, {6});
  EXPECT_ERROR(tape3.gradient(u, s), UnimplementedError, "while_loop", "stateful node 'assign_counter");
  // A random op in the body would draw other numbers in the copy: its gradient came out
  // with the factors of another call (dy/dx of one call was y/x of the previous one).
  auto noisy = function([](Tensor x) {
    return while_loop([](const Vars& v) { return v[0] < 2; },
                      [](const Vars& v) {
                        return Vars{v[0] + 1, v[1] * random::uniform({}, 0, 1, DType::Float64)};
                      },
                      {constant(0), x})[1];
  });
  GradientTape tape4;
  tape4.watch(s);
  const Tensor w = noisy(s);
  EXPECT_ERROR(tape4.gradient(w, s), UnimplementedError, "while_loop", "stateful node 'random_uniform",
               "random op");
}

}  // namespace
}  // namespace ef
