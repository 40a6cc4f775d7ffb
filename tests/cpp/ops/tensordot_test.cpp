// tensordot: count and axis-list forms against an explicit einsum-style loop.
#include <random>
#include <vector>

#include "test_util.h"

namespace ef {
namespace {

using ::ef::testing::expect_meta;
using ::ef::testing::expect_values;

Tensor iota_tensor(const Shape& shape, DType dtype = DType::Float64) {
  return cast(reshape(range(0, shape.num_elements(), 1, DType::Int64), shape), dtype);
}

TEST(Tensordot, CountForm) {
  Tensor a = constant({{1.f, 2.f}, {3.f, 4.f}});
  Tensor b = constant({{5.f, 6.f}, {7.f, 8.f}});
  expect_values(tensordot(a, b, 1), {19, 22, 43, 50});  // matmul
  expect_values(tensordot(a, b, 2), {70});              // full contraction
  Tensor outer = tensordot(constant({1.f, 2.f}), constant({3.f, 4.f, 5.f}), 0);
  expect_meta(outer, Shape{2, 3}, DType::Float32);
  expect_values(outer, {3, 4, 5, 6, 8, 10});
  expect_meta(tensordot(constant(2.f), constant(3.f), 0), Shape{}, DType::Float32);
  expect_values(tensordot(constant(2.f), constant(3.f), 0), {6});
}

TEST(Tensordot, AxisListsAgainstLoop) {
  // c[i, l] = sum_{j, k} a[i, j, k] * b[k, l, j]
  Tensor a = iota_tensor(Shape{2, 3, 4}), b = iota_tensor(Shape{4, 5, 3});
  std::vector<double> va = a.to_vector<double>(), vb = b.to_vector<double>(), expected;
  for (int i = 0; i < 2; ++i)
    for (int l = 0; l < 5; ++l) {
      double s = 0;
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 4; ++k) s += va[(i * 3 + j) * 4 + k] * vb[(k * 5 + l) * 3 + j];
      expected.push_back(s);
    }
  Tensor c = tensordot(a, b, {{1, 2}, {2, 0}});
  expect_meta(c, Shape{2, 5}, DType::Float64);
  expect_values(c, expected, 1e-12);
  expect_values(tensordot(a, b, {{2, 1}, {0, 2}}), expected, 1e-12);  // same pairs, other order
  expect_values(tensordot(a, b, {{-1, -2}, {0, -1}}), expected, 1e-12);
  // Contracting leading axes of a and trailing axes of b (fed to matmul transposed).
  Tensor x = iota_tensor(Shape{3, 2}, DType::Int32), y = iota_tensor(Shape{4, 3}, DType::Int32);
  Tensor z = tensordot(x, y, {{0}, {1}});  // z[i, j] = sum_k x[k, i] y[j, k]
  expect_meta(z, Shape{2, 4}, DType::Int32);
  expect_values(z, {10, 28, 46, 64, 13, 40, 67, 94});
  expect_values(tensordot(transpose(x), y, {{1}, {1}}), {10, 28, 46, 64, 13, 40, 67, 94});
}

TEST(Tensordot, EmptyAndErrors) {
  expect_values(tensordot(zeros(Shape{2, 0}), zeros(Shape{0, 3}), 1), {0, 0, 0, 0, 0, 0});
  expect_meta(tensordot(zeros(Shape{0, 4}), zeros(Shape{4, 3}), 1), Shape{0, 3}, DType::Float32);
  Tensor a = zeros(Shape{2, 3}), b = zeros(Shape{4, 2});
  EXPECT_ERROR(tensordot(a, b, 1), InvalidArgumentError, "tensordot", "size 3", "size 4", "[2, 3]", "[4, 2]");
  EXPECT_ERROR(tensordot(a, b, 3), InvalidArgumentError, "tensordot", "axes", "3");
  EXPECT_ERROR(tensordot(a, b, -1), InvalidArgumentError, "tensordot", "axes");
  EXPECT_ERROR(tensordot(a, b, {{0, 1}, {1}}), InvalidArgumentError, "tensordot", "equally long");
  EXPECT_ERROR(tensordot(a, b, {{0, 0}, {1, 1}}), InvalidArgumentError, "tensordot", "repeats");
  EXPECT_ERROR(tensordot(a, b, {{2}, {0}}), InvalidArgumentError, "tensordot", "axes (of a)", "2");
  EXPECT_ERROR(tensordot(a, zeros(Shape{3}, DType::Float64), 1), InvalidArgumentError, "tensordot", "float64",
               "float32");
  EXPECT_ERROR(tensordot(zeros(Shape{2}, DType::Bool), zeros(Shape{2}, DType::Bool), 1), InvalidArgumentError,
               "tensordot", "bool");
}

}  // namespace
}  // namespace ef
