// SyncBatchNormalization: batch normalization whose training statistics are those of
// the global batch, every rank's examples together (TensorFlow's
// tf.keras.layers.experimental.SyncBatchNormalization, PyTorch's nn.SyncBatchNorm).
//
//   auto model = ef::nn::Sequential({conv, std::make_shared<ef::distribute::SyncBatchNormalization>(), ...});
//   ef::distribute::fit(model, x, y, {.batch_size = 256});   // 2 ranks: statistics of all 256
//
// Note [synchronized batch statistics]: with data parallelism each rank sees batch /
// size() examples, so a BatchNormalization normalizes with the statistics of its shard
// only: training differs from one process with the whole batch (and is noisier for
// small shards). This layer's training mode all-reduces, per feature, the sum and the
// count of the ranks' examples, normalizes them to the global mean, then all-reduces the
// squared deviations from it (two passes, so the variance does not cancel as a
// difference of large sums would). The all-reduces are differentiable, so the backward
// pass sends the gradients of the statistics across the ranks too: N ranks with batch
// B compute exactly what one process computes with batch N·B. Every rank must call the
// layer in step (as the collectives require); ranks may hold different numbers of
// examples. Without ef::distribute::init(), or with one rank, it is BatchNormalization.
// Inference and the moving statistics are BatchNormalization's (the moving statistics
// follow the global batch, so they stay equal on every rank).
#pragma once

#include <memory>

#include "eagerflow/nn/conv_layers.h"

namespace ef::distribute {

class SyncBatchNormalization : public nn::BatchNormalization {
 public:
  explicit SyncBatchNormalization(nn::BatchNormalizationOptions options = {});
  std::string class_name() const override { return "SyncBatchNormalization"; }
  static std::shared_ptr<SyncBatchNormalization> from_config(const nn::Config& config);

 protected:
  std::pair<Tensor, Tensor> batch_moments(const Tensor& inputs, const std::vector<int64_t>& axes) override;
};

}  // namespace ef::distribute
