// Axes: the `axis` argument of reductions and shape ops. Accepts one axis (`1`, `-1`),
// a list (`{0, 2}`, a std::vector), or nothing — which means every axis, like
// TensorFlow's axis=None. Negative axes count from the end.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "eagerflow/core/shape.h"

namespace ef {

class Axes {
 public:
  // Every axis.
  Axes() = default;
  Axes(int axis) : values_{axis}, all_(false) {}       // NOLINT: implicit by design
  Axes(int64_t axis) : values_{axis}, all_(false) {}   // NOLINT
  Axes(std::initializer_list<int64_t> axes) : values_(axes), all_(axes.size() == 0) {}  // NOLINT
  Axes(const std::vector<int64_t>& axes) : values_(axes.begin(), axes.end()), all_(false) {}  // NOLINT
  Axes(const Dims& axes) : values_(axes), all_(false) {}  // NOLINT

  bool all() const { return all_; }
  const Dims& values() const { return values_; }

 private:
  Dims values_;
  bool all_ = true;
};

}  // namespace ef
