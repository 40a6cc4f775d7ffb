// Dynamic loss scaling (Note [dynamic loss scaling] in src/optim/loss_scale.cpp): the
// scale and the skipped steps follow PyTorch GradScaler's rule on a gradient sequence
// with infs and NaNs, eagerly and inside a function alike; the state is checkpointed.
#include <cmath>

#include "io/io_test_util.h"
#include "test_util.h"

namespace ef {
namespace {

using testing::expect_values;
using testing::TempDir;

// GradScaler's update (torch._amp_update_scale_): on a non-finite step the scale is
// multiplied by 0.5 and the count of good steps reset; otherwise the count grows, and
// when it reaches growth_interval the scale is multiplied by 2 and the count reset.
// TensorFlow's rule is the same, and floors the scale at 1.
struct ReferenceScaler {
  double scale;
  int64_t growth_interval;
  int64_t good = 0;
  void update(bool found_inf) {
    if (found_inf) {
      scale = std::max(scale * 0.5, 1.0);
      good = 0;
    } else if (++good == growth_interval) {
      scale *= 2;
      good = 0;
    }
  }
};

// Gradients of one variable: finite, with an inf, with a NaN.
std::vector<Tensor> gradient_sequence() {
  const double inf = INFINITY, nan = NAN;
  std::vector<std::vector<double>> values = {{1, 2},   {0.5, -1},  {inf, 1}, {1, 1},    {2, 0},  {-1, 3},
                                             {1, nan}, {0.1, 0.2}, {3, 1},   {-inf, 0}, {1, -1}, {2, 2}};
  std::vector<Tensor> out;
  for (const auto& v : values) out.push_back(constant(v, Shape{2}));
  return out;
}

TEST(LossScale, StepsAndSkipsAsGradScalerEagerlyAndTraced) {
  const optim::LossScaleOptions options{.initial_scale = 8, .growth_steps = 3};
  auto eager_opt = optim::loss_scale_optimizer(std::make_shared<optim::Adam>(0.1), options);
  auto traced_opt = optim::loss_scale_optimizer(std::make_shared<optim::Adam>(0.1), options);
  optim::Adam plain(0.1);  // the reference: only the finite steps
  Variable eager_w(constant({1.0, -1.0}), "w"), traced_w(constant({1.0, -1.0}), "w"),
      plain_w(constant({1.0, -1.0}), "w");
  auto traced_step = function([&](Tensor g) {
    traced_opt->apply_gradients({g}, {traced_w});
    return constant(0);
  });
  ReferenceScaler reference{8, 3};
  int64_t applied = 0;
  for (const Tensor& g : gradient_sequence()) {
    const bool finite = std::isfinite(reduce_sum(g).item<double>());
    reference.update(!finite);
    if (finite) {
      plain.apply_gradients({g}, {plain_w});
      ++applied;
    }
    eager_opt->apply_gradients({g}, {eager_w});
    traced_step(g);
    EXPECT_EQ(eager_opt->loss_scale(), reference.scale);
    EXPECT_EQ(traced_opt->loss_scale(), reference.scale);
    EXPECT_EQ(eager_opt->iterations(), applied);
    EXPECT_EQ(traced_opt->iterations(), applied);
    expect_values(eager_w.value(), plain_w.value().to_vector<double>(), 0);
    expect_values(traced_w.value(), plain_w.value().to_vector<double>(), 1e-15);
  }
  EXPECT_EQ(traced_step.trace_count(), 1);
  EXPECT_EQ(eager_opt->loss_scale_state()->good_steps, reference.good);
}

TEST(LossScale, ScalesTheLossAndUnscalesGradients) {
  auto opt = optim::loss_scale_optimizer(std::make_shared<optim::SGD>(0.1));
  EXPECT_EQ(opt->loss_scale(), 32768);
  Tensor half_loss = cast(constant(3.f), DType::Float16);
  Tensor scaled = opt->get_scaled_loss(half_loss);
  EXPECT_EQ(scaled.dtype(), DType::Float32);  // 3 * 2^15 overflows float16's 65504
  EXPECT_EQ(scaled.item<double>(), 3 * 32768.0);
  std::vector<Tensor> grads = opt->get_unscaled_gradients({constant({65536.f}), Tensor()});
  EXPECT_EQ(grads[0].item<float>(), 2.f);
  EXPECT_FALSE(grads[1].defined());
  optim::SGD plain(0.1);
  EXPECT_EQ(plain.loss_scale(), 1);
  EXPECT_EQ(plain.get_scaled_loss(half_loss).impl(), half_loss.impl());
  Variable w(constant({1.f}));
  plain.apply_gradients({constant({1.f})}, {w});
  EXPECT_ERROR(plain.enable_loss_scaling(), FailedPreconditionError, "before the optimizer's first update");
  EXPECT_ERROR(optim::SGD(0.1).enable_loss_scaling({.initial_scale = 0}), InvalidArgumentError,
               "positive finite");
}

TEST(LossScale, CheckpointsKeepTheScale) {
  TempDir dir("loss_scale");
  const optim::LossScaleOptions options{.initial_scale = 64, .growth_steps = 2};
  auto opt = optim::loss_scale_optimizer(std::make_shared<optim::SGD>(0.1), options);
  Variable w(constant({1.f, 2.f}), "w");
  opt->apply_gradients({constant({INFINITY, 1.f})}, {w});  // 64 -> 32
  opt->apply_gradients({constant({1.f, 1.f})}, {w});       // one good step
  io::Checkpoint saved{{"w", w}, {"optimizer", *opt}};
  const std::string path = dir.file("ckpt");
  saved.save(path);
  auto fresh = optim::loss_scale_optimizer(std::make_shared<optim::SGD>(0.1), options);
  Variable w2(constant({0.f, 0.f}), "w");
  io::Checkpoint restored{{"w", w2}, {"optimizer", *fresh}};
  restored.restore(path);
  EXPECT_EQ(fresh->loss_scale(), 32);
  EXPECT_EQ(fresh->loss_scale_state()->good_steps, 1);
  // An optimizer without scaling reads the same file and ignores the scale.
  optim::SGD unscaled(0.1);
  Variable w3(constant({0.f, 0.f}), "w");
  io::Checkpoint plain{{"w", w3}, {"optimizer", unscaled}};
  plain.restore(path);
  expect_values(w3.value(), w.value().to_vector<double>(), 0);
}

TEST(LossScale, CompileUnderMixedFloat16ScalesAndTrains) {
  nn::set_global_policy(nn::Policy("mixed_float16"));
  random::set_seed(4);
  auto model = std::make_shared<nn::Sequential>();
  model->add(nn::Dense(8, {.activation = "tanh"}));
  model->add(nn::Dense(1));
  auto opt = std::make_shared<optim::Adam>(0.01);
  model->compile({.optimizer = opt, .loss = std::make_shared<nn::losses::MeanSquaredError>()});
  nn::clear_global_policy();
  EXPECT_TRUE(opt->loss_scaling());
  Tensor x = random::normal({128, 4});
  Tensor y = reduce_sum(x, {1}, true) * 0.5f;
  auto history = model->fit(x, y, {.batch_size = 32, .epochs = 15, .verbose = 0, .shuffle = false});
  const auto& loss = history->history().at("loss");
  EXPECT_LT(loss.back(), loss.front() / 4);
  EXPECT_EQ(opt->iterations(), 15 * 4);  // no step overflowed at these magnitudes
}

}  // namespace
}  // namespace ef
