// Binary elementwise ops: values per dtype, broadcasting, scalars, empty tensors,
// integer edge cases and every class of bad input.
#include <cmath>
#include <limits>

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_meta;
using testing::expect_values;

const double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(MathBinary, ArithmeticOnFloats) {
  Tensor a = constant({1.f, -2.f, 3.5f});
  Tensor b = constant({2.f, 4.f, -0.5f});
  expect_values(add(a, b), {3, 2, 3});
  expect_values(subtract(a, b), {-1, -6, 4});
  expect_values(multiply(a, b), {2, -8, -1.75});
  expect_values(divide(a, b), {0.5, -0.5, -7});
  expect_values(maximum(a, b), {2, 4, 3.5});
  expect_values(minimum(a, b), {1, -2, -0.5});
  expect_values(squared_difference(a, b), {1, 36, 16});
  expect_values(pow(a, constant({2.f, 3.f, 0.5f})), {1, -8, std::sqrt(3.5)});
  EXPECT_EQ(add(a, b).dtype(), DType::Float32);
}

TEST(MathBinary, FloorDivisionAndModuloFollowPython) {
  // Python: -7 // 2 == -4, -7 % 2 == 1, 7 % -2 == -1.
  Tensor x = constant({7, -7, 7, -7});
  Tensor y = constant({2, 2, -2, -2});
  expect_values(floordiv(x, y), {3, -4, -4, 3});
  expect_values(floormod(x, y), {1, 1, -1, -1});
  expect_values(divide(x, y), {3, -3, -3, 3});  // integer divide truncates (C, TensorFlow's truncatediv)
  Tensor xf = constant({7.0, -7.0, 7.0, -7.0});
  Tensor yf = constant({2.0, 2.0, -2.0, -2.0});
  expect_values(floordiv(xf, yf), {3, -4, -4, 3});
  expect_values(floormod(xf, yf), {1, 1, -1, -1});
}

TEST(MathBinary, IntegerEdgeCasesNeverTrap) {
  const int64_t lo = std::numeric_limits<int64_t>::min();
  Tensor x = constant(std::vector<int64_t>{lo, lo}, Shape{2});
  Tensor minus_one = constant(std::vector<int64_t>{-1, -1}, Shape{2});
  // INT_MIN / -1 overflows: it wraps (x86 would raise SIGFPE on the plain division).
  EXPECT_EQ(divide(x, minus_one).to_vector<int64_t>()[0], lo);
  EXPECT_EQ(floordiv(x, minus_one).to_vector<int64_t>()[0], lo);
  EXPECT_EQ(floormod(x, minus_one).to_vector<int64_t>()[0], 0);
  // Overflowing sums wrap.
  Tensor big = constant(std::vector<int32_t>{std::numeric_limits<int32_t>::max()}, Shape{1});
  EXPECT_EQ(add(big, 1).item<int32_t>(), std::numeric_limits<int32_t>::min());
  expect_values(pow(constant({2, 3, -2}), constant({10, 0, 3})), {1024, 1, -8});
}

TEST(MathBinary, IntegerDivisionByZeroIsAnError) {
  Tensor x = constant({1, 2, 3});
  Tensor y = constant({1, 0, 1});
  EXPECT_ERROR(divide(x, y), InvalidArgumentError, "divide", "division by zero");
  EXPECT_ERROR(floordiv(x, 0), InvalidArgumentError, "floordiv", "division by zero");
  EXPECT_ERROR(floormod(x, y), InvalidArgumentError, "floormod", "division by zero");
  EXPECT_ERROR(pow(x, constant({1, -1, 2})), InvalidArgumentError, "pow", "negative");
  // Floats follow IEEE: 1/0 = inf, 0/0 = nan.
  expect_values(divide(constant({1.0, 0.0}), 0.0), {INFINITY, kNaN});
}

TEST(MathBinary, NaNPropagatesThroughMaximumAndMinimum) {
  Tensor a = constant({kNaN, 1.0});
  Tensor b = constant({1.0, kNaN});
  expect_values(maximum(a, b), {kNaN, kNaN});
  expect_values(minimum(a, b), {kNaN, kNaN});
}

TEST(MathBinary, Comparisons) {
  Tensor a = constant({1, 2, 3});
  Tensor b = constant({3, 2, 1});
  Tensor lt = less(a, b);
  expect_meta(lt, Shape{3}, DType::Bool);
  expect_values(lt, {1, 0, 0});
  expect_values(less_equal(a, b), {1, 1, 0});
  expect_values(greater(a, b), {0, 0, 1});
  expect_values(greater_equal(a, b), {0, 1, 1});
  expect_values(equal(a, b), {0, 1, 0});
  expect_values(not_equal(a, b), {1, 0, 1});
  expect_values(equal(constant({true, false}), constant({true, true})), {1, 0});
  EXPECT_ERROR(less(constant({true}), constant({false})), InvalidArgumentError, "less", "bool");
}

TEST(MathBinary, LogicalOps) {
  Tensor a = constant({true, true, false, false});
  Tensor b = constant({true, false, true, false});
  expect_values(logical_and(a, b), {1, 0, 0, 0});
  expect_values(logical_or(a, b), {1, 1, 1, 0});
  expect_values(logical_xor(a, b), {0, 1, 1, 0});
  EXPECT_ERROR(logical_and(constant({1}), constant({1})), InvalidArgumentError, "logical_and", "int32");
}

TEST(MathBinary, BroadcastingFollowsNumPy) {
  Tensor col = constant({{1.0}, {2.0}});       // (2, 1)
  Tensor row = constant({10.0, 20.0, 30.0});   // (3,)
  Tensor sum = add(col, row);
  expect_meta(sum, Shape{2, 3}, DType::Float64);
  expect_values(sum, {11, 21, 31, 12, 22, 32});
  // Rank-3 against rank-1, and a middle broadcast dimension.
  Tensor x = constant(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, Shape{2, 2, 3});
  expect_values(multiply(x, constant({1.f, 0.f, -1.f})), {1, 0, -3, 4, 0, -6, 7, 0, -9, 10, 0, -12});
  Tensor mid = constant(std::vector<float>{100, 200}, Shape{2, 1, 1});
  expect_values(add(x, mid), {101, 102, 103, 104, 105, 106, 207, 208, 209, 210, 211, 212});
  // Large broadcast (threaded general path).
  Tensor big = zeros({300, 257});
  Tensor ramp = cast(range(0, 257), DType::Float32);
  std::vector<float> out = add(big, ramp).to_vector<float>();
  EXPECT_EQ(out[256], 256.f);
  EXPECT_EQ(out[299 * 257 + 5], 5.f);
}

TEST(MathBinary, IncompatibleShapesNameBoth) {
  EXPECT_ERROR(add(zeros({2, 3}), zeros({4})), InvalidArgumentError, "add", "[2, 3]", "[4]");
}

TEST(MathBinary, MixingFloat32AndFloat64IsAnError) {
  EXPECT_ERROR(add(constant({1.f}), constant({1.0})), InvalidArgumentError, "add", "float32", "float64",
               "ef::cast");
  EXPECT_ERROR(multiply(constant({1}), constant({1.f})), InvalidArgumentError, "int32", "float32");
}

TEST(MathBinary, NumbersTakeTheTensorsDtype) {
  Tensor x = constant({1.f, 2.f});
  EXPECT_EQ(add(x, 1).dtype(), DType::Float32);
  EXPECT_EQ(add(2.5, x).dtype(), DType::Float32);
  expect_values(subtract(10, x), {9, 8});
  Tensor i = constant({1, 2});
  EXPECT_EQ(multiply(i, int64_t{3}).dtype(), DType::Int32);
  EXPECT_ERROR(add(i, 2.5), InvalidArgumentError, "add", "2.5", "int32");
  EXPECT_ERROR(add(i, int64_t{1} << 40), InvalidArgumentError, "add", "int32");
  // Two numbers: their own dtypes.
  EXPECT_EQ(add(1, 2).dtype(), DType::Int32);
}

TEST(MathBinary, ScalarsAndEmptyTensors) {
  Tensor s = add(constant(1.f), constant(2.f));
  expect_meta(s, Shape{}, DType::Float32);
  EXPECT_EQ(s.item<float>(), 3.f);
  expect_meta(add(zeros({0, 4}), zeros({4})), Shape{0, 4}, DType::Float32);
  expect_meta(add(zeros({0, 1}), zeros({1, 5})), Shape{0, 5}, DType::Float32);
  EXPECT_ERROR(add(zeros({0}), zeros({2})), InvalidArgumentError, "add");
}

TEST(MathBinary, Operators) {
  Tensor a = constant({1.f, 2.f});
  Tensor b = constant({3.f, 4.f});
  expect_values(a + b, {4, 6});
  expect_values(a - b, {-2, -2});
  expect_values(a * b, {3, 8});
  expect_values(b / a, {3, 2});
  expect_values(-a, {-1, -2});
  expect_values(2 * a + 1, {3, 5});
  expect_values(1.f - a, {0, -1});
  expect_values(a < b, {1, 1});
  expect_values(a == constant({1.f, 0.f}), {1, 0});
  expect_values((a > 1) || (b > 3), {0, 1});
  expect_values((a > 1) && (b > 3), {0, 1});
  expect_values(!(a > 1), {1, 0});
  Tensor c = a;
  c += 1;
  c *= b;
  expect_values(c, {6, 12});
  expect_values(a, {1, 2});  // the original is unchanged
}

TEST(MathBinary, TensorValuedConditions) {
  Tensor a = constant({5.f});
  Tensor b = constant({3.f});
  EXPECT_TRUE(static_cast<bool>(a > b));
  EXPECT_FALSE(static_cast<bool>(a < b));
  EXPECT_ERROR(static_cast<bool>(constant({1.f, 2.f}) > 0), InvalidArgumentError, "[2]", "ambiguous");
}

}  // namespace
}  // namespace ef
