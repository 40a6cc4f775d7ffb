// Gradients (first and second order, against float64 central differences) of the
// LAPACK-backed matrix functions: cholesky, triangular_solve, solve, slogdet and the
// composites over them, batched and with broadcast batch dimensions, on
// well-conditioned inputs.
#include <eagerflow/autodiff/gradient_check.h>

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_gradients;
using testing::rand64;
using In = const std::vector<Tensor>&;

// Fixed weights 1, 1.1, 1.2, ... shaped like y, so that every output element counts.
Tensor weights_like(const Tensor& y) {
  return reshape(add(multiply(range(0, y.shape().num_elements(), 1, y.dtype()), 0.1), 1), y.shape());
}
Tensor weighted_square(const Tensor& y) { return reduce_sum(multiply(square(y), weights_like(y))); }

// A random matrix near the identity times `scale` (well conditioned).
Tensor near_identity(const Shape& batch_and_n, int64_t seed, double scale = 2) {
  Dims dims = batch_and_n.dims();
  const int64_t n = dims.back();
  dims.push_back(n);
  return add(multiply(rand64(Shape(dims), seed, -0.3, 0.3), 1.0), multiply(eye(n, n, DType::Float64), scale));
}

// Symmetric positive definite from any square x: the perturbations stay symmetric, as
// the Cholesky gradient assumes.
Tensor spd_of(const Tensor& x) {
  const int64_t n = x.shape().dim(-1);
  return add(matmul(x, x, false, true), eye(n, n, DType::Float64));
}

TEST(LinalgLapackGradient, Cholesky) {
  expect_gradients([](In in) { return weighted_square(linalg::cholesky(spd_of(in[0]))); },
                   {rand64({3, 3}, 1)});
  expect_gradients([](In in) { return weighted_square(linalg::cholesky(spd_of(in[0]))); },
                   {rand64({2, 4, 4}, 2)});
  // A symmetrized input directly.
  expect_gradients(
      [](In in) {
        Tensor a = add(multiply(add(in[0], linalg::matrix_transpose(in[0])), 0.5),
                       multiply(eye(3, 3, DType::Float64), 3.0));
        return weighted_square(linalg::cholesky(a));
      },
      {rand64({3, 3}, 3)});
}

TEST(LinalgLapackGradient, TriangularSolve) {
  for (bool lower : {true, false})
    for (bool adjoint : {false, true}) {
      expect_gradients(
          [=](In in) { return weighted_square(linalg::triangular_solve(in[0], in[1], lower, adjoint)); },
          {near_identity({3}, 4), rand64({3, 2}, 5)});
    }
  // Broadcast batch dimensions: [2, 1] against [3].
  expect_gradients([](In in) { return weighted_square(linalg::triangular_solve(in[0], in[1])); },
                   {near_identity({2, 1, 3}, 6), rand64({3, 3, 2}, 7)});
}

TEST(LinalgLapackGradient, Solve) {
  for (bool adjoint : {false, true})
    expect_gradients([=](In in) { return weighted_square(linalg::solve(in[0], in[1], adjoint)); },
                     {near_identity({3}, 8), rand64({3, 2}, 9)});
  expect_gradients([](In in) { return weighted_square(linalg::solve(in[0], in[1])); },
                   {near_identity({2, 3}, 10), rand64({4, 1, 3, 2}, 11)});
}

TEST(LinalgLapackGradient, InvDetSlogdet) {
  expect_gradients([](In in) { return weighted_square(linalg::inv(in[0])); }, {near_identity({2, 3}, 12)});
  expect_gradients([](In in) { return weighted_square(linalg::inv(in[0], true)); }, {near_identity({3}, 13)});
  expect_gradients([](In in) { return weighted_square(linalg::det(in[0])); }, {near_identity({2, 3}, 14)});
  // A negative determinant: the sign is piecewise constant.
  expect_gradients([](In in) { return weighted_square(linalg::det(in[0])); }, {near_identity({3}, 15, -2)});
  expect_gradients([](In in) { return weighted_square(linalg::slogdet(in[0]).second); },
                   {near_identity({2, 3}, 16, -1.5)});
  expect_gradients([](In in) { return weighted_square(linalg::logdet(spd_of(in[0]))); },
                   {rand64({2, 3, 3}, 17)});
}

TEST(LinalgLapackGradient, CholeskySolveAndBands) {
  expect_gradients(
      [](In in) { return weighted_square(linalg::cholesky_solve(linalg::cholesky(spd_of(in[0])), in[1])); },
      {rand64({3, 3}, 18), rand64({3, 2}, 19)});
  expect_gradients([](In in) { return weighted_square(linalg::band_part(in[0], 1, 0)); },
                   {rand64({2, 3, 4}, 20)});
  expect_gradients([](In in) { return weighted_square(linalg::trace(in[0])); }, {rand64({2, 3, 4}, 21)});
  expect_gradients([](In in) { return weighted_square(linalg::diag_part(in[0])); }, {rand64({4, 3}, 22)});
  expect_gradients([](In in) { return weighted_square(linalg::diag(in[0])); }, {rand64({2, 3}, 23)});
}

TEST(LinalgLapackGradient, SingularMatrix) {
  // As TensorFlow: the gradient of det at a singular matrix needs the inverse and throws.
  Tensor a = constant(std::vector<double>{1, 2, 2, 4}, Shape{2, 2});
  GradientTape tape;
  tape.watch(a);
  Tensor d = linalg::det(a);
  EXPECT_ERROR(tape.gradient(d, a), InvalidArgumentError, "not invertible");
}

}  // namespace
}  // namespace ef
