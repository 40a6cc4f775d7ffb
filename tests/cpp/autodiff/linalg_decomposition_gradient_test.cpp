// Gradients (first and second order, against float64 central differences) of the
// matrix decompositions qr, eigh, svd and the functions built on them, on inputs with
// well-separated eigen- and singular values; losses of the vectors are sign-invariant
// (squares), since each column's sign is LAPACK's choice. Also the documented limits:
// unimplemented gradients throw, degenerate spectra give non-finite values.
#include <eagerflow/autodiff/gradient_check.h>

#include <cmath>

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_gradients;
using testing::rand64;
using In = const std::vector<Tensor>&;

Tensor weights_like(const Tensor& y) {
  return reshape(add(multiply(range(0, y.shape().num_elements(), 1, y.dtype()), 0.1), 1), y.shape());
}
// sum(w * y): linear, so a sign flip of y changes it; used where y is sign-free.
Tensor weighted_sum(const Tensor& y) { return reduce_sum(multiply(y, weights_like(y))); }
// sum(w * y^2): invariant under sign flips of y's elements.
Tensor weighted_square(const Tensor& y) { return reduce_sum(multiply(square(y), weights_like(y))); }

// A matrix with well-separated singular values: diag(scale * (1, 2, ...)) plus noise.
Tensor separated(const Shape& shape, int64_t seed) {
  const int64_t n = shape.dim(-1);
  Tensor d = multiply(linalg::band_part(ones(shape, DType::Float64), 0, 0),
                      add(range(0, n, 1, DType::Float64), 1.0));
  return add(d, rand64(shape, seed, -0.2, 0.2));
}

TEST(LinalgDecompositionGradient, Qr) {
  for (Shape s : {Shape{4, 3}, Shape{3, 3}, Shape{2, 3, 5}}) {
    expect_gradients([](In in) { return weighted_sum(linalg::qr(in[0]).second); }, {separated(s, 1)});
    expect_gradients(
        [](In in) {
          auto [q, r] = linalg::qr(in[0]);
          return add(weighted_sum(q), weighted_square(r));
        },
        {separated(s, 2)});
  }
  // full_matrices with m <= n is the reduced decomposition.
  expect_gradients([](In in) { return weighted_sum(linalg::qr(in[0], true).first); }, {separated({2, 4}, 3)});
}

TEST(LinalgDecompositionGradient, QrUnimplemented) {
  Tensor a = rand64({4, 2}, 4);
  GradientTape tape;
  tape.watch(a);
  Tensor q = linalg::qr(a, true).first;
  EXPECT_ERROR(tape.gradient(reduce_sum(q), a), UnimplementedError, "qr", "full_matrices", "[4, 2]");
}

// Symmetric with eigenvalues near 2, 4, ..., 2n (the fixed part made once: random
// ops give new numbers on each call).
Tensor separated_symmetric(const Tensor& x) {
  static const Tensor s3 = separated({3, 3}, 5), s4 = separated({4, 4}, 5);
  const Tensor& s = x.shape().dim(-1) == 3 ? s3 : s4;
  return add(add(x, linalg::matrix_transpose(x)), add(s, linalg::matrix_transpose(s)));
}

TEST(LinalgDecompositionGradient, Eigh) {
  // The raw input: only its lower triangle is read, and the gradient says so.
  expect_gradients([](In in) { return weighted_sum(linalg::eigh(in[0]).first); },
                   {separated_symmetric(rand64({3, 3}, 6, -0.1, 0.1))});
  expect_gradients(
      [](In in) {
        auto [e, v] = linalg::eigh(separated_symmetric(in[0]));
        return add(weighted_sum(e), weighted_square(v));
      },
      {rand64({2, 4, 4}, 7, -0.1, 0.1)});
  expect_gradients([](In in) { return weighted_square(linalg::eigvalsh(separated_symmetric(in[0]))); },
                   {rand64({3, 3}, 8, -0.1, 0.1)});
}

TEST(LinalgDecompositionGradient, SvdDegenerate) {
  // Repeated singular values: finite through s alone (compute_uv=False).
  Tensor a = eye(3, 3, DType::Float64);
  GradientTape tape;
  tape.watch(a);
  Tensor g = tape.gradient(weighted_sum(linalg::svd(a, false, false)[0]), a);
  for (double x : g.to_vector<double>()) EXPECT_TRUE(std::isfinite(x));
}

TEST(LinalgDecompositionGradient, EighDegenerate) {
  // Repeated eigenvalues: finite through the eigenvalues, inf/nan through the vectors.
  Tensor a = eye(3, 3, DType::Float64);
  {
    GradientTape tape;
    tape.watch(a);
    Tensor g = tape.gradient(weighted_sum(linalg::eigvalsh(a)), a);
    for (double x : g.to_vector<double>()) EXPECT_TRUE(std::isfinite(x));
  }
  GradientTape tape;
  tape.watch(a);
  Tensor g = tape.gradient(weighted_square(linalg::eigh(a).second), a);
  bool finite = true;
  for (double x : g.to_vector<double>()) finite = finite && std::isfinite(x);
  EXPECT_FALSE(finite);
}

TEST(LinalgDecompositionGradient, Svd) {
  for (Shape s : {Shape{4, 3}, Shape{3, 3}, Shape{3, 5}, Shape{2, 3, 4}}) {
    expect_gradients([](In in) { return weighted_sum(linalg::svd(in[0], false, false)[0]); },
                     {separated(s, 9)});
    expect_gradients(
        [](In in) {
          std::vector<Tensor> r = linalg::svd(in[0]);
          return add(add(weighted_sum(r[0]), weighted_square(r[1])), weighted_square(r[2]));
        },
        {separated(s, 10)});
    expect_gradients([](In in) { return weighted_square(linalg::svd(in[0])[2]); }, {separated(s, 11)});
  }
  // full_matrices: square; or s alone.
  expect_gradients([](In in) { return weighted_square(linalg::svd(in[0], true)[1]); },
                   {separated({3, 3}, 12)});
  expect_gradients([](In in) { return weighted_sum(linalg::svd(in[0], true, false)[0]); },
                   {separated({2, 4}, 13)});
}

TEST(LinalgDecompositionGradient, Composites) {
  for (bool fast : {true, false}) {
    expect_gradients([=](In in) { return weighted_square(linalg::lstsq(in[0], in[1], 0.0, fast)); },
                     {separated({4, 3}, 15), rand64({4, 2}, 16)});
    expect_gradients([=](In in) { return weighted_square(linalg::lstsq(in[0], in[1], 0.0, fast)); },
                     {separated({2, 4}, 17), rand64({2, 2}, 18)});
  }
  expect_gradients([](In in) { return weighted_square(linalg::lstsq(in[0], in[1], 0.3)); },
                   {separated({2, 4, 3}, 19), rand64({4, 1}, 20)});
  expect_gradients([](In in) { return weighted_square(linalg::pinv(in[0])); }, {separated({2, 4, 3}, 21)});
  for (int64_t n : {-2, 0, 1, 3})
    expect_gradients([=](In in) { return weighted_square(linalg::matrix_power(in[0], n)); },
                     {separated({2, 3, 3}, 22)});
  expect_gradients([](In in) { return weighted_square(linalg::set_diag(in[0], in[1])); },
                   {rand64({2, 3, 4}, 23), rand64({2, 3}, 24)});
  expect_gradients([](In in) { return weighted_square(linalg::set_diag(in[0], in[1])); },
                   {rand64({4, 2}, 25), rand64({2}, 26)});
  expect_gradients([](In in) { return linalg::norm(in[0], 2, {-2, -1}); }, {separated({2, 3, 4}, 27)});
  expect_gradients(
      [](In in) {
        return linalg::norm(in[0], "nuc", {0, 2}, true);
      },
      {separated({3, 2, 3}, 28)});
}

TEST(LinalgDecompositionGradient, SvdUnimplemented) {
  Tensor a = separated({4, 2}, 14);
  GradientTape tape;
  tape.watch(a);
  Tensor s = linalg::svd(a, true)[0];
  EXPECT_ERROR(tape.gradient(reduce_sum(s), a), UnimplementedError, "svd", "full_matrices", "[4, 2]",
               "compute_uv=False");
}

}  // namespace
}  // namespace ef
