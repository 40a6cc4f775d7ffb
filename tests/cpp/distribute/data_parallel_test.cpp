// Data parallelism is exact: n ranks, each with a batch of B rows and gradients averaged
// by all_reduce(mean) or by GradientSync's buckets, end with the weights one process
// gets from the whole n·B batch.
#include <eagerflow/distribute/distribute.h>
#include <eagerflow/distribute/gradient_sync.h>

#include <functional>
#include <memory>
#include <optional>

#include "test_util.h"

namespace ef {
namespace {

namespace dist = ef::distribute;

constexpr int64_t kRowsPerRank = 4;
constexpr int kSteps = 3;

// The initial weights of a two-layer MLP. Every rank draws the same: each makes the
// same calls with the same seeds.
std::vector<Tensor> initial_mlp(DType dtype) {
  return {random::normal({3, 8}, 0, 0.5, dtype, 1), random::normal({8}, 0, 0.1, dtype, 2),
          random::normal({8, 1}, 0, 0.5, dtype, 3), random::normal({1}, 0, 0.1, dtype, 4)};
}

std::vector<Variable> variables_of(const std::vector<Tensor>& values) {
  return std::vector<Variable>(values.begin(), values.end());
}

Tensor mean_squared_error(const std::vector<Variable>& w, const Tensor& x, const Tensor& y) {
  const Tensor hidden = tanh(matmul(x, w[0].value()) + w[1].value());
  return reduce_mean(square(matmul(hidden, w[2].value()) + w[3].value() - y));
}

// How a rank's gradients become the average over the ranks.
enum class Averaging {
  kNone,          // one process with the whole batch
  kAllReduce,     // all_reduce(mean) of each gradient after the backward pass
  kBuckets,       // GradientSync with the default bucket size: one bucket
  kSmallBuckets,  // GradientSync with buckets of ~1 byte: one per variable
};

// Trains `w` for kSteps on rows [first, first + rows) of (x, y), averaging gradients.
void train(std::vector<Variable>& w, optim::Optimizer& optimizer, const Tensor& x, const Tensor& y,
           int64_t first, int64_t rows, Averaging averaging) {
  const Tensor xs = slice(x, {first, 0}, {rows, -1}), ys = slice(y, {first, 0}, {rows, -1});
  std::optional<dist::GradientSync> sync;
  if (averaging == Averaging::kBuckets) sync.emplace(w);
  if (averaging == Averaging::kSmallBuckets)
    sync.emplace(w, dist::GradientSyncOptions{.bucket_cap_mb = 1e-6});
  for (int step = 0; step < kSteps; ++step) {
    GradientTape tape;
    const Tensor loss = mean_squared_error(w, xs, ys);
    std::vector<Tensor> grads = tape.gradient(loss, w);
    if (averaging == Averaging::kAllReduce)
      for (Tensor& g : grads) g = dist::all_reduce(g, dist::Reduction::kMean);
    optimizer.apply_gradients(grads, w);
  }
  if (averaging == Averaging::kSmallBuckets)
    EXPECT_EQ(sync->last_stats().buckets, static_cast<int>(w.size()));
  if (averaging == Averaging::kBuckets) EXPECT_EQ(sync->last_stats().buckets, 1);
}

void expect_data_parallel_matches_one_process(DType dtype,
                                              const std::function<std::unique_ptr<optim::Optimizer>()>& make,
                                              double tolerance) {
  dist::init();
  const int64_t total = kRowsPerRank * dist::size();
  const Tensor x = random::normal({total, 3}, 0, 1, dtype, 10),
               y = random::normal({total, 1}, 0, 1, dtype, 11);

  const std::vector<Tensor> start = initial_mlp(dtype);
  std::vector<Variable> one = variables_of(start);
  train(one, *make(), x, y, 0, total, Averaging::kNone);  // every rank also plays the single process
  for (Averaging averaging : {Averaging::kAllReduce, Averaging::kBuckets, Averaging::kSmallBuckets}) {
    std::vector<Variable> parallel = variables_of(start);
    train(parallel, *make(), x, y, dist::rank() * kRowsPerRank, kRowsPerRank, averaging);
    for (size_t i = 0; i < one.size(); ++i) {
      const std::vector<double> a = cast(one[i].value(), DType::Float64).to_vector<double>();
      const std::vector<double> b = cast(parallel[i].value(), DType::Float64).to_vector<double>();
      ASSERT_EQ(a.size(), b.size());
      for (size_t k = 0; k < a.size(); ++k)
        EXPECT_NEAR(a[k], b[k], tolerance)
            << "averaging " << static_cast<int>(averaging) << ", variable " << i << "[" << k << "]";
    }
  }
  // And training moved the weights: the comparison is not between two copies of the start.
  EXPECT_GT(reduce_max(abs(one[0].value() - start[0])).item<double>(), 1e-3);
}

TEST(DataParallel, SgdWithMomentumFloat64) {
  expect_data_parallel_matches_one_process(
      DType::Float64, [] { return std::make_unique<optim::SGD>(0.1, 0.9); }, 1e-10);
}

TEST(DataParallel, SgdFloat32) {
  expect_data_parallel_matches_one_process(
      DType::Float32, [] { return std::make_unique<optim::SGD>(0.1); }, 1e-5);
}

TEST(DataParallel, AdamFloat64) {
  expect_data_parallel_matches_one_process(
      DType::Float64, [] { return std::make_unique<optim::Adam>(0.01); }, 1e-10);
}

TEST(DataParallel, AdamFloat32) {
  expect_data_parallel_matches_one_process(
      DType::Float32, [] { return std::make_unique<optim::Adam>(0.01); }, 1e-5);
}

}  // namespace
}  // namespace ef
