// Axis helpers shared by the reduction ops (internal to src/ops/reduction).
#pragma once

#include "eagerflow/core/tensor.h"
#include "eagerflow/ops/axes.h"

namespace ef::detail {

// The `axis` attr of a reduction: Axes() (every axis) becomes [0, rank) so that the
// attr is always an explicit list; an explicit empty list reduces nothing (as TF).
inline Dims reduction_axes_attr(const Tensor& x, const Axes& axis) {
  if (!axis.all() || !x.defined()) return axis.values();
  Dims all;
  for (int i = 0; i < x.rank(); ++i) all.push_back(i);
  return all;
}

// Validates the reduction axes of an input of `rank` (range, duplicates, scalars) and
// returns them normalized and sorted.
inline Dims checked_reduction_axes(std::span<const int64_t> axes, int rank, std::string_view op) {
  if (rank == 0 && !axes.empty())
    fail(op, ": argument 'axis' = ", axes[0], " is out of range: a scalar (rank 0) has no axes to reduce");
  return normalize_axes(axes, rank, op, false);
}

// The shape left after reducing `axes` (sorted) of `shape`: reduced axes are dropped,
// or kept with size 1 when `keepdims`.
inline Shape reduced_shape(const Shape& shape, const Dims& axes, bool keepdims) {
  Dims out;
  size_t next = 0;
  for (int i = 0; i < shape.rank(); ++i) {
    bool reduced = next < axes.size() && axes[next] == i;
    if (reduced) ++next;
    if (!reduced) out.push_back(shape[i]);
    else if (keepdims) out.push_back(1);
  }
  return Shape(std::move(out));
}

}  // namespace ef::detail
