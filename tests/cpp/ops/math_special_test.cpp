// Special functions (asinh ... bessel_i1e, polygamma, atan2), the truncating divisions
// and the composites xlogy, xdivy, xlog1py, log_sigmoid, nan_to_num: reference values
// from the C++ standard library or SciPy, values at poles and domain edges, dtypes,
// and bad inputs.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_meta;
using testing::expect_values;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
const double kPi = std::numbers::pi;

Tensor vec(const std::vector<double>& v, DType dtype = DType::Float64) {
  return cast(constant(v, Shape{static_cast<int64_t>(v.size())}), dtype);
}

// Expects `got` to hold `want` elementwise, NaN for NaN and equal infinities, else
// within `rel` relatively.
void expect_close(const Tensor& got, const std::vector<double>& want, double rel) {
  std::vector<double> g = cast(got, DType::Float64).to_vector<double>();
  ASSERT_EQ(g.size(), want.size());
  for (size_t i = 0; i < g.size(); ++i) {
    SCOPED_TRACE(i);
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(g[i])) << g[i];
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(g[i], want[i]);
    } else {
      EXPECT_NEAR(g[i], want[i], rel * std::max(1.0, std::fabs(want[i])));
    }
  }
}

struct SpecialCase {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
  std::vector<double> inputs, expected;
};

std::vector<SpecialCase> cases() {
  return {
      {"asinh",
       [](auto& x) { return asinh(x); },
       {-2, 0, 0.5, 1e3},
       {std::asinh(-2.), 0, std::asinh(0.5), std::asinh(1e3)}},
      {"acosh",
       [](auto& x) { return acosh(x); },
       {1, 1.5, 10, 0.5},
       {0, std::acosh(1.5), std::acosh(10.), kNaN}},
      {"atanh",
       [](auto& x) { return atanh(x); },
       {-1, -0.5, 0, 0.9, 1, 2},
       {-kInf, std::atanh(-0.5), 0, std::atanh(0.9), kInf, kNaN}},
      {"lgamma",
       [](auto& x) { return lgamma(x); },
       {1, 2, 0.5, 10, -0.5, -2.5, 0, -3},
       {0, 0, std::log(std::sqrt(kPi)), std::log(362880.), std::lgamma(-0.5), std::lgamma(-2.5), kInf, kInf}},
      {"digamma",
       [](auto& x) { return digamma(x); },
       {1, 0.5, -0.5, 100, -2.3, 0, -2},
       {-0.5772156649015329, -1.9635100260214235, 0.03648997397857651, 4.600161852738088, 3.3173231575618236,
        -kInf, kNaN}},
      {"erfc",
       [](auto& x) { return erfc(x); },
       {-1, 0, 0.5, 5, 10},
       {std::erfc(-1.), 1, std::erfc(0.5), std::erfc(5.), std::erfc(10.)}},
      {"erfinv",
       [](auto& x) { return erfinv(x); },
       {0, 0.5, 0.999, -0.999, 1, -1, 1.5, -1e-20},
       {0, 0.4769362762044699, 2.3267537655135246, -2.3267537655135246, kInf, -kInf, kNaN,
        -8.86226925452758e-21}},
      {"bessel_i0e",
       [](auto& x) { return bessel_i0e(x); },
       {0, 1, -2.5, 19.9, 20.1, 35, 700},
       {1, 0.46575960759364043, 0.27004644161220276, 0.09000858886438959, 0.08955376362061344,
        0.06767837835041363, 0.015081295651531355}},
      {"bessel_i1e",
       [](auto& x) { return bessel_i1e(x); },
       {0, 1, -2.5, 19.9, 20.1, 35, 700},
       {0, 0.2079104153497085, -0.20658464953126654, 0.08771710213170608, 0.0872968518432016,
        0.06670443172949143, 0.015070519444716846}},
      {"log_sigmoid",
       [](auto& x) { return log_sigmoid(x); },
       {-800, -1, 0, 3, 800},
       {-800, -std::log1p(std::exp(1.)), -std::log(2.), -std::log1p(std::exp(-3.)), 0}},
  };
}

TEST(MathSpecial, ValuesMatchReferences) {
  for (const SpecialCase& c : cases()) {
    SCOPED_TRACE(c.name);
    Tensor y = c.op(vec(c.inputs));
    expect_meta(y, Shape{static_cast<int64_t>(c.inputs.size())}, DType::Float64);
    expect_close(y, c.expected, 1e-13);
    // Float32 is the float64 result on the same (rounded) inputs, rounded once.
    Tensor x32 = vec(c.inputs, DType::Float32);
    Tensor y32 = c.op(x32);
    expect_meta(y32, y.shape(), DType::Float32);
    std::vector<float> want = cast(c.op(cast(x32, DType::Float64)), DType::Float32).to_vector<float>();
    expect_close(y32, std::vector<double>(want.begin(), want.end()), 4e-7);
  }
}

TEST(MathSpecial, ErfinvInvertsErfUpToTheEnds) {
  std::vector<double> ys = {-0.99999999, -0.7, -1e-9, 0.25, 0.75, 0.9999, 1 - 1e-12, 1 - 1e-15};
  std::vector<double> x = erfinv(vec(ys)).to_vector<double>();
  for (size_t i = 0; i < ys.size(); ++i) {
    SCOPED_TRACE(ys[i]);
    if (ys[i] > 0.5)
      EXPECT_NEAR(std::erfc(x[i]), 1 - ys[i], 1e-13 * (1 - ys[i]));
    else
      EXPECT_NEAR(std::erf(x[i]), ys[i], 1e-15 * std::max(1e-3, std::fabs(ys[i])));
  }
}

TEST(MathSpecial, Polygamma) {
  Tensor x = vec({1, 0.5, -1.5, 0, -2});
  expect_close(polygamma(1, x), {kPi * kPi / 6, kPi * kPi / 2, 9.379246644989124, kInf, kInf}, 1e-12);
}

TEST(MathSpecial, PolygammaOrders) {
  expect_close(polygamma(vec({0, 1, 2, 3, 2, 1.5, -1}), vec({1, 1, 1, 2.5, -0.3, 1, 1})),
               {-0.5772156649015329, kPi * kPi / 6, -2.4041138063191885, 0.2239058488172521,
                67.63908119988314, kNaN, kNaN},
               1e-12);
}

TEST(MathSpecial, Atan2QuadrantsAndSignedZeros) {
  Tensor y = vec({1, 1, -1, -1, 0, -0.0, 0, -0.0, 0});
  Tensor x = vec({1, -1, 1, -1, -1, -1, 1, 1, 0});
  std::vector<double> got = atan2(y, x).to_vector<double>();
  std::vector<double> want = {kPi / 4, 3 * kPi / 4, -kPi / 4, -3 * kPi / 4, kPi, -kPi, 0, -0.0, 0};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_DOUBLE_EQ(got[i], want[i]) << i;
    EXPECT_EQ(std::signbit(got[i]), std::signbit(want[i])) << i;
  }
  // Broadcasting and float32.
  Tensor b = atan2(vec({1, -1}, DType::Float32), vec({2}, DType::Float32));
  expect_meta(b, Shape{2}, DType::Float32);
  expect_values(b, {std::atan2(1., 2.), std::atan2(-1., 2.)});
}

TEST(MathSpecial, TruncatingDivision) {
  Tensor x = constant({7, -7, 7, -7}), y = constant({2, 2, -2, -2});
  expect_values(truncatediv(x, y), {3, -3, -3, 3});
  expect_values(truncatemod(x, y), {1, -1, 1, -1});
  EXPECT_EQ(truncatediv(x, y).dtype(), DType::Int32);
  Tensor xf = vec({7.5, -7.5, 7.5}), yf = vec({2, 2, -2});
  expect_values(truncatediv(xf, yf), {3, -3, -3});
  expect_values(truncatemod(xf, yf), {1.5, -1.5, 1.5});
  // The most negative integer divided by -1 wraps, as TensorFlow, instead of trapping.
  Tensor most_negative = constant(std::vector<int64_t>{std::numeric_limits<int64_t>::min()}, Shape{1});
  EXPECT_EQ(truncatediv(most_negative, int64_t{-1}).to_vector<int64_t>()[0],
            std::numeric_limits<int64_t>::min());
  EXPECT_EQ(truncatemod(most_negative, int64_t{-1}).to_vector<int64_t>()[0], 0);
  // Float division by zero is IEEE's.
  expect_close(truncatediv(vec({1, -1, 0}), 0.0), {kInf, -kInf, kNaN}, 0);
  expect_close(truncatemod(vec({1}), 0.0), {kNaN}, 0);
}

TEST(MathSpecial, XlogyFamilyIsZeroWhereXIsZero) {
  Tensor x = vec({0, 0, 0, 2, 3}), y = vec({0, kNaN, -1, 0.5, 4});
  expect_close(xlogy(x, y), {0, 0, 0, 2 * std::log(0.5), 3 * std::log(4.)}, 1e-15);
  expect_close(xdivy(x, y), {0, 0, 0, 4, 0.75}, 1e-15);
  expect_close(xlog1py(x, y), {0, 0, 0, 2 * std::log1p(0.5), 3 * std::log1p(4.)}, 1e-15);
  expect_close(xlogy(vec({2}), vec({0})), {-kInf}, 0);
  // Broadcasting and a number operand.
  expect_meta(xlogy(vec({1, 2}), 3.0), Shape{2}, DType::Float64);
  expect_meta(xlogy(zeros({3, 1}), zeros({1, 4})), Shape{3, 4}, DType::Float32);
}

TEST(MathSpecial, NanToNum) {
  Tensor x = vec({kNaN, kInf, -kInf, 1.5});
  const double big = std::numeric_limits<double>::max();
  expect_values(nan_to_num(x), {0, big, -big, 1.5});
  expect_values(nan_to_num(x, 7, 8, -9), {7, 8, -9, 1.5});
  Tensor f = nan_to_num(vec({kInf}, DType::Float32));
  EXPECT_EQ(f.to_vector<float>()[0], std::numeric_limits<float>::max());
  Tensor ints = constant({1, 2});
  expect_values(nan_to_num(ints), {1, 2});
}

TEST(MathSpecial, CumulativeLogsumexp) {
  auto lse = [](std::vector<double> v) {
    double m = *std::max_element(v.begin(), v.end()), s = 0;
    for (double x : v) s += std::exp(x - m);
    return m + std::log(s);
  };
  Tensor x = vec({1, 2, 3});
  expect_close(cumulative_logsumexp(x), {1, lse({1, 2}), lse({1, 2, 3})}, 1e-15);
  expect_close(cumulative_logsumexp(x, 0, true), {-kInf, 1, lse({1, 2})}, 1e-15);
  expect_close(cumulative_logsumexp(x, 0, false, true), {lse({1, 2, 3}), lse({2, 3}), 3}, 1e-15);
  expect_close(cumulative_logsumexp(x, 0, true, true), {lse({2, 3}), 3, -kInf}, 1e-15);
  // Far apart values neither overflow nor underflow; infinities and NaN propagate.
  expect_close(cumulative_logsumexp(vec({-1000, 0, 1000})), {-1000, 0, 1000}, 1e-15);
  expect_close(cumulative_logsumexp(vec({-kInf, 1, kInf, 2})), {-kInf, 1, kInf, kInf}, 1e-15);
  expect_close(cumulative_logsumexp(vec({1, kNaN, 2})), {1, kNaN, kNaN}, 1e-15);
  // Along an inner axis, float32 (accumulated in double), and a strided view.
  Tensor m = reshape(vec({0, 1, 2, 3, 4, 5}, DType::Float32), {2, 3});
  Tensor along1 = cumulative_logsumexp(m, 1);
  expect_meta(along1, Shape{2, 3}, DType::Float32);
  expect_close(along1, {0, lse({0, 1}), lse({0, 1, 2}), 3, lse({3, 4}), lse({3, 4, 5})}, 1e-6);
  expect_close(cumulative_logsumexp(m, -2), {0, 1, 2, lse({0, 3}), lse({1, 4}), lse({2, 5})}, 1e-6);
  expect_close(cumulative_logsumexp(transpose(m), 0),
               {0, 3, lse({0, 1}), lse({3, 4}), lse({0, 1, 2}), lse({3, 4, 5})}, 1e-6);
  expect_meta(cumulative_logsumexp(zeros({0, 2}), 0), Shape{0, 2}, DType::Float32);
  EXPECT_ERROR(cumulative_logsumexp(constant({1, 2})), InvalidArgumentError, "cumulative_logsumexp", "int32");
  EXPECT_ERROR(cumulative_logsumexp(constant(1.0)), InvalidArgumentError, "cumulative_logsumexp", "scalar");
  EXPECT_ERROR(cumulative_logsumexp(zeros({2, 3}), 2), InvalidArgumentError, "cumulative_logsumexp", "axis");
}

TEST(MathSpecial, ScalarsAndEmptyTensors) {
  expect_meta(lgamma(constant(2.0)), Shape{}, DType::Float64);
  expect_meta(erfinv(zeros({0, 3})), Shape{0, 3}, DType::Float32);
  expect_meta(atan2(zeros({2, 0}), zeros({1, 0})), Shape{2, 0}, DType::Float32);
  expect_meta(xlogy(zeros({0}), zeros({0})), Shape{0}, DType::Float32);
  expect_meta(truncatediv(zeros({0}, DType::Int32), zeros({0}, DType::Int32)), Shape{0}, DType::Int32);
}

TEST(MathSpecial, BadInputs) {
  Tensor ints = constant({1, 2});
  // Unary special functions: integer, bool and empty-handed inputs.
  EXPECT_ERROR(lgamma(ints), InvalidArgumentError, "lgamma", "int32");
  EXPECT_ERROR(erfinv(constant({true})), InvalidArgumentError, "erfinv", "bool");
  EXPECT_ERROR(bessel_i0e(ints), InvalidArgumentError, "bessel_i0e", "int32");
  EXPECT_ERROR(digamma(ints), InvalidArgumentError, "digamma");
  EXPECT_ERROR(asinh(ints), InvalidArgumentError, "asinh");
  EXPECT_ERROR(log_sigmoid(ints), InvalidArgumentError, "log_sigmoid", "int32");
  // Binary: integers, mixed dtypes, shapes that do not broadcast.
  EXPECT_ERROR(atan2(ints, ints), InvalidArgumentError, "atan2", "int32");
  EXPECT_ERROR(atan2(zeros({2}), zeros({2}, DType::Float64)), InvalidArgumentError, "atan2", "float64");
  EXPECT_ERROR(atan2(zeros({2}), zeros({3})), InvalidArgumentError, "atan2", "[2]", "[3]");
  EXPECT_ERROR(polygamma(ints, ints), InvalidArgumentError, "polygamma", "int32");
  EXPECT_ERROR(polygamma(zeros({2}), zeros({3})), InvalidArgumentError, "polygamma", "[2]");
  EXPECT_ERROR(xlogy(ints, ints), InvalidArgumentError, "xlogy", "int32");
  EXPECT_ERROR(xdivy(zeros({2}), zeros({2}, DType::Float64)), InvalidArgumentError, "xdivy", "float64");
  EXPECT_ERROR(xlog1py(zeros({2}), zeros({3})), InvalidArgumentError, "xlog1py", "[2]", "[3]");
  EXPECT_ERROR(truncatediv(ints, constant({1, 0})), InvalidArgumentError, "truncatediv", "division by zero");
  EXPECT_ERROR(truncatemod(ints, 0), InvalidArgumentError, "truncatemod", "division by zero");
  EXPECT_ERROR(truncatediv(constant({true}), constant({true})), InvalidArgumentError, "truncatediv", "bool");
  EXPECT_ERROR(truncatemod(zeros({2}), zeros({3})), InvalidArgumentError, "truncatemod", "[2]", "[3]");
  EXPECT_ERROR(nan_to_num(Tensor()), InvalidArgumentError, "nan_to_num");
}

}  // namespace
}  // namespace ef
