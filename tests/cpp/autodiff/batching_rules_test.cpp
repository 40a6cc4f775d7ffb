// Batching rules of ops that have no gradient of their own (Note [vectorization checks]):
// check_gradients on differentiable functions that use them, so that vectorized_map of
// each function, and of its gradient, is compared with the loop over the elements.
// Random ops draw for every element; their rules are tested in vectorized_map_test.cpp.
#include "test_util.h"

namespace ef {
namespace {

using testing::expect_gradients;
using testing::rand64;

TEST(BatchingRules, IndexOutputs) {
  expect_gradients(
      [](const std::vector<Tensor>& a) {
        const Tensor& x = a[0];
        return add(multiply(reduce_sum(x, {1}), cast(argmax(x, 1), DType::Float64)),
                   multiply(reduce_max(x, {1}), cast(argmin(x, 1), DType::Float64)));
      },
      {rand64({3, 4}, 1)});
  expect_gradients(
      [](const std::vector<Tensor>& a) {
        return multiply(a[0], one_hot(argmax(a[0], 1), 4, 1.0, 0.0, -1, DType::Float64));
      },
      {rand64({3, 4}, 2)});
  expect_gradients(
      [](const std::vector<Tensor>& a) {
        return multiply(a[0], one_hot(argmin(a[0], 0), 3, 1.0, 0.0, 0, DType::Float64));
      },
      {rand64({3, 4}, 3)});
}

TEST(BatchingRules, BoolOutputs) {
  expect_gradients(
      [](const std::vector<Tensor>& a) {
        const Tensor& x = a[0];
        const Tensor keep =
            logical_or(logical_not(isinf(x)), logical_xor(not_equal(x, 0.5), greater(x, 0.0)));
        const Tensor any = cast(reduce_any(greater(x, 0.3), {1}, true), DType::Float64);
        const Tensor all = cast(reduce_all(less(x, 2.0), {0}, true), DType::Float64);
        return add(where(keep, multiply(x, x), x), multiply(x, add(any, all)));
      },
      {rand64({3, 4}, 4)});
}

TEST(BatchingRules, ShapesRoundingAndStoppedGradients) {
  expect_gradients(
      [](const std::vector<Tensor>& a) {
        const Tensor& x = a[0];
        const Tensor sizes = cast(add(reduce_sum(shape(x)), size(x)), DType::Float64);
        // stop_gradient's value only decides a comparison, so differences see what the tape sees.
        const Tensor in_range = cast(greater(stop_gradient(x), -10.0), DType::Float64);
        return add(multiply(x, sizes), multiply(x, add(round(multiply(x, 3.0)), in_range)));
      },
      {rand64({2, 3}, 5)});
}

TEST(BatchingRules, SearchSortedPositions) {
  // x's rows sorted stand for the sequences; the positions of fixed values in them weight
  // x (finite differences stay away from ties: the points are far from 0.1 and 0.6).
  expect_gradients(
      [](const std::vector<Tensor>& a) {
        const Tensor& x = a[0];
        const Tensor rows = sort(x, -1);
        const Tensor values = multiply(ones_like(reduce_sum(x, {1}, true)), constant({0.1, 0.6}));
        const Tensor left = cast(searchsorted(stop_gradient(rows), values, "left"), DType::Float64);
        return multiply(x, reduce_sum(left, {1}, true));
      },
      {constant({{0.3, -0.8, 0.9, 0.45}, {1.2, 0.35, -0.4, 0.8}, {0.2, 0.7, 0.95, -0.2}})});
}

}  // namespace
}  // namespace ef
