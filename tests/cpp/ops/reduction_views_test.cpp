// Reductions, scans and matmul on views made by the public array ops.
#include <vector>

#include "test_util.h"

namespace ef {
namespace {

using ::ef::testing::expect_values;

// Views made by the public array ops (transpose, reverse, slices) through the
// reductions and matmul.
TEST(ReductionViews, TransposeReverseSlice) {
  Tensor x = reshape(range(0, 24, 1, DType::Int64), Shape{2, 3, 4});
  Tensor t = transpose(x, {2, 0, 1});  // [4, 2, 3]
  ASSERT_FALSE(t.is_contiguous());
  expect_values(reduce_sum(t, 0), {6, 22, 38, 54, 70, 86});
  expect_values(reduce_sum(t, {1, 2}), {60, 66, 72, 78});
  expect_values(reduce_max(t, -1), {8, 20, 9, 21, 10, 22, 11, 23});
  expect_values(argmin(t, 1), {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  expect_values(cumsum(t, 2), {0, 4, 12, 12, 28, 48, 1, 6, 15, 13, 30, 51, 2, 8, 18, 14, 32, 54, 3, 10, 21, 15, 34, 57});
  Tensor r = reverse(x, {2});
  expect_values(reduce_sum(r, {0, 1}), {78, 72, 66, 60});
  expect_values(argmax(r, 2), {0, 0, 0, 0, 0, 0});
  Tensor s = slice(x, {0, 1, 1}, {2, 2, 2});  // [2, 2, 2]
  expect_values(reduce_prod(s, 0), {5 * 17, 6 * 18, 9 * 21, 10 * 22});
}

TEST(MatMulViews, BatchedTransposedViews) {
  Tensor a = cast(reshape(range(0, 24, 1, DType::Int64), Shape{2, 3, 4}), DType::Float32);
  Tensor at = transpose(a, {0, 2, 1});  // [2, 4, 3], unit stride along rows
  Tensor c = matmul(at, a);             // [2, 4, 4] = a_b^T a_b
  Tensor ref = matmul(a, a, true, false);
  expect_values(c, ref.to_vector<double>());
  expect_values(matmul(a, at), matmul(a, a, false, true).to_vector<double>());
  // A reversed view cannot be read by BLAS and is copied first.
  Tensor rv = reverse(a, {1});
  Tensor rc = rv.contiguous();
  expect_values(matmul(rv, at), matmul(rc, at).to_vector<double>());
  // Integers read the views directly.
  Tensor ai = reshape(range(0, 24, 1, DType::Int32), Shape{2, 3, 4});
  expect_values(matmul(transpose(ai, {0, 2, 1}), ai), matmul(ai, ai, true).to_vector<double>());
}

}  // namespace
}  // namespace ef
