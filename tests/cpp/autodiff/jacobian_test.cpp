// GradientTape::jacobian and batch_jacobian, including a Hessian by nesting tapes.
#include "test_util.h"

namespace ef {
namespace {

TEST(Jacobian, ElementwiseSquareIsDiagonal) {
  Tensor x = constant({1.0, 2.0, 3.0});
  GradientTape tape;
  tape.watch(x);
  Tensor y = x * x;
  Tensor j = tape.jacobian(y, x);
  testing::expect_meta(j, {3, 3}, DType::Float64);
  testing::expect_values(j, {2, 0, 0, 0, 4, 0, 0, 0, 6});
}

TEST(Jacobian, MatmulShapesAreTargetThenSource) {
  Tensor W = testing::rand64({2, 3}, 1), x = testing::rand64({3, 1}, 2);
  GradientTape tape(/*persistent=*/true);
  tape.watch(W);
  tape.watch(x);
  Tensor y = matmul(W, x);  // [2, 1]
  Tensor jx = tape.jacobian(y, x);
  testing::expect_meta(jx, {2, 1, 3, 1}, DType::Float64);
  testing::expect_values(jx, W.to_vector<double>(), 1e-15);  // dy_i/dx_k = W_ik
  Tensor jw = tape.jacobian(y, W);
  testing::expect_meta(jw, {2, 1, 2, 3}, DType::Float64);
  // dy_i/dW_ab = [i == a] x_b
  std::vector<double> xs = x.to_vector<double>(), expected;
  for (int i = 0; i < 2; ++i)
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 3; ++b) expected.push_back(i == a ? xs[b] : 0.0);
  testing::expect_values(jw, expected, 1e-15);
  // A persistent tape still answers gradient() afterwards: the column sums.
  testing::expect_values(tape.gradient(y, x), reduce_sum(W, 0).to_vector<double>(), 1e-15);
}

TEST(Jacobian, HessianByNestingTapes) {
  Tensor x = constant({2.0, 3.0});
  GradientTape outer;
  outer.watch(x);
  Tensor g;
  {
    GradientTape inner;
    inner.watch(x);
    Tensor f = reduce_sum(pow(x, 3.0)) + x[0] * x[1];
    g = inner.gradient(f, x);
  }
  // f = x0^3 + x1^3 + x0 x1: H = [[6 x0, 1], [1, 6 x1]]
  testing::expect_values(outer.jacobian(g, x), {12, 1, 1, 18});
}

TEST(Jacobian, UnconnectedEmptyAndUsedTapes) {
  Tensor x = constant({1.0, 2.0}), z = constant({5.0});
  {
    GradientTape tape(/*persistent=*/true);
    tape.watch(x);
    Tensor y = z * 2;
    EXPECT_FALSE(tape.jacobian(y, x).defined());
    Tensor zero = tape.jacobian(y, x, UnconnectedGradients::Zero);
    testing::expect_meta(zero, {1, 2}, DType::Float64);
    testing::expect_values(zero, {0, 0});
    Tensor empty = tape.jacobian(slice(x * 2, {0}, {0}), x);  // a target with no elements
    testing::expect_meta(empty, {0, 2}, DType::Float64);
  }
  {
    GradientTape tape;
    tape.watch(x);
    Tensor y = x * 3;
    testing::expect_values(tape.jacobian(y, x), {3, 0, 0, 3});
    EXPECT_ERROR(tape.jacobian(y, x), FailedPreconditionError, "persistent");
  }
  GradientTape tape;
  EXPECT_ERROR(tape.jacobian(x, testing::i64({1})), InvalidArgumentError, "jacobian: source 0 has dtype int64");
}

TEST(BatchJacobian, RowsAreDifferentiatedSeparately) {
  Tensor x = testing::rand64({4, 3}, 3), W = testing::rand64({3, 2}, 4);
  GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  Tensor y = matmul(x * x, W);  // [4, 2]; row i depends on x[i] only
  Tensor bj = tape.batch_jacobian(y, x);
  testing::expect_meta(bj, {4, 2, 3}, DType::Float64);
  // dy[i, j]/dx[i, k] = 2 x[i, k] W[k, j]; it is the diagonal blocks of the full jacobian.
  Tensor full = tape.jacobian(y, x);  // [4, 2, 4, 3]
  std::vector<double> xs = x.to_vector<double>(), ws = W.to_vector<double>();
  std::vector<double> expected, diagonal_blocks, f = full.to_vector<double>();
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k) {
        expected.push_back(2 * xs[i * 3 + k] * ws[k * 2 + j]);
        diagonal_blocks.push_back(f[((i * 2 + j) * 4 + i) * 3 + k]);
      }
  testing::expect_values(bj, expected, 1e-14);
  testing::expect_values(bj, diagonal_blocks, 1e-14);
}

TEST(BatchJacobian, ShapesAndErrors) {
  Tensor x = testing::rand64({2, 3}, 5);
  GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  Tensor row_sums = reduce_sum(x, 1);  // [2]: a rank-1 target
  Tensor bj = tape.batch_jacobian(row_sums, x);
  testing::expect_meta(bj, {2, 3}, DType::Float64);
  testing::expect_values(bj, {1, 1, 1, 1, 1, 1});
  Tensor wide = reshape(x, {2, 1, 3}) * 2;  // [2, 1, 3] target, [2, 3] source
  testing::expect_meta(tape.batch_jacobian(wide, x), {2, 1, 3, 3}, DType::Float64);
  EXPECT_ERROR(tape.batch_jacobian(transpose(x), x), InvalidArgumentError,
               "the target (shape [3, 2]) and the source (shape [2, 3]) need the same first (batch) dimension");
  EXPECT_ERROR(tape.batch_jacobian(reduce_sum(x), x), InvalidArgumentError, "batch");
}

}  // namespace
}  // namespace ef
