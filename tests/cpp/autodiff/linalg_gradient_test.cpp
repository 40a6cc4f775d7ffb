// Gradients of matmul (every transpose flag, batched, broadcast batch dimensions) and
// of the linalg composites (tensordot, norm).
#include <eagerflow/autodiff/gradient_check.h>

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_values;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;
using testing::expect_gradients;
using testing::rand64;

// Fixed distinct weights 1, 1.1, 1.2, ... shaped like y: deterministic, unlike a seeded
// random op, which continues its stream on every call (Note [random seeds]).
Tensor weights_like(const Tensor& y) {
  return reshape(add(multiply(range(0, y.shape().num_elements(), 1, y.dtype()), 0.1), 1), y.shape());
}

// sum(w * y^2) for fixed weights w (squared so that second derivatives are not zero).
Tensor weighted_square(const Tensor& y) {
  return reduce_sum(multiply(square(y), weights_like(y)));
}

TEST(LinalgGradient, MatMulTransposeFlags) {
  // a is [2, 3] (or [3, 2] transposed), b is [3, 4] (or [4, 3] transposed).
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      Tensor a = rand64(ta ? Shape{3, 2} : Shape{2, 3}, 1);
      Tensor b = rand64(tb ? Shape{4, 3} : Shape{3, 4}, 2);
      expect_gradients(
          [=](const std::vector<Tensor>& in) { return weighted_square(matmul(in[0], in[1], ta, tb)); }, {a, b});
    }
}

TEST(LinalgGradient, MatMulBatched) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      // Batch dims [2, 1] and [3] broadcast to [2, 3].
      Tensor a = rand64(ta ? Shape{2, 1, 3, 2} : Shape{2, 1, 2, 3}, 4);
      Tensor b = rand64(tb ? Shape{3, 4, 3} : Shape{3, 3, 4}, 5);
      expect_gradients(
          [=](const std::vector<Tensor>& in) { return weighted_square(matmul(in[0], in[1], ta, tb)); }, {a, b});
    }
  // A plain matrix times a batch, and a batch times a matrix.
  expect_gradients([](const std::vector<Tensor>& in) { return weighted_square(matmul(in[0], in[1])); },
                   {rand64({2, 3}, 8), rand64({4, 3, 2}, 9)});
  expect_gradients([](const std::vector<Tensor>& in) { return weighted_square(matmul(in[0], in[1])); },
                   {rand64({4, 2, 3}, 10), rand64({3, 2}, 11)});
}

TEST(LinalgGradient, MatMulValues) {
  Tensor a = constant(std::vector<double>{1, 2}, Shape{1, 2});
  Tensor b = constant(std::vector<double>{3, 4}, Shape{2, 1});
  GradientTape tape;
  tape.watch(a);
  tape.watch(b);
  Tensor c = matmul(a, b);  // [[11]]
  std::vector<Tensor> sources{a, b};
  std::vector<Tensor> d = tape.gradient(c, sources, constant(std::vector<double>{2}, Shape{1, 1}));
  expect_values(d[0], {6, 8});  // g b^T
  expect_values(d[1], {2, 4});  // a^T g
  EXPECT_EQ(d[0].shape(), a.shape());
  EXPECT_EQ(d[1].shape(), b.shape());
}

TEST(LinalgGradient, MatMulBroadcastBatchIsSummed) {
  // a [2, 2] used against a batch of 3: its gradient sums over the batch.
  Tensor a = eye(2, -1, DType::Float64);
  Tensor b = ones({3, 2, 2}, DType::Float64);
  GradientTape tape;
  tape.watch(a);
  Tensor da = tape.gradient(reduce_sum(matmul(a, b)), a);
  EXPECT_EQ(da.shape(), a.shape());
  expect_values(da, {6, 6, 6, 6});
}

TEST(LinalgGradient, MatMulGradientDtypes) {
  // Float32 stays float32.
  Tensor a = constant(std::vector<float>{1, 2, 3, 4}, Shape{2, 2});
  GradientTape tape;
  tape.watch(a);
  Tensor da = tape.gradient(matmul(a, a, false, true), a);
  EXPECT_EQ(da.dtype(), DType::Float32);
  expect_values(da, {8, 12, 8, 12});  // d sum(a a^T) / da = 2 * column sums of a
  // Tapes do not record integer ops, but the formula itself holds for integers.
  const OpDef& op = find_op("matmul");
  std::vector<Tensor> in{constant(std::vector<int32_t>{1, 2, 3, 4}, Shape{2, 2}),
                         constant(std::vector<int32_t>{5, 6, 7, 8}, Shape{2, 2})};
  Attrs attrs{false, false};
  OpCall call{op, in, attrs};
  std::vector<Tensor> out{matmul(in[0], in[1])}, grads{ones({2, 2}, DType::Int32)};
  std::vector<Tensor> d = op.gradient(GradCall{call, out, grads});
  expect_values(d[0], {11, 15, 11, 15});  // g b^T
  expect_values(d[1], {4, 4, 6, 6});      // a^T g
}

TEST(LinalgGradient, Tensordot) {
  Tensor a = rand64({2, 3, 4}, 12), b = rand64({4, 3, 5}, 13);
  expect_gradients(
      [](const std::vector<Tensor>& in) {
        return weighted_square(tensordot(in[0], in[1], TensordotAxes(std::vector<int64_t>{1, 2}, std::vector<int64_t>{1, 0})));
      },
      {a, b});
  expect_gradients([](const std::vector<Tensor>& in) { return weighted_square(tensordot(in[0], in[1], 1)); },
                   {rand64({2, 3}, 16), rand64({3, 4}, 17)});
}

TEST(LinalgGradient, Norm) {
  Tensor x = rand64({3, 4}, 18, 0.2, 1.0);  // away from 0 (|x| and the norm's sqrt)
  Tensor signs = constant(std::vector<double>{1, -1, 1, -1, -1, 1, 1, -1, 1, 1, -1, -1}, Shape{3, 4});
  x = x * signs;
  expect_gradients([](const std::vector<Tensor>& in) { return linalg::norm(in[0]); }, {x});
  expect_gradients([](const std::vector<Tensor>& in) { return reduce_sum(linalg::norm(in[0], "euclidean", 1)); }, {x});
  expect_gradients([](const std::vector<Tensor>& in) { return reduce_sum(linalg::norm(in[0], 1, 0)); }, {x});
  expect_gradients([](const std::vector<Tensor>& in) { return linalg::norm(in[0], "fro", {0, 1}); }, {x});
  expect_gradients([](const std::vector<Tensor>& in) { return linalg::norm(in[0], 1, {0, 1}); }, {x});
  expect_gradients([](const std::vector<Tensor>& in) { return reduce_sum(linalg::norm(in[0], 3, 1)); }, {x});
}

}  // namespace
}  // namespace ef
