// Gradients of the array (shape and indexing) ops: check_gradients against float64
// central differences at first and second order, plus hand-checked values.
//
// Most array ops are linear, so each check differentiates sum(op(x)^2 * w) for a fixed
// random w: the first-order gradient then depends on where every element went, and
// the second-order one is non-zero.
#include <functional>

#include "eagerflow/autodiff/gradient_check.h"
#include "eagerflow/autodiff/gradient_tape.h"
#include "test_util.h"

namespace ef {
namespace {

using ef::testing::check_gradients;
using ef::testing::expect_values;

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

Tensor randn(const Shape& shape, int64_t seed) {
  return random::normal(shape, 0.0, 1.0, DType::Float64, seed);
}

// check_gradients of sum(f(inputs)^2 * w), w random of f's output shape.
void check_weighted(const Fn& f, const std::vector<Tensor>& inputs, int order = 2) {
  Tensor w = randn(f(inputs).shape(), 99);
  auto result = check_gradients(
      [&](const std::vector<Tensor>& in) {
        Tensor y = f(in);
        return y * y * w;
      },
      inputs, order);
  EXPECT_TRUE(result.ok) << result.message;
}

// The same for a one-input op on a random x of `shape`.
void check_unary(const std::function<Tensor(const Tensor&)>& op, const Shape& shape, int order = 2) {
  check_weighted([&](const std::vector<Tensor>& in) { return op(in[0]); }, {randn(shape, 1)}, order);
}

// d(sum(y * seed))/dx for y = op(x), with the tape.
Tensor tape_grad(const Tensor& x, const std::function<Tensor(const Tensor&)>& op,
                 const Tensor& seed = Tensor()) {
  GradientTape tape;
  tape.watch(x);
  Tensor y = op(x);
  return tape.gradient(y, x, seed);
}

// ---- Views that change only the shape ----

// ensure_same_shape and ensure_broadcastable_to pass x (and its gradient) through.
TEST(ArrayGradientTest, EnsureShapeMatch) {
  const Tensor like = zeros({2, 3}, DType::Float64);
  check_weighted([&](const std::vector<Tensor>& in) { return ensure_same_shape(in[0], like) * 2.0; },
                 {randn({2, 3}, 1)});
  check_weighted([&](const std::vector<Tensor>& in) { return ensure_broadcastable_to(in[0], like) + like; },
                 {randn({3}, 2)});
}

TEST(ArrayGradientTest, ReshapeExpandDimsSqueezeIdentity) {
  check_unary([](const Tensor& x) { return reshape(x, {3, -1}); }, {2, 3, 2});
  check_unary([](const Tensor& x) { return reshape(x, {}); }, {1, 1});
  check_unary([](const Tensor& x) { return expand_dims(x, 1); }, {2, 3});
  check_unary([](const Tensor& x) { return expand_dims(x, -1); }, {2, 3});
  check_unary([](const Tensor& x) { return squeeze(x); }, {1, 3, 1, 2});
  check_unary([](const Tensor& x) { return squeeze(x, {-2}); }, {1, 3, 1, 2});
  check_unary([](const Tensor& x) { return identity(x); }, {4});
  // reshape of a non-contiguous input (a copy) and contiguous() of a transposed view.
  check_unary([](const Tensor& x) { return reshape(transpose(x), {-1}); }, {3, 4});
  check_unary([](const Tensor& x) { return transpose(x).contiguous(); }, {3, 4});
}

TEST(ArrayGradientTest, TransposeBroadcastReverse) {
  check_unary([](const Tensor& x) { return transpose(x); }, {2, 3});
  check_unary([](const Tensor& x) { return transpose(x, {1, 2, 0}); }, {2, 3, 4});
  check_unary([](const Tensor& x) { return broadcast_to(x, {2, 3, 4}); }, {3, 1});
  check_unary([](const Tensor& x) { return reverse(x, {0, 2}); }, {2, 3, 4});
  check_unary([](const Tensor& x) { return reverse(x, Axes()); }, {2, 3});
  // broadcast_to sums the gradient over the copies.
  Tensor x = constant({1.0, 2.0});
  expect_values(tape_grad(x, [](const Tensor& t) { return broadcast_to(t, {3, 2}); }), {3, 3});
}

// ---- Slices ----

TEST(ArrayGradientTest, StridedSlice) {
  // Steps 2 and -1 (begin/end masks on axis 1).
  check_unary(
      [](const Tensor& x) {
        return strided_slice(x, {1, 0}, {5, 0}, {2, -1}, {.begin_mask = 2, .end_mask = 2});
      },
      {6, 4});
  // A shrunk axis, a new axis and an ellipsis: x[1, newaxis, ...].
  check_unary(
      [](const Tensor& x) {
        return strided_slice(x, {1, 0, 0}, {2, 0, 0}, {1, 1, 1},
                             {.ellipsis_mask = 4, .new_axis_mask = 2, .shrink_axis_mask = 1});
      },
      {3, 4, 5});
  // Negative steps that do not divide the length; a negative begin.
  check_unary([](const Tensor& x) { return strided_slice(x, {6}, {0}, {-3}); }, {7});
  check_unary([](const Tensor& x) { return strided_slice(x, {-1}, {0}, {-2}, {.end_mask = 1}); }, {6});
  check_unary(
      [](const Tensor& x) {
        return strided_slice(x, {1, 0}, {0, 5}, {3, 2}, {.end_mask = 1});
      },
      {8, 5});
  check_unary([](const Tensor& x) { return x[1]; }, {3, 2});

  // x[::-2] of 0..5 reads positions 5, 3, 1.
  Tensor x = range(0.0, 6.0, 1.0, DType::Float64);
  expect_values(
      tape_grad(
          x,
          [](const Tensor& t) { return strided_slice(t, {0}, {0}, {-2}, {.begin_mask = 1, .end_mask = 1}); },
          constant({10.0, 20.0, 30.0})),
      {0, 30, 0, 20, 0, 10});
  // An empty slice: a zero gradient of the input's shape.
  Tensor g = tape_grad(
      x, [](const Tensor& t) { return strided_slice(t, {3}, {1}); }, zeros({0}, DType::Float64));
  ef::testing::expect_meta(g, {6}, DType::Float64);
  expect_values(g, {0, 0, 0, 0, 0, 0});
}

TEST(ArrayGradientTest, Slice) {
  check_unary([](const Tensor& x) { return slice(x, {1, 0}, {2, -1}); }, {4, 3});
  Tensor x = range(0.0, 4.0, 1.0, DType::Float64);
  expect_values(tape_grad(
                    x, [](const Tensor& t) { return slice(t, {1}, {2}); }, constant({5.0, 7.0})),
                {0, 5, 7, 0});
}

// strided_slice_grad is linear in dy; its gradient is the same slice (x lends its shape).
TEST(ArrayGradientTest, StridedSliceGrad) {
  const Tensor like = zeros({5, 4}, DType::Float64);
  check_weighted(
      [&](const std::vector<Tensor>& in) {
        return strided_slice_grad(like, in[0], {4, 1}, {0, 0}, {-2, 2}, {.end_mask = 3});
      },
      {randn({3, 2}, 1)});
  check_weighted(
      [&](const std::vector<Tensor>& in) {
        return strided_slice_grad(like, in[0], {1, 0}, {0, 0}, {1, 1},
                                  {.new_axis_mask = 2, .shrink_axis_mask = 1});
      },
      {randn({1, 4}, 2)});
}

// The gradients of slices in a graph whose input sizes are unknown while building: the
// positions the slice read come from the shape the graph runs with (a gradient padded
// by the static sizes failed, or came out of the wrong shape).
TEST(ArrayGradientTest, SlicesInGraphsWithUnknownDimensions) {
  Graph g;
  Tensor x, dx, d2x;
  {
    Graph::Scope scope(g);
    x = placeholder(DType::Float64, {kUnknownDim, kUnknownDim}, "x");
    Tensor tail = strided_slice(x, {1}, {0}, {1}, {.end_mask = 1});                           // x[1:]
    Tensor last = strided_slice(x, {-1}, {0}, {1}, {.shrink_axis_mask = 1});                  // x[-1]
    Tensor odd = strided_slice(x, {0, 1}, {0, 0}, {1, 2}, {.begin_mask = 1, .end_mask = 3});  // x[:, 1::2]
    Tensor corner = slice(x, {1, 0}, {-1, 1});
    Tensor y =
        reduce_sum(tail * tail) + reduce_sum(last * 3.0) + reduce_sum(odd * odd * odd) + reduce_sum(corner);
    dx = gradients({y}, {x})[0];
    d2x = gradients({reduce_sum(dx * dx)}, {x})[0];
  }
  Session sess(g);
  for (const Shape& shape : {Shape{3, 4}, Shape{1, 2}, Shape{2, 1}, Shape{4, 5}}) {
    Tensor value = randn(shape, 7);
    std::vector<Tensor> got = sess.run({dx, d2x}, {{x, value}});
    Tensor want_dx, want_d2x;
    {
      GradientTape outer;
      outer.watch(value);
      GradientTape tape;
      tape.watch(value);
      Tensor tail = strided_slice(value, {1}, {0}, {1}, {.end_mask = 1}), last = value[-1];
      Tensor odd = strided_slice(value, {0, 1}, {0, 0}, {1, 2}, {.begin_mask = 1, .end_mask = 3});
      Tensor corner = slice(value, {1, 0}, {-1, 1});
      Tensor y =
          reduce_sum(tail * tail) + reduce_sum(last * 3.0) + reduce_sum(odd * odd * odd) + reduce_sum(corner);
      want_dx = tape.gradient(y, value);
      want_d2x = outer.gradient(reduce_sum(want_dx * want_dx), value);
    }
    ASSERT_EQ(got[0].shape(), shape);
    ASSERT_EQ(got[1].shape(), shape);
    expect_values(got[0], want_dx.to_vector<double>(), 1e-12);
    expect_values(got[1], want_d2x.to_vector<double>(), 1e-12);
  }
}

// ---- Joining and splitting ----

TEST(ArrayGradientTest, Concat) {
  check_weighted(
      [](const std::vector<Tensor>& in) {
        return concat({in[0], in[1], in[2]}, 1);
      },
      {randn({2, 1}, 1), randn({2, 3}, 2), randn({2, 2}, 3)});
  check_weighted(
      [](const std::vector<Tensor>& in) {
        return stack({in[0], in[1]}, 1);
      },
      {randn({2, 3}, 1), randn({2, 3}, 2)});
  Tensor a = constant({1.0, 2.0}), b = constant({3.0});
  GradientTape tape;
  tape.watch(a);
  tape.watch(b);
  Tensor y = concat({a, b}, 0);
  std::vector<Tensor> sources = {a, b};
  std::vector<Tensor> g = tape.gradient(y, sources, constant({4.0, 5.0, 6.0}));
  expect_values(g[0], {4, 5});
  expect_values(g[1], {6});
}

TEST(ArrayGradientTest, UnstackAndSplit) {
  // Only some outputs used: the others contribute zeros.
  check_weighted(
      [](const std::vector<Tensor>& in) {
        auto parts = unstack(in[0], 1);
        return parts[0] * 2.0 + parts[2];
      },
      {randn({2, 3, 2}, 1)});
  check_weighted([](const std::vector<Tensor>& in) { return stack(unstack(in[0], 0), 1); },
                 {randn({3, 2}, 1)});
  check_weighted(
      [](const std::vector<Tensor>& in) {
        auto parts = split(in[0], 3, 0);
        return parts[2] - parts[0];
      },
      {randn({6, 2}, 1)});
  check_weighted(
      [](const std::vector<Tensor>& in) {
        auto parts = split(in[0], {1, -1}, 1);
        return concat({parts[1], parts[0]}, 1);
      },
      {randn({2, 4}, 1)});
}

TEST(ArrayGradientTest, Tile) {
  check_unary([](const Tensor& x) { return tile(x, {3, 1}); }, {2, 3});
  check_unary([](const Tensor& x) { return tile(x, {2, 2}); }, {2, 3});
  // rank + tiled axes > kMaxRank: summed one axis at a time.
  check_unary([](const Tensor& x) { return tile(x, {2, 2, 1, 2, 3}); }, {2, 1, 2, 1, 2});
  Tensor x = constant({1.0, 2.0});
  expect_values(tape_grad(x, [](const Tensor& t) { return tile(t, {3}); }), {3, 3});
}

TEST(ArrayGradientTest, Pad) {
  check_unary([](const Tensor& x) { return pad(x, {{1, 2}, {0, 1}}); }, {2, 3});
  check_unary([](const Tensor& x) { return pad(x, {{1, 0}, {2, 2}}, "CONSTANT", 3.5); }, {2, 3});
  check_unary([](const Tensor& x) { return pad(x, {{2, 1}, {1, 3}}, "REFLECT"); }, {3, 4});
  check_unary([](const Tensor& x) { return pad(x, {{3, 1}, {0, 4}}, "SYMMETRIC"); }, {3, 4});
  Tensor x = constant({1.0, 2.0, 3.0});
  Tensor seed = constant({1.0, 2.0, 3.0, 4.0, 5.0, 6.0});
  // REFLECT {2, 1}: [c, b, a, b, c, b].
  expect_values(tape_grad(
                    x,
                    [](const Tensor& t) {
                      return pad(t, {{2, 1}}, "REFLECT");
                    },
                    seed),
                {3, 12, 6});
  // SYMMETRIC {2, 1}: [b, a, a, b, c, c].
  expect_values(tape_grad(
                    x,
                    [](const Tensor& t) {
                      return pad(t, {{2, 1}}, "SYMMETRIC");
                    },
                    seed),
                {5, 5, 11});
  // CONSTANT {1, 2}: [0, a, b, c, 0, 0].
  expect_values(tape_grad(
                    x,
                    [](const Tensor& t) {
                      return pad(t, {{1, 2}});
                    },
                    seed),
                {2, 3, 4});
}

// ---- Indexing ----

TEST(ArrayGradientTest, Gather) {
  Tensor dup = constant(std::vector<int64_t>{0, 2, 0, 3}, Shape{4});
  check_unary([&](const Tensor& x) { return gather(x, dup); }, {4, 2});
  Tensor ind2 = constant(std::vector<int32_t>{1, 0, 1, 2, 2, 0}, Shape{2, 3});
  check_unary([&](const Tensor& x) { return gather(x, ind2, 1); }, {2, 3, 2});
  // batch_dims 1, axis 2: params [2, 3, 4, 5], indices [2, 3] -> output [2, 3, 3, 5].
  Tensor batched = constant(std::vector<int32_t>{3, 0, 3, 1, 2, 2}, Shape{2, 3});
  check_unary([&](const Tensor& x) { return gather(x, batched, 2, 1); }, {2, 3, 4, 5});
  // batch_dims 1, axis 1 (no axes between): params [2, 4], indices [2, 3].
  check_unary([&](const Tensor& x) { return gather(x, batched, 1, 1); }, {2, 4});
  // Duplicates add up; indices get no gradient.
  Tensor x = constant({1.0, 2.0, 3.0});
  Tensor idx = constant(std::vector<int64_t>{0, 0, 2}, Shape{3});
  expect_values(tape_grad(
                    x, [&](const Tensor& t) { return gather(t, idx); }, constant({1.0, 2.0, 4.0})),
                {3, 0, 4});
}

TEST(ArrayGradientTest, GatherNdAndScatterNd) {
  Tensor tuples = constant(std::vector<int64_t>{0, 1, 2, 3, 0, 1}, Shape{3, 2});
  check_unary([&](const Tensor& x) { return gather_nd(x, tuples); }, {3, 4});
  Tensor rows = constant(std::vector<int32_t>{1, 0}, Shape{2, 1});
  check_unary([&](const Tensor& x) { return gather_nd(x, rows); }, {2, 4});
  // batch_dims 1: params [2, 3, 4], indices [2, 2, 1] -> output [2, 2, 4].
  Tensor batched = constant(std::vector<int64_t>{2, 0, 1, 1}, Shape{2, 2, 1});
  check_unary([&](const Tensor& x) { return gather_nd(x, batched, 1); }, {2, 3, 4});

  Tensor at = constant(std::vector<int64_t>{1, 3, 1}, Shape{3, 1});
  check_unary([&](const Tensor& u) { return scatter_nd(at, u, {5, 2}); }, {3, 2});
  Tensor u = constant({1.0, 2.0, 3.0});
  Tensor at1 = constant(std::vector<int64_t>{4, 0, 4}, Shape{3, 1});
  expect_values(tape_grad(
                    u, [&](const Tensor& t) { return scatter_nd(at1, t, {5}); },
                    constant({10.0, 20.0, 30.0, 40.0, 50.0})),
                {50, 10, 50});
}

TEST(ArrayGradientTest, TensorScatterNdAdd) {
  Tensor at = constant(std::vector<int64_t>{1, 3, 1}, Shape{3, 1});
  check_weighted([&](const std::vector<Tensor>& in) { return tensor_scatter_nd_add(in[0], at, in[1]); },
                 {randn({5, 2}, 1), randn({3, 2}, 2)});
}

TEST(ArrayGradientTest, GatherInGraphsWithUnknownDimensions) {
  // params' first dimension is unknown while building: the gradient scatters into
  // zeros_like(params) with tensor_scatter_nd_add instead of scatter_nd.
  Graph g;
  Tensor p, dp, dq;
  {
    Graph::Scope scope(g);
    p = placeholder(DType::Float64, {kUnknownDim, 2}, "p");
    Tensor rows = gather(p, constant(std::vector<int64_t>{2, 0, 2}, Shape{3}));
    Tensor cols = gather(p, constant(std::vector<int64_t>{1}, Shape{1}), 1);
    Tensor tuples = gather_nd(p, constant(std::vector<int64_t>{0, 1, 2, 0}, Shape{2, 2}));
    dp = gradients({reduce_sum(rows * rows) + reduce_sum(cols) + reduce_sum(tuples)}, {p})[0];
  }
  Tensor value = constant({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}});
  // rows: 2 p[0] once and 2 p[2] twice; cols: 1 on column 1; tuples: p[0, 1] and p[2, 0].
  expect_values(Session(g).run(dp, {{p, value}}), {2, 4 + 1 + 1, 0, 1, 20 + 1, 24 + 1});
}

TEST(ArrayGradientTest, Select) {
  Tensor cond = constant(std::vector<bool>{true, false, true}, Shape{3, 1});
  check_weighted([&](const std::vector<Tensor>& in) { return where(cond, in[0], in[1]); },
                 {randn({1, 4}, 1), randn({3, 4}, 2)});
  Tensor c = constant(std::vector<bool>{true, false, true}, Shape{3});
  Tensor x = constant({1.0, 2.0, 3.0}), y = constant({4.0, 5.0, 6.0});
  GradientTape tape;
  tape.watch(x);
  tape.watch(y);
  Tensor out = where(c, x, y);
  std::vector<Tensor> sources = {x, y};
  std::vector<Tensor> g = tape.gradient(out, sources, constant({7.0, 8.0, 9.0}));
  expect_values(g[0], {7, 0, 9});
  expect_values(g[1], {0, 8, 0});
}

// ---- Sorting ----

TEST(ArrayGradientTest, SortAndTopK) {
  check_unary([](const Tensor& x) { return sort(x); }, {3, 5});
  check_unary([](const Tensor& x) { return sort(x, 0, "DESCENDING"); }, {4, 3});
  check_unary([](const Tensor& x) { return sort(x, 1); }, {2, 4, 3});
  check_unary([](const Tensor& x) { return top_k(x, 2).values; }, {3, 5});
  check_unary([](const Tensor& x) { return top_k(x, 3).values; }, {2, 2, 4});
  Tensor x = constant({1.0, 5.0, 3.0, 4.0});
  expect_values(tape_grad(
                    x, [](const Tensor& t) { return top_k(t, 2).values; }, constant({10.0, 20.0})),
                {0, 10, 0, 20});
  expect_values(tape_grad(
                    x, [](const Tensor& t) { return sort(t); }, constant({1.0, 2.0, 3.0, 4.0})),
                {1, 4, 2, 3});
}

// Empty outputs and parts: zero gradients of the input's shape.
TEST(ArrayGradientTest, EmptyCases) {
  Tensor x = constant({1.0, 2.0, 3.0});
  auto zero_grad = [&](const std::function<Tensor(const Tensor&)>& op) {
    Tensor g = tape_grad(x, op, zeros(op(x).shape(), DType::Float64));
    ef::testing::expect_meta(g, {3}, DType::Float64);
    expect_values(g, {0, 0, 0});
  };
  zero_grad([](const Tensor& t) { return tile(t, {0}); });
  zero_grad([](const Tensor& t) { return gather(t, constant(std::vector<int64_t>{}, Shape{0})); });
  zero_grad([](const Tensor& t) { return top_k(t, 0).values; });
  zero_grad([](const Tensor& t) { return slice(t, {3}, {0}); });
  // A zero-size part of a concat and of a split.
  check_weighted(
      [](const std::vector<Tensor>& in) {
        return concat({in[0], in[1]}, 0);
      },
      {randn({0, 2}, 1), randn({3, 2}, 2)});
  check_weighted(
      [](const std::vector<Tensor>& in) {
        auto parts = split(in[0], {0, 3}, 0);
        return parts[1];
      },
      {randn({3, 2}, 1)});
}

TEST(ArrayGradientTest, NotDifferentiable) {
  for (const char* name : {"where", "one_hot", "argsort"})
    EXPECT_FALSE(find_op(name).not_differentiable.empty()) << name;
  for (const char* name : {"reshape", "strided_slice", "gather", "scatter_nd", "pad", "tile", "select",
                           "top_k", "sort", "concat", "split", "unstack", "contiguous"})
    EXPECT_NE(find_op(name).gradient, nullptr) << name;
}

}  // namespace
}  // namespace ef
