// SyncBatchNormalization (Note [synchronized batch statistics]): each rank's shard
// normalized, and differentiated, exactly as one process normalizes the whole batch;
// shards of different sizes; moving statistics equal on every rank; configs.
#include <eagerflow/distribute/distribute.h>
#include <eagerflow/distribute/sync_batch_norm.h>

#include "test_util.h"

namespace ef {
namespace {

namespace dist = ef::distribute;
using testing::expect_values;

// Rows [begin, end) of x.
Tensor rows(const Tensor& x, int64_t begin, int64_t end) { return slice(x, {begin, 0}, {end - begin, -1}); }

// The whole batch's output, and the gradients of sum(output * weights) with respect to
// gamma, beta and the input, from one BatchNormalization (`layer`) in training mode.
struct Result {
  Tensor output, dgamma, dbeta, dinput;
};
Result train_step(nn::BatchNormalization& layer, const Tensor& x, const Tensor& weights) {
  GradientTape tape;
  tape.watch(x);
  const Tensor y = layer(x, /*training=*/true);
  const std::vector<Variable> params = layer.trainable_variables();  // gamma, beta
  std::vector<GradientTape::Source> sources{params[0], params[1], x};
  const std::vector<Tensor> g = tape.gradient(reduce_sum(y * weights), sources);
  return {y, g[0], g[1], g[2]};
}

TEST(SyncBatchNormalization, ShardsComputeWhatOneProcessComputesForTheWholeBatch) {
  dist::init();
  const int64_t ranks = dist::size(), rank = dist::rank();
  // Shards of different sizes: rank r holds r + 2 rows.
  int64_t total = 0, begin = 0;
  for (int64_t r = 0; r < ranks; ++r) {
    if (r == rank) begin = total;
    total += r + 2;
  }
  const int64_t end = begin + rank + 2;
  const Tensor x = testing::rand64({total, 3}, 11) * 3.0 + 1.0, weights = testing::rand64({total, 3}, 12);

  nn::BatchNormalization whole({.momentum = 0.5});
  const Result want = train_step(whole, x, weights);
  dist::SyncBatchNormalization synced({.momentum = 0.5});
  const Result got = train_step(synced, rows(x, begin, end), rows(weights, begin, end));

  expect_values(got.output, rows(want.output, begin, end).to_vector<double>(), 1e-12);
  expect_values(got.dinput, rows(want.dinput, begin, end).to_vector<double>(), 1e-12);
  // Each rank's parameter gradients are its shard's part; together they are the whole's.
  expect_values(dist::all_reduce(got.dgamma), want.dgamma.to_vector<double>(), 1e-12);
  expect_values(dist::all_reduce(got.dbeta), want.dbeta.to_vector<double>(), 1e-12);
  // The moving statistics follow the global batch: the same on every rank.
  expect_values(synced.moving_mean().value(), whole.moving_mean().value().to_vector<double>(), 1e-12);
  expect_values(synced.moving_variance().value(), whole.moving_variance().value().to_vector<double>(), 1e-12);
  // Inference is BatchNormalization's, from those statistics.
  expect_values(synced(rows(x, begin, end), false), rows(whole(x, false), begin, end).to_vector<double>(),
                1e-12);
}

// Traced with an unknown batch (a compiled training step), the count of examples comes
// from the sizes at run time: the same statistics as eagerly.
TEST(SyncBatchNormalization, AFunctionWithAnUnknownBatchCountsTheExamplesItGets) {
  dist::init();
  const Tensor x = testing::rand64({static_cast<int64_t>(dist::rank()) + 3, 2}, 21) * 2.0 + 0.5;
  dist::SyncBatchNormalization eager({.momentum = 0.0}), traced_layer({.momentum = 0.0});
  const Tensor want = eager(x, /*training=*/true);
  traced_layer(x, /*training=*/false);  // built outside the trace
  auto traced = function([&](const Tensor& batch) { return traced_layer(batch, /*training=*/true); }, "bn",
                         std::vector<TensorSpec>{{DType::Float64, Shape{kUnknownDim, 2}, "x"}});
  expect_values(traced(x), want.to_vector<double>(), 1e-12);
  expect_values(traced_layer.moving_variance().value(), eager.moving_variance().value().to_vector<double>(),
                1e-12);
}

TEST(SyncBatchNormalization, ConfigRoundTripsByClassName) {
  dist::SyncBatchNormalization layer({.momentum = 0.9, .epsilon = 1e-4});
  EXPECT_EQ(layer.name(), "sync_batch_normalization");
  const nn::Config config = layer.get_config();
  const std::shared_ptr<nn::Layer> again = nn::layer_from_config("SyncBatchNormalization", config);
  auto* synced = dynamic_cast<dist::SyncBatchNormalization*>(again.get());
  ASSERT_NE(synced, nullptr);
  EXPECT_EQ(synced->options().momentum, 0.9);
  EXPECT_EQ(synced->options().epsilon, 1e-4);
}

}  // namespace
}  // namespace ef
