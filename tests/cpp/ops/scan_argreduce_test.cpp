// argmax / argmin and cumsum / cumprod.
#include <limits>
#include <vector>

#include "test_util.h"

namespace ef {
namespace {

using ::ef::testing::expect_meta;
using ::ef::testing::expect_values;

// An int64 tensor of `v` (a vector of `shape`, default 1-D).
Tensor i64(std::vector<int64_t> v, Shape shape = {}) {
  if (shape.rank() == 0) shape = Shape{static_cast<int64_t>(v.size())};
  return constant(v, shape);
}

Tensor transposed_view(const Tensor& x) {
  return detail::make_view(x, Shape{x.shape()[1], x.shape()[0]}, Dims{1, x.shape()[1]}, 0);
}

TEST(ArgMax, Values) {
  Tensor x = constant({{1.f, 9.f, 3.f}, {8.f, 5.f, 8.f}});
  expect_meta(argmax(x), Shape{3}, DType::Int64);
  expect_values(argmax(x), {1, 0, 1});
  expect_values(argmax(x, 1), {1, 0});  // ties: first index
  expect_values(argmax(x, -1), {1, 0});
  expect_values(argmin(x, 1), {0, 1});
  expect_values(argmin(x, 0), {0, 1, 0});
  expect_meta(argmax(x, 1, DType::Int32), Shape{2}, DType::Int32);
  expect_values(argmax(constant({3, 7, 7, -1})), {1});
  expect_values(argmin(i64({3, -7})), {1});
  expect_values(argmax(constant({false, true, true})), {1});
  expect_values(argmin(constant(std::vector<double>{2.0, 1.0, 1.0}, Shape{3})), {1});
}

TEST(ArgMax, NaNWinsAndNonContiguous) {
  expect_values(argmax(constant({1.f, NAN, 5.f, NAN})), {1});
  expect_values(argmin(constant({1.f, -2.f, NAN})), {2});
  expect_values(argmax(constant({NAN, 5.f})), {0});
  Tensor t = transposed_view(constant({{1.f, 9.f, 3.f}, {8.f, 5.f, 8.f}}));  // [[1, 8], [9, 5], [3, 8]]
  expect_values(argmax(t, 1), {1, 0, 1});
  expect_values(argmax(t, 0), {1, 0});
}

TEST(ArgMax, LongRows) {
  // Long unit-stride rows take the blocked, vectorized search.
  std::vector<float> v(5000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 37) % 101);
  v[3000] = 500.f;
  v[4000] = 500.f;  // a tie in a later block
  v[1234] = -7.f;
  v[2345] = -7.f;
  Tensor x = constant(v, Shape{5000});
  expect_values(argmax(x), {3000});
  expect_values(argmin(x), {1234});
  v[4500] = NAN;
  expect_values(argmax(constant(v, Shape{5000})), {4500});
  expect_values(argmin(constant(v, Shape{5000})), {4500});
  std::vector<int64_t> w(300, 3);
  w[299] = 4;
  w[100] = 4;
  expect_values(argmax(i64(w)), {100});
  expect_values(argmax(constant(v, Shape{2, 2500}), 1), {30, 2000});
}

TEST(ArgMax, EmptyAndErrors) {
  expect_meta(argmax(zeros(Shape{0, 3}), 1), Shape{0}, DType::Int64);
  EXPECT_ERROR(argmax(zeros(Shape{0, 3}), 0), InvalidArgumentError, "argmax", "empty axis 0", "[0, 3]");
  EXPECT_ERROR(argmax(constant(1.f)), InvalidArgumentError, "argmax", "scalar");
  EXPECT_ERROR(argmin(zeros(Shape{2, 3}), 2), InvalidArgumentError, "argmin", "axis", "rank 2");
  EXPECT_ERROR(argmax(zeros(Shape{2}), 0, DType::Float32), InvalidArgumentError, "argmax", "output_type",
               "float32");
}

TEST(Cumsum, Values) {
  Tensor x = constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  expect_values(cumsum(x), {1, 2, 3, 5, 7, 9});
  expect_values(cumsum(x, 1), {1, 3, 6, 4, 9, 15});
  expect_values(cumsum(x, -1), {1, 3, 6, 4, 9, 15});
  expect_values(cumsum(x, 1, true), {0, 1, 3, 0, 4, 9});
  expect_values(cumsum(x, 1, false, true), {6, 5, 3, 15, 11, 6});
  expect_values(cumsum(x, 1, true, true), {5, 3, 0, 11, 6, 0});
  expect_values(cumsum(x, 0, true), {0, 0, 0, 1, 2, 3});
  expect_values(cumsum(x, 0, false, true), {5, 7, 9, 4, 5, 6});
  expect_meta(cumsum(x, 1), Shape{2, 3}, DType::Float32);
  expect_values(cumsum(constant({1, 2, 3})), {1, 3, 6});
  expect_values(cumsum(i64({5, -2})), {5, 3});
  expect_values(cumsum(constant(std::vector<double>{0.5, 0.25}, Shape{2})), {0.5, 0.75});
  EXPECT_EQ(cumsum(constant({std::numeric_limits<int32_t>::max(), 1})).to_vector<int32_t>()[1],
            std::numeric_limits<int32_t>::min());  // wraps
}

TEST(Cumsum, NonContiguousAndEmpty) {
  Tensor t = transposed_view(constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}}));  // [[1, 4], [2, 5], [3, 6]]
  expect_values(cumsum(t, 0), {1, 4, 3, 9, 6, 15});
  expect_values(cumsum(t, 1, false, true), {5, 4, 7, 5, 9, 6});
  expect_meta(cumsum(zeros(Shape{0, 2}), 0), Shape{0, 2}, DType::Float32);
  expect_meta(cumsum(zeros(Shape{2, 0}), 0), Shape{2, 0}, DType::Float32);
}

TEST(Cumprod, Values) {
  Tensor x = constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  expect_values(cumprod(x, 1), {1, 2, 6, 4, 20, 120});
  expect_values(cumprod(x, 0), {1, 2, 3, 4, 10, 18});
  expect_values(cumprod(x, 1, true), {1, 1, 2, 1, 4, 20});
  expect_values(cumprod(x, 1, false, true), {6, 6, 3, 120, 30, 6});
  expect_values(cumprod(x, 0, true, true), {4, 5, 6, 1, 1, 1});
  expect_values(cumprod(constant({2, 3, 4})), {2, 6, 24});
}

TEST(Scan, Errors) {
  EXPECT_ERROR(cumsum(constant(1.f)), InvalidArgumentError, "cumsum", "scalar");
  EXPECT_ERROR(cumsum(zeros(Shape{2, 2}), 2), InvalidArgumentError, "cumsum", "axis", "rank 2");
  EXPECT_ERROR(cumprod(constant({true})), InvalidArgumentError, "cumprod", "bool");
}

TEST(Composite, Mean) {
  Tensor x = constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  expect_values(reduce_mean(x), {3.5});
  expect_values(reduce_mean(x, 0), {2.5, 3.5, 4.5});
  expect_values(reduce_mean(x, -1, true), {2, 5});
  expect_meta(reduce_mean(x, -1, true), Shape{2, 1}, DType::Float32);
  expect_values(reduce_mean(constant({{1, 2}, {3, 6}}), 1), {1, 4});  // integer division
  expect_meta(reduce_mean(constant({1, 2})), Shape{}, DType::Int32);
  expect_values(reduce_mean(zeros(Shape{0, 2}), 0), {NAN, NAN});
  expect_values(reduce_mean(transposed_view(x), 1), {2.5, 3.5, 4.5});
  EXPECT_ERROR(reduce_mean(zeros(Shape{0}, DType::Int32)), InvalidArgumentError, "reduce_mean", "empty");
  EXPECT_ERROR(reduce_mean(constant({true})), InvalidArgumentError, "reduce_mean", "bool");
  EXPECT_ERROR(reduce_mean(x, 3), InvalidArgumentError, "reduce_sum", "axis");
}

TEST(Composite, LogSumExp) {
  Tensor x = constant({{0.f, 0.f}, {1000.f, 1000.f}});
  expect_values(reduce_logsumexp(x, 1), {std::log(2.0), 1000 + std::log(2.0)}, 1e-5);
  expect_values(reduce_logsumexp(x, 1, true), {std::log(2.0), 1000 + std::log(2.0)}, 1e-5);
  expect_meta(reduce_logsumexp(x, 1, true), Shape{2, 1}, DType::Float32);
  expect_values(reduce_logsumexp(constant({1.0, 2.0, 3.0})), {3.40760596444438}, 1e-12);
  const float inf = std::numeric_limits<float>::infinity();
  expect_values(reduce_logsumexp(constant({-inf, -inf})), {-INFINITY});
  expect_values(reduce_logsumexp(constant({-inf, 0.f})), {0});
  expect_values(reduce_logsumexp(constant({inf, 0.f})), {INFINITY});
  expect_values(reduce_logsumexp(zeros(Shape{0})), {-INFINITY});
  EXPECT_ERROR(reduce_logsumexp(constant({1, 2})), InvalidArgumentError, "reduce_logsumexp", "int32");
}

TEST(Composite, VarianceAndStd) {
  Tensor x = constant({{1.f, 2.f}, {3.f, 6.f}});
  expect_values(reduce_variance(x), {3.5});
  expect_values(reduce_variance(x, 0), {1, 4});
  expect_values(reduce_std(x, 0), {1, 2});
  expect_values(reduce_std(x, 1, true), {0.5, 1.5});
  expect_meta(reduce_std(x, 1, true), Shape{2, 1}, DType::Float32);
  expect_values(reduce_variance(constant(std::vector<double>{1e9 + 1, 1e9 + 3}, Shape{2})), {1}, 1e-9);
  EXPECT_ERROR(reduce_std(constant({1, 2})), InvalidArgumentError, "reduce_std", "int32");
}

}  // namespace
}  // namespace ef
