// custom_gradient: the seeds' log1pexp, noisy_square and kfac_matmul, variables read
// inside the function, higher order through a custom gradient, and misuse.
#include <memory>

#include "test_util.h"

namespace ef {
namespace {

// The recitation seed: log(1 + e^x) with a gradient that stays finite for large x.
UnaryFunction log1pexp = custom_gradient([](const Tensor& x) {
  Tensor e = exp(x);
  return WithGradient{log(1 + e), [e](const Tensor& dy) { return dy * (1 - 1 / (1 + e)); }};
});

TEST(CustomGradient, Log1pexpIsFiniteWhereThePlainGradientIsNan) {
  auto grad_at = [](const UnaryFunction& f, float x0) {
    Tensor x = constant(x0);
    GradientTape tape;
    tape.watch(x);
    Tensor value = f(x);
    return tape.gradient(value, x).item<float>();
  };
  EXPECT_EQ(grad_at(log1pexp, 100.f), 1.0f);
  EXPECT_TRUE(std::isnan(grad_at([](const Tensor& x) { return log(1 + exp(x)); }, 100.f)));
  EXPECT_NEAR(grad_at(log1pexp, 0.f), 0.5f, 1e-7);
}

TEST(CustomGradient, ForwardValueIsTheFunctions) {
  testing::expect_values(log1pexp(constant({0.0, 1.0})), {std::log(2.0), std::log1p(std::exp(1.0))}, 1e-12);
  GradientTape tape;  // the same under a tape, which takes the recording path
  Tensor x = constant(1.0);
  tape.watch(x);
  EXPECT_DOUBLE_EQ(log1pexp(x).item<double>(), std::log1p(std::exp(1.0)));
}

TEST(CustomGradient, HigherOrderFlowsThroughTheGradientFunction) {
  // d/dx of the custom gradient 1 - 1/(1 + e^x) is e^x / (1 + e^x)^2.
  const double x0 = 0.7, e = std::exp(x0);
  EXPECT_NEAR(grad(grad(log1pexp))(constant(x0)).item<double>(), e / ((1 + e) * (1 + e)), 1e-12);
  // The custom gradient is the true one here, so finite differences agree at both orders
  // on tapes; the check's graph-mode part then raises (Note [custom gradients in graphs]),
  // which it reaches only after the tape checks passed.
  const testing::GradientCheckResult r = testing::check_gradients(
      [](const std::vector<Tensor>& a) { return log1pexp(a[0]); }, {testing::rand64({2, 3}, 5, -3, 3)});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(
      r.message.find("graph mode: tracing or running f failed: custom_gradient: a function with a custom "
                     "gradient was traced into a graph"),
      std::string::npos)
      << r.message;
}

TEST(CustomGradient, NoisySquareTrainsWithNoisyGradients) {
  // The seed: square, whose gradient has uniform [0, 1) noise added.
  UnaryFunction noisy_square = custom_gradient([](const Tensor& x) {
    return WithGradient{x * x, [x](const Tensor& b) { return 2 * b * x + random::uniform({}, 0, 1, x.dtype()); }};
  });
  GradientsFunction g = gradients_function([&](const std::vector<Tensor>& a) { return noisy_square(a[0]); });
  random::set_seed(7);
  Tensor x = constant(2.0);
  std::vector<double> noise;
  for (int i = 0; i < 20; ++i) {
    Tensor dx = g({x})[0];
    noise.push_back(dx.item<double>() - 2 * x.item<double>());
    EXPECT_GE(noise.back(), 0.0);
    EXPECT_LT(noise.back(), 1.0);
    x = x - 0.9 * dx;
  }
  EXPECT_NE(noise[0], noise[1]);  // fresh noise each step
  // x_{k+1} = -0.8 x_k - 0.9 u_k stays within the noise's reach of its mean, -0.25.
  EXPECT_LT(std::fabs(x.item<double>() + 0.25), 0.5 + 1e-3);
}

TEST(CustomGradient, KfacMatmulWhitensTheWeightGradient) {
  // The seed's kfac_matmul: W @ A whose gradient for W is m1 @ (B @ A^T) @ m2.
  Tensor m1 = testing::rand64({3, 3}, 1), m2 = testing::rand64({4, 4}, 2);
  TensorsFunction kfac_matmul = custom_gradient([&](const std::vector<Tensor>& in) {
    Tensor W = in[0], A = in[1];
    return WithGradients({matmul(W, A)}, [=](const std::vector<Tensor>& dys) {
      Tensor B = dys[0];
      Tensor true_grad1 = matmul(B, transpose(A));
      Tensor true_grad2 = matmul(transpose(W), B);
      return std::vector<Tensor>{matmul(matmul(m1, true_grad1), m2), true_grad2};
    });
  });
  Tensor W = testing::rand64({3, 4}, 3), A = testing::rand64({4, 2}, 4), C = testing::rand64({3, 2}, 5);
  GradientTape tape;
  tape.watch(W);
  tape.watch(A);
  Tensor loss = reduce_sum(kfac_matmul({W, A})[0] * C);
  std::vector<Tensor> grads = tape.gradient(loss, std::vector<Tensor>{W, A});
  Tensor expected_w = matmul(matmul(m1, matmul(C, A, false, true)), m2);
  testing::expect_values(grads[0], expected_w.to_vector<double>(), 1e-12);
  testing::expect_values(grads[1], matmul(W, C, true).to_vector<double>(), 1e-12);
}

TEST(CustomGradient, GradientsForVariablesReadInside) {
  Variable v(constant(3.0), "v");
  Variable frozen(constant(5.0), "frozen", /*trainable=*/false);
  TensorsFunction scaled = custom_gradient([&](const std::vector<Tensor>& in) {
    Tensor x = in[0];
    return WithGradients({x * v * frozen},
                         [x, v = v.value(), f = frozen.value()](const std::vector<Tensor>& dys,
                                                                const std::vector<Variable>& variables) {
                           EXPECT_EQ(variables.size(), 1u);  // only trainable variables
                           EXPECT_EQ(variables[0].name(), "v");
                           return std::vector<Tensor>{dys[0] * v * f, dys[0] * x * 100};
                         });
  });
  Tensor x = constant(2.0);
  GradientTape tape;
  tape.watch(x);
  Tensor y = scaled({x})[0];
  EXPECT_EQ(y.item<double>(), 30.0);
  std::vector<Tensor> grads = tape.gradient(y, std::vector<Variable>{v});
  EXPECT_EQ(grads[0].item<double>(), 200.0);  // the custom one, not x * frozen
}

TEST(CustomGradient, ReadingVariablesNeedsAGradientThatTakesThem) {
  Variable v(constant(3.0), "weights");
  UnaryFunction f = custom_gradient([&](const Tensor& x) {
    return WithGradient{x * v, [](const Tensor& dy) { return dy; }};
  });
  GradientTape tape;
  Tensor x = constant(1.0);
  tape.watch(x);
  EXPECT_ERROR(f(x), InvalidArgumentError, "read the trainable variables 'weights'");
}

TEST(CustomGradient, MultipleOutputsAndUnusedOnes) {
  TensorsFunction two = custom_gradient([](const std::vector<Tensor>& in) {
    Tensor x = in[0];
    return WithGradients({2 * x, 3 * x}, [](const std::vector<Tensor>& dys) {
      return std::vector<Tensor>{20 * dys[0] + 30 * dys[1]};  // scaled by 10 to tell it apart
    });
  });
  Tensor x = constant({1.0, 2.0});
  GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  std::vector<Tensor> ys = two({x});
  testing::expect_values(ys[1], {3, 6});
  testing::expect_values(tape.gradient(ys[1], x), {30, 30});      // the other output's gradient is zeros
  testing::expect_values(tape.gradient(ys[0] + ys[1], x), {50, 50});
}

TEST(CustomGradient, OutputThatIsTheInputItself) {
  UnaryFunction same = custom_gradient([](const Tensor& x) {
    return WithGradient{x, [](const Tensor& dy) { return 3 * dy; }};
  });
  Tensor x = constant(1.0);
  GradientTape tape;
  tape.watch(x);
  Tensor y = same(x) * 2;
  EXPECT_EQ(tape.gradient(y, x).item<double>(), 6.0);
}

TEST(CustomGradient, WithoutATapeOnlyTheFunctionRuns) {
  bool gradient_called = false;
  UnaryFunction f = custom_gradient([&](const Tensor& x) {
    return WithGradient{x + 1, [&](const Tensor& dy) {
                          gradient_called = true;
                          return dy;
                        }};
  });
  EXPECT_EQ(f(constant(1.0)).item<double>(), 2.0);
  EXPECT_FALSE(gradient_called);
}

TEST(CustomGradient, BadGradientsAreClearErrors) {
  Tensor x = constant({1.0, 2.0});
  auto gradient_of = [&](const TensorsFunction& f) {
    GradientTape tape;
    tape.watch(x);
    Tensor y = f({x})[0];
    return tape.gradient(y, x);
  };
  TensorsFunction too_many = custom_gradient([](const std::vector<Tensor>& in) {
    return WithGradients({in[0] * 2}, [](const std::vector<Tensor>& dys) { return std::vector<Tensor>{dys[0], dys[0]}; });
  });
  EXPECT_ERROR(gradient_of(too_many), InvalidArgumentError, "returned 2 gradients; expected one per input (1)");
  TensorsFunction wrong_shape = custom_gradient([](const std::vector<Tensor>& in) {
    return WithGradients({in[0] * 2}, [](const std::vector<Tensor>&) { return std::vector<Tensor>{constant(1.0)}; });
  });
  EXPECT_ERROR(gradient_of(wrong_shape), InvalidArgumentError, "gradient for input 0 has shape [] but the input has shape [2]");
  TensorsFunction no_gradient = custom_gradient([](const std::vector<Tensor>& in) {
    return WithGradients({in[0]}, WithGradients::Gradient());
  });
  EXPECT_ERROR(gradient_of(no_gradient), InvalidArgumentError, "returned no gradient function");
}

TEST(CustomGradient, NonPersistentTapeReleasesTheGradientFunction) {
  auto token = std::make_shared<int>(0);
  std::weak_ptr<int> watch_token = token;
  UnaryFunction f = custom_gradient([token](const Tensor& x) {
    return WithGradient{x * x, [token, x](const Tensor& dy) { return 2 * dy * x; }};
  });
  token.reset();
  {
    Tensor x = constant(3.0);
    GradientTape tape;
    tape.watch(x);
    Tensor y = f(x);
    f = nullptr;  // now only the tape holds the gradient function (and its token)
    EXPECT_FALSE(watch_token.expired());
    EXPECT_EQ(tape.gradient(y, x).item<double>(), 6.0);
    EXPECT_TRUE(watch_token.expired());
  }
}

}  // namespace
}  // namespace ef

namespace ef {
namespace {

// Note [custom gradients in graphs]: traced, the forward pass runs, and asking for the
// gradient raises instead of differentiating f's own ops (the ordinary gradient, which
// would be silently wrong).
TEST(CustomGradientInGraphs, TheForwardRunsAndTheGradientRaises) {
  auto clipped = custom_gradient([](const Tensor& x) {
    return WithGradient{x * 3.f, [](const Tensor& dy) { return clip_by_value(dy, -0.1f, 0.1f); }};
  });
  Function f(
      [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{reduce_sum(square(clipped(in[0])))}; },
      "f", std::vector<TensorSpec>{{DType::Float32, {3}, "x"}});
  const Tensor x = constant({1.f, 2.f, 3.f});
  EXPECT_EQ(f({x})[0].item<float>(), 126.f);  // traced outside a tape
  GradientTape tape;
  tape.watch(x);
  const Tensor y = f({x})[0];
  EXPECT_THROW(tape.gradient(y, x), UnimplementedError);
  // Eagerly the custom gradient applies.
  GradientTape eager;
  eager.watch(x);
  const Tensor z = reduce_sum(square(clipped(x)));
  EXPECT_EQ(eager.gradient(z, x).to_vector<float>(), (std::vector<float>{0.1f, 0.1f, 0.1f}));
}

}  // namespace
}  // namespace ef
