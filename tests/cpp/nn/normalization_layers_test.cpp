// GroupNormalization: statistics per example and group, gradients, config round trip,
// errors. (Values and gradients against torch.nn.GroupNorm: tests/python/test_keras_layers_more.py.)
#include "nn/layer_round_trip.h"
#include "test_util.h"

namespace ef {
namespace {

using testing::expect_values;

TEST(GroupNormalization, NormalizesEachGroupOfEachExample) {
  nn::GroupNormalization gn(2, {.epsilon = 1e-12});
  Tensor x = testing::rand64({2, 3, 4, 6}, 1) * 5.0 + 2.0;
  Tensor y = gn(x);
  // Channels 0-2 and 3-5 of each example: mean 0, variance 1 over [3, 4, 3] values.
  Tensor grouped = reshape(y, {2, 3, 4, 2, 3});
  expect_values(reduce_mean(grouped, {1, 2, 4}), std::vector<double>(4, 0.0), 1e-9);
  expect_values(reduce_mean(square(grouped), {1, 2, 4}), std::vector<double>(4, 1.0), 1e-9);
  EXPECT_EQ(gn.gamma().shape(), Shape({6}));
  EXPECT_EQ(gn.beta().shape(), Shape({6}));
  // groups = -1: one group per channel (instance normalization); axis 1 of [N, C, L].
  nn::GroupNormalization instance(-1, {.axis = 1, .epsilon = 1e-12, .center = false, .scale = false});
  Tensor z = instance(testing::rand64({2, 3, 5}, 2));
  expect_values(reduce_mean(z, {2}), std::vector<double>(6, 0.0), 1e-9);
  EXPECT_EQ(instance.variables().size(), 0u);
}

TEST(GroupNormalization, GradientsMatchNumericDifferences) {
  testing::expect_gradients(
      [](const std::vector<Tensor>& in) {
        nn::GroupNormalization gn(2, {.beta_initializer = nn::initializers::random_normal(0.0, 0.5, 2),
                                      .gamma_initializer = nn::initializers::random_normal(1.0, 0.5, 1)});
        return gn(in[0]);
      },
      {testing::rand64({2, 2, 2, 4}, 3)});
}

TEST(GroupNormalization, BadArgumentsAndInputsNameTheLayer) {
  EXPECT_ERROR(nn::GroupNormalization(0), InvalidArgumentError, "GroupNormalization", "'groups'");
  EXPECT_ERROR(nn::GroupNormalization(2, {.epsilon = 0}), InvalidArgumentError, "epsilon");
  EXPECT_ERROR(nn::GroupNormalization(4, {.name = "gn"})(ones({2, 3, 6})), InvalidArgumentError, "layer 'gn'",
               "6 channels", "'groups' = 4", "[2, 3, 6]");
  EXPECT_ERROR(nn::GroupNormalization(8)(ones({2, 6})), InvalidArgumentError, "'groups' = 8");
  EXPECT_ERROR(nn::GroupNormalization(1, {.axis = 0})(ones({2, 6})), InvalidArgumentError, "batch axis");
  EXPECT_ERROR(nn::GroupNormalization(1, {.axis = 2})(ones({2, 6})), InvalidArgumentError, "out of range");
  nn::GroupNormalization gn(3, {.name = "gn"});
  gn(ones({2, 6}));
  EXPECT_ERROR(gn(ones({2, 3})), InvalidArgumentError, "layer 'gn'", "built for 6 channels", "[2, 3]");
}

TEST(GroupNormalization, ConfigRoundTripsToALayerThatComputesTheSame) {
  nn::GroupNormalization gn(
      3, {.axis = 1, .epsilon = 1e-4, .gamma_initializer = nn::initializers::random_normal(1.0, 0.5, 4)});
  testing::expect_config_round_trip(gn, testing::rand64({2, 6, 3}, 5));
  EXPECT_EQ(std::get<int64_t>(gn.get_config().values.at("groups")), 3);
}

TEST(PReLU, LearnsASlopePerPositionOrSharedAlongAxes) {
  nn::PReLU prelu({.alpha_initializer = nn::initializers::constant(0.25), .shared_axes = {1, 2}});
  Tensor x = constant({{{{-4.0, 2.0}, {1.0, -8.0}}}});  // [1, 1, 2, 2]
  expect_values(prelu(x), {-1, 2, 1, -2});
  EXPECT_EQ(prelu.alpha().shape(), Shape({1, 1, 2}));
  nn::PReLU full;
  full(ones({3, 4, 5}));
  EXPECT_EQ(full.alpha().shape(), Shape({4, 5}));
  expect_values(full(ones({3, 4, 5}) * -1.0), std::vector<double>(60, 0.0));  // alpha starts at 0: a ReLU
  testing::expect_gradients(
      [](const std::vector<Tensor>& in) {
        nn::PReLU p({.alpha_initializer = nn::initializers::random_uniform(0.0, 0.5, 1), .shared_axes = {2}});
        return p(in[0]);
      },
      {testing::rand64({2, 3, 4}, 6)}, /*order=*/1);
}

TEST(PReLU, BadArgumentsAndInputsNameTheLayerAndConfigsRoundTrip) {
  EXPECT_ERROR(nn::PReLU({.shared_axes = {0}}), InvalidArgumentError, "PReLU", "'shared_axes'", "batch axis");
  EXPECT_ERROR(nn::PReLU({.shared_axes = {3}, .name = "act"})(ones({2, 3, 4})), InvalidArgumentError,
               "layer 'act'", "shared axis 3", "[2, 3, 4]");
  EXPECT_ERROR(nn::PReLU()(ones({4})), InvalidArgumentError, "rank >= 2", "[4]");
  nn::PReLU prelu({.name = "act"});
  prelu(ones({2, 3}));
  EXPECT_ERROR(prelu(ones({2, 4})), InvalidArgumentError, "layer 'act'", "alpha of shape [3]", "[2, 4]");
  nn::PReLU shared({.alpha_initializer = nn::initializers::random_uniform(0.0, 0.5, 2), .shared_axes = {1}});
  testing::expect_config_round_trip(shared, testing::rand64({2, 3, 4}, 7));
  nn::PReLU plain;
  testing::expect_config_round_trip(plain, testing::rand64({2, 3}, 8));
  EXPECT_TRUE(std::holds_alternative<std::nullptr_t>(plain.get_config().values.at("shared_axes")));
}

TEST(SpatialDropout2D, DropsWholeChannelsWhileTrainingOnly) {
  nn::SpatialDropout2D drop(0.5, 3);
  Tensor x = ones({8, 3, 4, 16}, DType::Float64);
  Tensor y = drop(x, /*training=*/true);
  // Each (example, channel) is all 0 or all 2 over its 12 pixels.
  Tensor per_channel_min = reduce_min(y, {1, 2}), per_channel_max = reduce_max(y, {1, 2});
  expect_values(per_channel_min, per_channel_max.to_vector<double>(), 0);
  for (double v : per_channel_max.to_vector<double>()) EXPECT_TRUE(v == 0.0 || v == 2.0) << v;
  expect_values(drop(x), x.to_vector<double>(), 0);  // inference: the identity
  EXPECT_ERROR(nn::SpatialDropout2D(1.0), InvalidArgumentError, "SpatialDropout2D", "'rate'");
  EXPECT_ERROR(nn::SpatialDropout2D(0.5, std::nullopt, "drop")(ones({2, 3}), true), InvalidArgumentError,
               "layer 'drop'", "rank 4", "[2, 3]");
  nn::SpatialDropout2D seeded(0.3, 4);
  testing::expect_config_round_trip(seeded, x);
  EXPECT_EQ(std::get<int64_t>(seeded.get_config().values.at("seed")), 4);
}

}  // namespace
}  // namespace ef
