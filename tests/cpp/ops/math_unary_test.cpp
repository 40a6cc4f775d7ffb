// Unary math ops: one table of cases checked against the C++ standard library in
// double precision, for every float dtype, plus dtype errors, empty and scalar inputs.
#include <cmath>
#include <functional>
#include <limits>

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_meta;
using testing::expect_values;

struct UnaryCase {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
  std::function<double(double)> reference;
  std::vector<double> inputs;
  double float32_tolerance = 1e-6;
};

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

std::vector<UnaryCase> float_cases() {
  std::vector<double> wide = {-3.5, -1.0, -0.25, 0.0, 0.5, 1.0, 2.0, 10.0};
  std::vector<double> positive = {1e-6, 0.25, 0.5, 1.0, 2.0, 100.0};
  std::vector<double> unit = {-1.0, -0.5, 0.0, 0.3, 1.0};
  return {
      {"exp", [](auto& x) { return exp(x); }, [](double v) { return std::exp(v); }, wide},
      {"expm1", [](auto& x) { return expm1(x); }, [](double v) { return std::expm1(v); }, {-1, -1e-7, 0, 1e-7, 1}},
      {"log", [](auto& x) { return log(x); }, [](double v) { return std::log(v); }, {0.0, 1e-6, 0.5, 1, 100, -1}},
      {"log1p", [](auto& x) { return log1p(x); }, [](double v) { return std::log1p(v); }, {-0.5, -1e-7, 0, 1e-7, 3}},
      {"sqrt", [](auto& x) { return sqrt(x); }, [](double v) { return std::sqrt(v); }, {0, 0.25, 2, 1e6, -1}},
      {"rsqrt", [](auto& x) { return rsqrt(x); }, [](double v) { return 1 / std::sqrt(v); }, positive},
      {"reciprocal", [](auto& x) { return reciprocal(x); }, [](double v) { return 1 / v; }, {-2, -0.5, 0.5, 4, 0}},
      {"sin", [](auto& x) { return sin(x); }, [](double v) { return std::sin(v); }, wide},
      {"cos", [](auto& x) { return cos(x); }, [](double v) { return std::cos(v); }, wide},
      {"tan", [](auto& x) { return tan(x); }, [](double v) { return std::tan(v); }, unit},
      {"asin", [](auto& x) { return asin(x); }, [](double v) { return std::asin(v); }, unit},
      {"acos", [](auto& x) { return acos(x); }, [](double v) { return std::acos(v); }, unit},
      {"atan", [](auto& x) { return atan(x); }, [](double v) { return std::atan(v); }, wide},
      {"sinh", [](auto& x) { return sinh(x); }, [](double v) { return std::sinh(v); }, unit},
      {"cosh", [](auto& x) { return cosh(x); }, [](double v) { return std::cosh(v); }, unit},
      {"tanh", [](auto& x) { return tanh(x); }, [](double v) { return std::tanh(v); }, wide},
      {"erf", [](auto& x) { return erf(x); }, [](double v) { return std::erf(v); }, wide},
      {"floor", [](auto& x) { return floor(x); }, [](double v) { return std::floor(v); }, wide},
      {"ceil", [](auto& x) { return ceil(x); }, [](double v) { return std::ceil(v); }, wide},
      // Half to even: 0.5 → 0, 1.5 → 2, 2.5 → 2, -2.5 → -2.
      {"round", [](auto& x) { return round(x); }, [](double v) { return std::nearbyint(v); },
       {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.6}},
      {"negative", [](auto& x) { return negative(x); }, [](double v) { return -v; }, wide},
      {"abs", [](auto& x) { return abs(x); }, [](double v) { return std::fabs(v); }, wide},
      {"sign", [](auto& x) { return sign(x); }, [](double v) { return v != v ? v : double((v > 0) - (v < 0)); },
       {-3, 0, 2, kNaN}},
      {"square", [](auto& x) { return square(x); }, [](double v) { return v * v; }, wide},
  };
}

TEST(MathUnary, FloatOpsMatchTheStandardLibrary) {
  for (const UnaryCase& c : float_cases()) {
    SCOPED_TRACE(c.name);
    for (DType dtype : {DType::Float32, DType::Float64}) {
      Tensor x = cast(constant(c.inputs, Shape{static_cast<int64_t>(c.inputs.size())}), dtype);
      Tensor y = c.op(x);
      expect_meta(y, x.shape(), dtype);
      std::vector<double> expected;
      for (double v : c.inputs) {
        // The reference sees the input as rounded to the tested dtype.
        double in = dtype == DType::Float32 ? static_cast<double>(static_cast<float>(v)) : v;
        expected.push_back(c.reference(in));
      }
      expect_values(y, expected, dtype == DType::Float32 ? 4e-6 : 1e-12);
    }
  }
}

TEST(MathUnary, LargeInputsTakeTheVectorizedAndThreadedPath) {
  // Big enough to be split across threads and run by the SIMD loops.
  std::vector<float> values(100003);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 1000) / 100.f - 5.f;
  Tensor x = constant(values, Shape{static_cast<int64_t>(values.size())});
  std::vector<float> got = exp(x).to_vector<float>();
  for (size_t i = 0; i < values.size(); i += 997)
    EXPECT_NEAR(got[i], std::exp(values[i]), 4e-6 * std::exp(values[i]));
  std::vector<float> th = tanh(x).to_vector<float>();
  for (size_t i = 0; i < values.size(); i += 997) EXPECT_NEAR(th[i], std::tanh(values[i]), 4e-6);
}

TEST(MathUnary, IntegerOps) {
  Tensor x = constant({-3, 0, 7});
  expect_values(negative(x), {3, 0, -7});
  expect_values(abs(x), {3, 0, 7});
  expect_values(sign(x), {-1, 0, 1});
  expect_values(square(x), {9, 0, 49});
  EXPECT_EQ(abs(x).dtype(), DType::Int32);
  // INT_MIN has no positive counterpart: it wraps, as in TensorFlow, instead of being UB.
  Tensor most_negative = constant(std::vector<int64_t>{std::numeric_limits<int64_t>::min()}, Shape{1});
  EXPECT_EQ(negative(most_negative).to_vector<int64_t>()[0], std::numeric_limits<int64_t>::min());
}

TEST(MathUnary, SignedZerosAndNaNSignsFollowIEEE) {
  // abs clears the sign bit and negative flips it, as TensorFlow and NumPy do: abs(-0.0)
  // is +0.0 (so atan2(abs(y), -1) is pi, not -pi, for y = -0.0), negative(0.0) is -0.0.
  for (DType dtype : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(name(dtype));
    Tensor x = cast(constant({-0.0, 0.0, -kNaN, -2.0}), dtype);
    std::vector<double> a = cast(abs(x), DType::Float64).to_vector<double>();
    for (double v : a) EXPECT_FALSE(std::signbit(v)) << v;
    EXPECT_EQ(a[3], 2.0);
    std::vector<double> n = cast(negative(x), DType::Float64).to_vector<double>();
    EXPECT_FALSE(std::signbit(n[0]));
    EXPECT_TRUE(std::signbit(n[1]));
  }
  EXPECT_DOUBLE_EQ(atan2(abs(constant({-0.0})), constant({-1.0})).to_vector<double>()[0], M_PI);
}

TEST(MathUnary, PredicatesGiveBool) {
  Tensor x = constant({1.0, kNaN, kInf, -kInf});
  Tensor nan = isnan(x), inf = isinf(x), fin = isfinite(x);
  expect_meta(nan, Shape{4}, DType::Bool);
  expect_values(nan, {0, 1, 0, 0});
  expect_values(inf, {0, 0, 1, 1});
  expect_values(fin, {1, 0, 0, 0});
  expect_values(logical_not(constant({true, false})), {0, 1});
}

TEST(MathUnary, ScalarsAndEmptyTensors) {
  expect_meta(exp(constant(0.f)), Shape{}, DType::Float32);
  EXPECT_EQ(exp(constant(0.f)).item<float>(), 1.f);
  Tensor empty = zeros({0, 3});
  expect_meta(exp(empty), Shape{0, 3}, DType::Float32);
  expect_meta(negative(zeros({2, 0}, DType::Int64)), Shape{2, 0}, DType::Int64);
}

TEST(MathUnary, WrongDtypesAreRejectedWithTheOpAndDtype) {
  EXPECT_ERROR(exp(constant({1, 2})), InvalidArgumentError, "exp", "int32", "float32, float64");
  EXPECT_ERROR(negative(constant({true})), InvalidArgumentError, "negative", "bool");
  EXPECT_ERROR(logical_not(constant({1.f})), InvalidArgumentError, "logical_not", "float32");
  EXPECT_ERROR(isnan(constant({1})), InvalidArgumentError, "isnan", "int32");
  EXPECT_ERROR(exp(Tensor()), InvalidArgumentError, "exp", "undefined");
}

TEST(MathUnary, ErrorsNameTheCallersLine) {
  try {
    exp(constant({1, 2}));
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("math_unary_test.cpp:"));
  }
}

TEST(MathUnary, Cast) {
  Tensor x = constant({-1.7, -0.2, 0.0, 2.9});
  expect_values(cast(x, DType::Int32), {-1, 0, 0, 2});  // truncates toward zero
  expect_values(cast(x, DType::Bool), {1, 1, 0, 1});
  EXPECT_EQ(cast(x, DType::Float32).dtype(), DType::Float32);
  expect_values(cast(constant({true, false}), DType::Float64), {1, 0});
  // Out-of-range and NaN conversions saturate instead of being undefined behaviour.
  Tensor extreme = constant({1e20, -1e20, kNaN});
  expect_values(cast(extreme, DType::Int32), {2147483647.0, -2147483648.0, 0});
  // Casting to the same dtype returns the tensor itself.
  EXPECT_EQ(cast(x, DType::Float64).impl(), x.impl());
}

TEST(MathUnary, ClipByValue) {
  Tensor x = constant({-2.f, 0.5f, 3.f});
  expect_values(clip_by_value(x, 0, 1), {0, 0.5, 1});
  expect_values(clip_by_value(x, constant({-1.f, 1.f, 0.f}), 2.5f), {-1, 1, 2.5});
}

}  // namespace
}  // namespace ef
