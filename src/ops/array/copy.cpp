#include "ops/array/copy.h"

#include <algorithm>

namespace ef::detail {
namespace {

// Layout of a two-operand copy (operand 0: destination, 1: source) over `shape`, with
// size-1 axes dropped and axes merged where both operands step through them as one
// (the same reduction as cpu::make_layout, but for a strided destination).
cpu::StridedLayout<2> copy_layout(const Shape& shape, const Dims& dst_strides, const Dims& src_strides) {
  cpu::StridedLayout<2> layout;
  const Dims* strides[2] = {&dst_strides, &src_strides};
  for (int i = 0; i < shape.rank(); ++i) {
    if (shape[i] == 1) continue;
    int r = layout.rank;
    bool mergeable = r > 0;
    for (int k = 0; k < 2 && mergeable; ++k)
      mergeable = layout.strides[k][r - 1] == (*strides[k])[i] * shape[i];
    if (mergeable) {
      layout.sizes[r - 1] *= shape[i];
      for (int k = 0; k < 2; ++k) layout.strides[k][r - 1] = (*strides[k])[i];
    } else {
      layout.sizes[r] = shape[i];
      for (int k = 0; k < 2; ++k) layout.strides[k][r] = (*strides[k])[i];
      ++layout.rank;
    }
  }
  if (layout.rank == 0) {
    layout.rank = 1;
    layout.sizes[0] = 1;
  }
  layout.total = shape.num_elements();
  return layout;
}

}  // namespace

void copy_elements(const TensorImpl& src, TensorImpl& dst) {
  if (src.shape != dst.shape)
    fail<InternalError>("copy: shapes differ (", src.shape, " vs ", dst.shape, ")");
  if (src.dtype != dst.dtype)
    fail<InternalError>("copy: dtypes differ (", src.dtype, " vs ", dst.dtype, ")");
  const int64_t n = src.shape.num_elements();
  if (n == 0) return;
  dispatch_word(src.dtype, [&](auto tag) {
    using W = typename decltype(tag)::type;
    const W* in = static_cast<const W*>(src.storage->data()) + src.offset;
    W* out = static_cast<W*>(dst.storage->data()) + dst.offset;
    if (src.is_contiguous() && dst.is_contiguous()) {
      parallel_for(n, kCopyElementNs, [&](int64_t b, int64_t e) {
        std::memcpy(out + b, in + b, static_cast<size_t>(e - b) * sizeof(W));
      });
      return;
    }
    auto layout = copy_layout(src.shape, dst.strides, src.strides);
    cpu::parallel_rows(layout, kCopyElementNs, [&](int64_t len, const int64_t* off, const int64_t* st) {
      W* o = out + off[0];
      const W* s = in + off[1];
      const int64_t so = st[0], ss = st[1];
      if (so == 1 && ss == 1) {
        std::memcpy(o, s, static_cast<size_t>(len) * sizeof(W));
      } else if (so == 1 && ss == 0) {
        std::fill(o, o + len, *s);
      } else {
        for (int64_t i = 0; i < len; ++i) o[i * so] = s[i * ss];
      }
    });
  });
}

Tensor materialize(const Tensor& x) {
  if (x.is_contiguous()) return x;
  Tensor out = empty_tensor(x.dtype(), x.shape(), x.device(), "contiguous");
  copy_elements(*x.impl(), *out.impl());
  return out;
}

}  // namespace ef::detail
