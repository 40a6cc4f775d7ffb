// Conv2DTranspose, DepthwiseConv2D, SeparableConv2D and the depthwise_conv2d op: shapes,
// hand-checked values, gradients, config round trips, errors. (Values and gradients
// against PyTorch: tests/python/test_keras_layers_more.py.)
#include "nn/layer_round_trip.h"
#include "test_util.h"

namespace ef {
namespace {

using testing::expect_values;

nn::Initializer seeded(int64_t seed) { return nn::initializers::random_normal(0.0, 0.5, seed); }

TEST(Conv2DTranspose, OutputSizesFollowKerasAndTheKernelIsFiltersByChannels) {
  nn::Conv2DTranspose same(4, {3}, {.strides = {2}, .padding = "same"});
  testing::expect_meta(same(ones({2, 5, 6, 3})), {2, 10, 12, 4}, DType::Float32);
  EXPECT_EQ(same.kernel().shape(), Shape({3, 3, 4, 3}));
  // valid: in * stride + max(k - stride, 0); a 1x1 kernel with stride 3 leaves zero rows.
  nn::Conv2DTranspose valid(1, {1}, {.strides = {3}, .use_bias = false, .kernel_initializer = "ones"});
  Tensor spread = valid(constant({{{{2.0}}, {{5.0}}}}));  // [1, 2, 1, 1] -> [1, 6, 3, 1]
  EXPECT_EQ(spread.shape(), Shape({1, 6, 3, 1}));
  expect_values(spread, {2, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0});
  // Explicit output_padding: (in - 1) * stride + k + output_padding.
  nn::Conv2DTranspose padded(1, {3}, {.strides = {2}, .output_padding = nn::Window{1}});
  EXPECT_EQ(padded(ones({1, 4, 4, 2})).shape(), Shape({1, 10, 10, 1}));
  // A 2x2 kernel of ones with stride 2 copies each pixel into a 2x2 block.
  nn::Conv2DTranspose blocks(1, {2}, {.strides = {2}, .use_bias = false, .kernel_initializer = "ones"});
  expect_values(blocks(constant({{{{1.0}, {2.0}}}})), {1, 1, 2, 2, 1, 1, 2, 2});
}

TEST(Conv2DTranspose, GradientsMatchNumericDifferences) {
  testing::expect_gradients(
      [](const std::vector<Tensor>& in) {
        nn::Conv2DTranspose up(2, {3, 2},
                               {.strides = {2, 1},
                                .padding = "same",
                                .activation = "tanh",
                                .kernel_initializer = seeded(1),
                                .bias_initializer = seeded(2)});
        return up(in[0]);
      },
      {testing::rand64({1, 2, 3, 2}, 3)});
}

TEST(Conv2DTranspose, BadArgumentsAndInputsNameTheLayer) {
  EXPECT_ERROR(nn::Conv2DTranspose(0, {3}), InvalidArgumentError, "Conv2DTranspose", "'filters'");
  EXPECT_ERROR(nn::Conv2DTranspose(2, {3}, {.padding = "full"}), InvalidArgumentError, "'padding'",
               "\"full\"");
  EXPECT_ERROR(nn::Conv2DTranspose(2, {3}, {.strides = {2}, .output_padding = nn::Window{2}}),
               InvalidArgumentError, "'output_padding'", "[2, 2]", "strides [2, 2]");
  nn::Conv2DTranspose even(
      2, {4}, {.strides = {2}, .padding = "same", .output_padding = nn::Window{0}, .name = "up"});
  EXPECT_ERROR(even(ones({1, 3, 3, 1})), InvalidArgumentError, "layer 'up'", "does not convolve back",
               "input size 3");
  nn::Conv2DTranspose up(2, {3}, {.name = "up"});
  up(ones({1, 3, 3, 2}));
  EXPECT_ERROR(up(ones({1, 3, 3, 5})), InvalidArgumentError, "layer 'up'", "built for 2 input channels",
               "[1, 3, 3, 5]");
  EXPECT_ERROR(up(ones({3, 3, 2})), InvalidArgumentError, "rank 4", "[3, 3, 2]");
}

TEST(DepthwiseConv2D, ConvolvesEachChannelWithItsOwnFilters) {
  // Two channels, multiplier 2: channel c's filters give outputs 2c and 2c + 1.
  nn::DepthwiseConv2D dw({2}, {.depth_multiplier = 2,
                               .use_bias = false,
                               .depthwise_initializer = nn::Initializer(
                                   "iota", [](const Shape& s, DType d) { return testing::iota(s, d); })});
  Tensor x = testing::iota({1, 2, 2, 2});  // channel 0: 0 2 4 6, channel 1: 1 3 5 7
  Tensor y = dw(x);
  EXPECT_EQ(dw.kernel().shape(), Shape({2, 2, 2, 2}));
  // kernel[i, j, c, m] = ((i * 2 + j) * 2 + c) * 2 + m: sum over the 4 taps.
  auto out = [](int c, int m) {
    double s = 0;
    for (int tap = 0; tap < 4; ++tap) s += (tap * 2 + c) * (((tap * 2) + c) * 2 + m);
    return s;
  };
  expect_values(y, {out(0, 0), out(0, 1), out(1, 0), out(1, 1)});
}

TEST(DepthwiseConv2D, OpMatchesPerChannelConv2dAndHasGradients) {
  // Each channel's depthwise output is a conv2d of that channel alone.
  Tensor x = testing::rand64({2, 6, 5, 3}, 1), k = testing::rand64({3, 2, 3, 2}, 2);
  Tensor y = depthwise_conv2d(x, k, {2, 1}, "SAME", {1, 2});
  EXPECT_EQ(y.shape(), Shape({2, 3, 5, 6}));
  for (int64_t c = 0; c < 3; ++c) {
    Tensor alone = conv2d(slice(x, {0, 0, 0, c}, {-1, -1, -1, 1}), slice(k, {0, 0, c, 0}, {-1, -1, 1, -1}),
                          {2, 1}, "SAME", {1, 2});
    expect_values(slice(y, {0, 0, 0, 2 * c}, {-1, -1, -1, 2}), alone.to_vector<double>(), 1e-12);
  }
  testing::expect_gradients(
      [](const std::vector<Tensor>& in) { return depthwise_conv2d(in[0], in[1], {2}, "SAME"); },
      {testing::rand64({1, 4, 3, 2}, 3), testing::rand64({2, 3, 2, 2}, 4)});
  testing::expect_gradients(
      [](const std::vector<Tensor>& in) { return depthwise_conv2d(in[0], in[1], {1}, "VALID", {2}); },
      {testing::rand64({1, 5, 5, 2}, 5), testing::rand64({2, 2, 2, 1}, 6)});
  EXPECT_EQ(depthwise_conv2d(ones({0, 4, 4, 2}), ones({3, 3, 2, 1}), {1}, "SAME").shape(),
            Shape({0, 4, 4, 2}));
}

TEST(DepthwiseConv2D, BadArgumentsAndInputsNameTheOpOrLayer) {
  EXPECT_ERROR(depthwise_conv2d(ones({1, 4, 4, 3}), ones({3, 3, 2, 1}), {1}, "SAME"), InvalidArgumentError,
               "depthwise_conv2d", "[1, 4, 4, 3]", "expects 2");
  EXPECT_ERROR(depthwise_conv2d(ones({1, 2, 2, 3}), ones({3, 3, 3, 1}), {1}, "VALID"), InvalidArgumentError,
               "depthwise_conv2d", "does not fit");
  EXPECT_ERROR(depthwise_conv2d(ones({1, 4, 4, 3}), ones({3, 3, 3}), {1}, "SAME"), InvalidArgumentError,
               "'filter'", "rank 4");
  EXPECT_ERROR(depthwise_conv2d(ones({1, 4, 4, 1}), ones({1, 1, 1, 1}), {1}, "same"), InvalidArgumentError,
               "'padding'");
  EXPECT_ERROR(depthwise_conv2d(ones({1, 4, 4, 1}), ones({1, 1, 1, 1}, DType::Float64), {1}, "SAME"),
               InvalidArgumentError, "'filter'", "float64");
  EXPECT_ERROR(nn::DepthwiseConv2D({3}, {.depth_multiplier = 0}), InvalidArgumentError, "'depth_multiplier'");
  EXPECT_ERROR(nn::DepthwiseConv2D({3}, {.strides = {1, 2, 3}}), InvalidArgumentError, "'strides'",
               "[1, 2, 3]");
  nn::DepthwiseConv2D dw({3}, {.name = "dw"});
  dw(ones({1, 5, 5, 4}));
  EXPECT_ERROR(dw(ones({1, 5, 5, 3})), InvalidArgumentError, "layer 'dw'", "built for 4 input channels");
}

TEST(SeparableConv2D, IsADepthwiseThenAPointwiseConvolution) {
  nn::SeparableConv2D sep(3, {3},
                          {.padding = "same",
                           .depth_multiplier = 2,
                           .depthwise_initializer = seeded(1),
                           .pointwise_initializer = seeded(2),
                           .bias_initializer = seeded(3)});
  Tensor x = testing::rand64({2, 5, 4, 2}, 7);
  Tensor y = sep(x);
  EXPECT_EQ(sep.depthwise_kernel().shape(), Shape({3, 3, 2, 2}));
  EXPECT_EQ(sep.pointwise_kernel().shape(), Shape({1, 1, 4, 3}));
  EXPECT_EQ(sep.bias().shape(), Shape({3}));
  Tensor expected =
      conv2d(depthwise_conv2d(x, sep.depthwise_kernel(), {1}, "SAME"), sep.pointwise_kernel(), {1}, "VALID") +
      sep.bias();
  expect_values(y, expected.to_vector<double>(), 1e-12);
  std::vector<std::string> names;
  for (const auto& [name, v] : sep.named_variables()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"depthwise_kernel", "pointwise_kernel", "bias"}));
  testing::expect_gradients(
      [](const std::vector<Tensor>& in) {
        nn::SeparableConv2D s(
            2, {2}, {.strides = {2}, .depthwise_initializer = seeded(4), .pointwise_initializer = seeded(5)});
        return s(in[0]);
      },
      {testing::rand64({1, 4, 4, 2}, 8)});
  EXPECT_ERROR(nn::SeparableConv2D(0, {3}), InvalidArgumentError, "SeparableConv2D", "'filters'");
  EXPECT_ERROR(sep(ones({2, 5, 4, 3}, DType::Float64)), InvalidArgumentError, "built for 2 input channels");
}

TEST(ConvVariantLayers, ConfigsRoundTripToLayersThatComputeTheSame) {
  Tensor x = testing::rand64({2, 6, 6, 3}, 9);
  nn::Conv2DTranspose up(2, {3, 2},
                         {.strides = {2},
                          .padding = "same",
                          .output_padding = nn::Window{1, 1},
                          .activation = "relu",
                          .bias_initializer = seeded(1)});
  testing::expect_config_round_trip(up, x);
  EXPECT_EQ(std::get<std::vector<int64_t>>(up.get_config().values.at("output_padding")),
            (std::vector<int64_t>{1, 1}));
  nn::Conv2DTranspose plain(2, {3});
  testing::expect_config_round_trip(plain, x);
  EXPECT_TRUE(std::holds_alternative<std::nullptr_t>(plain.get_config().values.at("output_padding")));
  nn::DepthwiseConv2D dw({3}, {.strides = {2, 1},
                               .padding = "same",
                               .depth_multiplier = 2,
                               .dilation_rate = {1, 2},
                               .activation = "tanh",
                               .bias_initializer = seeded(2)});
  testing::expect_config_round_trip(dw, x);
  EXPECT_EQ(std::get<int64_t>(dw.get_config().values.at("depth_multiplier")), 2);
  nn::SeparableConv2D sep(
      4, {2},
      {.depth_multiplier = 3, .use_bias = false, .pointwise_initializer = nn::initializers::he_normal(3)});
  testing::expect_config_round_trip(sep, x);
}

}  // namespace
}  // namespace ef
