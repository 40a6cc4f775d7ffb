// top_k, sort and argsort.
#include <limits>

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_meta;
using testing::expect_values;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(ArrayTopK, Values) {
  Tensor x = constant({{1.f, 5.f, 3.f, 5.f}, {0.f, -1.f, 2.f, 1.f}});
  TopKResult r = top_k(x, 2);
  expect_meta(r.values, {2, 2}, DType::Float32);
  expect_meta(r.indices, {2, 2}, DType::Int32);
  expect_values(r.values, {5, 5, 2, 1});
  expect_values(r.indices, {1, 3, 2, 3});  // ties: lower index first
  auto [v, i] = top_k(constant({3, 1, 2}));
  expect_values(v, {3});
  expect_values(i, {0});
  expect_values(top_k(constant({1.0, kNaN, 2.0}), 2).values, {kNaN, 2});
  expect_values(top_k(transpose(x), 1).values, {1, 5, 3, 5});
  expect_meta(top_k(x, 0).values, {2, 0}, DType::Float32);
  expect_meta(top_k(zeros({0, 3}), 2).indices, {0, 2}, DType::Int32);
  for (DType t : {DType::Float32, DType::Float64, DType::Int32, DType::Int64}) {
    TopKResult s = top_k(cast(constant({2, 9, 4}), t), 3, false);
    expect_meta(s.values, {3}, t);
    expect_values(s.values, {9, 4, 2});
    expect_values(s.indices, {1, 2, 0});
  }
}

TEST(ArrayTopK, Errors) {
  Tensor x = constant({1.f, 2.f});
  EXPECT_ERROR(top_k(x, 3), InvalidArgumentError, "top_k", "'k' = 3", "[2]");
  EXPECT_ERROR(top_k(x, -1), InvalidArgumentError, "top_k", "non-negative");
  EXPECT_ERROR(top_k(constant(1.f)), InvalidArgumentError, "top_k", "scalar");
  EXPECT_ERROR(top_k(constant({true})), InvalidArgumentError, "top_k", "bool");
}

TEST(ArraySort, Values) {
  Tensor x = constant({{3, 1, 2}, {0, 5, -4}});
  expect_values(sort(x), {1, 2, 3, -4, 0, 5});
  expect_values(sort(x, 0), {0, 1, -4, 3, 5, 2});
  expect_values(sort(x, -1, "DESCENDING"), {3, 2, 1, 5, 0, -4});
  expect_values(sort(constant({2.0, kNaN, -1.0})), {-1, 2, kNaN});
  expect_values(sort(constant({2.0, kNaN, -1.0}), -1, "DESCENDING"), {kNaN, 2, -1});
  expect_values(sort(transpose(x)), {0, 3, 1, 5, -4, 2});
  expect_values(sort(constant({true, false, true})), {0, 1, 1});
  expect_meta(sort(zeros({2, 0})), {2, 0}, DType::Float32);
  for (DType t : kAllDTypes)
    if (!is_complex(t)) expect_meta(sort(cast(x, t)), {2, 3}, t);  // complex numbers have no order
  EXPECT_ERROR(sort(x, 2), InvalidArgumentError, "sort", "axis");
  EXPECT_ERROR(sort(x, -1, "UP"), InvalidArgumentError, "sort", "UP");
  EXPECT_ERROR(sort(constant(1)), InvalidArgumentError, "sort", "scalar");
}

TEST(ArrayArgsort, StableIndices) {
  Tensor x = constant({3, 1, 3, 1, 2});
  Tensor a = argsort(x);
  expect_meta(a, {5}, DType::Int32);
  expect_values(a, {1, 3, 4, 0, 2});
  expect_values(argsort(x, -1, "DESCENDING"), {0, 2, 4, 1, 3});
  expect_values(argsort(constant({{1.f, 0.f}, {0.f, 2.f}}), 0), {1, 0, 0, 1});
  expect_values(argsort(constant({kNaN, 1.0})), {1, 0});
  expect_meta(argsort(zeros({0})), {0}, DType::Int32);
  expect_values(argsort(reverse(constant(std::vector<int64_t>{5, 6, 7}, {3}), 0)), {2, 1, 0});
  EXPECT_ERROR(argsort(x, 0, "descending"), InvalidArgumentError, "argsort", "descending");
}

}  // namespace
}  // namespace ef
