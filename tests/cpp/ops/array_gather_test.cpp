// gather, gather_nd, scatter_nd, tensor_scatter_nd_add, where (both forms) and one_hot.
#include "test_util.h"

namespace ef {
namespace {

using testing::expect_meta;
using testing::expect_values;
using testing::iota;

TEST(ArrayGather, Axis0AndAxis1) {
  Tensor p = iota({3, 4});
  Tensor g = gather(p, constant({2, 0, 2}));
  expect_meta(g, {3, 4}, DType::Float32);
  expect_values(g, {8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11});
  Tensor g1 = gather(p, constant(std::vector<int64_t>{3, 1}, {1, 2}), 1);
  expect_meta(g1, {3, 1, 2}, DType::Float32);
  expect_values(g1, {3, 1, 7, 5, 11, 9});
  Tensor scalar_index = gather(p, constant(1), -1);
  expect_meta(scalar_index, {3}, DType::Float32);
  expect_values(scalar_index, {1, 5, 9});
  expect_values(gather(transpose(p), constant({1})), {1, 5, 9});  // non-contiguous params
  expect_values(gather(p, transpose(constant({{0, 1}, {2, 0}})), 1), {0, 2, 1, 0, 4, 6, 5, 4, 8, 10, 9, 8});
  for (DType t : kAllDTypes) {
    Tensor r = gather(cast(iota({3}), t), constant({2, 1}));
    expect_meta(r, {2}, t);
    expect_values(real(r), {t == DType::Bool ? 1.0 : 2.0, 1});  // real: r itself, or a complex r's real part
  }
}

TEST(ArrayGather, BatchDimsAndEmpty) {
  Tensor p = iota({2, 3});
  Tensor idx = constant({{2, 0}, {1, 1}});
  Tensor g = gather(p, idx, 1, 1);
  expect_meta(g, {2, 2}, DType::Float32);
  expect_values(g, {2, 0, 4, 4});
  expect_values(gather(p, idx, -1, -1), {2, 0, 4, 4});
  expect_meta(gather(p, zeros({0}, DType::Int32)), {0, 3}, DType::Float32);
  expect_meta(gather(zeros({0, 3}), zeros({0}, DType::Int64)), {0, 3}, DType::Float32);
  expect_meta(gather(zeros({2, 0}), constant({1, 1, 0})), {3, 0}, DType::Float32);
}

TEST(ArrayGather, LargeParallel) {
  Tensor p = iota({1000, 64}, DType::Int64);
  std::vector<int64_t> idx(5000);
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int64_t>((i * 7919) % 1000);
  Tensor g = gather(p, constant(idx, {5000}));
  expect_meta(g, {5000, 64}, DType::Int64);
  std::vector<int64_t> v = g.to_vector<int64_t>();
  for (size_t i = 0; i < idx.size(); i += 37)
    for (size_t j = 0; j < 64; j += 13) EXPECT_EQ(v[i * 64 + j], idx[i] * 64 + static_cast<int64_t>(j));
  Tensor col = gather(p, constant(idx, {5000}), 0);
  Tensor flat = gather(reshape(p, {-1}), constant(idx, {5000}));
  std::vector<int64_t> f = flat.to_vector<int64_t>();
  for (size_t i = 0; i < idx.size(); i += 11) EXPECT_EQ(f[i], idx[i]);
  expect_meta(col, {5000, 64}, DType::Int64);
}

TEST(ArrayGather, Errors) {
  Tensor p = iota({3, 4});
  EXPECT_ERROR(gather(p, constant({0, 3})), InvalidArgumentError, "gather", "indices[1] = 3", "[0, 3)");
  EXPECT_ERROR(gather(p, constant({{0}, {-1}}), 1), InvalidArgumentError, "gather", "indices[1, 0] = -1", "[0, 4)");
  EXPECT_ERROR(gather(zeros({0, 2}), constant({0})), InvalidArgumentError, "gather", "[0, 0)");
  EXPECT_ERROR(gather(p, constant({1.f})), InvalidArgumentError, "gather", "indices", "float32");
  EXPECT_ERROR(gather(p, constant({1}), 2), InvalidArgumentError, "gather", "axis");
  EXPECT_ERROR(gather(constant(1), constant({0})), InvalidArgumentError, "gather", "scalar");
  EXPECT_ERROR(gather(p, constant({{0}}), 0, 1), InvalidArgumentError, "gather", "batch_dims");
  EXPECT_ERROR(gather(p, constant({{0}, {1}}), 1, 1), InvalidArgumentError, "gather", "batch", "[3, 4]", "[2, 1]");
}

TEST(ArrayGatherNd, Values) {
  Tensor p = iota({2, 3});
  expect_values(gather_nd(p, constant({{1, 2}, {0, 1}})), {5, 1});
  Tensor rows = gather_nd(p, constant({{1}, {0}}));
  expect_meta(rows, {2, 3}, DType::Float32);
  expect_values(rows, {3, 4, 5, 0, 1, 2});
  Tensor nested = gather_nd(iota({2, 2, 2}, DType::Int64), constant(std::vector<int64_t>{1, 0, 0, 1}, {2, 1, 2}));
  expect_meta(nested, {2, 1, 2}, DType::Int64);
  expect_values(nested, {4, 5, 2, 3});
  // batch_dims = 1: indices[b] index params[b].
  Tensor b = gather_nd(p, constant({{2}, {0}}), 1);
  expect_meta(b, {2}, DType::Float32);
  expect_values(b, {2, 3});
  expect_values(gather_nd(transpose(p), constant({{2, 1}})), {5});
  expect_meta(gather_nd(p, zeros({0, 2}, DType::Int32)), {0}, DType::Float32);
  expect_meta(gather_nd(constant({true, false}), constant({{1}})), {1}, DType::Bool);
}

TEST(ArrayGatherNd, Errors) {
  Tensor p = iota({2, 3});
  EXPECT_ERROR(gather_nd(p, constant({{1, 3}})), InvalidArgumentError, "gather_nd", "indices[0, 1] = 3", "[0, 3)");
  EXPECT_ERROR(gather_nd(p, constant({{0, 0, 0}})), InvalidArgumentError, "gather_nd", "too long");
  EXPECT_ERROR(gather_nd(p, constant(0)), InvalidArgumentError, "gather_nd", "scalar");
  EXPECT_ERROR(gather_nd(p, constant({{0}}), 1), InvalidArgumentError, "gather_nd", "batch");
}

TEST(ArrayScatterNd, Values) {
  Tensor s = scatter_nd(constant({{4}, {3}, {1}, {7}}), constant({9.f, 10.f, 11.f, 12.f}), {8});
  expect_meta(s, {8}, DType::Float32);
  expect_values(s, {0, 11, 0, 10, 9, 0, 0, 12});
  // Duplicates add up.
  expect_values(scatter_nd(constant({{1}, {1}}), constant({2, 5}), {3}), {0, 7, 0});
  Tensor rows = scatter_nd(constant({{0}, {2}}), constant({{1.0, 2.0}, {3.0, 4.0}}), {3, 2});
  expect_values(rows, {1, 2, 0, 0, 3, 4});
  expect_values(scatter_nd(constant({{1, 0}}), constant(std::vector<int64_t>{6}, {1}), {2, 2}), {0, 0, 6, 0});
  expect_values(scatter_nd(constant({{0}, {0}}), constant({true, true}), {2}), {1, 0});
  expect_values(scatter_nd(zeros({0, 1}, DType::Int32), zeros({0}), {3}), {0, 0, 0});
  expect_values(scatter_nd(constant({{1}}), transpose(constant({{1.f}, {2.f}})), {2, 2}), {0, 0, 1, 2});
  EXPECT_ERROR(scatter_nd(constant({{3}}), constant({1.f}), {3}), InvalidArgumentError, "scatter_nd", "= 3");
  EXPECT_ERROR(scatter_nd(constant({{0}}), constant({1.f, 2.f}), {3}), InvalidArgumentError, "scatter_nd",
               "updates", "[2]", "[1]");
  EXPECT_ERROR(scatter_nd(constant({{0, 0}}), constant({1.f}), {3}), InvalidArgumentError, "scatter_nd", "too long");
  EXPECT_ERROR(scatter_nd(constant({{0}}), constant({1.f}), {-3}), InvalidArgumentError, "scatter_nd", "negative");
}

TEST(ArrayTensorScatterNdAdd, Values) {
  Tensor base = constant({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}});
  Tensor s = tensor_scatter_nd_add(base, constant({{2}, {0}, {2}}), constant({{1.0, 1.0}, {10.0, 20.0}, {1.0, 1.0}}));
  expect_meta(s, {3, 2}, DType::Float64);
  expect_values(s, {11, 22, 3, 4, 7, 8});
  expect_values(base, {1, 2, 3, 4, 5, 6});  // the input is not changed
  expect_values(tensor_scatter_nd_add(transpose(base), constant({{1, 2}}), constant({7.0})), {1, 3, 5, 2, 4, 13});
  expect_values(tensor_scatter_nd_add(constant({1, 2}), zeros({0, 1}, DType::Int32), zeros({0}, DType::Int32)),
                {1, 2});
  expect_values(tensor_scatter_nd_add(constant({false, true}), constant({{0}}), constant({true})), {1, 1});
  EXPECT_ERROR(tensor_scatter_nd_add(base, constant({{3}}), constant({{1.0, 1.0}})), InvalidArgumentError,
               "tensor_scatter_nd_add", "= 3", "[0, 3)");
  EXPECT_ERROR(tensor_scatter_nd_add(base, constant({{0}}), constant({1.0})), InvalidArgumentError,
               "tensor_scatter_nd_add", "updates", "[1]", "[1, 2]");
  EXPECT_ERROR(tensor_scatter_nd_add(base, constant({{0}}), constant({{1.f, 1.f}})), InvalidArgumentError,
               "tensor_scatter_nd_add", "float32", "float64");
  EXPECT_ERROR(tensor_scatter_nd_add(base, constant({{0.5}}), constant({{1.0, 1.0}})), InvalidArgumentError,
               "tensor_scatter_nd_add", "indices");
}

TEST(ArrayWhere, Select) {
  Tensor c = constant({true, false, true});
  expect_values(where(c, constant({1, 2, 3}), constant({10, 20, 30})), {1, 20, 3});
  // Three-way broadcasting: [2, 1] condition, [3] x, scalar y.
  Tensor c2 = constant({{true}, {false}});
  Tensor r = where(c2, constant({1.0, 2.0, 3.0}), 0.5);
  expect_meta(r, {2, 3}, DType::Float64);
  expect_values(r, {1, 2, 3, 0.5, 0.5, 0.5});
  expect_values(where(transpose(constant({{true, false}, {false, true}})), iota({2, 2}), -1.f), {0, -1, -1, 3});
  expect_meta(where(zeros({0}, DType::Bool), 1, 2), {0}, DType::Int32);
  for (DType t : kAllDTypes) {
    Tensor w = where(constant(true), cast(constant(1), t), cast(constant(0), t));
    expect_meta(w, {}, t);
    expect_values(real(w), {1});
  }
  Tensor big_c = greater(iota({100, 1000}), 50000.f);
  Tensor big = where(big_c, iota({100, 1000}), 0.f);
  EXPECT_EQ(big[49][999].item<float>(), 0.f);
  EXPECT_EQ(big[99][999].item<float>(), 99999.f);
  EXPECT_ERROR(where(constant({1, 0}), 1, 2), InvalidArgumentError, "select", "condition", "int32");
  EXPECT_ERROR(where(c, constant({1, 2}), 0), InvalidArgumentError, "select", "[3]", "[2]");
  EXPECT_ERROR(where(c, constant({1.f}), constant({1.0})), InvalidArgumentError, "select", "float64", "float32");
  EXPECT_ERROR(where(c, constant({1}), 0.5), InvalidArgumentError, "where", "0.5");
}

TEST(ArrayWhere, Coordinates) {
  Tensor w = where(constant({{true, false}, {false, true}}));
  expect_meta(w, {2, 2}, DType::Int64);
  expect_values(w, {0, 0, 1, 1});
  expect_values(where(constant({0.f, 3.f, 0.f, -1.f})), {1, 3});
  expect_values(where(transpose(constant({{1, 0}, {2, 0}}))), {0, 0, 0, 1});
  expect_meta(where(constant({false, false})), {0, 1}, DType::Int64);
  expect_meta(where(zeros({0, 3}, DType::Bool)), {0, 2}, DType::Int64);
  expect_meta(where(constant(true)), {1, 0}, DType::Int64);
  expect_meta(where(constant(0)), {0, 0}, DType::Int64);
}

TEST(ArrayOneHot, Values) {
  Tensor h = one_hot(constant({0, 2, -1, 3}), 3);
  expect_meta(h, {4, 3}, DType::Float32);
  expect_values(h, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0});
  Tensor h0 = one_hot(constant(std::vector<int64_t>{1, 0}, {2}), 2, 5, -5, 0, DType::Int32);
  expect_meta(h0, {2, 2}, DType::Int32);
  expect_values(h0, {-5, 5, 5, -5});
  Tensor h3 = one_hot(constant({{0, 1}, {1, 0}}), 2, 1, 0, 1, DType::Float64);
  expect_meta(h3, {2, 2, 2}, DType::Float64);
  expect_values(h3, {1, 0, 0, 1, 0, 1, 1, 0});
  expect_values(one_hot(constant(1), 3, true, false, -1, DType::Bool), {0, 1, 0});
  expect_meta(one_hot(zeros({0}, DType::Int32), 4), {0, 4}, DType::Float32);
  expect_meta(one_hot(constant({1}), 0), {1, 0}, DType::Float32);
  expect_values(one_hot(transpose(constant({{0}, {1}})), 2), {1, 0, 0, 1});
  EXPECT_ERROR(one_hot(constant({1.f}), 2), InvalidArgumentError, "one_hot", "indices", "float32");
  EXPECT_ERROR(one_hot(constant({1}), -1), InvalidArgumentError, "one_hot", "depth");
  EXPECT_ERROR(one_hot(constant({1}), 2, 1, 0, 2), InvalidArgumentError, "one_hot", "axis", "[1]");
  EXPECT_ERROR(one_hot(constant({1}), 2, 1.5, 0, -1, DType::Int32), InvalidArgumentError, "one_hot", "1.5");
}

}  // namespace
}  // namespace ef
