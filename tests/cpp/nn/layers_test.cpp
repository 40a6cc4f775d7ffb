// Layers and initializers: values on hand-checkable cases, gradients through layers,
// statistics of the random initializers, errors.
#include "test_util.h"

namespace ef {
namespace {

using testing::expect_values;
using testing::iota;

TEST(Dense, ComputesTheActivationOfTheAffineMap) {
  nn::Dense dense(2, {.activation = "relu",
                      .kernel_initializer = "ones",
                      .bias_initializer = nn::initializers::constant(-4)});
  expect_values(dense(constant({{1.f, 2.f}, {3.f, 4.f}})), {0, 0, 3, 3});  // relu(sum - 4)
  // Rank-3 inputs contract their last axis; any function can be the activation.
  nn::Dense twice(1, {.activation = nn::Activation([](const Tensor& x) { return x * 2.0f; }, "twice"),
                      .use_bias = false,
                      .kernel_initializer = "ones"});
  Tensor y = twice(iota({2, 2, 3}));
  testing::expect_meta(y, {2, 2, 1}, DType::Float32);
  expect_values(y, {6, 24, 42, 60});
  EXPECT_EQ(twice.variables().size(), 1u);
  EXPECT_ERROR(nn::Dense(2, {.activation = "nope"}), InvalidArgumentError, "unknown activation \"nope\"", "relu");
}

TEST(Dense, GradientsMatchNumericDifferences) {
  testing::expect_gradients(
      [](const std::vector<Tensor>& in) {
        nn::Dense dense(3, {.activation = "tanh", .kernel_initializer = nn::initializers::glorot_uniform(7)});
        return dense(in[0]);
      },
      {testing::rand64({4, 5}, 1)});
}

TEST(Initializers, FollowKerasFormulas) {
  const Shape shape{400, 600};
  Tensor g = nn::initializers::glorot_uniform(1)(shape, DType::Float64);
  const double limit = std::sqrt(6.0 / 1000);
  EXPECT_LE(reduce_max(abs(g)).item<double>(), limit);
  EXPECT_GT(reduce_max(abs(g)).item<double>(), 0.99 * limit);
  // Uniform in ±limit has variance limit²/3 = 2 / (fan_in + fan_out).
  EXPECT_NEAR(reduce_variance(g).item<double>(), 2.0 / 1000, 2e-5);
  Tensor h = nn::initializers::he_normal(2)({3, 3, 64, 32}, DType::Float64);  // fan_in 3*3*64
  EXPECT_NEAR(reduce_variance(h).item<double>(), 2.0 / 576, 2e-4);
  EXPECT_LE(reduce_max(abs(h)).item<double>(), 2 * std::sqrt(2.0 / 576) / .87962566 + 1e-12);
  // Seeded initializers repeat; by-name lookup works; constant and zeros are exact.
  expect_values(nn::initializers::glorot_uniform(1)(shape, DType::Float64), g.to_vector<double>(), 0);
  expect_values(nn::Initializer("zeros")({2}), {0, 0});
  expect_values(nn::initializers::constant(2.5)({2}, DType::Float64), {2.5, 2.5});
  EXPECT_ERROR(nn::Initializer("glorot"), InvalidArgumentError, "unknown initializer \"glorot\"", "glorot_uniform");
  EXPECT_ERROR(nn::initializers::he_normal()({2, 2}, DType::Int32), InvalidArgumentError, "he_normal", "int32");
}

TEST(Flatten, KeepsTheBatchDimension) {
  nn::Flatten flatten;
  testing::expect_meta(flatten(iota({2, 3, 4})), {2, 12}, DType::Float32);
  testing::expect_meta(flatten(iota({0, 3})), {0, 3}, DType::Float32);
  EXPECT_ERROR(flatten(constant(1.f)), InvalidArgumentError, "Flatten", "scalar");
}

TEST(Dropout, OnlyActsWhileTraining) {
  nn::Dropout dropout(0.5, 3);
  Tensor x = ones({1000});
  expect_values(dropout(x), x.to_vector<double>(), 0);
  std::vector<double> kept = dropout(x, true).to_vector<double>();
  int zeros = 0;
  for (double v : kept) {
    EXPECT_TRUE(v == 0 || v == 2);
    zeros += v == 0;
  }
  EXPECT_GT(zeros, 400);
  EXPECT_LT(zeros, 600);
  EXPECT_ERROR(nn::Dropout(1.0), InvalidArgumentError, "'rate' must be in [0, 1)");
}

TEST(LayerNormalization, NormalizesEachExampleAndMatchesGradients) {
  nn::LayerNormalization norm({.epsilon = 1e-12});
  Tensor y = norm(constant({{1.0, 2.0, 3.0}, {-1.0, -1.0, 5.0}}));
  // Row 1: mean 2, variance 2/3. Row 2: mean 1, variance 8.
  const double a = 1 / std::sqrt(2.0 / 3), b = 1 / std::sqrt(8.0);
  expect_values(y, {-a, 0, a, -2 * b, -2 * b, 4 * b}, 1e-9);
  EXPECT_EQ(norm.variables().size(), 2u);
  testing::expect_gradients(
      [](const std::vector<Tensor>& in) {
        nn::LayerNormalization layer({.axis = 1, .beta_initializer = nn::initializers::constant(0.5),
                                      .gamma_initializer = nn::initializers::constant(1.5)});
        return layer(in[0]);
      },
      {testing::rand64({3, 4, 2}, 5)});
  nn::LayerNormalization bad({.axis = 3});
  EXPECT_ERROR(bad(ones({2, 2})), InvalidArgumentError, "axis 3 is out of range", "[2, 2]");
  EXPECT_ERROR(nn::LayerNormalization({.epsilon = -1}), InvalidArgumentError, "LayerNormalization", "epsilon");
  nn::LayerNormalization plain({.center = false, .scale = false});
  plain(ones({2, 2}));
  EXPECT_TRUE(plain.variables().empty());
}

TEST(Embedding, LooksUpRowsByIdAndRejectsBadIds) {
  nn::Embedding embedding(4, 2, {.embeddings_initializer = nn::Initializer(
                                     "iota", [](const Shape& s, DType d) { return iota(s, d); })});
  expect_values(embedding(testing::i64({3, 0, 3})), {6, 7, 0, 1, 6, 7});
  testing::expect_meta(embedding(constant({{1, 2}})),
                       {1, 2, 2}, DType::Float32);
  EXPECT_ERROR(embedding(testing::i64({4})), InvalidArgumentError, "4");
  EXPECT_ERROR(embedding(ones({2})), InvalidArgumentError, "Embedding", "int32 or int64");
  // Default initializer: uniform in ±0.05.
  nn::Embedding fresh(100, 8);
  fresh(testing::i64({0}));
  EXPECT_LE(reduce_max(abs(fresh.embeddings().value())).item<float>(), 0.05f);
}

TEST(Recurrent, GruWithoutResetAfterAppliesTheResetGateBeforeTheRecurrentMatmul) {
  // One unit and one feature, two steps, computed by hand with Keras' formula: the
  // candidate is tanh(x + 1 + (r * h) @ 1).
  nn::RecurrentOptions options{.kernel_initializer = "ones",
                               .recurrent_initializer = "ones",
                               .bias_initializer = "ones",
                               .reset_after = false};
  nn::Recurrent gru(nn::Recurrent::Cell::kGRU, 1, options);
  Tensor x = constant({{{0.5}, {-1.0}}});  // [batch 1, steps 2, features 1]
  Tensor y = gru(x);
  EXPECT_EQ(gru.variables()[2].shape(), Shape({3}));  // one bias, not [2, 3 * units]
  auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
  double h = 0;
  for (double xt : {0.5, -1.0}) {
    const double z = sigmoid(xt + h + 1), r = sigmoid(xt + h + 1), hh = std::tanh(xt + 1 + r * h);
    h = z * h + (1 - z) * hh;
  }
  expect_values(y, {h}, 1e-6);
  nn::Config config = gru.get_config();
  EXPECT_FALSE(std::get<bool>(config.values.at("reset_after")));
  auto again = nn::layer_from_config("GRU", config);
  expect_values((*again)(x), {h}, 1e-6);
  EXPECT_NO_THROW(nn::Recurrent(nn::Recurrent::Cell::kLSTM, 4, {.reset_after = false}));  // unused by LSTM
}

TEST(Recurrent, ReturnsStatesAndStartsFromGivenOnes) {
  // SimpleRNN with every weight 1 and one unit: h = tanh(x + h + 1), by hand.
  nn::RecurrentOptions options{.return_sequences = true,
                               .return_state = true,
                               .kernel_initializer = "ones",
                               .recurrent_initializer = "ones",
                               .bias_initializer = "ones"};
  auto rnn = nn::SimpleRNN(1, options);
  const Tensor x = constant({{{0.5}, {-1.0}}});  // [batch 1, steps 2, features 1]
  const Tensor h0 = constant({{0.25}});
  std::vector<Tensor> outputs = rnn->call_all({x, h0});
  ASSERT_EQ(outputs.size(), 2u);
  const double h1 = std::tanh(0.5 + 0.25 + 1), h2 = std::tanh(-1.0 + h1 + 1);
  expect_values(outputs[0], {h1, h2}, 1e-6);
  expect_values(outputs[1], {h2}, 1e-6);
  EXPECT_ERROR((*rnn)(x), InvalidArgumentError, "gives 2 outputs");
  EXPECT_ERROR(rnn->call_all({x, h0, h0}), InvalidArgumentError, "takes 1 initial state(s), got 2");
  EXPECT_ERROR(rnn->call_all({x, constant({{1.0, 2.0}})}), InvalidArgumentError, "initial state 0", "[1, 2]");
}

TEST(Recurrent, MaskedStepsKeepTheStateInSequentialModels) {
  // Masking zeroes and masks the second step; the RNN then skips it.
  nn::RecurrentOptions options{
      .kernel_initializer = "ones", .recurrent_initializer = "ones", .bias_initializer = "ones"};
  nn::Sequential model({std::make_shared<nn::Masking>(), nn::SimpleRNN(1, options)});
  const Tensor x = constant({{{0.5}, {0.0}, {-1.0}}});
  const double h1 = std::tanh(0.5 + 1), h3 = std::tanh(-1.0 + h1 + 1);
  expect_values(model(x), {h3}, 1e-6);
  nn::Masking masking;
  expect_values(cast(*masking.compute_mask({x}, std::nullopt), DType::Float32), {1, 0, 1});
  EXPECT_ERROR(masking(constant({1.0, 2.0})), InvalidArgumentError, "Masking", "[2]");
  // A mask of the wrong shape is refused, naming both shapes.
  auto rnn = nn::SimpleRNN(1);
  EXPECT_ERROR(rnn->call_all({x}, constant({{true, false}})), InvalidArgumentError, "mask", "[1, 3]",
               "[1, 2]");
}

TEST(Recurrent, StatefulLayersCarryTheirStatesAcrossCalls) {
  nn::RecurrentOptions options{.stateful = true,
                               .kernel_initializer = "ones",
                               .recurrent_initializer = "ones",
                               .bias_initializer = "ones"};
  auto rnn = nn::SimpleRNN(1, options);
  const double h1 = std::tanh(0.5 + 1), h2 = std::tanh(-1.0 + h1 + 1);
  expect_values((*rnn)(constant({{{0.5}}})), {h1}, 1e-6);
  expect_values((*rnn)(constant({{{-1.0}}})), {h2}, 1e-6);
  rnn->reset_states();
  expect_values((*rnn)(constant({{{0.5}}})), {h1}, 1e-6);
  EXPECT_ERROR((*rnn)(constant({{{0.5}}, {{0.5}}})), InvalidArgumentError, "stateful with batch size 1");
}

}  // namespace
}  // namespace ef
