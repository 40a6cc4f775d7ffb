// Tests of activations, softmax, cross-entropy losses, bias_add, l2_normalize and
// dropout. Expected values were computed by hand (and cross-checked with PyTorch).
#include <cmath>

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_meta;
using testing::expect_values;

Tensor f64(std::vector<double> v) {
  Shape s{static_cast<int64_t>(v.size())};
  return constant(v, s);
}
const std::vector<double> kX = {-2, -0.5, 0, 0.5, 2};

TEST(NnActivation, Values) {
  Tensor x = f64(kX);
  expect_values(sigmoid(x), {0.11920292202211755, 0.3775406687981454, 0.5, 0.6224593312018546, 0.8807970779778823},
                1e-14);
  expect_values(relu(x), {0, 0, 0, 0.5, 2});
  expect_values(relu6(f64({-1, 3, 6, 7.5})), {0, 3, 6, 6});
  expect_values(leaky_relu(x), {-0.4, -0.1, 0, 0.5, 2});
  expect_values(leaky_relu(x, 0.5), {-1, -0.25, 0, 0.5, 2});
  expect_values(elu(x), {-0.8646647167633873, -0.3934693402873666, 0, 0.5, 2}, 1e-14);
  expect_values(selu(x), {-1.5201664685956948, -0.6917581878028713, 0, 0.5253504936777402, 2.101401974710961},
                1e-14);
  expect_values(gelu(x), {-0.04550026389635842, -0.15426876936299344, 0, 0.34573123063700656, 1.9544997361036416},
                1e-14);
  expect_values(gelu(x, /*approximate=*/true),
                {-0.04540230591222494, -0.15428599017485606, 0, 0.34571400982514394, 1.954597694087775}, 1e-14);
  expect_values(softplus(x),
                {0.1269280110429725, 0.4740769841801067, 0.6931471805599453, 0.9740769841801067, 2.1269280110429727},
                1e-14);
  expect_values(softsign(x), {-2.0 / 3, -1.0 / 3, 0, 1.0 / 3, 2.0 / 3}, 1e-14);
}

TEST(NnActivation, ExtremeInputsAreStable) {
  Tensor big = f64({-100, 100, -1000, 1000});
  // exp(-100) = 3.720075976020836e-44: kept to full relative precision.
  std::vector<double> s = sigmoid(big).to_vector<double>();
  EXPECT_NEAR(s[0] / 3.720075976020836e-44, 1.0, 1e-14);
  EXPECT_EQ(s[1], 1.0);
  EXPECT_EQ(s[2], 0.0);
  EXPECT_EQ(s[3], 1.0);
  std::vector<double> sp = softplus(big).to_vector<double>();
  EXPECT_NEAR(sp[0] / 3.720075976020836e-44, 1.0, 1e-14);
  EXPECT_EQ(sp[1], 100.0);
  EXPECT_EQ(sp[2], 0.0);
  EXPECT_EQ(sp[3], 1000.0);
  // float32: no overflow to inf or NaN.
  Tensor big32 = constant({-100.f, 100.f, 89.f});
  expect_values(sigmoid(big32), {0, 1, 1});
  expect_values(softplus(big32), {0, 100, 89});
  expect_values(elu(big32), {-1, 100, 89});
  expect_values(selu(constant(-100.f)), {-1.7580993408473766});
}

TEST(NnActivation, NanPropagates) {
  Tensor x = f64({NAN});
  for (const Tensor& y : {sigmoid(x), relu(x), relu6(x), elu(x), softplus(x), gelu(x)})
    EXPECT_TRUE(std::isnan(y.item<double>())) << y;
}

TEST(NnActivation, DtypesScalarEmptyAndErrors) {
  Tensor x32 = constant({{-1.f, 2.f}});
  expect_meta(relu(x32), {1, 2}, DType::Float32);
  expect_values(relu(x32), {0, 2});
  expect_meta(sigmoid(constant(0.0)), {}, DType::Float64);
  expect_values(sigmoid(constant(0.f)), {0.5});
  expect_meta(gelu(zeros({0, 3})), {0, 3}, DType::Float32);
  EXPECT_ERROR(relu(constant({1, 2})), InvalidArgumentError, "relu", "int32");
  EXPECT_ERROR(leaky_relu(constant({true})), InvalidArgumentError, "leaky_relu", "bool");
  EXPECT_ERROR(softplus(Tensor()), Error);
}

TEST(NnSoftmax, ValuesAndRowsSumToOne) {
  Tensor l = constant({{1.0, 2.0, 3.0}, {1.0, 1.0, 1.0}});
  expect_values(softmax(l), {0.09003057317038045, 0.2447284710547976, 0.6652409557748218, 1. / 3, 1. / 3, 1. / 3},
                1e-14);
  expect_values(log_softmax(l), {-2.4076059644443806, -1.4076059644443804, -0.4076059644443804,
                                 -1.0986122886681098, -1.0986122886681098, -1.0986122886681098},
                1e-14);
  // Along axis 0 (columns side by side).
  expect_values(softmax(l, 0), {0.5, 0.7310585786300049, 0.8807970779778823, 0.5, 0.2689414213699951,
                                0.11920292202211755},
                1e-14);
  expect_values(log_softmax(l, -2), {std::log(0.5), std::log(0.7310585786300049), std::log(0.8807970779778823),
                                     std::log(0.5), std::log(0.2689414213699951), std::log(0.11920292202211755)},
                1e-13);
  // Many rows (parallel) and a long axis: every row sums to 1.
  Tensor big = linspace(-50, 50, 300 * 257, DType::Float32);
  std::vector<float> v = softmax(constant(big.to_vector<float>(), {300, 257})).to_vector<float>();
  for (int r = 0; r < 300; ++r) {
    double sum = 0;
    for (int c = 0; c < 257; ++c) sum += v[r * 257 + c];
    ASSERT_NEAR(sum, 1.0, 1e-5) << "row " << r;
  }
  // Middle axis of a rank-3 tensor with more than one column block.
  Tensor t = constant(linspace(0, 1, 2 * 3 * 70, DType::Float64).to_vector<double>(), {2, 3, 70});
  std::vector<double> m = softmax(t, 1).to_vector<double>();
  for (int o = 0; o < 2; ++o)
    for (int c = 0; c < 70; ++c) {
      double sum = 0;
      for (int i = 0; i < 3; ++i) sum += m[(o * 3 + i) * 70 + c];
      ASSERT_NEAR(sum, 1.0, 1e-12);
    }
}

TEST(NnSoftmax, StableForLargeLogits) {
  Tensor l = constant({1000.f, 1000.f, 999.f, -1000.f});
  std::vector<float> p = softmax(l).to_vector<float>();
  const double e = std::exp(-1.0), d = 2 + e;
  EXPECT_NEAR(p[0], 1 / d, 1e-6);
  EXPECT_NEAR(p[2], e / d, 1e-6);
  EXPECT_EQ(p[3], 0.f);
  expect_values(log_softmax(l), {-std::log(d), -std::log(d), -1 - std::log(d), -2000 - std::log(d)}, 1e-5);
  expect_values(softmax(constant({1e30, -1e30})), {1, 0});
}

TEST(NnSoftmax, ScalarEmptyAndErrors) {
  expect_meta(softmax(zeros({0, 4})), {0, 4}, DType::Float32);
  expect_meta(softmax(zeros({3, 0}), 1), {3, 0}, DType::Float32);
  expect_values(softmax(constant({5.0})), {1});
  EXPECT_ERROR(softmax(constant(1.f)), InvalidArgumentError, "softmax", "scalar");
  EXPECT_ERROR(softmax(zeros({2, 3}), 2), InvalidArgumentError, "softmax", "axis");
  EXPECT_ERROR(log_softmax(zeros({2, 3}), -3), InvalidArgumentError, "log_softmax", "axis");
  EXPECT_ERROR(softmax(constant({1, 2})), InvalidArgumentError, "softmax", "int32");
}

TEST(NnCrossEntropy, DenseValues) {
  Tensor logits = constant({{1.0, 2.0, 3.0}, {1.0, 1.0, 1.0}});
  Tensor labels = constant({{0.0, 0.0, 1.0}, {0.5, 0.25, 0.25}});
  Tensor loss = softmax_cross_entropy_with_logits(labels, logits);
  expect_meta(loss, {2}, DType::Float64);
  // Row 0: -log softmax(3) = log(e + e^2 + e^3) - 3; row 1: log 3.
  expect_values(loss, {std::log(std::exp(1) + std::exp(2) + std::exp(3)) - 3, std::log(3.0)}, 1e-14);
  Tensor loss0 = softmax_cross_entropy_with_logits(labels, logits, 0);
  expect_meta(loss0, {3}, DType::Float64);
  expect_values(loss0, {0.34657359027997264, 0.3283154218795557, 0.6586600138037157}, 1e-14);
  // Stable for huge logits, float32.
  Tensor huge = softmax_cross_entropy_with_logits(constant({{0.f, 1.f}}), constant({{1000.f, 0.f}}));
  expect_values(huge, {1000}, 1e-6);
  expect_meta(softmax_cross_entropy_with_logits(zeros({0, 5}), zeros({0, 5})), {0}, DType::Float32);
}

TEST(NnCrossEntropy, DenseErrors) {
  EXPECT_ERROR(softmax_cross_entropy_with_logits(zeros({2, 3}), zeros({2, 4})), InvalidArgumentError,
               "softmax_cross_entropy_with_logits", "[2, 3]", "[2, 4]");
  EXPECT_ERROR(softmax_cross_entropy_with_logits(zeros({2, 3}, DType::Float64), zeros({2, 3})), InvalidArgumentError,
               "softmax_cross_entropy_with_logits", "float64", "float32");
  EXPECT_ERROR(softmax_cross_entropy_with_logits(constant(1.f), constant(1.f)), InvalidArgumentError, "scalar");
  EXPECT_ERROR(softmax_cross_entropy_with_logits(zeros({2, 3}), zeros({2, 3}), 5), InvalidArgumentError, "axis");
}

TEST(NnCrossEntropy, SparseValues) {
  Tensor logits = constant({{1.0, 2.0, 3.0}, {1.0, 1.0, 1.0}});
  for (DType label_dtype : {DType::Int32, DType::Int64}) {
    Tensor labels = cast(constant({2, 0}), label_dtype);
    Tensor loss = sparse_softmax_cross_entropy_with_logits(labels, logits);
    expect_meta(loss, {2}, DType::Float64);
    expect_values(loss, {0.4076059644443804, 1.0986122886681098}, 1e-14);
  }
  // Rank 3 logits, float32; stable for large logits.
  Tensor l3 = constant({{{1000.f, 0.f}}, {{0.f, 0.f}}});
  expect_values(sparse_softmax_cross_entropy_with_logits(constant({{1}, {0}}), l3), {1000, std::log(2.0)}, 1e-6);
  // Scalar label with rank-1 logits.
  expect_values(sparse_softmax_cross_entropy_with_logits(constant(1), constant({0.0, 0.0})), {std::log(2.0)}, 1e-14);
  expect_meta(sparse_softmax_cross_entropy_with_logits(zeros({0}, DType::Int32), zeros({0, 3})), {0}, DType::Float32);
}

TEST(NnCrossEntropy, SparseBadLabelsAndShapes) {
  Tensor logits = zeros({2, 3});
  EXPECT_ERROR(sparse_softmax_cross_entropy_with_logits(constant({0, 3}), logits), InvalidArgumentError,
               "sparse_softmax_cross_entropy_with_logits", "label value of 3", "[0, 3)");
  EXPECT_ERROR(sparse_softmax_cross_entropy_with_logits(constant(std::vector<int64_t>{-1, 0}, {2}), logits),
               InvalidArgumentError, "label value of -1", "index 0");
  EXPECT_ERROR(sparse_softmax_cross_entropy_with_logits(constant({0, 1, 2}), logits), InvalidArgumentError,
               "sparse_softmax_cross_entropy_with_logits", "[2, 3]", "[3]");
  EXPECT_ERROR(sparse_softmax_cross_entropy_with_logits(constant({0.f, 1.f}), logits), InvalidArgumentError,
               "labels", "float32");
  EXPECT_ERROR(sparse_softmax_cross_entropy_with_logits(constant({0, 1}), zeros({2, 3}, DType::Int32)),
               InvalidArgumentError, "logits", "int32");
  EXPECT_ERROR(sparse_softmax_cross_entropy_with_logits(constant(0), constant(1.f)), InvalidArgumentError, "scalar");
  // No classes at all: every label is out of range.
  EXPECT_ERROR(sparse_softmax_cross_entropy_with_logits(constant({0}), zeros({1, 0})), InvalidArgumentError,
               "[0, 0)");
}

TEST(NnCrossEntropy, SigmoidValues) {
  Tensor x = constant({-3.0, 0.0, 2.5, 100.0, -100.0});
  Tensor z = constant({1.0, 0.5, 0.0, 1.0, 0.0});
  // -z log(sigmoid(x)) - (1 - z) log(1 - sigmoid(x)), computed by hand.
  expect_values(sigmoid_cross_entropy_with_logits(z, x),
                {3.048587351573742, 0.6931471805599453, 2.5788897342925496, 3.720075976020836e-44,
                 3.720075976020836e-44},
                1e-14);
  Tensor l32 = sigmoid_cross_entropy_with_logits(constant({{1.f}}), constant({{0.f}}));
  expect_meta(l32, {1, 1}, DType::Float32);
  expect_values(l32, {std::log(2.0)});
  EXPECT_ERROR(sigmoid_cross_entropy_with_logits(zeros({2}), zeros({3})), InvalidArgumentError,
               "sigmoid_cross_entropy_with_logits", "[2]", "[3]");
  EXPECT_ERROR(sigmoid_cross_entropy_with_logits(zeros({2}, DType::Float64), zeros({2})), InvalidArgumentError,
               "sigmoid_cross_entropy_with_logits", "float64");
  EXPECT_ERROR(sigmoid_cross_entropy_with_logits(constant({1}), constant({1})), InvalidArgumentError, "int32");
}

TEST(NnCrossEntropy, SigmoidGradientIsSigmoidMinusLabelsEvenAtZero) {
  // d/dx = sigmoid(x) - z everywhere, including x = 0 where max and abs have kinks.
  Tensor x = constant({-2.0, 0.0, 0.0, 3.0});
  Tensor z = constant({1.0, 0.0, 0.7, 0.2});
  GradientTape tape;
  tape.watch(x);
  Tensor loss = reduce_sum(sigmoid_cross_entropy_with_logits(z, x));
  const double s2 = 1 / (1 + std::exp(2.0)), s3 = 1 / (1 + std::exp(-3.0));
  expect_values(tape.gradient(loss, x), {s2 - 1, 0.5, 0.5 - 0.7, s3 - 0.2}, 1e-12);
}

}  // namespace
}  // namespace ef

namespace ef {
namespace {

// The same definitions serve graph mode: inference alone, with unknown dimensions.
TEST(NnGraphMode, InferenceWithUnknownDimensions) {
  InferenceOnlyBuilder builder;
  BuildScope scope(&builder);
  Tensor logits = symbolic_tensor(DType::Float32, Shape{kUnknownDim, 10});
  testing::expect_meta(softmax(logits), {kUnknownDim, 10}, DType::Float32);
  testing::expect_meta(gelu(logits), {kUnknownDim, 10}, DType::Float32);
  Tensor labels = symbolic_tensor(DType::Int64, Shape{kUnknownDim});
  testing::expect_meta(sparse_softmax_cross_entropy_with_logits(labels, logits), {kUnknownDim}, DType::Float32);
  testing::expect_meta(softmax_cross_entropy_with_logits(logits, logits, 0), {10}, DType::Float32);
  testing::expect_meta(sigmoid_cross_entropy_with_logits(logits, logits), {kUnknownDim, 10}, DType::Float32);
  testing::expect_meta(random::normal({3, 4}, 0.0, 1.0, DType::Float64), {3, 4}, DType::Float64);
  EXPECT_ERROR(sparse_softmax_cross_entropy_with_logits(symbolic_tensor(DType::Int32, Shape{4}),
                                                        symbolic_tensor(DType::Float32, Shape{3, 10})),
               InvalidArgumentError, "[3, 10]", "[4]");
  EXPECT_GT(builder.ops_built(), 5);
}

}  // namespace
}  // namespace ef

namespace ef {
namespace {

using testing::expect_meta;
using testing::expect_values;

TEST(NnBiasAdd, NhwcAndNchw) {
  Tensor v = constant({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  Tensor b = constant({10.0, 20.0, 30.0});
  expect_values(bias_add(v, b), {11, 22, 33, 14, 25, 36});
  // Rank 2 NCHW: the channel dimension is 1, the last one.
  expect_values(bias_add(v, b, "NCHW"), {11, 22, 33, 14, 25, 36});
  // Rank 4 NCHW: [N=1, C=2, H=2, W=1].
  Tensor x = constant(std::vector<float>{1, 2, 3, 4}, {1, 2, 2, 1});
  Tensor y = bias_add(x, constant({100.f, 200.f}), "NCHW");
  expect_meta(y, {1, 2, 2, 1}, DType::Float32);
  expect_values(y, {101, 102, 203, 204});
  // Rank 4 NHWC: [N=1, H=1, W=2, C=2].
  Tensor nhwc = constant(std::vector<float>{1, 2, 3, 4}, {1, 1, 2, 2});
  expect_values(bias_add(nhwc, constant({100.f, 200.f})), {101, 202, 103, 204});
  // Integers and an empty batch.
  expect_values(bias_add(constant({{1, 2}}), constant({3, 4})), {4, 6});
  expect_meta(bias_add(zeros({0, 3}), zeros({3})), {0, 3}, DType::Float32);
}

TEST(NnBiasAdd, Errors) {
  EXPECT_ERROR(bias_add(zeros({2, 3}), zeros({4})), InvalidArgumentError, "bias_add", "[4]", "[2, 3]");
  EXPECT_ERROR(bias_add(zeros({2, 3, 4, 5}), zeros({5}), "NCHW"), InvalidArgumentError, "bias_add", "[5]", "NCHW");
  EXPECT_ERROR(bias_add(zeros({2, 3}), zeros({1, 3})), InvalidArgumentError, "bias_add", "1-D", "[1, 3]");
  EXPECT_ERROR(bias_add(zeros({3}), zeros({3})), InvalidArgumentError, "bias_add", "rank", "[3]");
  EXPECT_ERROR(bias_add(zeros({2, 3}), zeros({3}, DType::Float64)), InvalidArgumentError, "bias_add", "float64");
  EXPECT_ERROR(bias_add(zeros({2, 3}), zeros({3}), "NWHC"), InvalidArgumentError, "bias_add", "data_format", "NWHC");
}

TEST(NnL2Normalize, Values) {
  Tensor x = constant({{3.0, 4.0}, {0.0, 0.0}});
  expect_values(l2_normalize(x, 1), {0.6, 0.8, 0, 0}, 1e-14);
  expect_values(l2_normalize(x, 0), {1, 1, 0, 0}, 1e-14);
  expect_values(l2_normalize(x), {0.6, 0.8, 0, 0}, 1e-14);  // all axes: norm 5
  expect_values(l2_normalize(constant({3.f, 4.f}), -1), {0.6, 0.8}, 1e-6);
  // epsilon bounds the divisor: sqrt(1e-12) = 1e-6 for tiny inputs.
  expect_values(l2_normalize(constant({1e-9, 0.0}), 0), {1e-3, 0}, 1e-12);
  expect_values(l2_normalize(constant({1e-9, 0.0}), 0, 1e-30), {1, 0}, 1e-12);
  expect_meta(l2_normalize(zeros({0, 3}), 1), {0, 3}, DType::Float32);
  EXPECT_ERROR(l2_normalize(constant({1, 2}), 0), InvalidArgumentError, "l2_normalize", "int32");
  EXPECT_ERROR(l2_normalize(zeros({2}), 3), InvalidArgumentError, "l2_normalize", "axis");
}

// Strided views (a transpose) give the same results as their contiguous copies.
TEST(NnNonContiguous, MatchesContiguous) {
  random::set_seed(11);
  Tensor base = random::normal({6, 5}, 0.0, 3.0, DType::Float64);
  Tensor t = transpose(base);  // [5, 6], not contiguous
  ASSERT_FALSE(t.is_contiguous());
  Tensor c = t.contiguous();
  auto same = [](const Tensor& a, const Tensor& b) { EXPECT_EQ(a.to_vector<double>(), b.to_vector<double>()); };
  same(softmax(t), softmax(c));
  same(log_softmax(t, 0), log_softmax(c, 0));
  same(sigmoid(t), sigmoid(c));
  same(gelu(t, true), gelu(c, true));
  same(softmax_cross_entropy_with_logits(softmax(c), t), softmax_cross_entropy_with_logits(softmax(c), c));
  Tensor labels = transpose(constant({{0, 1, 2, 3, 4}}));  // [5, 1] view
  Tensor flat = reshape(labels.contiguous(), {5});
  same(sparse_softmax_cross_entropy_with_logits(flat, t), sparse_softmax_cross_entropy_with_logits(flat, c));
  same(bias_add(t, constant({1.0, 2.0, 3.0, 4.0, 5.0, 6.0})), bias_add(c, constant({1.0, 2.0, 3.0, 4.0, 5.0, 6.0})));
  same(l2_normalize(t, 1), l2_normalize(c, 1));
}

TEST(LogSoftmax, LargeFloat32LogitsKeepTheResultsPrecision) {
  // (x - max) - log(sum) is exact where x - (max + log(sum)) loses ~ulp(500) = 3e-5.
  Tensor x = constant({500.f, 501.3f, 502.7f});
  std::vector<double> exact = {-2.97293259, -1.67294479, -0.27292038};
  testing::expect_values(log_softmax(x), exact, 4e-7);
  testing::expect_values(log_softmax(reshape(x, {3, 1}), 0), exact, 4e-7);
  testing::expect_values(sparse_softmax_cross_entropy_with_logits(constant(int32_t{2}), x), {0.27292038}, 4e-7);
}

}  // namespace
}  // namespace ef
