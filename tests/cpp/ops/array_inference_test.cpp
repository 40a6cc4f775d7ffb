// Every array op runs through inference alone (graph mode's path): symbolic inputs,
// including unknown dimensions, give the right output dtype and shape.
#include "test_util.h"

namespace ef {
namespace {

using testing::expect_meta;
constexpr int64_t U = kUnknownDim;

class ArrayInference : public ::testing::Test {
 protected:
  InferenceOnlyBuilder builder;
  BuildScope scope{&builder};
  static Tensor sym(DType t, Shape s) { return symbolic_tensor(t, std::move(s)); }
};

TEST_F(ArrayInference, Views) {
  Tensor x = sym(DType::Float32, {U, 3, 4});
  expect_meta(reshape(x, {-1, 12}), {U, 12}, DType::Float32);
  expect_meta(reshape(sym(DType::Int32, {2, 6}), {3, -1}), {3, 4}, DType::Int32);
  expect_meta(reshape(x, {2, 6, 2}), {2, 6, 2}, DType::Float32);  // only checked at run time
  EXPECT_ERROR(reshape(sym(DType::Int32, {2, 6}), {5, -1}), InvalidArgumentError, "reshape");
  expect_meta(transpose(x), {4, 3, U}, DType::Float32);
  expect_meta(transpose(x, {1, 0, 2}), {3, U, 4}, DType::Float32);
  expect_meta(expand_dims(x, 1), {U, 1, 3, 4}, DType::Float32);
  expect_meta(squeeze(sym(DType::Bool, {1, U, 1})), {U}, DType::Bool);
  expect_meta(squeeze(sym(DType::Bool, {1, U}), 1), {1}, DType::Bool);
  expect_meta(identity(x), {U, 3, 4}, DType::Float32);
  expect_meta(reverse(x, {0, 2}), {U, 3, 4}, DType::Float32);
  expect_meta(broadcast_to(sym(DType::Int64, {U, 1}), {2, 5, 7}), {2, 5, 7}, DType::Int64);
  expect_meta(x.contiguous(), {U, 3, 4}, DType::Float32);
  expect_meta(x[0], {3, 4}, DType::Float32);
}

TEST_F(ArrayInference, Slices) {
  Tensor x = sym(DType::Float64, {U, 10});
  expect_meta(strided_slice(x, {0, 2}, {0, 8}, {1, 3}, {.begin_mask = 1, .end_mask = 1}), {U, 2}, DType::Float64);
  expect_meta(strided_slice(x, {0, 1}, {0, 0}, {1, 1}, {.ellipsis_mask = 1, .shrink_axis_mask = 2}), {U},
              DType::Float64);
  expect_meta(strided_slice(x, {0}, {0}, {1}, {.new_axis_mask = 1}), {1, U, 10}, DType::Float64);
  expect_meta(slice(x, {1, 2}, {-1, 3}), {U, 3}, DType::Float64);
  expect_meta(slice(x, {0, 4}, {2, -1}), {2, 6}, DType::Float64);
  EXPECT_ERROR(slice(x, {0, 4}, {2, 7}), InvalidArgumentError, "slice", "does not fit");
}

TEST_F(ArrayInference, JoinAndSplit) {
  Tensor a = sym(DType::Int32, {U, 3});
  Tensor b = sym(DType::Int32, {2, 3});
  expect_meta(concat({a, b}, 0), {U, 3}, DType::Int32);
  expect_meta(concat({b, b}, 0), {4, 3}, DType::Int32);
  expect_meta(concat({a, b}, 1), {2, 6}, DType::Int32);
  expect_meta(stack({a, b}, 1), {2, 2, 3}, DType::Int32);  // the known size wins
  expect_meta(stack({a, a}, 1), {U, 2, 3}, DType::Int32);
  std::vector<Tensor> rows = unstack(b);
  ASSERT_EQ(rows.size(), 2u);
  expect_meta(rows[1], {3}, DType::Int32);
  EXPECT_ERROR(unstack(a), InvalidArgumentError, "unstack", "unknown");
  std::vector<Tensor> parts = split(a, 2, 0);
  ASSERT_EQ(parts.size(), 2u);
  expect_meta(parts[0], {U, 3}, DType::Int32);
  std::vector<Tensor> sized = split(a, {1, -1}, 0);
  expect_meta(sized[0], {1, 3}, DType::Int32);
  expect_meta(sized[1], {U, 3}, DType::Int32);
  expect_meta(split(b, {1, 2}, 1)[1], {2, 2}, DType::Int32);
  expect_meta(tile(a, {2, 3}), {U, 9}, DType::Int32);
  expect_meta(pad(a, {{1, 1}, {2, 0}}), {U, 5}, DType::Int32);
  expect_meta(pad(a, {{1, 1}, {2, 0}}, "REFLECT"), {U, 5}, DType::Int32);
}

TEST_F(ArrayInference, Indexing) {
  Tensor p = sym(DType::Float32, {U, 5, 6});
  Tensor i = sym(DType::Int64, {U, 2});
  expect_meta(gather(p, sym(DType::Int32, {7}), 1), {U, 7, 6}, DType::Float32);
  expect_meta(gather(p, sym(DType::Int32, {U, 4}), 1, 1), {U, 4, 6}, DType::Float32);
  expect_meta(gather_nd(p, i), {U, 6}, DType::Float32);
  expect_meta(scatter_nd(i, sym(DType::Float32, {U, 6}), {4, 5, 6}), {4, 5, 6}, DType::Float32);
  expect_meta(where(sym(DType::Bool, {U, 1}), sym(DType::Float64, {3}), 0.0), {U, 3}, DType::Float64);
  expect_meta(where(sym(DType::Bool, {U, 4})), {U, 2}, DType::Int64);
  expect_meta(one_hot(sym(DType::Int32, {U}), 10), {U, 10}, DType::Float32);
  expect_meta(one_hot(sym(DType::Int64, {U, 2}), 3, 1, 0, 0, DType::Int32), {3, U, 2}, DType::Int32);
  EXPECT_ERROR(gather_nd(p, sym(DType::Int64, {2, U})), InvalidArgumentError, "gather_nd", "known size");
}

TEST_F(ArrayInference, Sorting) {
  Tensor x = sym(DType::Float32, {U, 8});
  TopKResult r = top_k(x, 3);
  expect_meta(r.values, {U, 3}, DType::Float32);
  expect_meta(r.indices, {U, 3}, DType::Int32);
  expect_meta(top_k(sym(DType::Int32, {U}), 2).values, {2}, DType::Int32);
  expect_meta(sort(x, 0), {U, 8}, DType::Float32);
  expect_meta(argsort(x), {U, 8}, DType::Int32);
  EXPECT_ERROR(top_k(x, 9), InvalidArgumentError, "top_k");
}

TEST_F(ArrayInference, BuildsOneNodePerPrimitive) {
  Tensor x = sym(DType::Float32, {2, 3});
  int before = builder.ops_built();
  (void)transpose(x);
  (void)concat({x, x}, 0);
  (void)split(x, 3, 1);
  EXPECT_EQ(builder.ops_built(), before + 3);
}

}  // namespace
}  // namespace ef
