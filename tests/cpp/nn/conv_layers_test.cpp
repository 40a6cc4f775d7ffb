// Conv2D, pooling layers and BatchNormalization: shapes, variables, moving statistics,
// gradients through the layers, errors. (Values against PyTorch: tests/python/test_nn.py.)
#include "test_util.h"

namespace ef {
namespace {

using testing::expect_values;

TEST(Conv2D, BuildsAKernelFromTheChannelCountAndPads) {
  nn::Conv2D conv(4, {3}, {.padding = "same", .activation = "relu"});
  Tensor y = conv(ones({2, 5, 5, 3}));
  testing::expect_meta(y, {2, 5, 5, 4}, DType::Float32);
  EXPECT_EQ(conv.kernel().shape(), Shape({3, 3, 3, 4}));
  EXPECT_EQ(conv.bias().shape(), Shape({4}));
  nn::Conv2D strided(1, {2, 2}, {.strides = {2}, .kernel_initializer = "ones", .bias_initializer = "ones"});
  expect_values(strided(testing::iota({1, 4, 4, 1})), {0 + 1 + 4 + 5 + 1, 2 + 3 + 6 + 7 + 1, 8 + 9 + 12 + 13 + 1,
                                                       10 + 11 + 14 + 15 + 1});
  EXPECT_ERROR(conv(ones({2, 5, 5, 2})), InvalidArgumentError, "built for 3 input channels", "[2, 5, 5, 2]");
  EXPECT_ERROR(conv(ones({5, 5, 3})), InvalidArgumentError, "rank 4", "[5, 5, 3]");
  EXPECT_ERROR(nn::Conv2D(4, {3}, {.padding = "full"}), InvalidArgumentError, "'padding'", "\"full\"");
  EXPECT_ERROR(nn::Conv2D(4, {3, 0}), InvalidArgumentError, "'kernel_size'", "[3, 0]");
}

TEST(Conv2D, GradientsMatchNumericDifferences) {
  testing::expect_gradients(
      [](const std::vector<Tensor>& in) {
        nn::Conv2D conv(2, {2}, {.padding = "same", .activation = "tanh",
                                 .kernel_initializer = nn::initializers::glorot_uniform(3)});
        return conv(in[0]);
      },
      {testing::rand64({1, 3, 3, 2}, 4)});
}

TEST(Pooling, LayersPoolWithDefaultStridesOfThePoolSize) {
  Tensor x = testing::iota({1, 4, 4, 1});
  expect_values(nn::MaxPool2D()(x), {5, 7, 13, 15});
  expect_values(nn::AveragePool2D()(x), {2.5, 4.5, 10.5, 12.5});
  testing::expect_meta(nn::MaxPool2D({3}, {.strides = {{1}}, .padding = "same"})(x), {1, 4, 4, 1}, DType::Float32);
  EXPECT_ERROR(nn::MaxPool2D()(ones({4, 4})), InvalidArgumentError, "MaxPool2D", "rank 4");
}

TEST(BatchNormalization, NormalizesWithBatchStatisticsWhileTrainingAndMovesThem) {
  nn::BatchNormalization bn({.momentum = 0.5, .epsilon = 1e-12});
  Tensor x = constant({{1.0, 10.0}, {3.0, 10.0}});
  Tensor y = bn(x, /*training=*/true);
  expect_values(y, {-1, 0, 1, 0}, 1e-6);  // feature 2 has no variance: (x - mean) = 0
  // moving = 0.5 * initial + 0.5 * batch
  expect_values(bn.moving_mean().value(), {1.0, 5.0});
  expect_values(bn.moving_variance().value(), {0.5 + 0.5 * 1.0, 0.5});
  EXPECT_EQ(bn.trainable_variables().size(), 2u);
  EXPECT_EQ(bn.non_trainable_variables().size(), 2u);
  // Inference uses the moving statistics and changes nothing.
  expect_values(bn(x), {0, 5 / std::sqrt(0.5), 2 / std::sqrt(1.0), 5 / std::sqrt(0.5)}, 1e-6);
  expect_values(bn.moving_mean().value(), {1.0, 5.0});
  EXPECT_ERROR(bn(ones({2, 3}, DType::Float64)), InvalidArgumentError, "built for 2 features", "[2, 3]");
}

TEST(BatchNormalization, NormalizesAlongAnInnerAxisAndChecksItsOptions) {
  // Features on axis 1 of [2, 3, 2]: statistics over axes 0 and 2.
  nn::BatchNormalization bn({.axis = 1, .momentum = 0.5, .epsilon = 1e-12});
  Tensor x = testing::rand64({2, 3, 2}, 11);
  Tensor y = bn(x, /*training=*/true);
  expect_values(reduce_mean(y, {0, 2}), {0, 0, 0}, 1e-9);
  expect_values(reduce_mean(square(y), {0, 2}), {1, 1, 1}, 1e-9);
  expect_values(bn.moving_mean().value(), (reduce_mean(x, {0, 2}) * 0.5).to_vector<double>(), 1e-12);
  EXPECT_EQ(bn.variables().size(), 4u);
  EXPECT_ERROR(nn::BatchNormalization({.axis = -3})(ones({2, 2})), InvalidArgumentError, "BatchNormalization",
               "axis -3 is out of range", "[2, 2]");
  EXPECT_ERROR(nn::BatchNormalization({.epsilon = 0}), InvalidArgumentError, "BatchNormalization", "epsilon");
  nn::BatchNormalization no_params({.center = false, .scale = false});
  no_params(x, true);
  EXPECT_EQ(no_params.trainable_variables().size(), 0u);
}

TEST(BatchNormalization, TrainingGradientsMatchNumericDifferencesAndSkipMovingStatistics) {
  testing::expect_gradients(
      [](const std::vector<Tensor>& in) {
        nn::BatchNormalization bn({.gamma_initializer = nn::initializers::constant(1.5)});
        return bn(in[0], true);
      },
      {testing::rand64({2, 2, 2, 3}, 9)});
  nn::BatchNormalization bn;
  Tensor x = testing::rand64({4, 3}, 10);
  GradientTape tape;
  tape.watch(x);
  Tensor loss = reduce_sum(square(bn(x, true)));
  std::vector<Tensor> grads = tape.gradient(loss, bn.variables());
  EXPECT_TRUE(grads[0].defined());
  EXPECT_FALSE(grads[2].defined());  // moving_mean: not connected
}

}  // namespace
}  // namespace ef
