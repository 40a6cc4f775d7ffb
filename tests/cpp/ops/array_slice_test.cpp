// strided_slice (every mask, negative strides, clamping), slice, and strided_slice_grad.
#include "test_util.h"

namespace ef {
namespace {

using testing::expect_meta;
using testing::expect_values;

Tensor iota(const Shape& shape, DType dtype = DType::Int32) {
  return reshape(range(0, shape.num_elements(), 1, dtype), shape);
}

TEST(ArrayStridedSlice, BasicRanges) {
  Tensor x = iota({10});
  expect_values(strided_slice(x, {2}, {5}), {2, 3, 4});
  expect_values(strided_slice(x, {1}, {8}, {3}), {1, 4, 7});
  expect_values(strided_slice(x, {-3}, {10}), {7, 8, 9});
  expect_values(strided_slice(x, {-100}, {2}), {0, 1});       // clamped
  expect_values(strided_slice(x, {8}, {100}), {8, 9});        // clamped
  expect_meta(strided_slice(x, {5}, {2}), {0}, DType::Int32);  // empty
  expect_meta(strided_slice(x, {20}, {30}), {0}, DType::Int32);
}

TEST(ArrayStridedSlice, NegativeStrides) {
  Tensor x = iota({6});
  expect_values(strided_slice(x, {0}, {0}, {-1}, {.begin_mask = 1, .end_mask = 1}), {5, 4, 3, 2, 1, 0});
  expect_values(strided_slice(x, {4}, {1}, {-1}), {4, 3, 2});
  expect_values(strided_slice(x, {-1}, {0}, {-2}, {.end_mask = 1}), {5, 3, 1});
  expect_values(strided_slice(x, {100}, {-100}, {-2}), {5, 3, 1});  // clamped to [-1, 5]
  expect_meta(strided_slice(x, {1}, {4}, {-1}), {0}, DType::Int32);
  // x[::-1][::-2] composes views.
  Tensor r = strided_slice(x, {0}, {0}, {-1}, {.begin_mask = 1, .end_mask = 1});
  expect_values(strided_slice(r, {0}, {0}, {-2}, {.begin_mask = 1, .end_mask = 1}), {0, 2, 4});
}

TEST(ArrayStridedSlice, TwoDimensionsAndMasks) {
  Tensor x = iota({3, 4});
  // x[1:, ::2]
  expect_values(strided_slice(x, {1, 0}, {0, 0}, {1, 2}, {.end_mask = 3}), {4, 6, 8, 10});
  // x[:, 1] (shrink axis 1)
  Tensor col = strided_slice(x, {0, 1}, {0, 2}, {1, 1}, {.begin_mask = 1, .end_mask = 1, .shrink_axis_mask = 2});
  expect_meta(col, {3}, DType::Int32);
  expect_values(col, {1, 5, 9});
  // x[-1, -1] (both shrunk): a scalar
  Tensor last = strided_slice(x, {-1, -1}, {0, 0}, {1, 1}, {.shrink_axis_mask = 3});
  expect_meta(last, {}, DType::Int32);
  EXPECT_EQ(last.item<int>(), 11);
  // Fewer entries than axes: the rest are whole.
  expect_values(strided_slice(x, {2}, {3}), {8, 9, 10, 11});
}

TEST(ArrayStridedSlice, EllipsisAndNewAxis) {
  Tensor x = iota({2, 3, 4});
  // x[..., 1]
  Tensor a = strided_slice(x, {0, 1}, {0, 2}, {1, 1}, {.ellipsis_mask = 1, .shrink_axis_mask = 2});
  expect_meta(a, {2, 3}, DType::Int32);
  expect_values(a, {1, 5, 9, 13, 17, 21});
  // x[1, ..., ::-1]
  Tensor b = strided_slice(x, {1, 0, 0}, {2, 0, 0}, {1, 1, -1},
                           {.begin_mask = 4, .end_mask = 4, .ellipsis_mask = 2, .shrink_axis_mask = 1});
  expect_meta(b, {3, 4}, DType::Int32);
  expect_values(b, {15, 14, 13, 12, 19, 18, 17, 16, 23, 22, 21, 20});
  // x[tf.newaxis, ..., tf.newaxis]
  Tensor c = strided_slice(x, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, {.ellipsis_mask = 2, .new_axis_mask = 5});
  expect_meta(c, {1, 2, 3, 4, 1}, DType::Int32);
  // x[0, newaxis, 1:3]
  Tensor d = strided_slice(x, {0, 0, 1}, {1, 0, 3}, {1, 1, 1}, {.new_axis_mask = 2, .shrink_axis_mask = 1});
  expect_meta(d, {1, 2, 4}, DType::Int32);
  expect_values(d, {4, 5, 6, 7, 8, 9, 10, 11});
  // An ellipsis that covers no axis: x[0, 1, 2, ...]
  Tensor e = strided_slice(x, {0, 1, 2, 0}, {0, 0, 0, 0}, {1, 1, 1, 1}, {.ellipsis_mask = 8, .shrink_axis_mask = 7});
  expect_meta(e, {}, DType::Int32);
  EXPECT_EQ(e.item<int>(), 6);
}

TEST(ArrayStridedSlice, EveryDTypeEmptyScalar) {
  for (DType t : kAllDTypes) {
    Tensor x = cast(iota({4}), t);
    Tensor s = strided_slice(x, {1}, {3});
    expect_meta(s, {2}, t);
    expect_values(real(s), {1, t == DType::Bool ? 1.0 : 2.0});  // real: s itself, or a complex s's real part
  }
  expect_meta(strided_slice(zeros({0, 3}), {0, 1}, {0, 3}), {0, 2}, DType::Float32);
  // A scalar only takes new axes and ellipses.
  expect_meta(strided_slice(constant(1.f), {0}, {0}, {1}, {.new_axis_mask = 1}), {1}, DType::Float32);
  expect_meta(strided_slice(constant(1.f), {}, {}, {}), {}, DType::Float32);
}

TEST(ArrayStridedSlice, SharesStorage) {
  Tensor x = iota({4, 4});
  Tensor s = strided_slice(x, {3, 0}, {0, 4}, {-2, 3});
  EXPECT_EQ(s.impl()->storage.get(), x.impl()->storage.get());
  expect_values(s, {12, 15, 4, 7});
}

TEST(ArrayStridedSlice, Errors) {
  Tensor x = iota({2, 3});
  EXPECT_ERROR(strided_slice(x, {0}, {1}, {0}), InvalidArgumentError, "strided_slice", "0", "[2, 3]");
  EXPECT_ERROR(strided_slice(x, {0, 0}, {1}), InvalidArgumentError, "strided_slice", "same length");
  EXPECT_ERROR(strided_slice(x, {0, 0, 0}, {1, 1, 1}), InvalidArgumentError, "strided_slice", "too many indices");
  EXPECT_ERROR(strided_slice(x, {5}, {6}, {1}, {.shrink_axis_mask = 1}), OutOfRangeError, "strided_slice",
               "index 5", "size 2");
  EXPECT_ERROR(strided_slice(x, {-3}, {6}, {1}, {.shrink_axis_mask = 1}), OutOfRangeError, "-3");
  EXPECT_ERROR(strided_slice(x, {0}, {1}, {-1}, {.shrink_axis_mask = 1}), InvalidArgumentError, "positive stride");
  EXPECT_ERROR(strided_slice(x, {0, 0}, {1, 1}, {1, 1}, {.ellipsis_mask = 3}), InvalidArgumentError, "one ellipsis");
  Tensor big = zeros({1, 1, 1, 1, 1, 1, 1, 1});
  EXPECT_ERROR(strided_slice(big, {0}, {0}, {1}, {.new_axis_mask = 1}), InvalidArgumentError, "more than 8");
}

TEST(ArraySlice, Values) {
  Tensor x = iota({3, 4});
  expect_values(slice(x, {1, 1}, {2, 2}), {5, 6, 9, 10});
  expect_values(slice(x, {1, 2}, {-1, -1}), {6, 7, 10, 11});
  expect_meta(slice(x, {3, 0}, {0, 4}), {0, 4}, DType::Int32);
  expect_meta(slice(x, {3, 4}, {-1, -1}), {0, 0}, DType::Int32);
  expect_values(slice(transpose(x), {1, 0}, {1, 3}), {1, 5, 9});
  expect_meta(slice(constant(2.0), {}, {}), {}, DType::Float64);
  for (DType t : kAllDTypes) expect_meta(slice(cast(x, t), {0, 0}, {1, 1}), {1, 1}, t);
  EXPECT_EQ(slice(x, {1, 1}, {1, 1}).impl()->storage.get(), x.impl()->storage.get());
}

TEST(ArraySlice, Errors) {
  Tensor x = iota({3, 4});
  EXPECT_ERROR(slice(x, {0}, {1}), InvalidArgumentError, "slice", "[3, 4]");
  EXPECT_ERROR(slice(x, {-1, 0}, {1, 1}), InvalidArgumentError, "slice", "negative");
  EXPECT_ERROR(slice(x, {4, 0}, {0, 1}), InvalidArgumentError, "slice", "begin 4", "size 3");
  EXPECT_ERROR(slice(x, {2, 0}, {2, 1}), InvalidArgumentError, "slice", "does not fit", "size 3");
  EXPECT_ERROR(slice(x, {0, 0}, {-2, 1}), InvalidArgumentError, "slice", "-2");
}

// strided_slice_grad puts dy back where the slice reads, zeros elsewhere, in x's shape.
TEST(ArrayStridedSliceGrad, Values) {
  Tensor x = zeros({3, 4}, DType::Float64);
  Tensor dy = reshape(range(1.0, 5.0, 1.0, DType::Float64), {2, 2});
  // x[1:, ::2]
  Tensor g = strided_slice_grad(x, dy, {1, 0}, {0, 0}, {1, 2}, {.end_mask = 3});
  expect_meta(g, {3, 4}, DType::Float64);
  expect_values(g, {0, 0, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0});
  // x[::-2, 3] (a shrunk axis, a negative stride) and x[-1, newaxis] (a new axis).
  expect_values(strided_slice_grad(x, constant({5.0, 7.0}), {0, 3}, {0, 0}, {-2, 1},
                                   {.begin_mask = 1, .end_mask = 1, .shrink_axis_mask = 2}),
                {0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 5});
  expect_values(strided_slice_grad(x, reshape(dy, {1, 4}), {-1, 0}, {0, 0}, {1, 1},
                                   {.new_axis_mask = 2, .shrink_axis_mask = 1}),
                {0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4});
  // A non-contiguous dy; the output takes dy's dtype; an empty slice gives zeros.
  expect_values(strided_slice_grad(x, transpose(dy), {0, 1}, {2, 3}), {0, 1, 3, 0, 0, 2, 4, 0, 0, 0, 0, 0});
  for (DType t : {DType::Float32, DType::Int32, DType::Float16, DType::Bool})
    expect_meta(strided_slice_grad(x, cast(dy, t), {1, 0}, {3, 2}), {3, 4}, t);
  expect_values(strided_slice_grad(x, zeros({0, 4}, DType::Float64), {2, 0}, {1, 4}),
                std::vector<double>(12, 0));
  expect_meta(strided_slice_grad(zeros({0, 2}), zeros({0, 1}), {0, 1}, {0, 2}), {0, 2}, DType::Float32);
}

TEST(ArrayStridedSliceGrad, Errors) {
  Tensor x = zeros({3, 4});
  EXPECT_ERROR(strided_slice_grad(x, zeros({2, 3}), {1, 0}, {3, 4}), InvalidArgumentError,
               "strided_slice_grad", "'dy'", "[2, 3]", "[2, 4]");
  EXPECT_ERROR(strided_slice_grad(x, zeros({2}), {1}, {3}), InvalidArgumentError, "strided_slice_grad",
               "[2]");
  EXPECT_ERROR(strided_slice_grad(x, zeros({1}), {5}, {6}, {1}, {.shrink_axis_mask = 1}), OutOfRangeError,
               "strided_slice_grad", "index 5");
}

// In a graph whose input sizes are unknown while building, the positions come from the
// shape the graph runs with.
TEST(ArrayStridedSliceGrad, UnknownSizesInAGraph) {
  Graph g;
  Tensor x, dy, out;
  {
    Graph::Scope scope(g);
    x = placeholder(DType::Float64, {kUnknownDim, kUnknownDim}, "x");
    dy = placeholder(DType::Float64, {kUnknownDim}, "dy");
    out = strided_slice_grad(x, dy, {-1, 1}, {0, 0}, {1, 1},
                             {.end_mask = 2, .shrink_axis_mask = 1});  // x[-1, 1:]
    expect_meta(out, {kUnknownDim, kUnknownDim}, DType::Float64);
  }
  Session sess(g);
  expect_values(sess.run(out, {{x, zeros({2, 3}, DType::Float64)}, {dy, constant({1.0, 2.0})}}),
                {0, 0, 0, 0, 1, 2});
  expect_values(sess.run(out, {{x, zeros({1, 2}, DType::Float64)}, {dy, constant({5.0})}}), {0, 5});
  EXPECT_ERROR(sess.run(out, {{x, zeros({1, 2}, DType::Float64)}, {dy, constant({5.0, 6.0})}}),
               InvalidArgumentError, "strided_slice_grad", "[2]", "[1]");
}

}  // namespace
}  // namespace ef
