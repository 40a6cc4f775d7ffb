// How many of n examples fit(validation_split=s) trains on: the first floor(n * (1 - s)),
// Keras' rule (its train_validation_split); the rest are held out for validation.
// Shared by Model::fit and ef::distribute::fit.
#pragma once

#include <cmath>
#include <cstdint>

namespace ef::nn::detail {

inline int64_t examples_kept_for_training(int64_t n, double validation_split) {
  return static_cast<int64_t>(std::floor(static_cast<double>(n) * (1.0 - validation_split)));
}

}  // namespace ef::nn::detail
