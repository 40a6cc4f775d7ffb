// Strided iteration shared by every elementwise kernel.
//
// An elementwise call is described by the output shape and, per operand, strides in
// that shape (0 where an input is broadcast: broadcast inputs are never materialized).
// Adjacent dimensions that are contiguous for every operand are merged, so most calls
// become one flat loop. The elements are then split across the thread pool, and each
// chunk is walked row by row: the innermost dimension is handed to a loop that the
// kernel specializes for unit and zero strides (which the compiler vectorizes).
#pragma once

#include <array>
#include <cstdint>

#include "eagerflow/core/tensor.h"
#include "eagerflow/core/threading.h"

namespace ef::cpu {

template <int N>
struct StridedLayout {
  int rank = 0;
  int64_t sizes[kMaxRank] = {};
  int64_t strides[N][kMaxRank] = {};  // in elements
  int64_t total = 1;
};

// The layout of N operands iterated over `shape`, operand k stepping in_strides[k][i]
// along dimension i: size-1 dimensions dropped, and dimension i merged into i+1 when
// every operand steps through them as one. Shared with the CUDA kernels' launches.
template <int N>
StridedLayout<N> merged_layout(const Shape& shape, const int64_t (&in_strides)[N][kMaxRank]) {
  StridedLayout<N> layout;
  for (int i = 0; i < shape.rank(); ++i) {
    if (shape[i] == 1) continue;
    int r = layout.rank;
    bool mergeable = r > 0;
    for (int k = 0; k < N && mergeable; ++k)
      mergeable = layout.strides[k][r - 1] == in_strides[k][i] * shape[i];
    if (mergeable) {
      layout.sizes[r - 1] *= shape[i];
      for (int k = 0; k < N; ++k) layout.strides[k][r - 1] = in_strides[k][i];
    } else {
      layout.sizes[r] = shape[i];
      for (int k = 0; k < N; ++k) layout.strides[k][r] = in_strides[k][i];
      ++layout.rank;
    }
  }
  if (layout.rank == 0) {  // a scalar, or all dimensions 1
    layout.rank = 1;
    layout.sizes[0] = 1;
    for (int k = 0; k < N; ++k) layout.strides[k][0] = 0;
  }
  layout.total = shape.num_elements();
  return layout;
}

// Layout of a contiguous output (operand 0) and N-1 inputs broadcast to `shape`.
template <int N>
StridedLayout<N> make_layout(const Shape& shape, const std::array<const TensorImpl*, N - 1>& inputs) {
  int rank = shape.rank();
  // Output strides are contiguous; inputs align to the right (NumPy broadcasting).
  int64_t stride = 1;
  int64_t in_strides[N][kMaxRank] = {};
  for (int i = rank - 1; i >= 0; --i) {
    in_strides[0][i] = stride;
    stride *= shape[i];
  }
  for (int k = 1; k < N; ++k) {
    const TensorImpl* in = inputs[k - 1];
    int offset = rank - in->shape.rank();
    for (int i = 0; i < rank; ++i) {
      int j = i - offset;
      in_strides[k][i] = (j < 0 || in->shape[j] == 1) ? 0 : in->strides[j];
    }
  }
  return merged_layout<N>(shape, in_strides);
}

// Calls row(len, offsets, inner_strides) for each run of the innermost dimension
// covering row-major elements [begin, end); offsets are per operand, in elements.
template <int N, class Row>
void for_each_row(const StridedLayout<N>& layout, int64_t begin, int64_t end, Row&& row) {
  const int r = layout.rank;
  const int64_t inner = layout.sizes[r - 1];
  int64_t index[kMaxRank] = {};
  int64_t rest = begin;
  for (int i = r - 1; i >= 0; --i) {
    index[i] = rest % layout.sizes[i];
    rest /= layout.sizes[i];
  }
  int64_t offsets[N];
  for (int k = 0; k < N; ++k) {
    offsets[k] = 0;
    for (int i = 0; i < r; ++i) offsets[k] += index[i] * layout.strides[k][i];
  }
  int64_t inner_strides[N];
  for (int k = 0; k < N; ++k) inner_strides[k] = layout.strides[k][r - 1];

  int64_t pos = begin;
  while (pos < end) {
    int64_t len = std::min(inner - index[r - 1], end - pos);
    row(len, offsets, inner_strides);
    pos += len;
    // Advance the multi-index by `len` along the innermost dimension, carrying over.
    for (int k = 0; k < N; ++k) offsets[k] += len * inner_strides[k];
    index[r - 1] += len;
    for (int i = r - 1; i > 0 && index[i] == layout.sizes[i]; --i) {
      index[i] = 0;
      ++index[i - 1];
      for (int k = 0; k < N; ++k)
        offsets[k] += layout.strides[k][i - 1] - layout.sizes[i] * layout.strides[k][i];
    }
  }
}

// Runs for_each_row over the whole layout, in parallel when it pays.
// `cost_per_element` is a rough time per element in nanoseconds.
template <int N, class Row>
void parallel_rows(const StridedLayout<N>& layout, double cost_per_element, Row&& row) {
  parallel_for(layout.total, cost_per_element,
               [&](int64_t begin, int64_t end) { for_each_row<N>(layout, begin, end, row); });
}

}  // namespace ef::cpu
