// reduce_sum / prod / max / min / any / all: values, axes, keepdims, dtypes, empty,
// non-contiguous inputs, accuracy, determinism and errors.
#include <limits>
#include <vector>

#include "test_util.h"

namespace ef {
namespace {

using ::ef::testing::expect_meta;
using ::ef::testing::expect_values;
using testing::i64;

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// [[1, 2, 3], [4, 5, 6]]
Tensor m23() { return constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}}); }

// A [cols, rows] transposed view of a row-major [rows, cols] tensor (non-contiguous).
Tensor transposed_view(const Tensor& x) {
  return detail::make_view(x, Shape{x.shape()[1], x.shape()[0]}, Dims{1, x.shape()[1]}, 0);
}

TEST(ReduceSum, AxesAndKeepdims) {
  Tensor x = m23();
  expect_values(reduce_sum(x), {21});
  expect_meta(reduce_sum(x), Shape{}, DType::Float32);
  expect_values(reduce_sum(x, 0), {5, 7, 9});
  expect_values(reduce_sum(x, 1), {6, 15});
  expect_values(reduce_sum(x, -1), {6, 15});
  expect_values(reduce_sum(x, {0, 1}), {21});
  expect_values(reduce_sum(x, {-1, 0}), {21});
  expect_meta(reduce_sum(x, 1, true), Shape{2, 1}, DType::Float32);
  expect_meta(reduce_sum(x, {}, true), Shape{1, 1}, DType::Float32);
  expect_values(reduce_sum(x, 0, true), {5, 7, 9});
  expect_meta(reduce_sum(x, 0, true), Shape{1, 3}, DType::Float32);
  // An explicit empty list reduces nothing (TF's axis=[]).
  Tensor same = reduce_sum(x, std::vector<int64_t>{});
  expect_meta(same, Shape{2, 3}, DType::Float32);
  expect_values(same, {1, 2, 3, 4, 5, 6});
}

TEST(ReduceSum, Rank3MiddleAndOuterAxes) {
  // x[i][j][k] = 100 i + 10 j + k, shape [2, 3, 4]
  std::vector<float> v;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) v.push_back(100.f * i + 10.f * j + k);
  Tensor x = constant(v, Shape{2, 3, 4});
  expect_values(reduce_sum(x, 1), {30, 33, 36, 39, 330, 333, 336, 339});
  expect_values(reduce_sum(x, {0, 2}), {2 * 6 + 400, 2 * 6 + 80 + 400, 2 * 6 + 160 + 400});
  expect_values(reduce_sum(x, 0), {100, 102, 104, 106, 120, 122, 124, 126, 140, 142, 144, 146});
  expect_meta(reduce_sum(x, {0, 2}, true), Shape{1, 3, 1}, DType::Float32);
}

TEST(ReduceSum, Dtypes) {
  expect_values(reduce_sum(constant({{1.0, 2.0}, {3.0, 4.5}}), 0), {4, 6.5});
  Tensor i32 = constant({{1, 2}, {3, 4}});
  expect_meta(reduce_sum(i32, 1), Shape{2}, DType::Int32);
  expect_values(reduce_sum(i32, 1), {3, 7});
  expect_values(reduce_sum(i64({int64_t{1} << 40, int64_t{1} << 40})), {std::ldexp(1.0, 41)});
  // Integer sums wrap.
  Tensor big = constant({std::numeric_limits<int32_t>::max(), 1});
  EXPECT_EQ(reduce_sum(big).item<int32_t>(), std::numeric_limits<int32_t>::min());
}

TEST(ReduceSum, ScalarAndEmpty) {
  Tensor s = constant(5.f);
  expect_meta(reduce_sum(s), Shape{}, DType::Float32);
  expect_values(reduce_sum(s), {5});
  expect_values(reduce_sum(s, {}, true), {5});
  Tensor e = zeros(Shape{0, 3});
  expect_meta(reduce_sum(e, 0), Shape{3}, DType::Float32);
  expect_values(reduce_sum(e, 0), {0, 0, 0});
  expect_meta(reduce_sum(e, 1), Shape{0}, DType::Float32);
  expect_values(reduce_sum(e), {0});
  expect_values(reduce_prod(e, 0), {1, 1, 1});
  expect_values(reduce_sum(zeros(Shape{0}, DType::Int64)), {0});
}

TEST(ReduceSum, NonContiguous) {
  Tensor t = transposed_view(m23());  // [[1, 4], [2, 5], [3, 6]]
  ASSERT_FALSE(t.is_contiguous());
  expect_values(reduce_sum(t, 0), {6, 15});
  expect_values(reduce_sum(t, 1), {5, 7, 9});
  expect_values(reduce_sum(t), {21});
  expect_values(reduce_max(t, 1), {4, 5, 6});
  expect_values(reduce_min(t, 0), {1, 4});
}

TEST(ReduceSum, NegativeAndZeroStrides) {
  Tensor base = m23();
  // Both axes reversed: [[6, 5, 4], [3, 2, 1]].
  Tensor rev = detail::make_view(base, Shape{2, 3}, Dims{-3, -1}, 5);
  expect_values(reduce_sum(rev, 1), {15, 6});
  expect_values(reduce_sum(rev, 0), {9, 7, 5});
  expect_values(reduce_prod(rev), {720});
  expect_values(argmax(rev, 1), {0, 0});
  expect_values(cumsum(rev, 1), {6, 11, 15, 3, 5, 6});
  // Row 0 broadcast to 4 rows (stride 0): [[1, 2, 3]] * 4.
  Tensor bcast = detail::make_view(base, Shape{4, 3}, Dims{0, 1}, 0);
  expect_values(reduce_sum(bcast, 0), {4, 8, 12});
  expect_values(reduce_sum(bcast, 1), {6, 6, 6, 6});
  expect_values(reduce_max(bcast), {3});
}

TEST(ReduceSum, LargeColumnsAndRows) {
  // Exercises the column path (reducing an outer axis) and the blocked row path.
  const int64_t rows = 3000, cols = 70;
  std::vector<double> v(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) v[i * cols + j] = static_cast<double>((i * 7 + j * 3) % 11);
  Tensor x = constant(v, Shape{rows, cols});
  std::vector<double> col(cols, 0), row(rows, 0);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      col[j] += v[i * cols + j];
      row[i] += v[i * cols + j];
    }
  expect_values(reduce_sum(x, 0), col);
  expect_values(reduce_sum(x, 1), row);
  double total = 0;
  for (double c : col) total += c;
  expect_values(reduce_sum(x), {total});
  expect_values(reduce_sum(transposed_view(x), 1), col);
}

TEST(ReduceSum, Float32Accuracy) {
  EXPECT_EQ(reduce_sum(ones(Shape{10000000})).item<float>(), 1e7f);
  float s = reduce_sum(fill(Shape{10000000}, 0.1f)).item<float>();
  EXPECT_NEAR(s, 1e6, 1e6 * 1e-5);
  // The same through the column path.
  Tensor cols = reduce_sum(fill(Shape{1000000, 8}, 0.1f), 0);
  for (float c : cols.to_vector<float>()) EXPECT_NEAR(c, 1e5, 1e5 * 1e-5);
}

TEST(ReduceSum, DeterministicAcrossThreadCounts) {
  const int saved = num_threads();
  std::vector<float> v(3000000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 2654435761u) % 1000) * 1e-3f - 0.5f;
  Tensor x = constant(v, Shape{3, 1000000});
  set_num_threads(1);
  std::vector<float> one_all = reduce_sum(x).to_vector<float>(), one_rows = reduce_sum(x, 1).to_vector<float>();
  std::vector<double> one_max = reduce_max(x, 1).to_vector<double>();
  set_num_threads(2);
  std::vector<float> two_all = reduce_sum(x).to_vector<float>(), two_rows = reduce_sum(x, 1).to_vector<float>();
  std::vector<double> two_max = reduce_max(x, 1).to_vector<double>();
  set_num_threads(saved);
  EXPECT_EQ(one_all, two_all);
  EXPECT_EQ(one_rows, two_rows);
  EXPECT_EQ(one_max, two_max);
}

TEST(ReduceSum, ManyRowsFewColumns) {
  // Reducing the batch axis of a [batch, features] tensor: rows are split into pieces.
  const int64_t rows = 50000, cols = 20;
  std::vector<float> v(rows * cols);
  std::vector<double> col(cols, 0);
  std::vector<double> mx(cols, -1);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      float x = static_cast<float>((i * 13 + j * 7) % 17) - 8.f;
      v[i * cols + j] = x;
      col[j] += x;
      mx[j] = std::max(mx[j], static_cast<double>(x) + (i == 777 && j == 3 ? 100 : 0));
    }
  v[777 * cols + 3] += 100.f;
  col[3] += 100;
  Tensor x = constant(v, Shape{rows, cols});
  expect_values(reduce_sum(x, 0), col);
  expect_values(reduce_max(x, 0), mx);
  const int saved = num_threads();
  set_num_threads(1);
  std::vector<float> one = reduce_sum(x * 0.1f, 0).to_vector<float>();
  set_num_threads(2);
  std::vector<float> two = reduce_sum(x * 0.1f, 0).to_vector<float>();
  set_num_threads(saved);
  EXPECT_EQ(one, two);
}

TEST(ReduceProd, Values) {
  Tensor x = m23();
  expect_values(reduce_prod(x), {720});
  expect_values(reduce_prod(x, 0), {4, 10, 18});
  expect_values(reduce_prod(x, -1, true), {6, 120});
  expect_values(reduce_prod(constant({{2, 3}, {4, 5}}), 1), {6, 20});
  expect_values(reduce_prod(i64({int64_t{1} << 32, int64_t{1} << 31})), {std::ldexp(1.0, 63) * -1});  // wraps
  expect_values(reduce_prod(constant(std::vector<double>{0.5, 4.0}, Shape{2})), {2});
}

TEST(ReduceMaxMin, Values) {
  Tensor x = constant({{1.f, 7.f, 3.f}, {-4.f, 5.f, 6.f}});
  expect_values(reduce_max(x), {7});
  expect_values(reduce_min(x), {-4});
  expect_values(reduce_max(x, 0), {1, 7, 6});
  expect_values(reduce_min(x, 1), {1, -4});
  expect_meta(reduce_max(x, 1, true), Shape{2, 1}, DType::Float32);
  expect_values(reduce_max(constant({3, -9, 8}), 0), {8});
  expect_values(reduce_min(i64({3, -9}), 0), {-9});
  expect_values(reduce_max(constant(std::vector<double>{-1.5, -0.5}, Shape{2})), {-0.5});
  expect_values(reduce_max(constant(2.f)), {2});
}

TEST(ReduceMaxMin, NaNPropagates) {
  Tensor x = constant({{1.f, NAN, 3.f}, {4.f, 5.f, 6.f}});
  expect_values(reduce_max(x), {kNaN});
  expect_values(reduce_min(x), {kNaN});
  expect_values(reduce_max(x, 0), {4, kNaN, 6});
  expect_values(reduce_min(x, 1), {kNaN, 4});
  // Long rows take the vectorized path.
  std::vector<float> v(1000, 1.f);
  v[517] = NAN;
  expect_values(reduce_max(constant(v, Shape{1000})), {kNaN});
  expect_values(reduce_min(constant(v, Shape{1000})), {kNaN});
}

TEST(ReduceMaxMin, Empty) {
  Tensor e = zeros(Shape{0, 2});
  expect_values(reduce_max(e, 0), {-kInf, -kInf});
  expect_values(reduce_min(e, 0), {kInf, kInf});
  expect_meta(reduce_max(e, 1), Shape{0}, DType::Float32);
  Tensor ei = zeros(Shape{0, 2}, DType::Int32);
  EXPECT_ERROR(reduce_max(ei, 0), InvalidArgumentError, "reduce_max", "empty axis 0", "[0, 2]", "int32");
  EXPECT_ERROR(reduce_min(ei), InvalidArgumentError, "reduce_min", "[0, 2]");
  expect_meta(reduce_max(ei, 1), Shape{0}, DType::Int32);  // nothing to compute
}

TEST(ReduceAnyAll, Values) {
  Tensor b = constant({{true, false}, {false, false}});
  expect_values(reduce_any(b), {1});
  expect_values(reduce_all(b), {0});
  expect_values(reduce_any(b, 1), {1, 0});
  expect_values(reduce_all(b, 0), {0, 0});
  expect_values(reduce_all(constant({true, true})), {1});
  expect_meta(reduce_any(b, 0, true), Shape{1, 2}, DType::Bool);
  expect_values(reduce_any(zeros(Shape{0}, DType::Bool)), {0});
  expect_values(reduce_all(zeros(Shape{0}, DType::Bool)), {1});
  // A wide bool grid through the column path: column 1 holds one false.
  std::vector<int> grid(600 * 10, 1);
  grid[123 * 10 + 1] = 0;
  Tensor g = cast(constant(grid, Shape{600, 10}), DType::Bool);
  expect_values(reduce_all(g, 0), {1, 0, 1, 1, 1, 1, 1, 1, 1, 1});
  expect_values(reduce_any(logical_not(g), 0), {0, 1, 0, 0, 0, 0, 0, 0, 0, 0});
  expect_values(reduce_all(g), {0});
  // Long enough to be reduced in blocks, in parallel.
  std::vector<int> flags(200000, 0);
  flags[199999] = 1;
  Tensor long_flags = cast(constant(flags, Shape{2, 100000}), DType::Bool);
  expect_values(reduce_any(long_flags), {1});
  expect_values(reduce_any(long_flags, 1), {0, 1});
  expect_values(reduce_all(logical_not(long_flags), 1), {1, 0});
  EXPECT_ERROR(reduce_any(constant({1.f})), InvalidArgumentError, "reduce_any", "float32", "bool");
}

// The sum of a broadcast gradient back to the input's shape: leading extra axes and the
// axes where `like` has size 1; equal shapes give x itself (a view, no copy).
TEST(SumToShapeOf, SumsTheBroadcastAxes) {
  Tensor x = reshape(range(1, 13, 1, DType::Float64), {2, 2, 3});
  expect_values(sum_to_shape_of(x, zeros({3})), {22, 26, 30});
  Tensor kept = sum_to_shape_of(x, zeros({2, 1, 3}));
  EXPECT_EQ(kept.shape(), (Shape{2, 1, 3}));
  expect_values(kept, {5, 7, 9, 17, 19, 21});
  expect_values(sum_to_shape_of(x, zeros({1, 1})), {78});
  expect_values(sum_to_shape_of(transpose(x, {2, 1, 0}), zeros({1, 2, 1})), {30, 48});
  Tensor same = sum_to_shape_of(x, zeros({2, 2, 3}));
  EXPECT_EQ(same.impl()->storage.get(), x.impl()->storage.get());
  EXPECT_EQ(sum_to_shape_of(zeros({0, 3}), zeros({1, 3})).to_vector<float>(), (std::vector<float>{0, 0, 0}));
  EXPECT_ERROR(sum_to_shape_of(x, zeros({3, 3})), InvalidArgumentError, "sum_to_shape_of", "[2, 2, 3]",
               "[3, 3]");
  EXPECT_ERROR(sum_to_shape_of(zeros({3}), zeros({1, 3})), InvalidArgumentError, "sum_to_shape_of");
}

TEST(Reduction, BadArguments) {
  Tensor x = m23();
  EXPECT_ERROR(reduce_sum(x, 2), InvalidArgumentError, "reduce_sum", "axis", "2", "rank 2");
  EXPECT_ERROR(reduce_sum(x, -3), InvalidArgumentError, "reduce_sum", "-3", "rank 2");
  EXPECT_ERROR(reduce_sum(x, {0, 0}), InvalidArgumentError, "reduce_sum", "repeats axis 0");
  EXPECT_ERROR(reduce_max(x, {1, -1}), InvalidArgumentError, "reduce_max", "repeats");
  EXPECT_ERROR(reduce_sum(constant(1.f), 0), InvalidArgumentError, "reduce_sum", "scalar");
  EXPECT_ERROR(reduce_sum(constant({true})), InvalidArgumentError, "reduce_sum", "bool");
  EXPECT_ERROR(reduce_prod(Tensor()), InvalidArgumentError, "undefined");
}

}  // namespace
}  // namespace ef
