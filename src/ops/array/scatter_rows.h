// The index handling of scatter_nd and the tensor_scatter_nd ops (defined in gather.cpp):
// shape checks, and the offsets of the rows that index tuples address, checked on the
// host. Internal to src/ops/array.
#pragma once

#include <string_view>
#include <vector>

#include "eagerflow/core/tensor.h"
#include "eagerflow/runtime/op_def.h"

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

// The batching rule of scatter_nd and the tensor_scatter_nd ops: every input gets the
// batch in front, and each index tuple (input `indices_input`) the position of its
// element as a new first coordinate, so that element b's updates land in row b only,
// in their own order (update's last-wins rule holds per element). scatter_nd's output
// shape (attribute `shape_attr`, or -1) gets the batch in front. Declines while the
// batch size or the indices' shape is unknown.
std::vector<Tensor> batch_scatter_nd(const BatchCall& call, size_t indices_input, int shape_attr = -1);

}  // namespace ef::detail
