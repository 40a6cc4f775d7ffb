// View ops share storage with their input (Note [views]), and elementwise ops read
// non-contiguous views (transposed, negative strides, stride 0) correctly.
#include <random>

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_meta;
using testing::expect_values;

bool shares(const Tensor& a, const Tensor& b) { return a.impl()->storage.get() == b.impl()->storage.get(); }

Tensor iota(const Shape& shape) { return reshape(range(0, shape.num_elements(), 1, DType::Float32), shape); }

TEST(ArrayViews, ShareStorage) {
  Tensor x = iota({2, 3, 4});
  EXPECT_TRUE(shares(reshape(x, {6, 4}), x));
  EXPECT_TRUE(shares(transpose(x), x));
  EXPECT_TRUE(shares(expand_dims(x, 1), x));
  EXPECT_TRUE(shares(squeeze(expand_dims(x, 0)), x));
  EXPECT_TRUE(shares(strided_slice(x, {1, 2}, {0, 0}, {-1, -1}, {.end_mask = 3}), x));
  EXPECT_TRUE(shares(slice(x, {0, 1, 1}, {2, 2, 2}), x));
  EXPECT_TRUE(shares(broadcast_to(x, {5, 2, 3, 4}), x));
  EXPECT_TRUE(shares(identity(x), x));
  EXPECT_TRUE(shares(reverse(x, {0, 2}), x));
  EXPECT_TRUE(shares(x[1], x));
  for (const Tensor& part : split(x, 2, 2)) EXPECT_TRUE(shares(part, x));
  for (const Tensor& part : unstack(x, 1)) EXPECT_TRUE(shares(part, x));
  // Copying ops do not.
  EXPECT_FALSE(shares(transpose(x).contiguous(), x));
  EXPECT_FALSE(shares(concat({x}, 0), x));
  EXPECT_FALSE(shares(tile(x, {1, 1, 1}), x));
}

TEST(ArrayViews, ElementwiseOnTransposed) {
  Tensor x = iota({2, 3});
  Tensor t = transpose(x);  // [[0, 3], [1, 4], [2, 5]]
  expect_values(add(t, 1.f), {1, 4, 2, 5, 3, 6});
  expect_values(add(t, t), {0, 6, 2, 8, 4, 10});
  expect_values(add(t, iota({3, 2})), {0, 4, 3, 7, 6, 10});
  expect_values(exp(t), {1, std::exp(3.0), std::exp(1.0), std::exp(4.0), std::exp(2.0), std::exp(5.0)}, 1e-5);
  // A transposed row broadcast against a column.
  expect_values(add(transpose(iota({3, 1})), constant({{10.f}, {20.f}})), {10, 11, 12, 20, 21, 22});
}

TEST(ArrayViews, ElementwiseOnNegativeStrides) {
  Tensor x = iota({3, 4});
  // x[::-1, ::-2]
  Tensor r = strided_slice(x, {0, 0}, {0, 0}, {-1, -2}, {.begin_mask = 3, .end_mask = 3});
  expect_meta(r, {3, 2}, DType::Float32);
  expect_values(r, {11, 9, 7, 5, 3, 1});
  expect_values(add(r, 0.5f), {11.5, 9.5, 7.5, 5.5, 3.5, 1.5});
  expect_values(add(r, r), {22, 18, 14, 10, 6, 2});
  expect_values(exp(multiply(r, 0.f)), {1, 1, 1, 1, 1, 1});
  expect_values(exp(reverse(constant({0.0, 1.0}), 0)), {std::exp(1.0), 1});
  expect_values(add(reverse(iota({2, 2}), 1), transpose(iota({2, 2}))), {1, 2, 4, 5});
}

TEST(ArrayViews, ElementwiseOnBroadcastViews) {
  Tensor b = broadcast_to(constant({1.f, 2.f, 3.f}), {2, 3});
  expect_values(add(b, iota({2, 3})), {1, 3, 5, 4, 6, 8});
  expect_values(exp(b), {std::exp(1.0), std::exp(2.0), std::exp(3.0), std::exp(1.0), std::exp(2.0), std::exp(3.0)},
                1e-5);
  Tensor col = broadcast_to(constant({{1.0}, {2.0}}), {2, 3});
  expect_values(add(col, cast(b, DType::Float64)), {2, 3, 4, 3, 4, 5});
  // A strided slice of a broadcast view, and a reversed broadcast view.
  Tensor s = strided_slice(b, {0, 2}, {2, 0}, {1, -2}, {.end_mask = 2});
  expect_values(add(s, 0.f), {3, 1, 3, 1});
  expect_values(add(reverse(b, 1), b), {4, 4, 4, 4, 4, 4});
  Tensor ints = broadcast_to(constant({{1}, {2}}), {2, 2});
  expect_values(add(transpose(ints), ints), {2, 3, 3, 4});
}

// Random views (permuted, sliced with any step, broadcast), then random reshapes: the
// values must match reading the view element by element (Tensor::to_vector), whether
// reshape found view strides or had to copy, and contiguous() must agree too.
TEST(ArrayViews, RandomReshapesOfViews) {
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int views = 0;
  for (int trial = 0; trial < 300; ++trial) {
    int rank = pick(1, 4);
    Dims dims;
    for (int i = 0; i < rank; ++i) dims.push_back(pick(1, 4));
    Tensor x = iota(Shape(dims));
    // A random permutation and a random strided slice (steps of either sign).
    std::vector<int64_t> perm(rank);
    for (int i = 0; i < rank; ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    Tensor v = transpose(x, perm);
    std::vector<int64_t> b(rank, 0), e(rank, 0), st(rank, 1);
    for (int i = 0; i < rank; ++i) st[i] = pick(0, 3) == 0 ? -1 : pick(1, 2);
    v = strided_slice(v, b, e, st, {.begin_mask = (1 << rank) - 1, .end_mask = (1 << rank) - 1});
    if (pick(0, 3) == 0) {
      Dims bshape = v.shape().dims();
      bshape.insert(0, 2);
      v = broadcast_to(v, Shape(bshape));
    }
    std::vector<double> expected = v.to_vector<double>();
    expect_values(v.contiguous(), expected);
    // Reshape to a random factorization of the element count (with size-1 axes mixed in).
    int64_t n = v.num_elements();
    Dims target;
    int64_t rest = n;
    for (int64_t f = 2; f <= rest; ++f)
      while (rest % f == 0 && pick(0, 1) == 0) {
        target.push_back(f);
        rest /= f;
      }
    if (rest > 1) target.push_back(rest);
    if (pick(0, 2) == 0) target.insert(static_cast<size_t>(pick(0, static_cast<int>(target.size()))), 1);
    if (target.size() > 8) continue;
    Tensor r = reshape(v, Shape(target));
    EXPECT_EQ(r.shape(), Shape(target));
    expect_values(r, expected);
    expect_values(add(r, 0.f), expected);  // the elementwise driver reads the same strides
    views += shares(r, x);
  }
  EXPECT_GT(views, 50);  // many of these reshapes must not copy
}

// Copies of views large enough for the tiled copy path (every permutation of a 3-D
// tensor, with reversed axes and a strided destination through concat).
TEST(ArrayViews, LargeViewCopies) {
  Tensor x = iota({9, 40, 37});
  std::vector<std::vector<int64_t>> perms = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (const auto& perm : perms) {
    Tensor v = transpose(x, perm);
    Tensor r = reverse(v, {1});
    std::vector<double> expected = r.to_vector<double>();
    expect_values(r.contiguous(), expected);
    Tensor both = concat({r, r}, 2);
    std::vector<double> got = both.to_vector<double>();
    const int64_t last = r.shape()[2];
    for (size_t i = 0; i < expected.size(); i += 97) {
      size_t row = i / static_cast<size_t>(last), col = i % static_cast<size_t>(last);
      EXPECT_EQ(got[row * 2 * last + col], expected[i]);
      EXPECT_EQ(got[row * 2 * last + last + col], expected[i]);
    }
  }
}

}  // namespace
}  // namespace ef
