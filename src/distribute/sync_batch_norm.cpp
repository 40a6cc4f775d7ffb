// SyncBatchNormalization (Note [synchronized batch statistics] in
// eagerflow/distribute/sync_batch_norm.h).
#include "eagerflow/distribute/sync_batch_norm.h"

#include "eagerflow/distribute/distribute.h"
#include "eagerflow/nn/config.h"
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/conv.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/operators.h"
#include "eagerflow/ops/reduction.h"

namespace ef::distribute {
namespace {

nn::BatchNormalizationOptions named(nn::BatchNormalizationOptions options) {
  if (options.name == "batch_normalization") options.name = "sync_batch_normalization";
  return options;
}

// Saved models and Keras configs find the class by its name once this library is loaded.
[[maybe_unused]] const bool kRegistered =
    (nn::register_layer("SyncBatchNormalization",
                        [](const nn::Config& c) -> std::shared_ptr<nn::Layer> {
                          return SyncBatchNormalization::from_config(c);
                        }),
     true);

}  // namespace

SyncBatchNormalization::SyncBatchNormalization(nn::BatchNormalizationOptions options)
    : nn::BatchNormalization(named(std::move(options))) {}

std::shared_ptr<SyncBatchNormalization> SyncBatchNormalization::from_config(const nn::Config& config) {
  return std::make_shared<SyncBatchNormalization>(nn::BatchNormalization::from_config(config)->options());
}

std::pair<Tensor, Tensor> SyncBatchNormalization::batch_moments(const Tensor& inputs,
                                                                const std::vector<int64_t>& axes) {
  if (!initialized() || size() == 1) return nn::BatchNormalization::batch_moments(inputs, axes);
  // Half dtypes sum in float32 (the collectives carry float32 and float64).
  const DType wide = is_half(inputs.dtype()) ? DType::Float32 : inputs.dtype();
  const Tensor x = cast(inputs, wide);
  const Tensor sum = reduce_sum(x, axes, /*keepdims=*/true);
  // This rank's examples per feature, from the sizes at run time (a traced step may not
  // know its batch): all the elements over the features'.
  const Tensor local_count = cast(size(x, DType::Int64), wide) / cast(size(sum, DType::Int64), wide);
  const std::vector<Tensor> sums = all_reduce_many({sum, local_count});
  const Tensor count = sums[1];
  const Tensor mean = sums[0] / count;
  const Tensor variance = all_reduce(reduce_sum(square(x - mean), axes, /*keepdims=*/true)) / count;
  return {cast(mean, inputs.dtype()), cast(variance, inputs.dtype())};
}

}  // namespace ef::distribute
