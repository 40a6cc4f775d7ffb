// The index handling of scatter_nd and the tensor_scatter_nd ops (defined in gather.cpp):
// shape checks, and the offsets of the rows that index tuples address, checked on the
// host. Internal to src/ops/array.
#pragma once

#include <string_view>
#include <vector>

#include "eagerflow/core/tensor.h"

namespace ef::detail {

// Row t (of `row` elements) is the elements [offsets[t], offsets[t] + row) of a
// contiguous tensor.
struct Rows {
  std::vector<int64_t> offsets;
  int64_t row = 0;
};

// Index tuples (the last axis of `ind`, of known length) no longer than the output's
// rank, and updates of shape ind[:-1] + shape[m:] (unknown dimensions match anything);
// InvalidArgumentError naming `op` otherwise.
void check_scatter_shapes(std::string_view op, const Shape& ind, const Shape& upd, const Shape& shape);

// The element offsets in an output of `shape` of the rows that the index tuples of
// `indices` address; an out-of-range index is an InvalidArgumentError naming it.
Rows scatter_rows(const Shape& shape, const Tensor& indices, std::string_view op);

}  // namespace ef::detail
