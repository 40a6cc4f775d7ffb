// fused_reduce_sum: bit for bit reduce_sum of the unfused chain (sizes around the
// reduction block, scalar, non-contiguous and empty inputs, float32 and float64, 1 and
// 2 threads), gradients at first and second order, and its errors.
#include "test_util.h"

#include <eagerflow/ops/fused_elementwise.h>
#include <eagerflow/runtime/dispatch.h>

namespace ef {
namespace {

// Runs fn with the thread pool at `n` threads, then restores it.
template <class Fn>
void with_threads(int n, Fn fn) {
  const int before = num_threads();
  set_num_threads(n);
  try {
    fn();
  } catch (...) {
    set_num_threads(before);
    throw;
  }
  set_num_threads(before);
}

Tensor values_in(const Shape& shape, DType dtype, int64_t seed) { return random::uniform(shape, -2, 2, dtype, seed); }

// tanh(x * a + b) * x: a chain of four instructions over three inputs.
FusedProgram chain() {
  FusedProgram p;
  p.num_inputs = 3;
  p.outputs = {p.add("multiply", {p.add("tanh", {p.add("add", {p.add("multiply", {0, 1}), 2})}), 0})};
  return p;
}

// The same bits as reduce_sum over the chain computed op by op.
void expect_same_as_unfused(const FusedProgram& p, const std::vector<Tensor>& inputs, const std::string& what) {
  const Tensor want = reduce_sum(fused_elementwise(p, inputs)[0]);
  for (int threads : {1, 2}) {
    with_threads(threads, [&] {
      const Tensor got = fused_reduce_sum(p, inputs);
      testing::expect_meta(got, Shape{}, want.dtype());
      const double g = got.item<double>(), w = want.item<double>();
      EXPECT_TRUE(g == w || (std::isnan(g) && std::isnan(w)))
          << what << ", " << threads << " threads: " << g << " against " << w;
    });
  }
}

TEST(FusedReduceSum, SameBitsAsReduceSumOfTheChain) {
  // Around the reduction block (16384 elements) and the fused block (4096 float32).
  for (DType dtype : {DType::Float32, DType::Float64})
    for (int64_t n : {1, 5, 4096, 16383, 16384, 16385, 153664, 300001}) {
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
  testing::expect_values(fused_reduce_sum(dot, {empty, empty}), {0.0});
}

TEST(FusedReduceSum, Gradients) {
  auto f = [](const std::vector<Tensor>& in) { return fused_reduce_sum(chain(), in); };
  testing::expect_gradients(f, {testing::rand64({3, 4}, 1), testing::rand64({3, 4}, 2), testing::rand64({}, 3)});
}

TEST(FusedReduceSum, Errors) {
  FusedProgram two;
  two.num_inputs = 1;
  const int64_t e = two.add("exp", {0});
  two.outputs = {e, two.add("negative", {e})};
  const Tensor x = values_in({4}, DType::Float32, 1);
  EXPECT_ERROR(fused_reduce_sum(two, {x}), InvalidArgumentError, "fused_reduce_sum",
               "exactly one output", "got 2");
  EXPECT_ERROR(fused_reduce_sum(chain(), {x, x}), InvalidArgumentError, "fused_reduce_sum", "takes 3 inputs, got 2");
  EXPECT_ERROR(fused_reduce_sum(chain(), {x, values_in({5}, DType::Float32, 2), x}), InvalidArgumentError,
               "fused_reduce_sum", "input 1 has shape [5]");
  EXPECT_ERROR(fused_reduce_sum(chain(), {constant({1, 2}), constant({1, 2}), constant(1)}), InvalidArgumentError,
               "int32");
}

}  // namespace
}  // namespace ef
