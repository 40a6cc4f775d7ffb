// recompute_grad (Note [recompute_grad]): the same values and gradients as the function
// itself at first and second order, variables read inside, random ops replayed, the
// tape keeping less memory, and misuse.
#include "eagerflow/autodiff/recompute_grad.h"

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_gradients;
using testing::expect_values;
using testing::rand64;
using Tensors = std::vector<Tensor>;

// A block of two layers, reading the variable w.
Tensors block(const Tensors& in, const Variable& w) {
  Tensor h = tanh(matmul(in[0], w.value()) + in[1]);
  return {sigmoid(h) * h, reduce_sum(h * h, Axes(1))};
}

TEST(RecomputeGrad, ValuesAndGradientsAreTheFunctions) {
  Variable w(rand64({4, 3}, 1), "w");
  const Tensor x = rand64({5, 4}, 2), b = rand64({3}, 3);
  TensorsFunction plain = [&](const Tensors& in) { return block(in, w); };
  TensorsFunction recomputed = recompute_grad(plain);
  auto run = [&](const TensorsFunction& f) {
    GradientTape outer(/*persistent=*/true), inner(/*persistent=*/true);
    outer.watch(x);
    inner.watch(x);
    inner.watch(b);
    Tensors out = f({x, b});
    Tensor loss = reduce_sum(out[0] * out[0]) + reduce_sum(sin(out[1]));
    std::vector<GradientTape::Source> sources{x, b, w};
    Tensors g = inner.gradient(loss, sources);
    // Second order through the gradient: d/dx of |dloss/dw|^2.
    Tensors results{out[0], out[1], g[0], g[1], g[2], outer.gradient(reduce_sum(g[2] * g[2]), x)};
    return results;
  };
  const Tensors want = run(plain), got = run(recomputed);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) expect_values(got[i], want[i].to_vector<double>(), 1e-12);
  // Against finite differences at first and second order (and in graph mode, where the
  // function is simply traced).
  expect_gradients([&](const Tensors& in) { return recomputed(in)[0]; }, {x, b});
}

TEST(RecomputeGrad, RandomOpsDrawTheSameNumbersWhenRecomputed) {
  const Tensor x = rand64({8, 6}, 4);
  auto noisy = [](const Tensors& in) {
    return Tensors{dropout(in[0], 0.5) * random::normal(in[0].shape(), 0.0, 1.0, DType::Float64)};
  };
  auto gradient_of = [&](const TensorsFunction& f) {
    random::set_seed(5);
    GradientTape tape;
    tape.watch(x);
    return tape.gradient(reduce_sum(square(f({x})[0])), x);
  };
  const Tensor want = gradient_of(noisy), got = gradient_of(recompute_grad(noisy));
  expect_values(got, want.to_vector<double>(), 1e-12);
  // A function that draws more the second time is refused, not differentiated wrongly.
  int calls = 0;
  TensorsFunction changing = recompute_grad([&](const Tensors& in) {
    Tensor y = in[0] * random::uniform({}, 0, 1, DType::Float64);
    if (++calls > 1) y = y * random::uniform({}, 0, 1, DType::Float64);
    return Tensors{y};
  });
  GradientTape tape;
  tape.watch(x);
  Tensor y = changing({x})[0];
  EXPECT_ERROR(tape.gradient(reduce_sum(y), x), FailedPreconditionError, "recompute_grad",
               "more random tensors");
}

TEST(RecomputeGrad, TheTapeKeepsOnlyTheBlocksInputsAndOutputs) {
  // Ten blocks of 512x512 tanh layers: a tape through the plain blocks keeps every
  // layer's activations; through recomputed ones only each block's output.
  const Tensor x = rand64({256, 512}, 6);
  std::vector<Tensor> weights;
  for (int i = 0; i < 4; ++i) weights.push_back(rand64({512, 512}, 7 + i, -0.05, 0.05));
  TensorsFunction layers = [&](const Tensors& in) {
    Tensor h = in[0];
    for (const Tensor& w : weights) h = tanh(matmul(h, w));
    return Tensors{h};
  };
  auto held_by_tape = [&](const TensorsFunction& f) {
    GradientTape tape;
    tape.watch(x);
    const size_t before = cpu_allocator_stats().bytes_in_use;
    Tensor h = x;
    for (int block = 0; block < 10; ++block) h = f({h})[0];
    const size_t held = cpu_allocator_stats().bytes_in_use - before;
    Tensor g = tape.gradient(reduce_sum(h), x);
    return std::pair{held, g};
  };
  const auto [plain_bytes, plain_grad] = held_by_tape(layers);
  const auto [recomputed_bytes, recomputed_grad] = held_by_tape(recompute_grad(layers));
  expect_values(recomputed_grad, plain_grad.to_vector<double>(), 1e-10);
  EXPECT_LT(recomputed_bytes * 3, plain_bytes)
      << "plain " << plain_bytes << " B, recomputed " << recomputed_bytes << " B";
}

TEST(RecomputeGrad, AnInputPassedTwiceOrAlsoReadAsAVariable) {
  // d/dx of f(x, x) = x * sin(x) is sin(x) + x cos(x): each position's partial, added.
  const Tensor x = rand64({4}, 13);
  TensorsFunction f = recompute_grad([](const Tensors& in) { return Tensors{in[0] * sin(in[1])}; });
  GradientTape tape;
  tape.watch(x);
  Tensor g = tape.gradient(reduce_sum(f({x, x})[0]), x);
  expect_values(g, (sin(x) + x * cos(x)).to_vector<double>(), 1e-12);
  // A variable's value passed in and the variable read inside: d/dv (v * exp(v)).
  Variable v(rand64({3}, 14), "v");
  TensorsFunction h = recompute_grad([&](const Tensors& in) { return Tensors{in[0] * exp(v.value())}; });
  GradientTape vtape;
  Tensor gv = vtape.gradient(reduce_sum(h({v.value()})[0]), v);
  expect_values(gv, ((1.0 + v.value()) * exp(v.value())).to_vector<double>(), 1e-12);
}

TEST(RecomputeGrad, WhatCannotBeRecomputedIsRefused) {
  const Tensor x = rand64({3}, 15);
  auto gradient_of = [&](const TensorsFunction& f) {
    GradientTape tape;
    tape.watch(x);
    Tensor y = reduce_sum(f({x})[0]);
    return tape.gradient(y, x);
  };
  // Drawing fewer random tensors the second time (a layer built on the first call).
  int calls = 0;
  EXPECT_ERROR(gradient_of(recompute_grad([&](const Tensors& in) {
                 Tensor y = in[0];
                 if (++calls == 1) y = y + 0.0 * random::normal({}, 0.0, 1.0, DType::Float64);
                 return Tensors{y * random::uniform({3}, 0, 1, DType::Float64)};
               })),
               FailedPreconditionError, "fewer random tensors");
  // Assigning a variable: the first run already did.
  Variable counter(constant(0.0), "counter", /*trainable=*/false);
  EXPECT_ERROR(gradient_of(recompute_grad([&](const Tensors& in) {
                 counter.assign_add(constant(1.0));
                 return Tensors{in[0] * 2.0};
               })),
               FailedPreconditionError, "counter", "may not change");
  EXPECT_EQ(counter.value().item<double>(), 1.0);
  // A traced function's random op: its runs are counted by the graph, not replayable.
  Function noisy(
      [](const Tensors& in) { return Tensors{in[0] * random::uniform({3}, 0, 1, DType::Float64)}; }, "noisy");
  GradientTape tape;
  tape.watch(x);
  EXPECT_ERROR(recompute_grad([&](const Tensors& in) { return noisy(in); })({x}), UnimplementedError,
               "random op", "traced function");
}

TEST(RecomputeGrad, UnaryFormAndMisuse) {
  UnaryFunction f = recompute_grad(UnaryFunction([](const Tensor& x) { return exp(sin(x)); }));
  const Tensor x = rand64({3}, 12);
  expect_gradients([&](const Tensors& in) { return f(in[0]); }, {x});
  // Without a tape it is the function.
  expect_values(f(x), exp(sin(x)).to_vector<double>(), 0);
  EXPECT_ERROR(recompute_grad(TensorsFunction()), InvalidArgumentError, "recompute_grad", "empty");
}

}  // namespace
}  // namespace ef
