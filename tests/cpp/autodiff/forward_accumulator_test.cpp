// ForwardAccumulator and jvp: TensorFlow's semantics (watching, unconnected tensors,
// integer outputs, nesting), composition with tapes both ways (Hessian-vector products
// of a small MLP), custom gradients, ef::function, variables, and the errors. The jvp
// rules of the ops themselves are checked by check_gradients (Note [forward-mode checks]).
#include "test_util.h"

namespace ef {
namespace {

using testing::expect_values;
using testing::rand64;

TEST(ForwardAccumulator, TangentOfASimpleFunction) {
  Tensor x = constant({1.0, 2.0, 3.0});
  ForwardAccumulator acc(x, constant({1.0, 0.0, -1.0}));
  Tensor y = reduce_sum(x * x);
  EXPECT_DOUBLE_EQ(acc.jvp(y).item<double>(), 2 * 1 - 2 * 3);
  expect_values(acc.jvp(x), {1, 0, -1});  // a primal's own tangent
}

TEST(ForwardAccumulator, UnconnectedAndIntegerTensorsHaveNoTangent) {
  Tensor x = constant({1.0, 2.0});
  ForwardAccumulator acc(x, ones_like(x));
  Tensor unrelated = constant({3.0, 4.0}) * 2.0;
  EXPECT_FALSE(acc.jvp(unrelated).defined());
  expect_values(acc.jvp(unrelated, UnconnectedGradients::Zero), {0, 0});
  Tensor index = argmax(x * 3.0);  // an integer output of a watched input
  EXPECT_FALSE(acc.jvp(index).defined());
  EXPECT_FALSE(acc.jvp(index, UnconnectedGradients::Zero).defined());
  Tensor flags = greater(x, 1.5);  // not differentiable: no tangent, as no gradient
  EXPECT_FALSE(acc.jvp(flags).defined());
  Tensor y = x * 2.0;
  acc.stop();  // ops after leaving the scope are not tracked; earlier tangents stay
  EXPECT_FALSE(acc.jvp(y * 3.0).defined());
  expect_values(acc.jvp(y), {2, 2});
}

TEST(ForwardAccumulator, WatchingTwiceAddsTheTangents) {
  Tensor x = constant(2.0);
  ForwardAccumulator acc;
  acc.watch(x, constant(1.0));
  acc.watch(x, constant(0.5));
  EXPECT_DOUBLE_EQ(acc.jvp(x * x).item<double>(), 2 * 2.0 * 1.5);
}

TEST(ForwardAccumulator, NestedAccumulatorsGiveSecondDerivatives) {
  Tensor x = constant(0.3);
  ForwardAccumulator outer(x, constant(1.0));
  Tensor inner_tangent;
  {
    ForwardAccumulator inner(x, constant(1.0));
    Tensor y = sin(x) * x;
    inner_tangent = inner.jvp(y);  // cos(x) x + sin(x)
  }
  // The outer accumulator saw the inner one's rules: d/dx (cos x x + sin x) = 2 cos x - x sin x.
  EXPECT_NEAR(inner_tangent.item<double>(), std::cos(0.3) * 0.3 + std::sin(0.3), 1e-15);
  EXPECT_NEAR(outer.jvp(inner_tangent).item<double>(), 2 * std::cos(0.3) - 0.3 * std::sin(0.3), 1e-15);
}

// A two-layer MLP's loss as a function of its flattened parameters, for the
// Hessian-vector identities.
Tensor mlp_loss(const Tensor& params, const Tensor& x, const Tensor& labels) {
  Tensor w1 = reshape(slice(params, {0}, {12}), Shape{3, 4});
  Tensor w2 = reshape(slice(params, {12}, {8}), Shape{4, 2});
  Tensor hidden = tanh(matmul(x, w1));
  Tensor logits = matmul(hidden, w2);
  return reduce_mean(softmax_cross_entropy_with_logits(labels, logits)) + 0.1 * reduce_sum(square(params));
}

TEST(ForwardAccumulator, HessianVectorProductsAgreeThreeWays) {
  Tensor params = rand64({20}, 1), v = rand64({20}, 2), x = rand64({5, 3}, 3);
  Tensor labels = one_hot(testing::i64({0, 1, 1, 0, 1}), 2, 1.0, 0.0, -1, DType::Float64);
  // Reverse over reverse: grad(<grad f, v>).
  Tensor hvp_tapes;
  {
    GradientTape outer;
    outer.watch(params);
    Tensor g;
    {
      GradientTape inner;
      inner.watch(params);
      g = inner.gradient(mlp_loss(params, x, labels), params);
    }
    hvp_tapes = outer.gradient(reduce_sum(g * v), params);
  }
  // Forward over reverse: the accumulator differentiates the tape's gradient computation.
  Tensor hvp_forward_over_reverse;
  {
    ForwardAccumulator acc(params, v);
    GradientTape tape;
    tape.watch(params);
    Tensor g = tape.gradient(mlp_loss(params, x, labels), params);
    hvp_forward_over_reverse = acc.jvp(g);
  }
  // Reverse over forward: a tape differentiates the accumulator's tangent.
  Tensor hvp_reverse_over_forward;
  {
    GradientTape tape;
    tape.watch(params);
    ForwardAccumulator acc(params, v);
    Tensor directional = acc.jvp(mlp_loss(params, x, labels));
    hvp_reverse_over_forward = tape.gradient(directional, params);
  }
  const std::vector<double> want = hvp_tapes.to_vector<double>();
  expect_values(hvp_forward_over_reverse, want, 1e-12);
  expect_values(hvp_reverse_over_forward, want, 1e-12);
}

TEST(ForwardAccumulator, JvpFunctionReturnsOutputsAndTangents) {
  auto [outputs, tangents] = jvp(
      [](const std::vector<Tensor>& a) {
        return std::vector<Tensor>{a[0] * a[1], a[1]};
      },
      {constant(3.0), constant(4.0)}, {constant(1.0), constant(0.0)});
  EXPECT_DOUBLE_EQ(outputs[0].item<double>(), 12.0);
  EXPECT_DOUBLE_EQ(tangents[0].item<double>(), 4.0);
  EXPECT_DOUBLE_EQ(tangents[1].item<double>(), 0.0);  // its own tangent, zero
  auto constant_output = jvp([](const std::vector<Tensor>&) { return std::vector<Tensor>{constant(1.0)}; },
                             {constant(3.0)}, {constant(1.0)});
  EXPECT_DOUBLE_EQ(constant_output.second[0].item<double>(), 0.0);  // unconnected: zeros by default
}

TEST(ForwardAccumulator, OpWithoutRuleRaisesUnimplementedNamingIt) {
  // A custom gradient traced into a graph passes through custom_gradient_in_graph, which
  // has no forward-mode rule (nor a usable gradient): an error, never a zero tangent.
  UnaryFunction doubled = custom_gradient([](const Tensor& x) {
    return WithGradient{x * 2.0, [](const Tensor& dy) { return dy * 2.0; }};
  });
  auto traced = function([&](Tensor x) {
    ForwardAccumulator acc(x, ones_like(x));
    return acc.jvp(doubled(x), UnconnectedGradients::Zero);
  });
  EXPECT_ERROR(traced(constant({1.0, 2.0})), UnimplementedError, "custom_gradient_in_graph", "forward-mode",
               "[2]");
}

TEST(ForwardAccumulator, VariablesCarryTheirTangentIntoEveryRead) {
  Variable w(constant({1.0, 2.0}), "w");
  ForwardAccumulator acc;
  acc.watch(w, constant({1.0, 1.0}));
  Tensor y = reduce_sum(w.value() * w.value());
  EXPECT_DOUBLE_EQ(acc.jvp(y).item<double>(), 2 * 1.0 + 2 * 2.0);
}

TEST(ForwardAccumulator, CustomGradientDefinesTheTangent) {
  // A gradient scaled by 0.1: forward mode follows it, as TensorFlow's does.
  UnaryFunction scaled = custom_gradient([](const Tensor& x) {
    return WithGradient{x * x, [x](const Tensor& dy) { return dy * 0.1; }};
  });
  Tensor x = constant(3.0);
  ForwardAccumulator acc(x, constant(2.0));
  Tensor y = scaled(x);
  EXPECT_DOUBLE_EQ(y.item<double>(), 9.0);
  EXPECT_NEAR(acc.jvp(y).item<double>(), 0.2, 1e-15);
}

// A jvp function given with the gradient defines the tangent in forward mode (JAX's
// custom_jvp): here a safe norm whose gradient and tangent are 0 at the origin, where the
// plain formula gives NaN. Its ops are differentiated in turn: a nested accumulator
// (forward-over-forward) and a tape (reverse-over-forward) see them.
TEST(ForwardAccumulator, CustomJvpDefinesTheTangent) {
  UnaryFunction safe_norm = custom_gradient([](const Tensor& x) {
    const Tensor norm = sqrt(reduce_sum(x * x));
    const Tensor unit = where(equal(norm, 0.0), zeros_like(x), x / maximum(norm, 1e-300));
    return WithGradient{norm, [unit](const Tensor& dy) { return dy * unit; },
                        [unit](const Tensor& dx) { return reduce_sum(unit * dx); }};
  });
  const Tensor origin = constant({0.0, 0.0});
  {
    ForwardAccumulator acc(origin, constant({1.0, 2.0}));
    EXPECT_EQ(acc.jvp(safe_norm(origin)).item<double>(), 0.0);
  }
  const Tensor x = constant({3.0, 4.0}), v = constant({1.0, -1.0});
  {
    ForwardAccumulator acc(x, v);
    EXPECT_NEAR(acc.jvp(safe_norm(x)).item<double>(), (3.0 - 4.0) / 5.0, 1e-15);
  }
  // d/dx <unit(x), v> through a tape: (I - u uᵀ) v / |x|.
  GradientTape tape;
  tape.watch(x);
  Tensor tangent;
  {
    ForwardAccumulator acc(x, v);
    tangent = acc.jvp(safe_norm(x));
  }
  const Tensor u = x / 5.0;
  const Tensor want = (v - u * reduce_sum(u * v)) / 5.0;
  expect_values(tape.gradient(tangent, x), want.to_vector<double>(), 1e-15);
  // The jvp is used, not the gradient transposed: a deliberately different one shows it.
  UnaryFunction marked = custom_gradient([](const Tensor& x) {
    return WithGradient{x * 2.0, [](const Tensor& dy) { return dy * 2.0; },
                        [](const Tensor& dx) { return dx * 7.0; }};
  });
  ForwardAccumulator acc(x, v);
  expect_values(acc.jvp(marked(x)), {7.0, -7.0});
}

TEST(ForwardAccumulator, CustomJvpErrors) {
  const Tensor x = constant({1.0, 2.0});
  TensorsFunction wrong_count = custom_gradient([](const std::vector<Tensor>& in) {
    return WithGradients(
        {in[0] * 2.0}, [](const std::vector<Tensor>& dys) { return dys; },
        [](const std::vector<Tensor>& t) {
          return std::vector<Tensor>{t[0], t[0]};
        });
  });
  {
    ForwardAccumulator acc(x, ones_like(x));
    EXPECT_ERROR(wrong_count({x}), InvalidArgumentError, "custom_gradient", "jvp", "2 tangents",
                 "one per output (1)");
  }
  UnaryFunction wrong_shape = custom_gradient([](const Tensor& x) {
    return WithGradient{x * 2.0, [](const Tensor& dy) { return dy; },
                        [](const Tensor& dx) { return reduce_sum(dx); }};
  });
  {
    ForwardAccumulator acc(x, ones_like(x));
    EXPECT_ERROR(wrong_shape(x), InvalidArgumentError, "custom_gradient", "output 0", "[2]");
  }
  Variable w(constant({1.0, 1.0}), "w");
  TensorsFunction reads_w = custom_gradient([&](const std::vector<Tensor>& in) {
    return WithGradients(
        {in[0] * w.value()},
        [](const std::vector<Tensor>& dys, const std::vector<Variable>&) {
          return std::vector<Tensor>{dys[0], dys[0]};
        },
        [](const std::vector<Tensor>& t) { return t; });
  });
  ForwardAccumulator acc;
  acc.watch(w, ones_like(x));
  EXPECT_ERROR(reads_w({x}), UnimplementedError, "custom_gradient", "variable 'w'", "jvp");
}

TEST(ForwardAccumulator, FunctionCallsGetTangentsFromTheirGradient) {
  auto f = function([](Tensor x) { return reduce_sum(sin(x) * x); });
  Tensor x = rand64({4}, 5), v = rand64({4}, 6);
  ForwardAccumulator acc(x, v);
  Tensor y = f(x);
  Tensor want = reduce_sum((cos(x) * x + sin(x)) * v);
  EXPECT_NEAR(acc.jvp(y).item<double>(), want.item<double>(), 1e-12);
}

TEST(ForwardAccumulator, ForwardOverReverseInsideAFunction) {
  Tensor params = rand64({20}, 7), v = rand64({20}, 8), x = rand64({5, 3}, 9);
  Tensor labels = one_hot(testing::i64({1, 1, 0, 0, 1}), 2, 1.0, 0.0, -1, DType::Float64);
  auto hvp = function([&](Tensor p, Tensor direction) {
    ForwardAccumulator acc(p, direction);
    GradientTape tape;
    tape.watch(p);
    Tensor g = tape.gradient(mlp_loss(p, x, labels), p);
    return acc.jvp(g);
  });
  Tensor eager;
  {
    ForwardAccumulator acc(params, v);
    GradientTape tape;
    tape.watch(params);
    eager = acc.jvp(tape.gradient(mlp_loss(params, x, labels), params));
  }
  expect_values(hvp(params, v), eager.to_vector<double>(), 1e-12);
}

TEST(ForwardAccumulator, RejectsBadPrimalsAndTangents) {
  EXPECT_ERROR(ForwardAccumulator(constant({1.0, 2.0}), constant({1.0})), InvalidArgumentError, "tangent",
               "[1]", "[2]");
  EXPECT_ERROR(ForwardAccumulator(testing::i64({1}), testing::i64({1})), InvalidArgumentError, "float",
               "int64");
  std::vector<Tensor> primals{constant(1.0)};
  EXPECT_ERROR(ForwardAccumulator(primals, std::vector<Tensor>{}), InvalidArgumentError, "1 primals",
               "0 tangents");
}

}  // namespace
}  // namespace ef
