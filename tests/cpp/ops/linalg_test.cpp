// matmul (against a naive triple loop), linalg::norm.
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "test_util.h"

namespace ef {
namespace {

using ::ef::testing::expect_meta;
using ::ef::testing::expect_values;
using testing::i64;

// The transposed view of the last two dimensions (non-contiguous, shares storage).
Tensor swap_last(const Tensor& x) {
  Dims shape = x.shape().dims(), strides = x.strides();
  int r = x.rank();
  std::swap(shape[r - 1], shape[r - 2]);
  std::swap(strides[r - 1], strides[r - 2]);
  return detail::make_view(x, Shape(shape), strides, 0);
}

template <class T>
Tensor random_tensor(const Shape& shape, std::mt19937& rng) {
  std::uniform_int_distribution<int> d(-5, 5);
  std::vector<T> v(static_cast<size_t>(shape.num_elements()));
  for (T& e : v) e = static_cast<T>(d(rng)) / (std::is_floating_point_v<T> ? T(2) : T(1));
  return constant(v, shape);
}

// Reference: batched product with broadcast batch dims, through element reads.
std::vector<double> naive_matmul(const Tensor& a, const Tensor& b, bool ta, bool tb, const Shape& out) {
  std::vector<double> va = a.to_vector<double>(), vb = b.to_vector<double>();
  const int ra = a.rank(), rb = b.rank(), r = out.rank();
  const int64_t m = out[r - 2], n = out[r - 1], k = ta ? a.shape()[ra - 2] : a.shape()[ra - 1];
  const int64_t a_rows = a.shape()[ra - 2], a_cols = a.shape()[ra - 1];
  const int64_t b_rows = b.shape()[rb - 2], b_cols = b.shape()[rb - 1];
  int64_t batches = out.num_elements() / std::max<int64_t>(1, m * n);
  if (m * n == 0) batches = 0;
  std::vector<double> result;
  for (int64_t bi = 0; bi < batches; ++bi) {
    // Map the output batch index to each operand's batch index (broadcasting).
    auto operand_batch = [&](const Shape& s) {
      int64_t idx = 0, rest = bi, mult = 1;
      for (int i = r - 3, j = s.rank() - 3; i >= 0; --i, --j) {
        int64_t pos = rest % out[i];
        rest /= out[i];
        if (j >= 0) {
          idx += (s[j] == 1 ? 0 : pos) * mult;
          mult *= s[j];
        }
      }
      return idx;
    };
    int64_t ab = operand_batch(a.shape()), bb = operand_batch(b.shape());
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) {
          double x = ta ? va[ab * a_rows * a_cols + p * a_cols + i] : va[ab * a_rows * a_cols + i * a_cols + p];
          double y = tb ? vb[bb * b_rows * b_cols + j * b_cols + p] : vb[bb * b_rows * b_cols + p * b_cols + j];
          s += x * y;
        }
        result.push_back(s);
      }
  }
  return result;
}

TEST(MatMul, HandChecked) {
  Tensor a = constant({{1.f, 2.f}, {3.f, 4.f}});
  Tensor b = constant({{5.f, 6.f}, {7.f, 8.f}});
  expect_values(matmul(a, b), {19, 22, 43, 50});
  expect_values(matmul(a, b, true), {26, 30, 38, 44});
  expect_values(matmul(a, b, false, true), {17, 23, 39, 53});
  expect_values(matmul(a, b, true, true), {23, 31, 34, 46});
  expect_values(matmul(constant({{2.f}}), constant({{2.f}})), {4});
  expect_meta(matmul(constant({{1, 2, 3}}), constant({{1}, {2}, {3}})), Shape{1, 1}, DType::Int32);
  expect_values(matmul(constant({{1, 2, 3}}), constant({{1}, {2}, {3}})), {14});
  expect_values(matmul(i64({int64_t{1} << 40}, Shape{1, 1}), i64({4}, Shape{1, 1})), {std::ldexp(1.0, 42)});
}

template <class T>
void check_random_products(uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dim(1, 40);
  for (int trial = 0; trial < 12; ++trial) {
    const int64_t m = dim(rng), n = dim(rng), k = dim(rng);
    const bool ta = trial & 1, tb = trial & 2;
    Shape sa = ta ? Shape{k, m} : Shape{m, k}, sb = tb ? Shape{n, k} : Shape{k, n};
    Tensor a = random_tensor<T>(sa, rng), b = random_tensor<T>(sb, rng);
    Tensor c = matmul(a, b, ta, tb);
    expect_meta(c, Shape{m, n}, dtype_of<T>);
    expect_values(c, naive_matmul(a, b, ta, tb, c.shape()), 1e-4);
  }
}

TEST(MatMul, RandomAgainstNaive) {
  check_random_products<float>(1);
  check_random_products<double>(2);
  check_random_products<int32_t>(3);
  check_random_products<int64_t>(4);
}

TEST(MatMul, LargeThreadedAgainstNaive) {
  std::mt19937 rng(7);
  Tensor a = random_tensor<float>(Shape{150, 90}, rng), b = random_tensor<float>(Shape{90, 130}, rng);
  Tensor c = matmul(a, b);
  expect_values(c, naive_matmul(a, b, false, false, c.shape()), 1e-4);
  Tensor ai = random_tensor<int32_t>(Shape{150, 90}, rng), bi = random_tensor<int32_t>(Shape{90, 600}, rng);
  // Few rows, many columns: split across threads by columns, with and without transposes.
  Tensor v = random_tensor<float>(Shape{3, 400}, rng), w = random_tensor<float>(Shape{400, 800}, rng);
  expect_values(matmul(v, w), naive_matmul(v, w, false, false, Shape{3, 800}), 1e-4);
  Tensor wt = random_tensor<double>(Shape{700, 40}, rng), vd = random_tensor<double>(Shape{40, 2}, rng);
  expect_values(matmul(vd, wt, true, true), naive_matmul(vd, wt, true, true, Shape{2, 700}), 1e-10);
  Tensor ci = matmul(ai, bi);
  expect_values(ci, naive_matmul(ai, bi, false, false, ci.shape()));
}

TEST(MatMul, VectorShapes) {
  // A single row or column takes the matrix-vector path; every transpose combination.
  std::mt19937 rng(13);
  for (int flags = 0; flags < 4; ++flags) {
    const bool ta = flags & 1, tb = flags & 2;
    for (auto [m, n, k] : {std::tuple{1, 37, 19}, {23, 1, 19}, {1, 1, 50}, {1, 2000, 300}, {2000, 1, 300}}) {
      Shape sa = ta ? Shape{k, m} : Shape{m, k}, sb = tb ? Shape{n, k} : Shape{k, n};
      Tensor a = random_tensor<float>(sa, rng), b = random_tensor<float>(sb, rng);
      expect_values(matmul(a, b, ta, tb), naive_matmul(a, b, ta, tb, Shape{m, n}), 1e-4);
      Tensor ad = random_tensor<double>(sa, rng), bd = random_tensor<double>(sb, rng);
      expect_values(matmul(ad, bd, ta, tb), naive_matmul(ad, bd, ta, tb, Shape{m, n}), 1e-10);
    }
  }
  // A strided vector (every third element) and a batch of vectors.
  Tensor base = random_tensor<float>(Shape{1, 60}, rng);
  Tensor row = detail::make_view(base, Shape{1, 20}, Dims{60, 3}, 0);
  Tensor dense = constant(row.to_vector<float>(), Shape{1, 20});
  Tensor w = random_tensor<float>(Shape{20, 5}, rng);
  expect_values(matmul(row, w), naive_matmul(dense, w, false, false, Shape{1, 5}), 1e-5);
  expect_values(matmul(w, row, true, true), naive_matmul(w, dense, true, true, Shape{5, 1}), 1e-5);
  Tensor vs = random_tensor<float>(Shape{4, 1, 20}, rng);
  expect_values(matmul(vs, w), naive_matmul(vs, w, false, false, Shape{4, 1, 5}), 1e-5);
}

TEST(MatMul, BatchBroadcasting) {
  std::mt19937 rng(11);
  struct Case { Shape a, b; bool ta, tb; Shape out; };
  std::vector<Case> cases = {
      {{3, 4, 5}, {3, 5, 2}, false, false, {3, 4, 2}},
      {{3, 4, 5}, {5, 2}, false, false, {3, 4, 2}},
      {{4, 5}, {2, 3, 5, 6}, false, false, {2, 3, 4, 6}},
      {{2, 1, 4, 5}, {3, 6, 5}, false, true, {2, 3, 4, 6}},
      {{1, 5, 4}, {2, 5, 3}, true, false, {2, 4, 3}},
  };
  for (const Case& cs : cases) {
    Tensor a = random_tensor<double>(cs.a, rng), b = random_tensor<double>(cs.b, rng);
    Tensor c = matmul(a, b, cs.ta, cs.tb);
    expect_meta(c, cs.out, DType::Float64);
    expect_values(c, naive_matmul(a, b, cs.ta, cs.tb, cs.out), 1e-12);
    Tensor ai = random_tensor<int32_t>(cs.a, rng), bi = random_tensor<int32_t>(cs.b, rng);
    expect_values(matmul(ai, bi, cs.ta, cs.tb), naive_matmul(ai, bi, cs.ta, cs.tb, cs.out));
  }
}

TEST(MatMul, NonContiguousInputs) {
  std::mt19937 rng(5);
  Tensor a = random_tensor<float>(Shape{6, 4}, rng), b = random_tensor<float>(Shape{6, 3}, rng);
  Tensor at = swap_last(a);  // [4, 6], unit stride along rows: fed to BLAS with a transpose flag
  ASSERT_FALSE(at.is_contiguous());
  expect_values(matmul(at, b), naive_matmul(a, b, true, false, Shape{4, 3}), 1e-5);
  Tensor b2 = random_tensor<float>(Shape{4, 3}, rng);
  expect_values(matmul(at, b2, true, false), naive_matmul(a, b2, false, false, Shape{6, 3}), 1e-5);
  expect_values(matmul(swap_last(b2), swap_last(b2), false, true), naive_matmul(b2, b2, true, false, Shape{3, 3}),
                1e-5);
  // Every other column of an [4, 8] tensor: no layout BLAS can read, so it is copied.
  Tensor wide = random_tensor<double>(Shape{4, 8}, rng);
  Tensor strided = detail::make_view(wide, Shape{4, 4}, Dims{8, 2}, 1);
  std::vector<double> sv = strided.to_vector<double>();
  Tensor dense = constant(sv, Shape{4, 4});
  expect_values(matmul(strided, dense), naive_matmul(dense, dense, false, false, Shape{4, 4}), 1e-12);
  expect_values(matmul(dense, strided, false, true), naive_matmul(dense, dense, false, true, Shape{4, 4}), 1e-12);
  // Integers read any strides directly.
  Tensor ai = random_tensor<int64_t>(Shape{5, 3}, rng);
  expect_values(matmul(swap_last(ai), ai), naive_matmul(ai, ai, true, false, Shape{3, 3}));
  // A batch broadcast through a zero stride.
  Tensor row = random_tensor<float>(Shape{1, 2, 3}, rng);
  Tensor bcast = detail::make_view(row, Shape{4, 2, 3}, Dims{0, 3, 1}, 0);
  Tensor rhs = random_tensor<float>(Shape{4, 3, 2}, rng);
  expect_values(matmul(bcast, rhs), naive_matmul(row, rhs, false, false, Shape{4, 2, 2}), 1e-5);
}

// Products split across threads (row blocks) agree with single-threaded ones. Only to
// rounding: BLAS's tiling differs with the block sizes, as in OpenBLAS's own threading.
TEST(MatMul, ThreadCountsAgree) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> va(301 * 203), vb(203 * 157);
  for (float& v : va) v = d(rng);
  for (float& v : vb) v = d(rng);
  Tensor a = constant(va, Shape{301, 203}), b = constant(vb, Shape{203, 157});
  const int saved = num_threads();
  set_num_threads(1);
  Tensor one = matmul(a, b), one_t = matmul(b, a, true, true);
  set_num_threads(2);
  Tensor two = matmul(a, b), two_t = matmul(b, a, true, true);
  set_num_threads(saved);
  expect_values(two, one.to_vector<double>(), 1e-5);
  expect_values(two_t, one_t.to_vector<double>(), 1e-5);
  expect_values(one_t, naive_matmul(b, a, true, true, Shape{157, 301}), 1e-4);
}

TEST(MatMul, EmptyDimensions) {
  Tensor c = matmul(zeros(Shape{2, 0}), zeros(Shape{0, 3}));
  expect_meta(c, Shape{2, 3}, DType::Float32);
  expect_values(c, {0, 0, 0, 0, 0, 0});
  expect_values(matmul(zeros(Shape{2, 0}, DType::Int32), zeros(Shape{0, 2}, DType::Int32)), {0, 0, 0, 0});
  expect_meta(matmul(zeros(Shape{0, 4}), zeros(Shape{4, 3})), Shape{0, 3}, DType::Float32);
  expect_meta(matmul(zeros(Shape{2, 4}), zeros(Shape{4, 0})), Shape{2, 0}, DType::Float32);
  expect_meta(matmul(zeros(Shape{0, 2, 4}), zeros(Shape{4, 3})), Shape{0, 2, 3}, DType::Float32);
}

TEST(MatMul, Errors) {
  EXPECT_ERROR(matmul(zeros(Shape{3}), zeros(Shape{3, 2})), InvalidArgumentError, "matmul", "rank >= 2", "[3]");
  EXPECT_ERROR(matmul(zeros(Shape{2, 3}), zeros(Shape{4, 5})), InvalidArgumentError, "matmul",
               "inner dimensions", "[2, 3]", "[4, 5]", "transpose_a=false", "transpose_b=false");
  EXPECT_ERROR(matmul(zeros(Shape{3, 2}), zeros(Shape{2, 3}), true, false), InvalidArgumentError, "[3, 2]",
               "contracting 3 with 2");
  EXPECT_ERROR(matmul(zeros(Shape{2, 3}), zeros(Shape{2, 3}), true, true), InvalidArgumentError,
               "transpose_a=true", "transpose_b=true");
  EXPECT_ERROR(matmul(zeros(Shape{2, 2, 3}), zeros(Shape{3, 3, 4})), InvalidArgumentError, "matmul", "batch",
               "[2, 2, 3]", "[3, 3, 4]");
  EXPECT_ERROR(matmul(zeros(Shape{2, 2}), zeros(Shape{2, 2}, DType::Float64)), InvalidArgumentError, "matmul",
               "float32", "float64");
  EXPECT_ERROR(matmul(zeros(Shape{2, 2}, DType::Bool), zeros(Shape{2, 2}, DType::Bool)), InvalidArgumentError,
               "matmul", "bool");
}

TEST(Norm, Vector) {
  Tensor v = constant({3.f, -4.f});
  expect_values(linalg::norm(v), {5});
  expect_values(linalg::norm(v, 1), {7});
  expect_values(linalg::norm(v, 2), {5});
  expect_values(linalg::norm(v, std::numeric_limits<double>::infinity()), {4});
  expect_values(linalg::norm(v, 3), {std::cbrt(91.0)}, 1e-6);
  Tensor x = constant({{3.0, 4.0}, {6.0, 8.0}});
  expect_values(linalg::norm(x, "euclidean", 1), {5, 10});
  expect_values(linalg::norm(x, 1, 0), {9, 12});
  expect_meta(linalg::norm(x, "euclidean", -1, true), Shape{2, 1}, DType::Float64);
  expect_values(linalg::norm(x), {std::sqrt(125.0)});
  expect_values(linalg::norm(x, "fro"), {std::sqrt(125.0)});
}

TEST(Norm, Matrix) {
  Tensor x = constant({{1.f, -2.f}, {3.f, 4.f}});
  expect_values(linalg::norm(x, "fro", {0, 1}), {std::sqrt(30.0)}, 1e-6);
  expect_values(linalg::norm(x, 1, {0, 1}), {6});  // max column sum
  expect_values(linalg::norm(x, std::numeric_limits<double>::infinity(), {0, 1}), {7});  // max row sum
  expect_values(linalg::norm(x, 1, {1, 0}), {7});
  expect_meta(linalg::norm(x, 1, {0, 1}, true), Shape{1, 1}, DType::Float32);
  expect_meta(linalg::norm(zeros(Shape{3, 2, 2}), "fro", {-2, -1}), Shape{3}, DType::Float32);
  // Singular values sqrt(15 +- sqrt(125)): their sum is sqrt(50) (= sqrt(||x||^2 + 2 |det x|)).
  expect_values(linalg::norm(x, 2, {0, 1}), {std::sqrt(15 + std::sqrt(125.0))}, 1e-6);
  expect_values(linalg::norm(x, "nuc", {1, 0}), {std::sqrt(50.0)}, 1e-6);
  Tensor batch = testing::rand64({3, 4, 2}, 1);  // matrices over axes (0, 2), kept
  Tensor n2 = linalg::norm(batch, 2, {0, 2}, true);
  expect_meta(n2, Shape{1, 4, 1}, DType::Float64);
  expect_values(n2,
                reduce_max(linalg::svd(transpose(batch, {1, 0, 2}), false, false)[0], -1).to_vector<double>(),
                1e-12);
  EXPECT_ERROR(linalg::norm(constant({{1, 2}, {3, 4}}), 2, {0, 1}), InvalidArgumentError, "norm", "int32");
  EXPECT_ERROR(linalg::norm(x, 3, {0, 1}), InvalidArgumentError, "norm", "matrix");
  EXPECT_ERROR(linalg::norm(x, "fro", 0), InvalidArgumentError, "norm", "'fro'");
  EXPECT_ERROR(linalg::norm(x, "nuc"), InvalidArgumentError, "norm", "'nuc'");
  EXPECT_ERROR(linalg::norm(x, "nuc", 0), InvalidArgumentError, "norm", "'nuc'", "two axes");
  EXPECT_ERROR(linalg::norm(x, 0), InvalidArgumentError, "norm", "> 0");
  EXPECT_ERROR(linalg::norm(x, 2, {0, 0}), InvalidArgumentError, "norm", "repeats");
  EXPECT_ERROR(linalg::norm(constant({1, 2})), InvalidArgumentError, "norm", "int32");
  EXPECT_ERROR(linalg::norm(zeros(Shape{2, 2, 2}), 2, {0, 1, 2}), InvalidArgumentError, "norm", "3 axes");
}

}  // namespace
}  // namespace ef
