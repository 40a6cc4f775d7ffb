// The matrix decompositions of ef::linalg (qr, eigh, svd) and what is built on them:
// reconstruction and orthonormality on batches, hand-checked values, tall, wide and
// empty matrices, non-contiguous inputs, both dtypes, inference with unknown
// dimensions, and bad inputs.
#include <cmath>

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_meta;
using testing::expect_values;
using testing::rand64;
constexpr int64_t U = kUnknownDim;

// Expects the columns of q ([..., m, k]) to be orthonormal.
void expect_orthonormal_columns(const Tensor& q, double tol) {
  const int64_t k = q.shape().dim(-1);
  Tensor qtq = matmul(q, q, true, false);
  expect_values(qtq, broadcast_to(eye(k, k, q.dtype()), qtq.shape()).to_vector<double>(), tol);
}

// The first k columns of each matrix of x.
Tensor first_columns(const Tensor& x, int64_t k) {
  return strided_slice(x, {0, 0}, {0, k}, {}, {.begin_mask = 2, .ellipsis_mask = 1});
}

TEST(LinalgQr, ReconstructsTallWideSquare) {
  for (Shape s : {Shape{2, 3, 5, 3}, Shape{4, 6}, Shape{4, 4}, Shape{3, 2, 2}}) {
    Tensor a = rand64(s, 1);
    for (bool full : {false, true}) {
      auto [q, r] = linalg::qr(a, full);
      const int64_t m = s.dim(-2), n = s.dim(-1), k = full ? m : std::min(m, n);
      Dims qd = s.dims(), rd = s.dims();
      qd.back() = k;
      rd[rd.size() - 2] = k;
      expect_meta(q, Shape(qd), DType::Float64);
      expect_meta(r, Shape(rd), DType::Float64);
      expect_values(matmul(q, r), a.to_vector<double>(), 1e-12);
      expect_orthonormal_columns(q, 1e-12);
      expect_values(linalg::band_part(r, 0, -1), r.to_vector<double>());  // upper triangular
    }
  }
}

TEST(LinalgQr, ValuesDtypesViews) {
  // [[3, 1], [4, 2]]: LAPACK's Householder gives R's diagonal -5, 0.4 (as NumPy).
  auto [q, r] = linalg::qr(constant(std::vector<float>{3, 1, 4, 2}, Shape{2, 2}));
  expect_meta(q, {2, 2}, DType::Float32);
  expect_values(r, {-5, -2.2, 0, 0.4}, 1e-5);
  expect_values(q, {-0.6, -0.8, -0.8, 0.6}, 1e-5);
  Tensor a = rand64({3, 5, 4}, 2);
  auto [qt, rt] = linalg::qr(linalg::matrix_transpose(a));
  expect_values(matmul(qt, rt), linalg::matrix_transpose(a).to_vector<double>(), 1e-12);
  auto [q0, r0] = linalg::qr(zeros({0, 3, 2}));
  expect_meta(q0, {0, 3, 2}, DType::Float32);
  expect_meta(r0, {0, 2, 2}, DType::Float32);
  auto [q1, r1] = linalg::qr(zeros({3, 0}, DType::Float64), true);
  expect_values(q1, eye(3, 3, DType::Float64).to_vector<double>());
  expect_meta(r1, {3, 0}, DType::Float64);
}

TEST(LinalgQr, BadInputs) {
  EXPECT_ERROR(linalg::qr(zeros({3})), InvalidArgumentError, "qr", "input", "rank >= 2", "[3]");
  EXPECT_ERROR(linalg::qr(zeros({2, 2}, DType::Int32)), InvalidArgumentError, "qr", "input", "int32");
  EXPECT_ERROR(linalg::qr(constant(true)), InvalidArgumentError, "qr", "bool");
}

TEST(LinalgEigh, ValuesAndReconstruction) {
  // [[2, 1], [1, 2]]: eigenvalues 1, 3; the upper triangle is not read.
  auto [e, v] = linalg::eigh(constant(std::vector<double>{2, 99, 1, 2}, Shape{2, 2}));
  expect_values(e, {1, 3}, 1e-12);
  expect_values(abs(v), {std::sqrt(0.5), std::sqrt(0.5), std::sqrt(0.5), std::sqrt(0.5)}, 1e-12);
  Tensor x = rand64({2, 3, 5, 5}, 3);
  Tensor a = add(x, linalg::matrix_transpose(x));
  auto [eb, vb] = linalg::eigh(a);
  expect_meta(eb, {2, 3, 5}, DType::Float64);
  expect_meta(vb, {2, 3, 5, 5}, DType::Float64);
  expect_orthonormal_columns(vb, 1e-12);
  expect_values(matmul(multiply(vb, expand_dims(eb, -2)), vb, false, true), a.to_vector<double>(), 1e-12);
  expect_values(linalg::eigvalsh(a), eb.to_vector<double>(), 1e-12);
  // Ascending.
  std::vector<double> ev = eb.to_vector<double>();
  for (size_t i = 0; i < ev.size(); ++i)
    if (i % 5) EXPECT_LE(ev[i - 1], ev[i]);
  // float32, and a non-contiguous (transposed) view: the lower triangle of A^T.
  Tensor e32 = linalg::eigvalsh(cast(a, DType::Float32));
  expect_meta(e32, {2, 3, 5}, DType::Float32);
  expect_values(e32, ev, 1e-4);
  expect_values(linalg::eigvalsh(linalg::matrix_transpose(a)), ev, 1e-12);
  auto [e0, v0] = linalg::eigh(zeros({2, 0, 0}));
  expect_meta(e0, {2, 0}, DType::Float32);
  expect_meta(v0, {2, 0, 0}, DType::Float32);
}

TEST(LinalgEigh, BadInputs) {
  EXPECT_ERROR(linalg::eigh(zeros({2, 3})), InvalidArgumentError, "eigh", "tensor", "square", "[2, 3]");
  EXPECT_ERROR(linalg::eigh(zeros({3})), InvalidArgumentError, "eigh", "rank >= 2", "[3]");
  EXPECT_ERROR(linalg::eigh(zeros({2, 2}, DType::Int64)), InvalidArgumentError, "eigh", "int64");
  EXPECT_ERROR(linalg::eigvalsh(zeros({2, 3})), InvalidArgumentError, "eigvalsh", "square", "[2, 3]");
  EXPECT_ERROR(linalg::eigvalsh(zeros({3})), InvalidArgumentError, "eigvalsh", "rank >= 2");
  EXPECT_ERROR(linalg::eigvalsh(zeros({3, 3}, DType::Int32)), InvalidArgumentError, "eigvalsh", "int32");
}

TEST(LinalgSvd, ReconstructsTallWideSquare) {
  for (Shape shape : {Shape{2, 3, 5, 3}, Shape{4, 6}, Shape{4, 4}}) {
    Tensor a = rand64(shape, 4);
    const int64_t m = shape.dim(-2), n = shape.dim(-1), k = std::min(m, n);
    for (bool full : {false, true}) {
      std::vector<Tensor> r = linalg::svd(a, full);
      ASSERT_EQ(r.size(), 3u);
      Dims sd = shape.dims();
      sd.pop_back();
      sd.pop_back();
      Dims ud = sd, vd = sd;
      sd.push_back(k);
      ud.push_back(m);
      ud.push_back(full ? m : k);
      vd.push_back(n);
      vd.push_back(full ? n : k);
      expect_meta(r[0], Shape(sd), DType::Float64);
      expect_meta(r[1], Shape(ud), DType::Float64);
      expect_meta(r[2], Shape(vd), DType::Float64);
      expect_orthonormal_columns(r[1], 1e-12);
      expect_orthonormal_columns(r[2], 1e-12);
      Tensor uk = first_columns(r[1], k), vk = first_columns(r[2], k);
      expect_values(matmul(multiply(uk, expand_dims(r[0], -2)), vk, false, true), a.to_vector<double>(),
                    1e-12);
      // s alone equals the full decomposition's s.
      std::vector<Tensor> s_only = linalg::svd(a, full, false);
      ASSERT_EQ(s_only.size(), 1u);
      expect_values(s_only[0], r[0].to_vector<double>(), 1e-12);
    }
  }
}

TEST(LinalgSvd, ValuesDtypesViewsEmpty) {
  // diag(3, -2) has singular values 3, 2.
  std::vector<Tensor> r = linalg::svd(constant(std::vector<float>{3, 0, 0, -2}, Shape{2, 2}));
  expect_meta(r[0], {2}, DType::Float32);
  expect_values(r[0], {3, 2}, 1e-6);
  Tensor a = rand64({3, 4, 6}, 5);
  expect_values(linalg::svd(linalg::matrix_transpose(a), false, false)[0],
                linalg::svd(a, false, false)[0].to_vector<double>(), 1e-12);
  std::vector<Tensor> e = linalg::svd(zeros({2, 3, 0}), true);
  expect_meta(e[0], {2, 0}, DType::Float32);
  expect_values(e[1], broadcast_to(eye(3, 3), {2, 3, 3}).to_vector<double>());
  expect_meta(e[2], {2, 0, 0}, DType::Float32);
  expect_meta(linalg::svd(zeros({0, 3, 2}))[1], {0, 3, 2}, DType::Float32);
}

TEST(LinalgSvd, BadInputs) {
  EXPECT_ERROR(linalg::svd(zeros({3})), InvalidArgumentError, "svd", "tensor", "rank >= 2", "[3]");
  EXPECT_ERROR(linalg::svd(zeros({2, 2}, DType::Int32)), InvalidArgumentError, "svd", "int32");
  EXPECT_ERROR(linalg::svd(constant(1.0)), InvalidArgumentError, "svd", "rank >= 2", "[]");
}

TEST(LinalgLstsq, OverUnderdeterminedAndRegularized) {
  Tensor a = rand64({2, 6, 3}, 6), b = rand64({2, 6, 2}, 7);
  for (bool fast : {true, false}) {
    Tensor x = linalg::lstsq(a, b, 0.0, fast);
    expect_meta(x, {2, 3, 2}, DType::Float64);
    // The normal equations hold: A^T (A X - B) = 0.
    expect_values(matmul(a, subtract(matmul(a, x), b), true, false), std::vector<double>(12, 0.0), 1e-10);
    // Underdetermined: the minimum-norm solution A^T (A A^T)^-1 B.
    Tensor w = linalg::matrix_transpose(a), bw = rand64({2, 3, 2}, 8);
    Tensor xw = linalg::lstsq(w, bw, 0.0, fast);
    expect_meta(xw, {2, 6, 2}, DType::Float64);
    expect_values(xw, matmul(a, linalg::solve(matmul(w, a), bw)).to_vector<double>(), 1e-10);
  }
  // Ridge: (A^T A + l I)^-1 A^T B.
  Tensor ridge = linalg::lstsq(a, b, 0.5);
  Tensor gram = add(matmul(a, a, true, false), multiply(eye(3, 3, DType::Float64), 0.5));
  expect_values(ridge, linalg::solve(gram, matmul(a, b, true, false)).to_vector<double>(), 1e-10);
  Tensor x32 = linalg::lstsq(constant(std::vector<float>{1, 0, 0, 1, 1, 1}, Shape{3, 2}),
                             constant(std::vector<float>{1, 2, 3}, Shape{3, 1}));
  expect_values(x32, {1, 2}, 1e-5);
}

TEST(LinalgLstsq, BadInputs) {
  EXPECT_ERROR(linalg::lstsq(zeros({3, 2}), zeros({4, 1})), InvalidArgumentError, "lstsq", "[3, 2]",
               "[4, 1]");
  EXPECT_ERROR(linalg::lstsq(zeros({3}), zeros({3, 1})), InvalidArgumentError, "lstsq", "matrix",
               "rank >= 2");
  EXPECT_ERROR(linalg::lstsq(zeros({3, 2}, DType::Int32), zeros({3, 1}, DType::Int32)), InvalidArgumentError,
               "lstsq", "int32");
  EXPECT_ERROR(linalg::lstsq(zeros({3, 2}), zeros({3, 1}, DType::Float64)), InvalidArgumentError, "lstsq",
               "same dtype");
  EXPECT_ERROR(linalg::lstsq(zeros({3, 2}), zeros({3, 1}), 1.0, false), UnimplementedError, "lstsq",
               "l2_regularizer");
}

TEST(LinalgPinv, ValuesAndRankDeficient) {
  Tensor a = rand64({2, 5, 3}, 9);
  Tensor p = linalg::pinv(a);
  expect_meta(p, {2, 3, 5}, DType::Float64);
  expect_values(matmul(p, a), broadcast_to(eye(3, 3, DType::Float64), {2, 3, 3}).to_vector<double>(), 1e-10);
  // Rank one: [[1, 2], [2, 4]] = 25 u u^T / 25 ... pinv = A / 25.
  expect_values(linalg::pinv(constant(std::vector<double>{1, 2, 2, 4}, Shape{2, 2})),
                {0.04, 0.08, 0.08, 0.16}, 1e-12);
  expect_values(linalg::pinv(constant(std::vector<float>{2, 0, 0, 1e-9f}, Shape{2, 2})), {0.5, 0, 0, 0},
                1e-6);
  // An explicit rcond keeps the small singular value.
  expect_values(linalg::pinv(constant(std::vector<double>{2, 0, 0, 1e-3}, Shape{2, 2}), 1e-6),
                {0.5, 0, 0, 1e3}, 1e-9);
  EXPECT_ERROR(linalg::pinv(zeros({3})), InvalidArgumentError, "pinv", "rank >= 2");
  EXPECT_ERROR(linalg::pinv(zeros({3, 3}, DType::Int64)), InvalidArgumentError, "pinv", "int64");
  EXPECT_ERROR(linalg::pinv(constant(true)), InvalidArgumentError, "pinv", "'a'", "bool");
}

TEST(LinalgMatrixPower, Values) {
  Tensor a = constant(std::vector<double>{1, 1, 0, 1}, Shape{2, 2});
  expect_values(linalg::matrix_power(a, 0), {1, 0, 0, 1});
  expect_values(linalg::matrix_power(a, 1), {1, 1, 0, 1});
  expect_values(linalg::matrix_power(a, 5), {1, 5, 0, 1});
  expect_values(linalg::matrix_power(a, -3), {1, -3, 0, 1}, 1e-12);
  Tensor b = rand64({3, 4, 4}, 10);
  expect_values(linalg::matrix_power(b, 6),
                matmul(matmul(matmul(b, b), matmul(b, b)), matmul(b, b)).to_vector<double>(), 1e-12);
  expect_meta(linalg::matrix_power(zeros({0, 3, 3}), 3), {0, 3, 3}, DType::Float32);
  expect_values(linalg::matrix_power(constant(std::vector<int32_t>{2, 0, 0, 3}, Shape{2, 2}), 3),
                {8, 0, 0, 27});
  EXPECT_ERROR(linalg::matrix_power(zeros({2, 3}), 2), InvalidArgumentError, "matrix_power", "square",
               "[2, 3]");
  EXPECT_ERROR(linalg::matrix_power(zeros({3}), 2), InvalidArgumentError, "matrix_power", "rank >= 2");
  EXPECT_ERROR(linalg::matrix_power(zeros({2, 2}), -1), InvalidArgumentError, "not invertible");
  EXPECT_ERROR(linalg::matrix_power(constant(std::vector<int32_t>{1, 0, 0, 1}, Shape{2, 2}), -1),
               InvalidArgumentError, "matrix_power", "int32");
}

TEST(LinalgSetDiag, Values) {
  Tensor x = testing::iota({2, 2, 3}, DType::Int32);
  expect_values(linalg::set_diag(x, constant(std::vector<int32_t>{-1, -2, -3, -4}, Shape{2, 2})),
                {-1, 1, 2, 3, -2, 5, -3, 7, 8, 9, -4, 11});
  Tensor t = linalg::matrix_transpose(testing::iota({3, 2}, DType::Float64));  // [[0 2 4] [1 3 5]]
  expect_values(linalg::set_diag(t, constant(std::vector<double>{7, 8}, Shape{2})), {7, 2, 4, 1, 8, 5});
  expect_meta(linalg::set_diag(zeros({0, 2, 2}), zeros({0, 2})), {0, 2, 2}, DType::Float32);
  EXPECT_ERROR(linalg::set_diag(zeros({2, 3}), zeros({3})), InvalidArgumentError, "set_diag", "diagonal",
               "[3]", "[2, 3]");
  EXPECT_ERROR(linalg::set_diag(zeros({3}), zeros({3})), InvalidArgumentError, "set_diag", "input",
               "rank >= 2");
  EXPECT_ERROR(linalg::set_diag(zeros({2, 2}), zeros({2}, DType::Float64)), InvalidArgumentError, "set_diag",
               "float64");
}

class LinalgDecompositionInference : public ::testing::Test {
 protected:
  InferenceOnlyBuilder builder;
  BuildScope scope{&builder};
  static Tensor sym(DType t, Shape s) { return symbolic_tensor(t, std::move(s)); }
};

TEST_F(LinalgDecompositionInference, UnknownDimensions) {
  auto [q, r] = linalg::qr(sym(DType::Float64, {U, 5, 3}));
  expect_meta(q, {U, 5, 3}, DType::Float64);
  expect_meta(r, {U, 3, 3}, DType::Float64);
  auto [qu, ru] = linalg::qr(sym(DType::Float32, {U, U}));
  expect_meta(qu, {U, U}, DType::Float32);
  expect_meta(ru, {U, U}, DType::Float32);
  auto [qf, rf] = linalg::qr(sym(DType::Float32, {4, U}), true);
  expect_meta(qf, {4, 4}, DType::Float32);
  expect_meta(rf, {4, U}, DType::Float32);
  auto [e, v] = linalg::eigh(sym(DType::Float64, {2, U, 4}));
  expect_meta(e, {2, 4}, DType::Float64);
  expect_meta(v, {2, 4, 4}, DType::Float64);
  expect_meta(linalg::eigvalsh(sym(DType::Float64, {U, U, U})), {U, U}, DType::Float64);
  std::vector<Tensor> s = linalg::svd(sym(DType::Float64, {U, 6, 4}));
  expect_meta(s[0], {U, 4}, DType::Float64);
  expect_meta(s[1], {U, 6, 4}, DType::Float64);
  expect_meta(s[2], {U, 4, 4}, DType::Float64);
  std::vector<Tensor> su = linalg::svd(sym(DType::Float32, {U, 3}), true);
  expect_meta(su[0], {U}, DType::Float32);
  expect_meta(su[1], {U, U}, DType::Float32);
  expect_meta(su[2], {3, 3}, DType::Float32);
  EXPECT_EQ(linalg::svd(sym(DType::Float32, {U, 3}), false, false).size(), 1u);
  expect_meta(linalg::lstsq(sym(DType::Float64, {U, U, 3}), sym(DType::Float64, {U, U, 2})), {U, 3, 2},
              DType::Float64);
  expect_meta(linalg::pinv(sym(DType::Float64, {2, U, 3})), {2, 3, U}, DType::Float64);
  expect_meta(linalg::matrix_power(sym(DType::Float32, {U, U}), -2), {U, U}, DType::Float32);
  expect_meta(linalg::set_diag(sym(DType::Float32, {U, 3, U}), sym(DType::Float32, {U, U})), {U, 3, U},
              DType::Float32);
  expect_meta(linalg::norm(sym(DType::Float64, {U, U, 4}), 2, {-2, -1}), {U}, DType::Float64);
  EXPECT_ERROR(linalg::eigh(sym(DType::Float64, {3, 4})), InvalidArgumentError, "eigh", "square", "[3, 4]");
  EXPECT_ERROR(linalg::qr(sym(DType::Int32, {U, U})), InvalidArgumentError, "qr", "int32");
}

}  // namespace
}  // namespace ef
