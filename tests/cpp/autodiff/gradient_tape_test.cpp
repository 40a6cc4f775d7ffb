// GradientTape: recording rules, persistence, unconnected sources, broadcasting,
// higher order by nesting, stop_recording / stop_gradient, and memory release.
#include "test_util.h"

namespace ef {
namespace {

using testing::expect_values;

TEST(GradientTape, GradientOfWTimesW) {
  Tensor w = constant({{1.f}});
  GradientTape tape;
  tape.watch(w);
  Tensor loss = w * w;
  Tensor grad = tape.gradient(loss, w);
  EXPECT_EQ(grad.to_string(), "Tensor([[2.]], shape=(1, 1), dtype=float32)");
}

TEST(GradientTape, NonScalarTargetsAreSummedAndSeedsWeightThem) {
  Tensor x = constant({1.0, 2.0, 3.0});
  GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  Tensor y = x * x;
  expect_values(tape.gradient(y, x), {2, 4, 6});
  expect_values(tape.gradient(y, x, constant({1.0, 0.0, -1.0})), {2, 0, -6});
  EXPECT_ERROR(tape.gradient(y, x, constant({1.0})), InvalidArgumentError, "output_gradient", "[1]", "[3]");
}

TEST(GradientTape, UsedTwiceWithoutPersistenceIsAnError) {
  Tensor x = constant(2.0);
  GradientTape tape;
  tape.watch(x);
  Tensor y = x * x;
  tape.gradient(y, x);
  EXPECT_ERROR(tape.gradient(y, x), FailedPreconditionError, "persistent");
}

TEST(GradientTape, BroadcastInputsGetGradientsOfTheirOwnShape) {
  Tensor a = constant({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});  // (2, 3)
  Tensor b = constant({10.0, 20.0, 30.0});                  // (3,)
  Tensor c = constant({{2.0}, {3.0}});                      // (2, 1)
  GradientTape tape;
  for (const Tensor& t : {a, b, c}) tape.watch(t);
  Tensor y = (a + b) * c;
  std::vector<Tensor> g = tape.gradient(y, std::vector<Tensor>{a, b, c});
  expect_values(g[0], {2, 2, 2, 3, 3, 3});
  expect_values(g[1], {5, 5, 5});
  testing::expect_meta(g[2], Shape{2, 1}, DType::Float64);
  expect_values(g[2], {11 + 22 + 33, 14 + 25 + 36});
}

TEST(GradientTape, UnconnectedSourcesAreUndefinedOrZero) {
  Tensor x = constant(1.0), z = constant({1.0, 2.0});
  GradientTape tape(true);
  tape.watch(x);
  tape.watch(z);
  Tensor y = x * 3;
  EXPECT_FALSE(tape.gradient(y, z).defined());
  expect_values(tape.gradient(y, z, Tensor(), UnconnectedGradients::Zero), {0, 0});
  // A tensor never watched is unconnected too.
  EXPECT_FALSE(tape.gradient(y, constant(5.0)).defined());
}

TEST(GradientTape, IntegerSourcesAreRejected) {
  GradientTape tape;
  EXPECT_ERROR(tape.watch(constant({1, 2})), InvalidArgumentError, "watch", "int32");
  Tensor x = constant(1.0);
  tape.watch(x);
  EXPECT_ERROR(tape.gradient(x * 2, constant({1})), InvalidArgumentError, "int32", "float");
}

TEST(GradientTape, GradientsStopAtNonDifferentiableOpsAndStopGradient) {
  Tensor x = constant({1.0, -2.0});
  GradientTape tape(true);
  tape.watch(x);
  Tensor y = x * stop_gradient(x) + floor(x) * x;  // floor: piecewise constant
  expect_values(tape.gradient(y, x), {1 + 1, -2 - 2});
}

TEST(GradientTape, StopRecordingPausesTheTape) {
  Tensor x = constant(3.0);
  GradientTape tape(true);
  tape.watch(x);
  Tensor y = x * x;
  Tensor z;
  {
    auto pause = tape.stop_recording();
    z = y * x;  // not recorded
  }
  EXPECT_FALSE(tape.gradient(z, x).defined());
  EXPECT_EQ(tape.gradient(y, x).item<double>(), 6.0);
}

TEST(GradientTape, ResetForgetsEverything) {
  Tensor x = constant(3.0);
  GradientTape tape(true);
  tape.watch(x);
  Tensor y = x * x;
  tape.reset();
  EXPECT_FALSE(tape.gradient(y, x).defined());
}

TEST(GradientTape, NestedTapesGiveHigherOrderDerivatives) {
  // d/dx x^3 = 3x^2 = 12 at 2; d2/dx2 = 6x = 12; d3/dx3 = 6.
  Tensor x = constant(2.0);
  GradientTape t3;
  t3.watch(x);
  GradientTape t2;
  t2.watch(x);
  GradientTape t1;
  t1.watch(x);
  Tensor y = x * x * x;
  Tensor dy = t1.gradient(y, x);
  Tensor d2y = t2.gradient(dy, x);
  Tensor d3y = t3.gradient(d2y, x);
  EXPECT_DOUBLE_EQ(dy.item<double>(), 12);
  EXPECT_DOUBLE_EQ(d2y.item<double>(), 12);
  EXPECT_DOUBLE_EQ(d3y.item<double>(), 6);
}

TEST(GradientTape, FactorialByRepeatedDifferentiation) {
  // The seed's "expensive way to compute factorial": the n-th derivative of x^n at 1.
  double factorial = 1;
  for (int n = 1; n <= 6; ++n) {
    factorial *= n;
    Tensor x = constant(1.0);
    std::vector<std::unique_ptr<GradientTape>> tapes;
    for (int k = 0; k < n; ++k) {
      tapes.push_back(std::make_unique<GradientTape>());
      tapes.back()->watch(x);
    }
    Tensor d = pow(x, static_cast<double>(n));
    for (int k = n - 1; k >= 0; --k) d = tapes[k]->gradient(d, x);
    EXPECT_DOUBLE_EQ(d.item<double>(), factorial) << "n = " << n;
  }
}

TEST(GradientTape, LoopWithTensorValuedBreak) {
  // Gradients through host control flow: y = x^(2^k) until it exceeds 100.
  Tensor x = constant(1.5);
  GradientTape tape;
  tape.watch(x);
  Tensor y = x;
  int squarings = 0;
  while (!(y > 100)) {
    y = y * y;
    ++squarings;
  }
  double p = std::pow(2.0, squarings);
  EXPECT_NEAR(tape.gradient(y, x).item<double>(), p * std::pow(1.5, p - 1), 1e-9 * std::pow(1.5, p));
}

TEST(GradientTape, LineSearchStepDynamicModel) {
  // The recitation's line_search_step on f(x) = sum(x^2).
  auto fn = [](const Tensor& x) { return reduce_sum(x * x); };
  Tensor init_x = constant({3.0, -4.0});
  GradientTape tape;
  tape.watch(init_x);
  Tensor value = fn(init_x);
  Tensor grad = tape.gradient(value, init_x);
  Tensor init_value = value - 1;
  double rate = 1.0;
  Tensor x;
  while (value > init_value) {
    x = init_x - rate * grad;
    value = fn(x);
    rate /= 2.0;
  }
  expect_values(x, {0, 0});  // rate 0.5 lands exactly on the minimum
  EXPECT_DOUBLE_EQ(value.item<double>(), 0);
}

TEST(GradientTape, NonPersistentTapeReleasesWhatItHeld) {
  release_cached_memory();
  const size_t before = cpu_allocator_stats().bytes_in_use;
  {
    Tensor x = random::normal({256, 256}, 0, 1, DType::Float64, 3);
    GradientTape tape;
    tape.watch(x);
    Tensor y = reduce_sum(exp(x) * x);
    Tensor g = tape.gradient(y, x);
    EXPECT_EQ(g.shape(), x.shape());
  }
  EXPECT_EQ(cpu_allocator_stats().bytes_in_use, before);
}

TEST(GradientTape, UsedNonPersistentTapeRecordsNothingMore) {
  // The training-step pattern: the tape is still in scope while the update runs.
  Variable w(random::normal({256, 256}, 0, 1, DType::Float64, 4));
  GradientTape tape;
  Tensor loss = reduce_sum(w * w);
  Tensor g = tape.gradient(loss, w);
  release_cached_memory();
  const size_t before = cpu_allocator_stats().bytes_in_use;
  { Tensor update = w * 0.5 + g; }  // reads w: a recording tape would keep `update` alive
  EXPECT_EQ(cpu_allocator_stats().bytes_in_use, before);
  EXPECT_ERROR(tape.gradient(loss, w), FailedPreconditionError, "already used");
}

TEST(GradientTape, RecordingCanBeNestedAcrossThreads) {
  // Each thread has its own tapes (Note [thread-local context]).
  Tensor x = constant(2.0);
  GradientTape tape;
  tape.watch(x);
  std::thread other([&] {
    Tensor local = constant(5.0);
    Tensor unrelated = x * local;  // x is watched by a tape of another thread: not recorded here
    (void)unrelated;
    EXPECT_EQ(Context::current().recorder, nullptr);
  });
  other.join();
  Tensor y = x * x;
  EXPECT_EQ(tape.gradient(y, x).item<double>(), 4.0);
}

TEST(GradientTape, StopAndResumeLeaveAndRejoinRecording) {
  Tensor x = constant(2.0);
  GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  Tensor y = x * x;
  tape.stop();
  Tensor unrecorded = y * 10;
  EXPECT_FALSE(tape.gradient(unrecorded, x).defined());
  tape.resume();
  tape.resume();  // idempotent
  Tensor z = y * 10;
  EXPECT_EQ(tape.gradient(z, x).item<double>(), 40.0);
  EXPECT_EQ(tape.gradient(y, x).item<double>(), 4.0);  // gradient works after stop() too
}

TEST(GradientTape, TensorsAndVariablesInOnePass) {
  Tensor x = constant(3.0);
  Variable w(constant(2.0), "w");
  GradientTape tape;  // non-persistent: one pass must serve both kinds
  tape.watch(x);
  Tensor y = x * w * w;
  std::vector<Tensor> grads = tape.gradient(y, std::vector<GradientTape::Source>{x, w});
  EXPECT_EQ(grads[0].item<double>(), 4.0);
  EXPECT_EQ(grads[1].item<double>(), 12.0);
}

TEST(GradientTape, SeveralTargetsGiveTheGradientsOfTheirSum) {
  Tensor x = constant(3.0);
  Variable w(constant(2.0), "w");
  GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  std::vector<Tensor> targets = {x * w, square(x), cast(x, DType::Int32)};  // the int target adds nothing
  std::vector<GradientTape::Source> sources = {x, w};
  std::vector<Tensor> grads = tape.gradient(targets, sources);
  EXPECT_EQ(grads[0].item<double>(), 2.0 + 6.0);
  EXPECT_EQ(grads[1].item<double>(), 3.0);
  // Seeds weight each target.
  std::vector<Tensor> seeds = {constant(10.0), constant(1.0), Tensor()};
  grads = tape.gradient(targets, sources, seeds);
  EXPECT_EQ(grads[0].item<double>(), 20.0 + 6.0);
  EXPECT_ERROR(tape.gradient(targets, sources, std::vector<Tensor>{constant(1.0)}), InvalidArgumentError,
               "1 output gradients for 3 targets");
}

}  // namespace
}  // namespace ef
