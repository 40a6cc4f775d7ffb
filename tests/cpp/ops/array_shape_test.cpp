// reshape, transpose, expand_dims, squeeze, broadcast_to, identity, reverse,
// Tensor::operator[], Tensor::contiguous(), ensure_same_shape and ensure_broadcastable_to.
#include "test_util.h"

namespace ef {
namespace {

using testing::expect_meta;
using testing::expect_values;
using testing::iota;

TEST(ArrayReshape, Values) {
  Tensor x = iota({2, 3});
  Tensor y = reshape(x, {3, 2});
  expect_meta(y, {3, 2}, DType::Float32);
  expect_values(y, {0, 1, 2, 3, 4, 5});
  expect_meta(reshape(x, {-1}), {6}, DType::Float32);
  expect_meta(reshape(x, {3, -1}), {3, 2}, DType::Float32);
  expect_meta(reshape(x, {1, 2, 1, 3}), {1, 2, 1, 3}, DType::Float32);
}

TEST(ArrayReshape, ScalarAndEmpty) {
  Tensor s = constant(5);
  expect_meta(reshape(s, {1, 1}), {1, 1}, DType::Int32);
  expect_meta(reshape(constant({7.0}), {}), {}, DType::Float64);
  Tensor e = zeros({0, 3});
  expect_meta(reshape(e, {3, 0}), {3, 0}, DType::Float32);
  expect_meta(reshape(e, {-1, 3}), {0, 3}, DType::Float32);
  // As in TensorFlow and NumPy: -1 is ambiguous when the other sizes multiply to 0.
  EXPECT_ERROR(reshape(e, {0, -1, 3}), InvalidArgumentError, "reshape", "multiply to 0");
  EXPECT_ERROR(reshape(e, {-1, 0}), InvalidArgumentError, "reshape", "-1");
}

TEST(ArrayReshape, EveryDType) {
  for (DType t : kAllDTypes) {
    Tensor x = cast(iota({2, 2}, DType::Int32), t);
    Tensor y = reshape(x, {4});
    expect_meta(y, {4}, t);
    expect_values(real(y),
                  t == DType::Bool ? std::vector<double>{0, 1, 1, 1} : std::vector<double>{0, 1, 2, 3});
  }
}

TEST(ArrayReshape, NonContiguousCopiesOnlyWhenNeeded) {
  Tensor x = iota({2, 3});
  Tensor t = transpose(x);  // [[0, 3], [1, 4], [2, 5]]
  Tensor flat = reshape(t, {6});
  expect_values(flat, {0, 3, 1, 4, 2, 5});
  EXPECT_NE(flat.impl()->storage.get(), x.impl()->storage.get());  // needs a copy
  // Splitting one axis of a strided tensor is still a view.
  Tensor big = iota({4, 6});
  Tensor cols = strided_slice(big, {0, 0}, {4, 6}, {1, 2});  // shape [4, 3], strides [6, 2]
  Tensor split_rows = reshape(cols, {2, 2, 3});
  EXPECT_EQ(split_rows.impl()->storage.get(), big.impl()->storage.get());
  expect_values(split_rows, {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22});
  Tensor merged = reshape(cols, {12});  // cannot be a view
  expect_values(merged, {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22});
}

TEST(ArrayReshape, Errors) {
  Tensor x = iota({2, 3});
  EXPECT_ERROR(reshape(x, {4}), InvalidArgumentError, "reshape", "[2, 3]", "[4]");
  EXPECT_ERROR(reshape(x, {-1, -1}), InvalidArgumentError, "reshape", "-1 only once");
  EXPECT_ERROR(reshape(x, {-2, 3}), InvalidArgumentError, "reshape", "negative");
  EXPECT_ERROR(reshape(x, {4, -1}), InvalidArgumentError, "reshape", "[2, 3]", "[4, -1]");
  EXPECT_ERROR(reshape(x, {1, 1, 1, 1, 1, 1, 1, 1, 6}), InvalidArgumentError, "reshape");
  EXPECT_ERROR(reshape(x, {int64_t{1} << 40, int64_t{1} << 40}), Error, "reshape");
}

TEST(ArrayTranspose, Values) {
  Tensor x = iota({2, 3, 4}, DType::Int64);
  Tensor t = transpose(x);
  expect_meta(t, {4, 3, 2}, DType::Int64);
  EXPECT_EQ(t[1][2][0].item<int64_t>(), 9);  // x[0][2][1]
  Tensor p = transpose(x, {1, 0, 2});
  expect_meta(p, {3, 2, 4}, DType::Int64);
  expect_values(p[1], {4, 5, 6, 7, 16, 17, 18, 19});
  expect_values(transpose(x, {-1, 0, 1})[3], {3, 7, 11, 15, 19, 23});
  expect_meta(transpose(constant(1.f)), {}, DType::Float32);
  expect_meta(transpose(zeros({0, 2})), {2, 0}, DType::Float32);
  // Transposing back gives the original, through two views.
  expect_values(transpose(transpose(iota({2, 3}))), {0, 1, 2, 3, 4, 5});
}

TEST(ArrayTranspose, Errors) {
  Tensor x = iota({2, 3});
  EXPECT_ERROR(transpose(x, {0}), InvalidArgumentError, "transpose", "perm", "[2, 3]");
  EXPECT_ERROR(transpose(x, {0, 0}), InvalidArgumentError, "transpose", "repeats");
  EXPECT_ERROR(transpose(x, {0, 2}), InvalidArgumentError, "transpose", "perm");
}

TEST(ArrayExpandSqueeze, Values) {
  Tensor x = iota({2, 3});
  expect_meta(expand_dims(x, 0), {1, 2, 3}, DType::Float32);
  expect_meta(expand_dims(x, 2), {2, 3, 1}, DType::Float32);
  expect_meta(expand_dims(x, -1), {2, 3, 1}, DType::Float32);
  expect_meta(expand_dims(x, -3), {1, 2, 3}, DType::Float32);
  expect_meta(expand_dims(constant(true), 0), {1}, DType::Bool);
  expect_values(expand_dims(transpose(x), 1), {0, 3, 1, 4, 2, 5});
  Tensor y = zeros({1, 2, 1, 0, 1});
  expect_meta(squeeze(y), {2, 0}, DType::Float32);
  expect_meta(squeeze(y, {0, -1}), {2, 1, 0}, DType::Float32);
  expect_meta(squeeze(y, 2), {1, 2, 0, 1}, DType::Float32);
  expect_meta(squeeze(constant(3)), {}, DType::Int32);
  expect_values(squeeze(expand_dims(x, 1), 1), {0, 1, 2, 3, 4, 5});
}

TEST(ArrayExpandSqueeze, Errors) {
  Tensor x = iota({2, 1});
  EXPECT_ERROR(expand_dims(x, 3), InvalidArgumentError, "expand_dims", "axis", "[2, 1]");
  EXPECT_ERROR(expand_dims(x, -4), InvalidArgumentError, "expand_dims", "axis");
  EXPECT_ERROR(squeeze(x, 0), InvalidArgumentError, "squeeze", "axis 0", "[2, 1]", "not 1");
  EXPECT_ERROR(squeeze(x, 2), InvalidArgumentError, "squeeze", "out of range");
  EXPECT_ERROR(squeeze(x, {1, 1}), InvalidArgumentError, "squeeze", "repeats");
  EXPECT_ERROR(expand_dims(zeros({1, 1, 1, 1, 1, 1, 1, 1}), 0), InvalidArgumentError, "expand_dims", "8");
}

TEST(ArrayBroadcastTo, Values) {
  Tensor x = constant({1, 2, 3});
  Tensor b = broadcast_to(x, {2, 3});
  expect_meta(b, {2, 3}, DType::Int32);
  expect_values(b, {1, 2, 3, 1, 2, 3});
  EXPECT_EQ(b.strides()[0], 0);
  Tensor col = constant({{1.0}, {2.0}});
  expect_values(broadcast_to(col, {2, 2, 3}), {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2});
  expect_values(broadcast_to(constant(7), {2, 2}), {7, 7, 7, 7});
  expect_meta(broadcast_to(x, {0, 3}), {0, 3}, DType::Int32);
  expect_values(broadcast_to(transpose(iota({2, 1})), {3, 2}), {0, 1, 0, 1, 0, 1});
  EXPECT_ERROR(broadcast_to(x, {3, 2}), InvalidArgumentError, "broadcast_to", "[3]", "[3, 2]");
  EXPECT_ERROR(broadcast_to(iota({2, 3}), {3}), InvalidArgumentError, "broadcast_to", "more dimensions");
  EXPECT_ERROR(broadcast_to(x, {-1, 3}), InvalidArgumentError, "broadcast_to", "negative");
}

TEST(ArrayIdentity, NewHandleSameValues) {
  Tensor x = iota({2, 2}, DType::Float64);
  Tensor y = identity(x);
  EXPECT_NE(y.impl(), x.impl());
  EXPECT_EQ(y.impl()->storage.get(), x.impl()->storage.get());
  expect_values(y, {0, 1, 2, 3});
  expect_values(identity(transpose(x)), {0, 2, 1, 3});
  expect_meta(identity(constant(false)), {}, DType::Bool);
}

TEST(ArrayReverse, Values) {
  Tensor x = iota({2, 3}, DType::Int32);
  expect_values(reverse(x, 1), {2, 1, 0, 5, 4, 3});
  expect_values(reverse(x, 0), {3, 4, 5, 0, 1, 2});
  expect_values(reverse(x, {0, 1}), {5, 4, 3, 2, 1, 0});
  expect_values(reverse(x, -1), {2, 1, 0, 5, 4, 3});
  expect_values(reverse(x, Axes()), {5, 4, 3, 2, 1, 0});
  expect_values(reverse(transpose(x), 0), {2, 5, 1, 4, 0, 3});
  expect_meta(reverse(zeros({0, 2}), 0), {0, 2}, DType::Float32);
  expect_values(reverse(constant(4.0), Axes()), {4});
  EXPECT_ERROR(reverse(x, 2), InvalidArgumentError, "reverse", "axis");
  EXPECT_ERROR(reverse(x, {1, -1}), InvalidArgumentError, "reverse", "repeats");
  EXPECT_ERROR(reverse(constant(1), 0), InvalidArgumentError, "reverse", "scalar");
}

TEST(ArrayIndex, OperatorBracket) {
  Tensor x = iota({3, 2});
  expect_meta(x[1], {2}, DType::Float32);
  expect_values(x[1], {2, 3});
  expect_values(x[-1], {4, 5});
  EXPECT_EQ(x[2][1].item<float>(), 5.f);
  EXPECT_EQ(transpose(x)[1][2].item<float>(), 5.f);
  EXPECT_EQ(x[0].impl()->storage.get(), x.impl()->storage.get());
  EXPECT_ERROR(x[3], OutOfRangeError, "index 3", "size 3");
  EXPECT_ERROR(x[-4], OutOfRangeError, "-4");
  EXPECT_ERROR(constant(1)[0], InvalidArgumentError, "scalar");
  EXPECT_ERROR(zeros({0})[0], OutOfRangeError, "size 0");
  Tensor b = constant({true, false});
  EXPECT_TRUE(static_cast<bool>(b[0]));
  EXPECT_FALSE(static_cast<bool>(b[1]));
}

TEST(ArrayIndex, OperatorBracketIsAnOp) {
  InferenceOnlyBuilder builder;
  BuildScope scope(&builder);
  Tensor x = symbolic_tensor(DType::Float32, {kUnknownDim, 4});
  Tensor row = x[2];
  EXPECT_EQ(builder.ops_built(), 1);
  expect_meta(row, {4}, DType::Float32);
  Tensor y = symbolic_tensor(DType::Int32, {2, 3});
  EXPECT_ERROR(y[2], OutOfRangeError, "index 2");
}

TEST(ArrayContiguous, CopiesOnlyWhenNeeded) {
  Tensor x = iota({2, 3});
  Tensor same = x.contiguous();
  EXPECT_EQ(same.impl(), x.impl());
  Tensor t = transpose(x);
  EXPECT_FALSE(t.is_contiguous());
  Tensor c = t.contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_NE(c.impl()->storage.get(), x.impl()->storage.get());
  expect_values(c, {0, 3, 1, 4, 2, 5});
  for (DType dt : kAllDTypes) {
    Tensor v = reverse(cast(iota({3}), dt), 0).contiguous();
    expect_meta(v, {3}, dt);
    expect_values(real(v), dt == DType::Bool ? std::vector<double>{1, 1, 0} : std::vector<double>{2, 1, 0});
  }
  expect_values(broadcast_to(constant(2), {3}).contiguous(), {2, 2, 2});
  expect_meta(transpose(zeros({0, 3})).contiguous(), {3, 0}, DType::Float32);
  // Large enough to be split across threads.
  Tensor big = iota({300, 500});
  Tensor bt = transpose(big).contiguous();
  EXPECT_EQ(bt[499][299].item<float>(), 299.f * 500 + 499);
  EXPECT_EQ(bt[7][3].item<float>(), 3.f * 500 + 7);
}

// x passed through (a view) once its shape is checked against like's.
TEST(ArrayEnsureShape, PassesXThroughOrNamesBothShapes) {
  Tensor x = iota({2, 3});
  Tensor same = ensure_same_shape(x, zeros({2, 3}, DType::Int32));
  expect_values(same, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(same.impl()->storage.get(), x.impl()->storage.get());
  expect_meta(ensure_same_shape(constant(1.0), constant(2)), {}, DType::Float64);
  expect_meta(ensure_same_shape(zeros({0, 2}), zeros({0, 2})), {0, 2}, DType::Float32);
  expect_values(ensure_broadcastable_to(constant({1.f, 2.f, 3.f}), x), {1, 2, 3});
  expect_meta(ensure_broadcastable_to(zeros({2, 1}), x), {2, 1}, DType::Float32);
  expect_meta(ensure_broadcastable_to(constant(1.f), x), {}, DType::Float32);
  EXPECT_ERROR(ensure_same_shape(x, zeros({3, 2}), "my_loss: y_true and y_pred must have the same shape"),
               InvalidArgumentError,
               "my_loss: y_true and y_pred must have the same shape, got [2, 3] and [3, 2]");
  EXPECT_ERROR(ensure_same_shape(x, zeros({2, 3, 1})), InvalidArgumentError, "ensure_shape_match", "[2, 3]",
               "[2, 3, 1]");
  EXPECT_ERROR(ensure_broadcastable_to(zeros({2}), x, "w must broadcast"), InvalidArgumentError,
               "w must broadcast, got [2] and [2, 3]");
  EXPECT_ERROR(ensure_broadcastable_to(zeros({1, 2, 3}), x), InvalidArgumentError, "ensure_shape_match",
               "broadcast");
  EXPECT_ERROR(ensure_broadcastable_to(x, zeros({1, 3})), InvalidArgumentError, "[2, 3]", "[1, 3]");
}

// Note [runtime shape checks]: sizes unknown while building pass the static check and
// are compared again with the shapes the graph runs with.
TEST(ArrayEnsureShape, ChecksTheShapesAGraphRunsWith) {
  Graph g;
  Tensor a, b, w, same, weighted;
  {
    Graph::Scope scope(g);
    a = placeholder(DType::Float32, {kUnknownDim, kUnknownDim}, "a");
    b = placeholder(DType::Float32, {kUnknownDim, 3}, "b");
    w = placeholder(DType::Float32, {kUnknownDim}, "w");
    same = ensure_same_shape(a, b, "pair") - b;
    expect_meta(same, {kUnknownDim, 3}, DType::Float32);  // the known size taken from b
    weighted = ensure_broadcastable_to(w, b, "w") * b;
    EXPECT_ERROR(ensure_same_shape(b, zeros({2, 4})), InvalidArgumentError, "[?, 3]", "[2, 4]");
    EXPECT_ERROR(ensure_broadcastable_to(b, zeros({3})), InvalidArgumentError, "[?, 3]", "[3]");
  }
  Session sess(g);
  expect_values(sess.run(same, {{a, ones({2, 3})}, {b, ones({2, 3})}}), {0, 0, 0, 0, 0, 0});
  // [1, 3] against [2, 3] would broadcast in the subtraction: the check stops it.
  EXPECT_ERROR(sess.run(same, {{a, ones({1, 3})}, {b, ones({2, 3})}}), InvalidArgumentError,
               "pair, got [1, 3] and [2, 3]");
  expect_values(sess.run(weighted, {{w, constant({2.f, 3.f, 4.f})}, {b, ones({1, 3})}}), {2, 3, 4});
  expect_values(sess.run(weighted, {{w, constant({2.f})}, {b, ones({1, 3})}}), {2, 2, 2});
  EXPECT_ERROR(sess.run(weighted, {{w, ones({2})}, {b, ones({2, 3})}}), InvalidArgumentError,
               "w, got [2] and [2, 3]");
}

}  // namespace
}  // namespace ef
