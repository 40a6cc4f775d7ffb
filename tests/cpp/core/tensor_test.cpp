// Tensor handles: metadata, truth values, element access and its errors, the
// nested-initializer-list constants, and range.
#include "test_util.h"

namespace ef {
namespace {

using ::ef::testing::expect_meta;
using ::ef::testing::expect_values;

TEST(Tensor, Metadata) {
  Tensor t = zeros({2, 3, 4}, DType::Int64);
  EXPECT_TRUE(t.defined());
  EXPECT_EQ(t.rank(), 3);
  EXPECT_EQ(t.num_elements(), 24);
  EXPECT_EQ(t.dim(0), 2);
  EXPECT_EQ(t.dim(-1), 4);
  EXPECT_EQ(t.strides(), (Dims{12, 4, 1}));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_FALSE(t.is_symbolic());
  EXPECT_EQ(t.device(), kCPU);
  EXPECT_ERROR(constant(1.f).dim(0), InvalidArgumentError, "scalar");
}

TEST(Tensor, UndefinedTensorThrows) {
  Tensor t;
  EXPECT_FALSE(t.defined());
  EXPECT_ERROR(t.shape(), InvalidArgumentError, "undefined");
  EXPECT_ERROR(t.dtype(), InvalidArgumentError, "undefined");
  EXPECT_ERROR(t.item<float>(), InvalidArgumentError, "undefined");
}

TEST(Tensor, ExplicitBoolOnOneElement) {
  EXPECT_TRUE(static_cast<bool>(constant(true)));
  EXPECT_FALSE(static_cast<bool>(constant(0.f)));
  EXPECT_TRUE(static_cast<bool>(constant({{-3}})));
  EXPECT_TRUE(static_cast<bool>(constant(NAN)));  // NaN != 0, as in Python
  Tensor a = constant(2.f), b = constant(1.f);
  bool branch = false;
  if (a > b) branch = true;
  EXPECT_TRUE(branch);
  static_assert(!std::is_convertible_v<Tensor, bool>, "the conversion must be explicit");
}

TEST(Tensor, BoolOfOtherShapesThrowsNamingTheShape) {
  EXPECT_ERROR(static_cast<bool>(constant({1.f, 2.f})), InvalidArgumentError, "[2]", "ambiguous");
  EXPECT_ERROR(static_cast<bool>(zeros({0})), InvalidArgumentError, "[0]");
  EXPECT_ERROR(static_cast<bool>(zeros({2, 3})), InvalidArgumentError, "[2, 3]");
  EXPECT_ERROR(static_cast<bool>(symbolic_tensor(DType::Bool, {})), FailedPreconditionError, "symbolic",
               "cond");
}

TEST(Tensor, ItemAndToVector) {
  EXPECT_EQ(constant(2.5f).item<float>(), 2.5f);
  EXPECT_EQ(constant({{7}}).item<int64_t>(), 7);
  EXPECT_EQ(constant(3.9).item<int>(), 3);
  EXPECT_EQ(constant({1, 2, 3}).to_vector<double>(), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(constant({true, false}).to_vector<int>(), (std::vector<int>{1, 0}));
  EXPECT_TRUE(zeros({0, 4}).to_vector<float>().empty());
  EXPECT_ERROR(constant({1, 2}).item<int>(), InvalidArgumentError, "item", "exactly one element", "[2]");
  EXPECT_ERROR(zeros({0}).item<int>(), InvalidArgumentError, "[0]");
  Tensor s = symbolic_tensor(DType::Float32, {2});
  EXPECT_ERROR(s.item<float>(), FailedPreconditionError, "symbolic");
  EXPECT_ERROR(s.to_vector<float>(), FailedPreconditionError, "symbolic");
  EXPECT_ERROR(s.data<float>(), FailedPreconditionError, "symbolic");
  EXPECT_ERROR(s.raw_data(), FailedPreconditionError, "symbolic");
}

TEST(Tensor, FloatToIntegerConversionsThatWouldBeUndefinedThrow) {
  EXPECT_ERROR(constant(NAN).item<int>(), InvalidArgumentError, "item", "nan", "32-bit");
  EXPECT_ERROR(constant(-INFINITY).item<int64_t>(), InvalidArgumentError, "-inf", "64-bit");
  EXPECT_ERROR(constant(3e9f).item<int32_t>(), InvalidArgumentError, "item");
  EXPECT_ERROR(constant(9.3e18).item<int64_t>(), InvalidArgumentError, "item");
  EXPECT_ERROR(constant({1.f, INFINITY}).to_vector<int64_t>(), InvalidArgumentError, "to_vector", "inf");
  EXPECT_EQ(constant(-2147483648.5).item<int32_t>(), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(constant(-7.9f).item<int>(), -7);  // truncates toward zero, like static_cast
  EXPECT_EQ(constant(NAN).item<bool>(), true);
  EXPECT_TRUE(std::isnan(constant(NAN).item<double>()));
}

TEST(Tensor, DataChecksTheElementType) {
  Tensor t = constant({1.f, 2.f});
  EXPECT_EQ(t.data<float>()[1], 2.f);
  EXPECT_EQ(t.raw_data(), static_cast<const void*>(t.data<float>()));
  EXPECT_ERROR(t.data<double>(), InvalidArgumentError, "data", "float64", "float32");
  EXPECT_ERROR(t.data<int32_t>(), InvalidArgumentError, "int32");
}

TEST(Constant, NestedListsOfRankOneToFour) {
  Tensor r1 = constant({1.f, 2.f, 3.f});
  expect_meta(r1, {3}, DType::Float32);
  expect_values(r1, {1, 2, 3});
  Tensor r2 = constant({{1, 2, 3}, {4, 5, 6}});
  expect_meta(r2, {2, 3}, DType::Int32);
  expect_values(r2, {1, 2, 3, 4, 5, 6});
  Tensor r3 = constant({{{1.0}, {2.0}}, {{3.0}, {4.0}}});
  expect_meta(r3, {2, 2, 1}, DType::Float64);
  expect_values(r3, {1, 2, 3, 4});
  Tensor r4 = constant({{{{int64_t{1}, int64_t{2}}}}});
  expect_meta(r4, {1, 1, 1, 2}, DType::Int64);
  expect_values(r4, {1, 2});
  Tensor b = constant({{true}, {false}});
  expect_meta(b, {2, 1}, DType::Bool);
  expect_values(b, {1, 0});
  expect_meta(constant(3), {}, DType::Int32);
  expect_meta(constant(int64_t{3}), {}, DType::Int64);
}

TEST(Constant, RaggedListsThrow) {
  EXPECT_ERROR(constant({{1, 2}, {3}}), InvalidArgumentError, "constant", "ragged", "depth 1");
  EXPECT_ERROR(constant({{{1.f}, {2.f, 3.f}}}), InvalidArgumentError, "ragged", "depth 2");
  EXPECT_ERROR(constant({{1, 2}, {}}), InvalidArgumentError, "ragged");
}

TEST(Constant, FromVectorChecksTheCount) {
  Tensor t = constant(std::vector<double>{1, 2, 3, 4, 5, 6}, {3, 2});
  expect_meta(t, {3, 2}, DType::Float64);
  expect_values(t, {1, 2, 3, 4, 5, 6});
  expect_meta(constant(std::vector<float>{}, {0, 5}), {0, 5}, DType::Float32);
  EXPECT_ERROR(constant(std::vector<int>{1, 2, 3}, {2, 2}), InvalidArgumentError, "constant", "3 values",
               "[2, 2]");
  EXPECT_ERROR(constant(std::vector<int>{}, {-1}), InvalidArgumentError, "negative");
  EXPECT_ERROR(constant(std::vector<int>{}, {int64_t{1} << 62, 8, 0}), ResourceExhaustedError, "constant");
}

TEST(Range, DtypeIsTheWidestArgumentsAsInTensorFlow) {
  expect_meta(range(0, 5), {5}, DType::Int32);
  expect_meta(range(0, int64_t{3}), {3}, DType::Int64);
  expect_meta(range(0.f, 1.f, 0.25f), {4}, DType::Float32);
  expect_meta(range(0, 1.0, 0.25), {4}, DType::Float64);  // a C++ double is float64
  expect_meta(range(0, 3, 1, DType::Float32), {3}, DType::Float32);
  // 0-d tensors bring their dtype: int32 < int64 < float16 < bfloat16 < float32 < float64.
  Tensor r = range(constant(int64_t{1}), 4);
  expect_meta(r, {3}, DType::Int64);
  expect_values(r, {1, 2, 3});
  expect_meta(range(constant(0.5f), 2), {2}, DType::Float32);
  expect_meta(range(0, constant(2.0), 0.5f), {4}, DType::Float64);
  expect_meta(range(0, cast(constant(2.f), DType::BFloat16)), {2}, DType::BFloat16);
  expect_meta(range(cast(constant(0.f), DType::Float16), 2, constant(0.5f)), {4}, DType::Float32);
  // With a dtype, a tensor is cast to it as tf.range casts: 5.7 truncates to 5.
  Tensor cast_limit = range(0, constant(5.7), 2, DType::Int32);
  expect_meta(cast_limit, {3}, DType::Int32);
  expect_values(cast_limit, {0, 2, 4});
  expect_values(range(0, Variable(constant(3.f)), 1), {0, 1, 2});
}

TEST(Range, TensorArgumentErrors) {
  EXPECT_ERROR(range(0, constant({1, 2})), InvalidArgumentError, "range", "'limit'", "scalar", "[2]");
  EXPECT_ERROR(range(constant(true), 3), InvalidArgumentError, "range", "'start'", "bool");
  EXPECT_ERROR(range(0, constant(NAN), 1, DType::Int32), InvalidArgumentError, "'limit'", "int32");
  EXPECT_ERROR(range(0, Tensor()), InvalidArgumentError, "'limit'", "undefined");
  EXPECT_ERROR(range(0, 3, constant(0)), InvalidArgumentError, "'delta' must not be 0");
  InferenceOnlyBuilder builder;
  BuildScope scope(&builder);
  EXPECT_ERROR(range(0, symbolic_tensor(DType::Int32, Shape{})), UnimplementedError, "'limit'", "symbolic");
}

}  // namespace
}  // namespace ef
