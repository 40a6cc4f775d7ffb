// What the ef.linalg binding files (linalg_ops.cpp, linalg_decompositions.cpp) share.
#pragma once

#include <utility>

#include "bindings.h"

namespace efpy {

// Runs a matrix function without the GIL when its input is large.
template <class F>
auto large(const ef::Tensor& x, F&& f) {
  return maybe_without_gil(x.num_elements(), std::forward<F>(f));
}

}  // namespace efpy
