// Note [gradient uses]: tapes keep only the forward values gradient functions read,
// a wrongly declared op fails loudly, and a non-persistent tape frees what it recorded
// during the backward pass.
#include "test_util.h"

namespace ef {
namespace {

using testing::expect_values;

constexpr int64_t kN = 128;
constexpr size_t kMatrixBytes = kN * kN * sizeof(double);

size_t bytes_in_use() { return cpu_allocator_stats().bytes_in_use; }

TEST(GradientUses, TapeKeepsNoMatmulOutputs) {
  release_cached_memory();
  Tensor x = random::normal({kN, kN}, 0, 1, DType::Float64, 1);
  std::vector<Tensor> ws;
  for (int i = 0; i < 4; ++i) ws.push_back(random::normal({kN, kN}, 0, 1, DType::Float64, 10 + i));
  const size_t before = bytes_in_use();
  GradientTape tape;
  for (const Tensor& w : ws) tape.watch(w);
  // Each product is dropped by the program right away: neither matmul's gradient nor
  // reduce_sum's reads it, so the tape must not keep it either (it used to keep all 4).
  Tensor loss = reduce_sum(matmul(x, ws[0]));
  for (size_t i = 1; i < ws.size(); ++i) loss = loss + reduce_sum(matmul(x, ws[i]));
  EXPECT_LT(bytes_in_use() - before, kMatrixBytes);

  // d sum(x w)/dw = xᵀ 1: every row of the gradient is the column sums of x.
  std::vector<Tensor> grads = tape.gradient(loss, ws);
  Tensor expected = matmul(x, ones({kN, kN}, DType::Float64), true, false);
  for (const Tensor& g : grads) expect_values(g, expected.to_vector<double>(), 1e-9);
}

TEST(GradientUses, ReleasedValuesServeRepeatedAndSecondOrderGradients) {
  Tensor x = constant({0.5, -1.0, 2.0});
  GradientTape outer;
  outer.watch(x);
  GradientTape inner(/*persistent=*/true);
  inner.watch(x);
  Tensor y = sigmoid(x);  // both tapes keep y (its gradient reads it) and release x
  Tensor loss = reduce_sum(y);
  Tensor first = inner.gradient(loss, x);
  std::vector<double> d1, d2;
  for (double v : y.to_vector<double>()) {
    d1.push_back(v * (1 - v));
    d2.push_back(v * (1 - v) * (1 - 2 * v));
  }
  expect_values(first, d1, 1e-12);
  expect_values(inner.gradient(loss, x), d1, 1e-12);  // a persistent tape keeps its stand-ins
  expect_values(outer.gradient(reduce_sum(first), x), d2, 1e-12);
}

// square's gradient reads its input; declaring that it reads only its output is wrong.
std::vector<Tensor> square_gradient(const GradCall& call) {
  return {multiply(call.output_grads[0], multiply(call.forward.inputs[0], 2.0))};
}

// Not registered (define_op), so that op listings and the gradient coverage document
// never see it; run_op needs only the definition.
const OpDef& misdeclared_square() {
  static const OpDef op = [] {
    const OpDef& square_op = find_op("square");
    OpDef def;
    def.name = "misdeclared_square";
    def.infer = square_op.infer;
    std::copy(std::begin(square_op.kernels), std::end(square_op.kernels), std::begin(def.kernels));
    def.gradient = square_gradient;
    def.gradient_uses = kGradientReadsOutputs;
    return def;
  }();
  return op;
}

TEST(GradientUses, GradientReadingAReleasedValueFailsLoudly) {
  Tensor x = constant({1.0, 2.0});
  GradientTape tape;
  tape.watch(x);
  Tensor y = run_op(misdeclared_square(), {x}, {}, CallSite::current());
  expect_values(y, {1.0, 4.0});
  EXPECT_ERROR(tape.gradient(reduce_sum(y), x), FailedPreconditionError, "multiply", "input 0",
               "did not keep", "gradient_uses", "Note [gradient uses]");
  // The failed pass released the tape, as a successful one does.
  EXPECT_ERROR(tape.gradient(reduce_sum(y), x), FailedPreconditionError, "already used");
}

TEST(GradientUses, ShapesOfReleasedValuesStillReduceBroadcastGradients) {
  // add reads no values, but the tape sums each gradient down to its input's shape.
  Tensor a = random::normal({3, 1}, 0, 1, DType::Float64, 5);
  Tensor b = random::normal({1, 4}, 0, 1, DType::Float64, 6);
  GradientTape tape;
  tape.watch(a);
  tape.watch(b);
  Tensor loss = reduce_sum(a + b);
  std::vector<Tensor> g = tape.gradient(loss, std::vector<Tensor>{a, b});
  expect_values(g[0], {4, 4, 4});
  expect_values(g[1], {3, 3, 3, 3});
}

TEST(GradientUses, NonPersistentTapeFreesEntriesDuringTheBackwardPass) {
  release_cached_memory();
  // The first op's gradient runs last; when it does, a non-persistent tape has freed
  // every later op's saved output (exp keeps its output) and the gradients flowing
  // through them.
  size_t during_backward = 0;
  UnaryFunction probe = custom_gradient([&](const Tensor& x) {
    return WithGradient{identity(x), [&](const Tensor& dy) {
                          during_backward = bytes_in_use();
                          return dy;
                        }};
  });
  Tensor x = random::normal({kN, kN}, 0, 0.01, DType::Float64, 7);
  const size_t before = bytes_in_use();
  GradientTape tape;
  tape.watch(x);
  Tensor y = probe(x);
  constexpr int kSteps = 8;
  for (int i = 0; i < kSteps; ++i) y = exp(y) * 0.5;
  Tensor loss = reduce_sum(y);
  y = Tensor();
  const size_t after_forward = bytes_in_use() - before;
  EXPECT_GE(after_forward, kSteps * kMatrixBytes);  // exp's outputs, kept by the tape
  Tensor g = tape.gradient(loss, x);
  EXPECT_EQ(g.shape(), x.shape());
  // Left then: the probe's own entry and a few gradients, not the kSteps saved outputs.
  EXPECT_LT(during_backward - before, 4 * kMatrixBytes);
}

// Note [fused gradient expressions]: square's gradient g * (x * 2) on a large tensor is
// one pass with one output, and equal bit for bit to the ops one by one.
TEST(GradientUses, LargeSquareGradientAllocatesOnlyItsResult) {
  for (int64_t n : {int64_t{10}, int64_t{1} << 16}) {
    Tensor x = random::normal({n}, 0, 1, DType::Float32, 3);
    GradientTape tape;
    tape.watch(x);
    Tensor loss = reduce_mean(square(x));
    reset_peak_bytes_in_use();
    const size_t before = bytes_in_use();
    Tensor g = tape.gradient(loss, x);
    const size_t grown = cpu_allocator_stats().peak_bytes_in_use - before;
    Tensor want = multiply(broadcast_to(divide(constant(1.f), static_cast<float>(n)), {n}), multiply(x, 2));
    EXPECT_EQ(g.to_vector<float>(), want.to_vector<float>());  // bit for bit
    if (n > 1000) {
      // The peak above what was live before: the gradient itself, not a temporary too.
      EXPECT_LT(grown, size_t(n) * sizeof(float) * 3 / 2);
    }
  }
}

}  // namespace
}  // namespace ef
