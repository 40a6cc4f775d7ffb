// Optimizers: update rules on hand-checkable steps, slots, clipping, schedules, errors.
// (Step-for-step agreement with torch.optim is tested in tests/python/test_optimizers.py.)
#include "test_util.h"

namespace ef {
namespace {

using testing::expect_meta;
using testing::expect_values;

TEST(Optimizers, SgdStepsAndMomentum) {
  Variable w(constant({1.0, 2.0}), "w");
  optim::SGD sgd(0.1);
  sgd.apply_gradients({constant({1.0, -1.0})}, {w});
  expect_values(w.value(), {0.9, 2.1});
  EXPECT_EQ(sgd.iterations(), 1);

  Variable u(constant(0.0), "u");
  optim::SGD momentum(1.0, 0.5);
  for (int i = 0; i < 3; ++i) momentum.apply_gradients({constant(1.0)}, {u});
  // buf: 1, 1.5, 1.75 -> u = -(1 + 1.5 + 1.75)
  EXPECT_DOUBLE_EQ(u.value().item<double>(), -4.25);
  EXPECT_DOUBLE_EQ(momentum.slot(u, "momentum").value().item<double>(), 1.75);
  Variable n(constant(0.0), "n");
  optim::SGD nesterov(1.0, 0.5, true);
  nesterov.apply_gradients({constant(1.0)}, {n});
  EXPECT_DOUBLE_EQ(n.value().item<double>(), -1.5);  // g + momentum * buf
}

TEST(Optimizers, AdamFirstStepMovesByTheLearningRate) {
  // With bias correction the first step is lr * g / (|g| + eps') = lr * sign(g).
  Variable w(constant({1.0, -1.0}), "w");
  optim::Adam adam(0.01, 0.9, 0.999, 1e-12);
  adam.apply_gradients({constant({3.0, -0.5})}, {w});
  expect_values(w.value(), {0.99, -0.99}, 1e-9);
  EXPECT_EQ(adam.slot_variables().size(), 2u);
  EXPECT_EQ(adam.slot(w, "m").name(), "w/m");
  EXPECT_FALSE(adam.slot(w, "v").trainable());
  EXPECT_ERROR(adam.slot(w, "nope"), NotFoundError, "no slot 'nope'");
}

TEST(Optimizers, EveryOptimizerMinimizesAQuadratic) {
  std::vector<std::unique_ptr<optim::Optimizer>> optimizers;
  optimizers.push_back(std::make_unique<optim::SGD>(0.1, 0.9));
  optimizers.push_back(std::make_unique<optim::Adam>(0.1));
  optimizers.push_back(std::make_unique<optim::AdamW>(0.1, 0.0));
  optimizers.push_back(std::make_unique<optim::RMSprop>(0.05, 0.9, 0.5, 1e-7, true));
  optimizers.push_back(std::make_unique<optim::Adagrad>(0.5));
  for (auto& opt : optimizers) {
    Variable w(constant({3.0, -2.0}), "w");
    Tensor target = constant({1.0, 0.5});
    Tensor first = opt->minimize([&] { return reduce_sum(square(w - target)); }, {w});
    Tensor last;
    for (int i = 0; i < 300; ++i) last = opt->minimize([&] { return reduce_sum(square(w - target)); }, {w});
    EXPECT_LT(last.item<double>(), 1e-3 * first.item<double>()) << opt->name();
  }
}

TEST(Optimizers, MinimizeWithoutAVariableListTrainsWhatTheLossReads) {
  Variable w(constant({3.0, -2.0}), "w");
  Variable frozen(constant({1.0, 1.0}), "frozen", /*trainable=*/false);
  optim::SGD sgd(0.25);
  Tensor loss = sgd.minimize([&] { return reduce_sum(square(w) * frozen); });
  EXPECT_EQ(loss.item<double>(), 13.0);
  expect_values(w.value(), {1.5, -1.0});
  expect_values(frozen.value(), {1.0, 1.0});
  EXPECT_ERROR(sgd.minimize([&] { return reduce_sum(frozen * 2.0); }), InvalidArgumentError,
               "read no trainable variables");
  // A step that would change nothing is an error, as in TensorFlow.
  EXPECT_ERROR(sgd.apply_gradients({Tensor()}, {w}), InvalidArgumentError, "no gradient for any variable",
               "'w'");
}

optim::Clipping clip_norm(double v) { optim::Clipping c; c.clipnorm = v; return c; }
optim::Clipping clip_global(double v) { optim::Clipping c; c.global_clipnorm = v; return c; }
optim::Clipping clip_value(double v) { optim::Clipping c; c.clipvalue = v; return c; }

TEST(Optimizers, ClippingBeforeTheUpdate) {
  Variable w(constant({0.0, 0.0}), "w");
  optim::SGD by_norm(1.0, 0.0, false, clip_norm(1.0));
  by_norm.apply_gradients({constant({3.0, 4.0})}, {w});
  expect_values(w.value(), {-0.6, -0.8});
  Variable a(constant(0.0), "a"), b(constant(0.0), "b");
  optim::SGD global(1.0, 0.0, false, clip_global(2.5));
  global.apply_gradients({constant(3.0), constant(4.0)}, {a, b});  // global norm 5
  EXPECT_DOUBLE_EQ(a.value().item<double>(), -1.5);
  EXPECT_DOUBLE_EQ(b.value().item<double>(), -2.0);
  Variable c(constant({0.0, 0.0}), "c");
  optim::SGD by_value(1.0, 0.0, false, clip_value(0.5));
  by_value.apply_gradients({constant({3.0, -0.25})}, {c});
  expect_values(c.value(), {-0.5, 0.25});
  auto [clipped, norm] = clip_by_global_norm({constant(3.0), Tensor(), constant(4.0)}, 10.0);
  EXPECT_DOUBLE_EQ(norm.item<double>(), 5.0);
  EXPECT_FALSE(clipped[1].defined());
  // The norm has the tensors' dtype (TensorFlow's); the scale is computed in float64.
  auto [clipped32, norm32] = clip_by_global_norm({constant({1e-4f, 3.f}), constant(4.f)}, 1.0);
  expect_meta(norm32, {}, DType::Float32);
  EXPECT_FLOAT_EQ(norm32.item<float>(), static_cast<float>(std::sqrt(25.0 + 1e-8)));
  expect_meta(clipped32[1], {}, DType::Float32);
  EXPECT_FLOAT_EQ(clipped32[1].item<float>(), static_cast<float>(4.0 / std::sqrt(25.0 + 1e-8)));
  expect_meta(clip_by_global_norm({constant(1.f), cast(constant(1.f), DType::BFloat16)}, 1.0).second, {},
              DType::Float32);
  expect_meta(clip_by_global_norm({cast(constant(1.f), DType::Float16)}, 1.0).second, {}, DType::Float16);
  expect_meta(clip_by_global_norm({constant(1.f), constant(1.0)}, 1.0).second, {}, DType::Float64);
  expect_meta(clip_by_global_norm({Tensor()}, 1.0).second, {}, DType::Float32);
  EXPECT_DOUBLE_EQ(clip_by_norm(constant({3.0, 4.0}), 1.0)[0].item<double>(), 0.6);
  EXPECT_ERROR(clip_by_norm(constant(1.0), -1.0), InvalidArgumentError, "clip_norm must be >= 0");
}

// Keras: at most one clipping option, and 0 is off. Before, clipnorm and clipvalue
// together were applied in neither TensorFlow 2's order nor Keras 3's (which refuses
// them), and clipnorm = 0 turned an all-zero gradient into NaN weights.
TEST(Optimizers, ClippingOptionsAreExclusiveAndZeroIsOff) {
  optim::Clipping both = clip_norm(1.0);
  both.clipvalue = 1.0;
  EXPECT_ERROR(optim::SGD(1.0, 0.0, false, both), InvalidArgumentError,
               "only one of clipnorm, global_clipnorm and clipvalue can be set");
  for (const optim::Clipping& off : {clip_norm(0), clip_global(0), clip_value(0)}) {
    Variable w(constant({0.0, 0.0}), "w");
    optim::SGD sgd(1.0, 0.0, false, off);
    sgd.apply_gradients({constant({0.0, 0.0})}, {w});
    sgd.apply_gradients({constant({3.0, 4.0})}, {w});
    expect_values(w.value(), {-3.0, -4.0});
  }
  // A moment decay of 1 divides by a zero bias correction: refused, as in PyTorch.
  EXPECT_ERROR(optim::Adam(0.1, 1.0), InvalidArgumentError, "beta_1 must be in [0, 1), got 1");
  EXPECT_ERROR(optim::AdamW(0.1, 0.0, 0.9, 1.0), InvalidArgumentError, "beta_2 must be in [0, 1), got 1");
}

TEST(Optimizers, LearningRateSchedules) {
  optim::ExponentialDecay exponential{0.1, 10, 0.5};
  EXPECT_DOUBLE_EQ(exponential(0), 0.1);
  EXPECT_DOUBLE_EQ(exponential(10), 0.05);
  EXPECT_NEAR(exponential(5), 0.1 * std::sqrt(0.5), 1e-15);
  optim::ExponentialDecay stairs{0.1, 10, 0.5, true};
  EXPECT_DOUBLE_EQ(stairs(19), 0.05);
  optim::CosineDecay cosine{1.0, 100, 0.1};
  EXPECT_DOUBLE_EQ(cosine(0), 1.0);
  EXPECT_NEAR(cosine(50), 0.55, 1e-15);
  EXPECT_NEAR(cosine(500), 0.1, 1e-15);
  // The optimizer reads the schedule at its iteration count.
  Variable w(constant(0.0), "w");
  optim::SGD sgd(optim::ExponentialDecay{1.0, 1, 0.5});
  for (int i = 0; i < 3; ++i) sgd.apply_gradients({constant(1.0)}, {w});
  EXPECT_DOUBLE_EQ(w.value().item<double>(), -(1.0 + 0.5 + 0.25));
  EXPECT_DOUBLE_EQ(sgd.current_learning_rate(), 0.125);
  EXPECT_ERROR(optim::SGD(optim::CosineDecay{1.0, 0}), InvalidArgumentError, "decay_steps must be positive");
}

TEST(Optimizers, BadGradientsChangeNothing) {
  Variable w(constant({1.0, 2.0}), "weights"), b(constant(0.0), "bias");
  optim::Adam adam;
  EXPECT_ERROR(adam.apply_gradients({constant(1.0), constant({1.0, 2.0, 3.0})}, {b, w}), InvalidArgumentError,
               "gradient for variable 'weights' has dtype float64 and shape [3] but the variable has dtype float64 "
               "and shape [2]");
  EXPECT_DOUBLE_EQ(b.value().item<double>(), 0.0);  // checked before any update
  EXPECT_EQ(adam.iterations(), 0);
  EXPECT_ERROR(adam.apply_gradients({constant(1.0)}, {b, w}), InvalidArgumentError, "1 gradients for 2 variables");
  EXPECT_ERROR(optim::SGD(0.1, 1.5), InvalidArgumentError, "momentum must be in [0, 1]");
  // An undefined gradient (an unconnected variable) skips its variable.
  adam.apply_gradients({Tensor(), constant(1.0)}, {w, b});
  expect_values(w.value(), {1.0, 2.0});
  EXPECT_LT(b.value().item<double>(), 0.0);
}

}  // namespace
}  // namespace ef

namespace ef {
namespace {

TEST(Optimizers, UpdatesAreNotRecordedByAPersistentTape) {
  // Note [state updates are not recorded]: a persistent tape still open around the update
  // keeps only the variable's new value, not the update's temporaries.
  Variable w(random::normal({256, 256}, 0, 1, DType::Float64, 5));
  GradientTape tape(/*persistent=*/true);
  Tensor loss = reduce_sum(w * w);
  Tensor g = tape.gradient(loss, w);
  optim::SGD sgd(0.1, /*momentum=*/0.9);
  sgd.apply_gradients({g}, {w});  // creates the momentum slot
  release_cached_memory();
  const size_t before = cpu_allocator_stats().bytes_in_use;
  sgd.apply_gradients({g}, {w});
  release_cached_memory();
  // At most the new value of w and of its momentum slot (the old ones may be held).
  EXPECT_LE(cpu_allocator_stats().bytes_in_use, before + 2 * 256 * 256 * sizeof(double));
  EXPECT_EQ(tape.gradient(loss, w).shape(), w.shape());  // the tape still works
}

}  // namespace
}  // namespace ef
