// function: tracing per signature, input signatures, captures, variables by
// reference, and tapes differentiating through calls (first and second order).
#include "test_util.h"

namespace ef {
namespace {

using testing::expect_values;

TEST(Function, TracesOncePerSignature) {
  int body_runs = 0;
  auto f = function([&](Tensor x, Tensor y) {
    ++body_runs;  // C++ side effects happen while tracing only
    return tanh(x * y + 1.f);
  });
  const Tensor a = constant({1.f, 2.f}), b = constant({0.5f, -1.f});
  expect_values(f(a, b), tanh(a * b + 1.f).to_vector<double>());
  expect_values(f(b, a), tanh(b * a + 1.f).to_vector<double>());
  EXPECT_EQ(f.trace_count(), 1);
  EXPECT_EQ(body_runs, 1);
  f(constant({1.f, 2.f, 3.f}), constant({1.f, 2.f, 3.f}));  // new shape: retrace
  EXPECT_EQ(f.trace_count(), 2);
  f(constant({1.0, 2.0}), constant({1.0, 2.0}));  // new dtype: retrace
  EXPECT_EQ(f.trace_count(), 3);
  f(a, b);
  EXPECT_EQ(f.trace_count(), 3);
}

TEST(Function, NonTensorArgumentsArePartOfTheSignature) {
  auto f = function([](Tensor x, int power, bool negate) {
    Tensor y = x;
    for (int i = 1; i < power; ++i) y = y * x;  // a C++ loop unrolls while tracing
    return negate ? -y : y;
  });
  const Tensor x = constant({2.0, 3.0});
  expect_values(f(x, 3, false), {8, 27});
  expect_values(f(x, 2, true), {-4, -9});
  expect_values(f(x, 3, false), {8, 27});
  EXPECT_EQ(f.trace_count(), 2);
}

TEST(Function, InputSignatureAvoidsRetracing) {
  auto f = function([](Tensor x) { return reduce_sum(x * 2.f, {0}); }, "sum2",
                    std::vector<TensorSpec>{{DType::Float32, {kUnknownDim, 2}, "x"}});
  expect_values(f(ones({3, 2})), {6, 6});
  expect_values(f(ones({5, 2})), {10, 10});
  EXPECT_EQ(f.trace_count(), 1);
  EXPECT_ERROR(f(ones({3, 3})), InvalidArgumentError, "sum2", "argument 0", "float32[?, 2]", "[3, 3]");
  EXPECT_ERROR(f(ones({3, 2}, DType::Float64)), InvalidArgumentError, "sum2", "float64");
}

TEST(Function, ConcreteFunctionsExposeTheirGraph) {
  Function f([](const std::vector<Tensor>& xs) { return std::vector<Tensor>{relu(xs[0]) + 1.f}; }, "shifted_relu",
             std::vector<TensorSpec>{{DType::Float32, {kUnknownDim}, "x"}});
  ConcreteFunction c = f.get_concrete_function(std::vector<TensorSpec>{{DType::Float32, {kUnknownDim}, "x"}});
  EXPECT_EQ(c.output_signature()[0].shape, (Shape{kUnknownDim}));
  const std::string listing = c.graph().to_string();
  EXPECT_NE(listing.find("relu(%x)"), std::string::npos) << listing;
  expect_values(c({constant({-1.f, 2.f})})[0], {1, 3});
  EXPECT_ERROR(c({constant({1, 2})}), InvalidArgumentError, "shifted_relu", "int32");
  EXPECT_ERROR(c({}), InvalidArgumentError, "shifted_relu", "takes 1");
}

TEST(Function, VariablesAreCapturedByReference) {
  Variable w(constant({1.f, 2.f}), "w");
  Variable steps(constant(0), "steps", /*trainable=*/false);
  auto f = function([&](Tensor x) {
    steps.assign_add(constant(1));  // runs on every call, in program order
    return w * x;
  });
  const Tensor x = constant({3.f, 4.f});
  expect_values(f(x), {3, 8});
  w.assign(constant({10.f, 20.f}));
  expect_values(f(x), {30, 80});
  EXPECT_EQ(steps.value().item<int>(), 2);
  EXPECT_EQ(f.trace_count(), 1);
}

TEST(Function, EagerTensorsAreCapturedByValue) {
  Tensor scale = constant(2.f);
  auto f = function([&](Tensor x) { return x * scale; });
  expect_values(f(constant(3.f)), {6});
  scale = constant(5.f);  // the trace holds the old value
  expect_values(f(constant(3.f)), {6});
}

TEST(Function, BoolOfASymbolicTensorSaysToUseCond) {
  auto f = function([](Tensor x) { return reduce_sum(x) > 0.f ? x : -x; });
  EXPECT_ERROR(f(constant({1.f})), FailedPreconditionError, "cond", "while_loop");
  EXPECT_EQ(f.trace_count(), 0);
}

TEST(Function, VariablesCreatedInsideNeedEagerValues) {
  auto f = function([](Tensor x) {
    Variable v(x * 2.f, "v");
    return v.value();
  });
  EXPECT_ERROR(f(constant(1.f)), FailedPreconditionError, "'v'", "init scope", "outside the function");
}

// Note [variables created by functions].
TEST(Function, InitScopesLiftCreationOutOfTheTrace) {
  std::optional<Variable> counter;
  bool symbolic_inside_init_scope = true;
  auto f = function([&](Tensor x) {
    if (!counter) {
      InitScope init;
      const Tensor start = zeros({}, DType::Float32);  // an op: eager here, not a graph node
      symbolic_inside_init_scope = start.is_symbolic();
      counter = Variable(start, "counter", /*trainable=*/false);
    }
    counter->assign_add(reduce_sum(x));
    return counter->value();
  });
  expect_values(f(constant({1.f, 2.f})), {3});
  expect_values(f(constant({1.f, 2.f})), {6});
  EXPECT_FALSE(symbolic_inside_init_scope);
  EXPECT_EQ(f.trace_count(), 1);
  {
    InitScope outside_any_trace;  // changes nothing but pausing tapes
    EXPECT_FALSE(zeros({2}).is_symbolic());
  }
}

TEST(Function, OnlyTheFirstTraceMayCreateVariables) {
  std::vector<Variable> made;
  auto f = function(
      [&](Tensor x) {
        {
          InitScope init;
          made.emplace_back(zeros({}, DType::Float32), "made");
        }
        return x * 2.f;
      },
      "makes_one_per_trace");
  f(constant({1.f}));
  EXPECT_ERROR(f(constant({1.f, 2.f})), FailedPreconditionError, "'made'", "'makes_one_per_trace'",
               "first trace");
  EXPECT_EQ(made.size(), 1u);
  expect_values(f(constant({3.f})), {6});  // the first trace still runs
}

TEST(Function, NestedFunctionsRunInline) {
  auto inner = function([](Tensor x) { return x * x; });
  auto outer = function([&](Tensor x) { return inner(x) + inner(x + 1.f); });
  expect_values(outer(constant(2.f)), {13});
  EXPECT_EQ(outer.trace_count(), 1);
  EXPECT_EQ(inner.trace_count(), 0);  // traced into the outer graph
}

TEST(Function, TapesDifferentiateThroughCalls) {
  auto f = function([](Tensor x, Tensor y) { return reduce_sum(sin(x) * y + x * x * x); });
  const Tensor x = constant({0.3, -1.2, 2.0}), y = constant({1.5, 0.5, -2.0});
  GradientTape outer;
  outer.watch(x);
  GradientTape tape;
  tape.watch(x);
  tape.watch(y);
  Tensor z = f(x, y);
  std::vector<Tensor> g = tape.gradient(z, std::vector<Tensor>{x, y});
  expect_values(g[0], (cos(x) * y + 3.0 * x * x).to_vector<double>(), 1e-12);
  expect_values(g[1], sin(x).to_vector<double>(), 1e-12);
  // Second order: the outer tape differentiates the gradient computation.
  Tensor d2 = outer.gradient(reduce_sum(g[0]), x);
  expect_values(d2, (-sin(x) * y + 6.0 * x).to_vector<double>(), 1e-12);
}

TEST(Function, HigherOrderGradientsUseTheForwardRunsValues) {
  // Note [recomputed forward values]: a gradient that a tape records computes the
  // forward values again. It read the variable after the call had assigned it (12
  // became 18), and drew new random numbers.
  Variable v(constant(2.0), "v");
  auto assigning = function([&](Tensor x) {
    Tensor y = x * x * v;
    v.assign_add(constant(1.0));
    return y;
  });
  auto noisy = function([](Tensor x) { return x * x * random::uniform({}, 0, 1, DType::Float64); });
  const Tensor x = constant(3.0);
  for (bool random : {false, true}) {
    GradientTape outer;
    outer.watch(x);
    GradientTape inner;
    inner.watch(x);
    const Tensor y = random ? noisy(x) : assigning(x);
    const Tensor g = inner.gradient(y, x);
    const double factor = random ? y.item<double>() / 9.0 : 2.0;  // y = x^2 factor
    EXPECT_NEAR(g.item<double>(), 6.0 * factor, 1e-12);
    EXPECT_NEAR(outer.gradient(g, x).item<double>(), 2.0 * factor, 1e-12);
  }
  EXPECT_EQ(v.value().item<double>(), 3.0);
  // The read happened before the assignment: the outer tape reaches the variable too.
  GradientTape outer;
  outer.watch(x);
  GradientTape inner;
  inner.watch(x);
  const Tensor g = inner.gradient(assigning(x), x);
  EXPECT_DOUBLE_EQ(g.item<double>(), 18.0);  // 2 x v, v = 3
  EXPECT_DOUBLE_EQ(outer.gradient(g, v).item<double>(), 6.0);

  // A recomputation that would assign again (or read what the call assigned) is refused;
  // it assigned twice before (v went from 2 to 4 in one call).
  Variable w(constant(2.0), "w");
  auto assigned_value = function([&](Tensor x) { return x * x * w.assign_add(constant(1.0)); });
  GradientTape outer2;
  outer2.watch(x);
  GradientTape inner2;
  inner2.watch(x);
  const Tensor y = assigned_value(x);
  EXPECT_ERROR(inner2.gradient(y, x), UnimplementedError, "higher-order", "'assign_w'", "second time");
  EXPECT_EQ(w.value().item<double>(), 3.0);
}

TEST(Function, TapesSeeVariablesReadInsideCalls) {
  Variable w(constant({1.0, -2.0}), "w");
  auto f = function([&](Tensor x) { return reduce_sum(w * w * x); });
  GradientTape tape;
  Tensor loss = f(constant({3.0, 4.0}));
  expect_values(tape.gradient(loss, w), {6, -16}, 1e-12);  // 2 w x
}

TEST(Function, GradientsMatchEagerOnAFamilyOfOps) {
  // The same code traced and eager give the same values and gradients.
  auto body = [](Tensor x, Tensor w) {
    Tensor h = relu(matmul(x, w));
    return reduce_mean(softmax(h) * log(sigmoid(h) + 1.0)) + reduce_max(transpose(h)) * 0.1;
  };
  auto f = function(body);
  const Tensor x = testing::rand64({4, 3}, 1), w = testing::rand64({3, 5}, 2);
  for (bool traced : {false, true}) {
    GradientTape tape;
    tape.watch(w);
    Tensor y = traced ? f(x, w) : body(x, w);
    Tensor gw = tape.gradient(y, w);
    GradientTape eager_tape;
    eager_tape.watch(w);
    Tensor ey = body(x, w);
    expect_values(y, ey.to_vector<double>(), 1e-12);
    expect_values(gw, eager_tape.gradient(ey, w).to_vector<double>(), 1e-12);
  }
}

TEST(Function, RandomOpsDrawNewNumbersOnEveryCall) {
  random::set_seed(7);
  auto noise = function([](Tensor x) { return x + random::uniform({4}); });
  auto fixed = function([](Tensor x) { return x + random::stateless_uniform({4}, {1, 2}); });
  const Tensor zero = zeros({4});
  const std::vector<float> a = noise(zero).to_vector<float>(), b = noise(zero).to_vector<float>();
  EXPECT_NE(a, b);
  EXPECT_EQ(fixed(zero).to_vector<float>(), fixed(zero).to_vector<float>());
  random::set_seed(7);  // the same seed gives the same sequence again
  auto again = function([](Tensor x) { return x + random::uniform({4}); });
  EXPECT_EQ(again(zero).to_vector<float>(), a);
  EXPECT_EQ(again(zero).to_vector<float>(), b);
  random::set_seed(std::nullopt);
}

}  // namespace
}  // namespace ef
