// The LAPACK-backed matrix functions of ef::linalg (cholesky, triangular_solve, solve,
// slogdet and the composites over them) and the band/diagonal helpers: hand-checked
// values, batches with broadcasting, empty batches and 0 x 0 matrices, non-contiguous
// inputs, both dtypes, inference with unknown dimensions, and bad inputs.
#include <cmath>
#include <limits>

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_meta;
using testing::expect_values;
constexpr int64_t U = kUnknownDim;

Tensor m64(std::vector<double> v, Shape s) { return constant(v, s); }
Tensor m32(std::vector<float> v, Shape s) { return constant(v, s); }

// A well-conditioned random batch: X X^T + n I (symmetric positive definite).
Tensor spd(const Shape& batch_and_n, int64_t seed) {
  Dims dims = batch_and_n.dims();
  const int64_t n = dims.back();
  dims.push_back(n);
  Tensor x = testing::rand64(Shape(dims), seed);
  return add(matmul(x, x, false, true), multiply(eye(n, n, DType::Float64), static_cast<double>(n)));
}

TEST(LinalgCholesky, Values) {
  // [[4, 2], [2, 3]] = L L^T with L = [[2, 0], [1, sqrt 2]]; the upper triangle is not read.
  expect_values(linalg::cholesky(m64({4, 2, 2, 3}, {2, 2})), {2, 0, 1, std::sqrt(2.0)}, 1e-12);
  expect_values(linalg::cholesky(m64({4, 99, 2, 3}, {2, 2})), {2, 0, 1, std::sqrt(2.0)}, 1e-12);
  Tensor l32 = linalg::cholesky(m32({4, 2, 2, 3}, {2, 2}));
  expect_meta(l32, {2, 2}, DType::Float32);
  expect_values(l32, {2, 0, 1, std::sqrt(2.0)}, 1e-6);
}

TEST(LinalgCholesky, BatchedReconstructs) {
  Tensor a = spd({2, 3, 5}, 1);
  Tensor l = linalg::cholesky(a);
  expect_meta(l, {2, 3, 5, 5}, DType::Float64);
  expect_values(matmul(l, l, false, true), a.to_vector<double>(), 1e-12);
  expect_values(linalg::band_part(l, 0, -1), linalg::band_part(l, 0, 0).to_vector<double>());  // lower
  // A transposed (non-contiguous) view of a symmetric batch gives the same factor.
  expect_values(linalg::cholesky(linalg::matrix_transpose(a)), l.to_vector<double>(), 1e-12);
}

TEST(LinalgCholesky, Empty) {
  expect_meta(linalg::cholesky(zeros({0, 3, 3}, DType::Float64)), {0, 3, 3}, DType::Float64);
  expect_meta(linalg::cholesky(zeros({2, 0, 0})), {2, 0, 0}, DType::Float32);
}

TEST(LinalgCholesky, BadInputs) {
  EXPECT_ERROR(linalg::cholesky(m64({1, 2, 2, 1}, {2, 2})), InvalidArgumentError, "cholesky",
               "not positive definite");
  EXPECT_ERROR(linalg::cholesky(zeros({2, 3})), InvalidArgumentError, "cholesky", "square", "[2, 3]");
  EXPECT_ERROR(linalg::cholesky(zeros({3})), InvalidArgumentError, "cholesky", "rank >= 2", "[3]");
  EXPECT_ERROR(linalg::cholesky(zeros({2, 2}, DType::Int32)), InvalidArgumentError, "cholesky", "int32");
}

TEST(LinalgTriangularSolve, Values) {
  Tensor l = m64({2, 0, 1, 1}, {2, 2}), b = m64({2, 3}, {2, 1});
  expect_values(linalg::triangular_solve(l, b), {1, 2});
  expect_values(linalg::triangular_solve(l, b, true, true), {-0.5, 3});  // L^T x = b
  // Only the named triangle is read: the upper one of [[2, 1], [7, 1]].
  expect_values(linalg::triangular_solve(m64({2, 1, 7, 1}, {2, 2}), b, false), {-0.5, 3});
  Tensor x32 = linalg::triangular_solve(m32({2, 0, 1, 1}, {2, 2}), m32({2, 3, 4, 6}, {2, 2}));
  expect_meta(x32, {2, 2}, DType::Float32);
  expect_values(x32, {1, 1.5, 3, 4.5});
}

TEST(LinalgTriangularSolve, BroadcastAndViews) {
  Tensor l = linalg::cholesky(spd({3, 4}, 2));  // [3, 4, 4]
  Tensor b = testing::rand64({2, 1, 4, 6}, 3);
  Tensor x = linalg::triangular_solve(l, b);
  expect_meta(x, {2, 3, 4, 6}, DType::Float64);
  expect_values(matmul(l, x), broadcast_to(b, {2, 3, 4, 6}).to_vector<double>(), 1e-12);
  // An upper-triangular transposed view, and adjoint.
  Tensor u = linalg::matrix_transpose(l);
  expect_values(linalg::triangular_solve(u, b, false),
                linalg::triangular_solve(l, b, true, true).to_vector<double>(), 1e-12);
  expect_meta(linalg::triangular_solve(l, zeros({3, 4, 0}, DType::Float64)), {3, 4, 0}, DType::Float64);
}

TEST(LinalgTriangularSolve, BadInputs) {
  Tensor l = m64({2, 0, 1, 1}, {2, 2});
  EXPECT_ERROR(linalg::triangular_solve(l, zeros({3, 1}, DType::Float64)), InvalidArgumentError,
               "triangular_solve", "[2, 2]", "[3, 1]");
  EXPECT_ERROR(linalg::triangular_solve(l, zeros({2, 1})), InvalidArgumentError, "triangular_solve",
               "float32");
  EXPECT_ERROR(linalg::triangular_solve(zeros({2, 2, 3}, DType::Float64), zeros({2, 1}, DType::Float64)),
               InvalidArgumentError, "triangular_solve", "square");
  EXPECT_ERROR(linalg::triangular_solve(zeros({2, 2, 2}, DType::Float64), zeros({3, 2, 1}, DType::Float64)),
               InvalidArgumentError, "triangular_solve", "broadcast");
  EXPECT_ERROR(linalg::triangular_solve(m64({2, 0, 1, 0}, {2, 2}), m64({1, 1}, {2, 1})), InvalidArgumentError,
               "triangular_solve", "not invertible");
}

TEST(LinalgSolve, Values) {
  Tensor a = m64({1, 2, 3, 4}, {2, 2}), b = m64({5, 6}, {2, 1});
  expect_values(linalg::solve(a, b), {-4, 4.5}, 1e-12);
  expect_values(linalg::solve(a, b, true), {-1, 2}, 1e-12);  // A^T x = b
  expect_values(linalg::solve(m32({1, 2, 3, 4}, {2, 2}), m32({5, 6}, {2, 1})), {-4, 4.5}, 1e-5);
  // Needs row interchanges: a zero in the first pivot position.
  expect_values(linalg::solve(m64({0, 1, 1, 0}, {2, 2}), m64({3, 7}, {2, 1})), {7, 3}, 1e-12);
}

TEST(LinalgSolve, BatchedBroadcastViews) {
  Tensor a = testing::rand64({3, 5, 5}, 4), b = testing::rand64({2, 1, 5, 7}, 5);
  Tensor x = linalg::solve(a, b);
  expect_meta(x, {2, 3, 5, 7}, DType::Float64);
  expect_values(matmul(a, x), broadcast_to(b, {2, 3, 5, 7}).to_vector<double>(), 1e-10);
  Tensor xt = linalg::solve(a, b, true);
  expect_values(matmul(a, xt, true, false), broadcast_to(b, {2, 3, 5, 7}).to_vector<double>(), 1e-10);
  // A non-contiguous matrix equals its adjoint solve.
  expect_values(linalg::solve(linalg::matrix_transpose(a), b), xt.to_vector<double>(), 1e-12);
  // Many right-hand sides (split across threads) against one matrix.
  Tensor a1 = testing::rand64({40, 40}, 6), b1 = testing::rand64({40, 300}, 7);
  expect_values(matmul(a1, linalg::solve(a1, b1)), b1.to_vector<double>(), 1e-9);
}

TEST(LinalgSolve, Empty) {
  expect_meta(linalg::solve(zeros({0, 2, 2}), zeros({0, 2, 3})), {0, 2, 3}, DType::Float32);
  expect_meta(linalg::solve(zeros({0, 0}), zeros({0, 3})), {0, 3}, DType::Float32);
}

TEST(LinalgSolve, BadInputs) {
  EXPECT_ERROR(linalg::solve(m64({1, 2, 2, 4}, {2, 2}), m64({1, 1}, {2, 1})), InvalidArgumentError, "solve",
               "not invertible");
  EXPECT_ERROR(linalg::solve(zeros({2, 2}), zeros({3, 2})), InvalidArgumentError, "solve", "[2, 2]",
               "[3, 2]");
  EXPECT_ERROR(linalg::solve(zeros({2, 2}), zeros({2}, DType::Float32)), InvalidArgumentError, "solve", "rhs",
               "rank >= 2");
  EXPECT_ERROR(linalg::solve(zeros({2, 2}, DType::Int64), zeros({2, 1}, DType::Int64)), InvalidArgumentError,
               "solve", "int64");
}

TEST(LinalgInv, ValuesAndErrors) {
  expect_values(linalg::inv(m64({1, 2, 3, 4}, {2, 2})), {-2, 1, 1.5, -0.5}, 1e-12);
  expect_values(linalg::inv(m64({1, 2, 3, 4}, {2, 2}), true), {-2, 1.5, 1, -0.5}, 1e-12);
  Tensor a = testing::rand64({2, 6, 6}, 8);
  expect_values(matmul(a, linalg::inv(a)),
                broadcast_to(eye(6, 6, DType::Float64), {2, 6, 6}).to_vector<double>(), 1e-10);
  expect_meta(linalg::inv(zeros({0, 0})), {0, 0}, DType::Float32);
  EXPECT_ERROR(linalg::inv(m32({1, 1, 1, 1}, {2, 2})), InvalidArgumentError, "not invertible");
  EXPECT_ERROR(linalg::inv(zeros({2, 3})), InvalidArgumentError, "inv", "square", "[2, 3]");
  EXPECT_ERROR(linalg::inv(zeros({4})), InvalidArgumentError, "inv", "rank >= 2");
  EXPECT_ERROR(linalg::inv(zeros({2, 2}, DType::Bool)), InvalidArgumentError, "inv", "bool");
}

TEST(LinalgDeterminant, Values) {
  expect_values(linalg::det(m64({1, 2, 3, 4}, {2, 2})), {-2}, 1e-12);
  expect_values(linalg::det(m64({2, 0, 0, 3, 0, 1, 1, 0}, {2, 2, 2})), {6, -1}, 1e-12);
  expect_values(linalg::det(m64({1, 2, 2, 4}, {2, 2})), {0});  // singular
  expect_values(linalg::det(m32({0, 2, 1, 0, 3, 0, 4, 0, 5}, {3, 3})), {-12}, 1e-5);
  expect_values(linalg::det(zeros({3, 0, 0})), {1, 1, 1});  // 0 x 0: 1, as NumPy
  expect_meta(linalg::det(zeros({0, 4, 4})), {0}, DType::Float32);
  auto [sign, logabs] = linalg::slogdet(m64({1, 2, 3, 4, 1, 2, 2, 4}, {2, 2, 2}));
  expect_values(sign, {-1, 0});
  expect_values(logabs, {std::log(2.0), -std::numeric_limits<double>::infinity()}, 1e-12);
  Tensor a = spd({4}, 9);
  expect_values(linalg::logdet(a), {std::log(linalg::det(a).item<double>())}, 1e-12);
  expect_values(linalg::logdet(m64({4, 2, 2, 3}, {2, 2})), {std::log(8.0)}, 1e-12);
}

TEST(LinalgDeterminant, BadInputs) {
  EXPECT_ERROR(linalg::det(zeros({2, 3})), InvalidArgumentError, "det", "square", "[2, 3]");
  EXPECT_ERROR(linalg::det(zeros({2})), InvalidArgumentError, "det", "rank >= 2");
  EXPECT_ERROR(linalg::det(zeros({2, 2}, DType::Int32)), InvalidArgumentError, "det", "int32");
  EXPECT_ERROR(linalg::slogdet(zeros({3, 2})), InvalidArgumentError, "slogdet", "square");
  EXPECT_ERROR(linalg::slogdet(zeros({3})), InvalidArgumentError, "slogdet", "rank >= 2");
  EXPECT_ERROR(linalg::slogdet(zeros({2, 2}, DType::Int64)), InvalidArgumentError, "slogdet", "int64");
  EXPECT_ERROR(linalg::logdet(m64({1, 2, 2, 1}, {2, 2})), InvalidArgumentError, "not positive definite");
  EXPECT_ERROR(linalg::logdet(zeros({1, 2})), InvalidArgumentError, "logdet", "square");
  EXPECT_ERROR(linalg::logdet(zeros({2}, DType::Float64)), InvalidArgumentError, "logdet", "rank >= 2");
}

TEST(LinalgCholeskySolve, ValuesAndErrors) {
  Tensor l = linalg::cholesky(m64({4, 2, 2, 3}, {2, 2}));
  expect_values(linalg::cholesky_solve(l, m64({1, 2}, {2, 1})), {-0.125, 0.75}, 1e-12);
  Tensor a = spd({2, 5}, 10), b = testing::rand64({5, 3}, 11);
  expect_values(linalg::cholesky_solve(linalg::cholesky(a), b), linalg::solve(a, b).to_vector<double>(),
                1e-12);
  EXPECT_ERROR(linalg::cholesky_solve(l, zeros({3, 1}, DType::Float64)), InvalidArgumentError, "[3, 1]");
  EXPECT_ERROR(linalg::cholesky_solve(zeros({2, 3}), zeros({2, 1})), InvalidArgumentError, "cholesky_solve",
               "square");
  EXPECT_ERROR(linalg::cholesky_solve(l, zeros({2})), InvalidArgumentError, "cholesky_solve", "rhs",
               "rank >= 2");
}

TEST(LinalgBands, Values) {
  Tensor x = testing::iota({3, 4}, DType::Int32);  // [[0 1 2 3] [4 5 6 7] [8 9 10 11]]
  expect_values(linalg::band_part(x, 0, 0), {0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 10, 0});
  expect_values(linalg::band_part(x, 1, 0), {0, 0, 0, 0, 4, 5, 0, 0, 0, 9, 10, 0});
  expect_values(linalg::band_part(x, -1, 1), {0, 1, 0, 0, 4, 5, 6, 0, 8, 9, 10, 11});
  expect_values(linalg::band_part(x, 0, -1), {0, 1, 2, 3, 0, 5, 6, 7, 0, 0, 10, 11});
  expect_values(linalg::band_part(linalg::matrix_transpose(x), 0, 0), {0, 0, 0, 0, 5, 0, 0, 0, 10, 0, 0, 0});
  expect_values(linalg::diag_part(x), {0, 5, 10});
  expect_values(linalg::diag_part(linalg::matrix_transpose(x)), {0, 5, 10});
  expect_values(linalg::trace(x), {15});
  expect_values(linalg::trace(testing::iota({2, 2, 2})), {3, 11});
  expect_meta(linalg::matrix_transpose(zeros({2, 3, 4})), {2, 4, 3}, DType::Float32);
  Tensor d = linalg::diag(m64({1, 2, 3, 4}, {2, 2}));
  expect_meta(d, {2, 2, 2}, DType::Float64);
  expect_values(d, {1, 0, 0, 2, 3, 0, 0, 4});
  expect_meta(linalg::band_part(zeros({0, 3, 3}), 1, 1), {0, 3, 3}, DType::Float32);
  expect_values(linalg::trace(zeros({0, 0})), {0});
}

TEST(LinalgBands, BadInputs) {
  EXPECT_ERROR(linalg::band_part(zeros({3}), 0, 0), InvalidArgumentError, "band_part", "rank >= 2", "[3]");
  EXPECT_ERROR(linalg::trace(zeros({3})), InvalidArgumentError, "trace", "rank >= 2");
  EXPECT_ERROR(linalg::trace(zeros({3, 3}, DType::Bool)), InvalidArgumentError, "trace", "bool");
  EXPECT_ERROR(linalg::diag_part(zeros({3})), InvalidArgumentError, "diag_part", "rank >= 2");
  EXPECT_ERROR(linalg::matrix_transpose(zeros({3})), InvalidArgumentError, "matrix_transpose", "rank >= 2");
  EXPECT_ERROR(linalg::diag(constant(1.0f)), InvalidArgumentError, "diag", "rank >= 1");
}

class LinalgInference : public ::testing::Test {
 protected:
  InferenceOnlyBuilder builder;
  BuildScope scope{&builder};
  static Tensor sym(DType t, Shape s) { return symbolic_tensor(t, std::move(s)); }
};

TEST_F(LinalgInference, UnknownDimensions) {
  Tensor a = sym(DType::Float64, {U, U, U}), b = sym(DType::Float64, {U, 3, 2});
  expect_meta(linalg::cholesky(sym(DType::Float32, {U, 4})), {4, 4}, DType::Float32);
  expect_meta(linalg::cholesky(a), {U, U, U}, DType::Float64);
  expect_meta(linalg::solve(a, b), {U, 3, 2}, DType::Float64);
  expect_meta(linalg::triangular_solve(sym(DType::Float64, {2, 1, U, U}), b), {2, U, 3, 2}, DType::Float64);
  auto [sign, logabs] = linalg::slogdet(a);
  expect_meta(sign, {U}, DType::Float64);
  expect_meta(logabs, {U}, DType::Float64);
  expect_meta(linalg::det(a), {U}, DType::Float64);
  expect_meta(linalg::inv(a), {U, U, U}, DType::Float64);
  expect_meta(linalg::logdet(a), {U}, DType::Float64);
  expect_meta(linalg::cholesky_solve(a, b), {U, 3, 2}, DType::Float64);
  expect_meta(linalg::band_part(a, 1, 0), {U, U, U}, DType::Float64);
  expect_meta(linalg::trace(a), {U}, DType::Float64);
  expect_meta(linalg::diag_part(sym(DType::Float32, {5, U})), {5}, DType::Float32);
  expect_meta(linalg::diag(sym(DType::Float32, {U})), {U, U}, DType::Float32);
  EXPECT_ERROR(linalg::solve(sym(DType::Float64, {4, 4}), b), InvalidArgumentError, "solve", "[4, 4]");
  EXPECT_ERROR(linalg::cholesky(sym(DType::Float64, {3, 4})), InvalidArgumentError, "cholesky", "square");
}

}  // namespace
}  // namespace ef
