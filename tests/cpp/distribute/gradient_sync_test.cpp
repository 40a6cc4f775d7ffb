// GradientSync (Note [gradient buckets]): what gradient() returns for synchronized
// variables, in a group of one and under mpirun; buckets of mixed dtypes, gradients
// only some ranks have, sums, recorded and traced backward passes, ranks that disagree,
// and L-BFGS trained on shards.
#include <eagerflow/distribute/gradient_sync.h>

#include "eagerflow/graph/function.h"
#include "test_util.h"

namespace ef {
namespace {

namespace dist = ef::distribute;
using testing::expect_values;

std::vector<double> values_of(const Tensor& t) { return cast(t, DType::Float64).to_vector<double>(); }

// sum over ranks r of f(r), elementwise, for the tensors each rank computes as f(rank).
template <class F>
std::vector<double> summed_over_ranks(F f) {
  std::vector<double> total;
  for (int r = 0; r < dist::size(); ++r) {
    const std::vector<double> v = values_of(f(r));
    if (total.empty()) total.assign(v.size(), 0.0);
    for (size_t k = 0; k < v.size(); ++k) total[k] += v[k];
  }
  return total;
}

TEST(GradientSync, AveragesMixedDtypesAndGradientsOnlySomeRanksHave) {
  dist::init();
  const int n = dist::size(), me = dist::rank();
  Variable a(constant({1.0, 2.0, 3.0}), "a");                         // float64
  Variable b(constant({1.0f, -1.0f}), "b");                           // float32
  Variable c(constant({0.5f}), "c");                                  // read by rank 0 only
  Variable d(constant({4.0}), "d");                                   // read by no rank
  Variable h(cast(constant({1.0f, 2.0f}), DType::Float16), "h");      // travels as float32
  dist::GradientSync sync({a, b, c, d, h}, {.bucket_cap_mb = 1e-5});  // a bucket per variable
  GradientTape tape;
  const double k = me + 1.0;  // each rank's loss is scaled by its rank + 1
  Tensor loss = k * reduce_sum(square(a.value())) +
                cast(k * reduce_sum(b.value() * b.value()), DType::Float64) +
                cast(reduce_sum(cast(h.value(), DType::Float32)) * static_cast<float>(k), DType::Float64);
  if (me == 0) loss = loss + cast(reduce_sum(c.value()) * 3.0f, DType::Float64);
  const std::vector<Tensor> g = tape.gradient(loss, std::vector<Variable>{a, b, c, d, h});

  const double mean_k = (n + 1) / 2.0;  // the mean of rank + 1
  expect_values(g[0], {2 * mean_k, 4 * mean_k, 6 * mean_k}, 1e-12);
  expect_values(g[1], {2 * mean_k, -2 * mean_k}, 1e-6);
  expect_values(g[2], {3.0 / n}, 1e-6);  // rank 0's gradient, zeros from the others
  EXPECT_FALSE(g[3].defined());          // no rank has one: none, not zeros
  EXPECT_EQ(g[4].dtype(), DType::Float16);
  expect_values(g[4], {mean_k, mean_k}, 1e-3);
  EXPECT_EQ(g[0].dtype(), DType::Float64);
  // Last to first, one dtype each, closed past ~10 bytes: [h, c] float32, [d, a] float64, [b] float32.
  EXPECT_EQ(sync.last_stats().buckets, 3);
}

TEST(GradientSync, SumsForTensorFlowsLossScalingForEveryVariableOfTheThread) {
  dist::init();
  Variable w(constant({1.0, 1.0}), "w"), v(constant({2.0}), "v");
  const auto sync = dist::GradientSync::for_this_thread({.reduction = dist::Reduction::kSum});
  GradientTape tape;
  const Tensor loss = (reduce_sum(w.value()) + reduce_sum(v.value())) * static_cast<double>(dist::rank() + 1);
  const std::vector<Tensor> g = tape.gradient(loss, std::vector<Variable>{w, v});
  expect_values(g[0], summed_over_ranks([](int r) { return constant({r + 1.0, r + 1.0}); }), 1e-12);
  expect_values(g[1], summed_over_ranks([](int r) { return constant({r + 1.0}); }), 1e-12);
}

TEST(GradientSync, RecordedAndTracedPassesAverageThroughOps) {
  dist::init();
  const int me = dist::rank(), n = dist::size();
  Variable w(constant({1.0, 2.0}), "w");
  dist::GradientSync sync({w});
  const double k = me + 1.0, mean_k = (n + 1) / 2.0;
  // Second order: an outer tape records the averaging; d/dw sum(mean_r(k_r) * 3 w^2) = 6 mean_k w.
  {
    GradientTape outer;
    Tensor g;
    {
      GradientTape inner;
      g = inner.gradient(k * reduce_sum(w.value() * w.value() * w.value()), w);
    }
    expect_values(g, {3 * mean_k, 12 * mean_k}, 1e-12);
    // The outer gradient is synchronized as well: the mean over ranks of 6 mean_k w.
    expect_values(outer.gradient(reduce_sum(g), w), {6 * mean_k, 12 * mean_k}, 1e-12);
  }
  // Inside a function the buckets are all_reduce ops of the trace.
  auto step = function([&](Tensor scale) {
    GradientTape tape;
    return tape.gradient(scale * reduce_sum(square(w.value())), w);
  });
  expect_values(step(constant(k)), {2 * mean_k, 4 * mean_k}, 1e-12);
}

// Note [buckets in functions]: in a traced step the first bucket's all-reduce starts
// before the backward pass's last matmul and is awaited after it.
TEST(GradientSync, TracedBucketsStartDuringTheBackwardPassAndAreAwaitedAfterIt) {
  dist::init();
  Variable w1(random::normal({4, 8}, 0, 1, DType::Float64, 31), "w1");
  Variable w2(random::normal({8, 2}, 0, 1, DType::Float64, 32), "w2");
  dist::GradientSync sync({w1, w2}, {.bucket_cap_mb = 1e-6});  // a bucket each
  auto gradients = [&](const Tensor& x) {
    GradientTape tape;
    const Tensor loss = reduce_sum(square(matmul(tanh(matmul(x, w1.value())), w2.value())));
    const std::vector<Tensor> g = tape.gradient(loss, std::vector<Variable>{w1, w2});
    return concat({reshape(g[0], Shape{-1}), reshape(g[1], Shape{-1})}, 0);
  };
  auto step = function(gradients);
  const Tensor x = random::normal({3, 4}, 0, 1, DType::Float64, 33) * static_cast<double>(dist::rank() + 1);
  expect_values(step(x), values_of(gradients(x)), 1e-12);  // traced as eager

  const std::vector<NodeInfo> nodes = step.untyped().get_concrete_function({x}).optimized_graph().nodes();
  auto first = [&](const std::string& op) {
    for (size_t i = 0; i < nodes.size(); ++i)
      if (nodes[i].op == op) return static_cast<int>(i);
    return -1;
  };
  int last_matmul = -1;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].op == "matmul") last_matmul = static_cast<int>(i);
  ASSERT_GE(first("gradient_bucket_start"), 0);
  EXPECT_LT(first("gradient_bucket_start"), last_matmul);
  EXPECT_GT(first("gradient_bucket_wait"), last_matmul);
}

TEST(GradientSync, GradientsFinishedInAnotherOrderOnSomeRanksStillMatch) {
  dist::init();
  Variable a(constant({1.0, 2.0}), "a"), b(constant({3.0, 4.0, 5.0}), "b");
  dist::GradientSync sync({a, b}, {.bucket_cap_mb = 1e-6});  // a bucket each
  GradientTape tape;
  // Rank 0 finishes a's gradient first, the others b's; the buckets are the same.
  const Tensor loss = dist::rank() == 0 ? reduce_sum(a.value() * reduce_sum(b.value()))
                                        : reduce_sum(b.value() * reduce_sum(a.value()));
  const std::vector<Tensor> g = tape.gradient(loss, std::vector<Variable>{a, b});
  expect_values(g[0], {12.0, 12.0}, 1e-12);
  expect_values(g[1], {3.0, 3.0, 3.0}, 1e-12);
}

TEST(GradientSync, RanksThatSynchronizeDifferentVariablesGetAnError) {
  dist::init();
  if (dist::size() == 1) GTEST_SKIP() << "needs two ranks or more";
  Variable w(dist::rank() == 0 ? constant({1.0, 2.0}) : constant({1.0, 2.0, 3.0}), "w");
  dist::GradientSync sync({w});
  GradientTape tape;
  EXPECT_ERROR(tape.gradient(reduce_sum(w.value()), w), InvalidArgumentError,
               "GradientSync: the ranks called collectives that disagree", "gradient bucket 0 float64: 0 [2]",
               "gradient bucket 0 float64: 0 [3]");
}

TEST(GradientSync, BadOptionsAndSharedVariables) {
  dist::init();
  Variable w(constant({1.0}), "w");
  EXPECT_ERROR(dist::GradientSync({w}, {.reduction = dist::Reduction::kMax}), InvalidArgumentError,
               "reduction must be sum or mean, got max");
  EXPECT_ERROR(dist::GradientSync({w}, {.bucket_cap_mb = 0}), InvalidArgumentError,
               "bucket_cap_mb must be positive");
  dist::GradientSync sync({w});
  EXPECT_ERROR(dist::GradientSync({w}), FailedPreconditionError, "variable 'w' has a gradient hook already");
}

// L-BFGS computes its gradients with its own tape: under GradientSync they are averaged,
// and a closure whose loss is the mean over the ranks keeps every rank's decisions (line
// search, stopping) the same. n ranks on shards end where one process on the whole does.
TEST(GradientSync, LbfgsOnShardsMatchesOneProcess) {
  dist::init();
  const int64_t rows = 6, total = rows * dist::size();
  const Tensor x = random::normal({total, 3}, 0, 1, DType::Float64, 21);
  const Tensor y =
      matmul(x, constant({{1.0}, {-2.0}, {0.5}})) + random::normal({total, 1}, 0, 0.1, DType::Float64, 22);
  auto loss_of = [](const Variable& w, const Tensor& xs, const Tensor& ys) {
    return reduce_mean(square(tanh(matmul(xs, w.value())) - ys));
  };
  optim::LBFGSOptions options;
  options.line_search_fn = "strong_wolfe";
  options.max_iter = 2;  // short of the minimum, where any error in the gradients would show
  Variable one(zeros({3, 1}, DType::Float64), "w");
  optim::LBFGS single({one}, options);
  for (int step = 0; step < 3; ++step) single.step([&] { return loss_of(one, x, y); });

  Variable mine(zeros({3, 1}, DType::Float64), "w");
  dist::GradientSync sync({mine});
  optim::LBFGS parallel({mine}, options);
  const Tensor xs = slice(x, {dist::rank() * rows, 0}, {rows, -1}),
               ys = slice(y, {dist::rank() * rows, 0}, {rows, -1});
  for (int step = 0; step < 3; ++step)
    parallel.step([&] { return dist::all_reduce(loss_of(mine, xs, ys), dist::Reduction::kMean); });
  expect_values(mine.value(), values_of(one.value()), 1e-9);
  EXPECT_EQ(parallel.iterations(), single.iterations());
  EXPECT_GT(std::abs(values_of(one.value())[1]), 0.1);  // it trained
}

}  // namespace
}  // namespace ef
