// fused_reduce_sum: bit for bit reduce_sum of the unfused chain, and the kept outputs
// bit for bit fused_elementwise's (sizes around the reduction block, scalar,
// non-contiguous and empty inputs, float32 and float64, 1 and 2 threads), gradients at
// first and second order, and its errors.
#include "test_util.h"
#include "graph/graph_test_util.h"

#include <eagerflow/ops/fused_elementwise.h>
#include <eagerflow/runtime/dispatch.h>

namespace ef {
namespace {

using testing::with_threads;

Tensor values_in(const Shape& shape, DType dtype, int64_t seed) { return random::uniform(shape, -2, 2, dtype, seed); }

// tanh(x * a + b) * x: a chain of four instructions over three inputs.
FusedProgram chain() {
  FusedProgram p;
  p.num_inputs = 3;
  p.outputs = {p.add("multiply", {p.add("tanh", {p.add("add", {p.add("multiply", {0, 1}), 2})}), 0})};
  return p;
}

// The same bits as fused_elementwise for the kept outputs and as reduce_sum over the
// last output.
void expect_same_as_unfused(const FusedProgram& p, const std::vector<Tensor>& inputs, const std::string& what) {
  const std::vector<Tensor> values = fused_elementwise(p, inputs);
  const Tensor want = reduce_sum(values.back());
  for (int threads : {1, 2}) {
    with_threads(threads, [&] {
      const std::vector<Tensor> outputs = fused_reduce_sum(p, inputs);
      ASSERT_EQ(outputs.size(), values.size());
      for (size_t j = 0; j + 1 < values.size(); ++j) testing::expect_identical(outputs[j], values[j]);
      const Tensor& got = outputs.back();
      testing::expect_meta(got, Shape{}, want.dtype());
      const double g = got.item<double>(), w = want.item<double>();
      EXPECT_TRUE(g == w || (std::isnan(g) && std::isnan(w)))
          << what << ", " << threads << " threads: " << g << " against " << w;
    });
  }
}

TEST(FusedReduceSum, SameBitsAsReduceSumOfTheChain) {
  // Around the reduction block (16384 elements) and the fused block (1024 float32).
  for (DType dtype : {DType::Float32, DType::Float64})
    for (int64_t n : {1, 5, 1024, 1025, 16383, 16384, 16385, 153664, 300001}) {
      const std::vector<Tensor> inputs = {values_in({n}, dtype, n), values_in({n}, dtype, n + 1),
                                          values_in({}, dtype, 3)};
      expect_same_as_unfused(chain(), inputs, "n " + std::to_string(n));
    }
}

TEST(FusedReduceSum, ShapesScalarsAndViews) {
  FusedProgram dot;
  dot.num_inputs = 2;
  dot.outputs = {dot.add("multiply", {0, 1})};
  const Tensor a = values_in({300, 70}, DType::Float32, 1), b = values_in({300, 70}, DType::Float32, 2);
  expect_same_as_unfused(dot, {a, b}, "matrix");
  expect_same_as_unfused(dot, {transpose(a, {1, 0}), transpose(b, {1, 0})}, "transposed views");
  expect_same_as_unfused(dot, {a, values_in({}, DType::Float32, 3)}, "scalar operand");
  expect_same_as_unfused(dot, {values_in({}, DType::Float32, 4), values_in({}, DType::Float32, 5)}, "scalars");
  // An empty program output sums to zero.
  const Tensor empty = zeros({0, 3}, DType::Float64);
  testing::expect_values(fused_reduce_sum(dot, {empty, empty})[0], {0.0});
}

TEST(FusedReduceSum, KeptOutputsBesideTheSum) {
  // q' = q - a * y, kept, and sum(s * q'): one step of the L-BFGS two-loop recursion.
  FusedProgram step;
  step.num_inputs = 4;  // q, a, y, s
  const int64_t q2 = step.add("subtract", {0, step.add("multiply", {1, 2})});
  step.outputs = {q2, step.add("multiply", {3, q2})};
  for (int64_t n : {3, 16384, 153664}) {
    const std::vector<Tensor> inputs = {values_in({n}, DType::Float32, 1), values_in({}, DType::Float32, 2),
                                        values_in({n}, DType::Float32, 3), values_in({n}, DType::Float32, 4)};
    expect_same_as_unfused(step, inputs, "two-loop step, n " + std::to_string(n));
  }
  // One value both kept and summed, listed twice.
  FusedProgram twice;
  twice.num_inputs = 1;
  const int64_t e = twice.add("exp", {0});
  twice.outputs = {e, e};
  expect_same_as_unfused(twice, {values_in({5000}, DType::Float64, 5)}, "one value twice");
}

TEST(FusedReduceSum, Gradients) {
  auto f = [](const std::vector<Tensor>& in) { return fused_reduce_sum(chain(), in)[0]; };
  const std::vector<Tensor> args = {testing::rand64({3, 4}, 1), testing::rand64({3, 4}, 2), testing::rand64({}, 3)};
  testing::expect_gradients(f, args);
  // With a kept output: gradients flow through both.
  FusedProgram p = chain();
  p.outputs = {5, 6};  // value 5 is tanh(x * a + b), kept; value 6 is summed
  auto g = [&](const std::vector<Tensor>& in) {
    const std::vector<Tensor> out = fused_reduce_sum(p, in);
    return reduce_sum(square(out[0])) + 2.0 * out[1];
  };
  testing::expect_gradients(g, args);
}

TEST(FusedReduceSum, Errors) {
  const Tensor x = values_in({4}, DType::Float32, 1);
  EXPECT_ERROR(fused_reduce_sum(chain(), {x, x}), InvalidArgumentError, "fused_reduce_sum", "takes 3 inputs, got 2");
  EXPECT_ERROR(fused_reduce_sum(chain(), {x, values_in({5}, DType::Float32, 2), x}), InvalidArgumentError,
               "fused_reduce_sum", "input 1 has shape [5]");
  EXPECT_ERROR(fused_reduce_sum(chain(), {constant({1, 2}), constant({1, 2}), constant(1)}), InvalidArgumentError,
               "int32");
}

}  // namespace
}  // namespace ef
