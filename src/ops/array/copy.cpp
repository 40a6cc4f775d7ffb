#include "ops/array/copy.h"

#include "backends/cpu/storage_convert.h"
#include "backends/cuda/copy.h"

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

// Copies with the last two axes in square tiles, so that both the rows read and the
// rows written stay in cache (a transpose otherwise misses the cache on every element
// of its strided side). Used when the source is not unit-stride innermost.
template <class W>
void tiled_copy(const cpu::StridedLayout<2>& layout, W* out, const W* in) {
  constexpr int64_t kTile = 32;
  const int r = layout.rank;
  const int64_t rows = layout.sizes[r - 2], cols = layout.sizes[r - 1];
  const int64_t dr = layout.strides[0][r - 2], dc = layout.strides[0][r - 1];
  const int64_t sr = layout.strides[1][r - 2], sc = layout.strides[1][r - 1];
  const int64_t row_tiles = (rows + kTile - 1) / kTile, col_tiles = (cols + kTile - 1) / kTile;
  int64_t outer = 1;
  for (int i = 0; i < r - 2; ++i) outer *= layout.sizes[i];
  parallel_for(outer * row_tiles, static_cast<double>(kTile * cols) * kCopyElementNs, [&](int64_t b, int64_t e) {
    for (int64_t task = b; task < e; ++task) {
      // Offsets of the outer index (axes 0 .. r-3) in both operands.
      int64_t o = task / row_tiles, rest = o, dst_base = 0, src_base = 0;
      for (int i = r - 3; i >= 0; --i) {
        int64_t idx = rest % layout.sizes[i];
        rest /= layout.sizes[i];
        dst_base += idx * layout.strides[0][i];
        src_base += idx * layout.strides[1][i];
      }
      const int64_t i0 = (task % row_tiles) * kTile, i1 = std::min(i0 + kTile, rows);
      for (int64_t t = 0; t < col_tiles; ++t) {
        const int64_t j0 = t * kTile, j1 = std::min(j0 + kTile, cols);
        for (int64_t i = i0; i < i1; ++i) {
          W* o_row = out + dst_base + i * dr;
          const W* s_row = in + src_base + i * sr;
          for (int64_t j = j0; j < j1; ++j) o_row[j * dc] = s_row[j * sc];
        }
      }
    }
  });
}

}  // namespace

void copy_elements(const TensorImpl& src, TensorImpl& dst) {
  if (src.shape != dst.shape)
    fail<InternalError>("copy: shapes differ (", src.shape, " vs ", dst.shape, ")");
  if (src.dtype != dst.dtype)
    fail<InternalError>("copy: dtypes differ (", src.dtype, " vs ", dst.dtype, ")");
  if (src.device != dst.device)
    fail<InternalError>("copy: devices differ (", src.device, " vs ", dst.device, ")");
  const int64_t n = src.shape.num_elements();
  if (n == 0) return;
  if (src.device.type == DeviceType::CUDA) {
    Tensor from{Ref<TensorImpl>(const_cast<TensorImpl*>(&src))}, to{Ref<TensorImpl>(&dst)};
    cuda::copy_strided(from, to);
    return;
  }
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
    const int r = layout.rank;
    if (r >= 2 && layout.strides[1][r - 1] != 1 && layout.strides[1][r - 1] != 0 && layout.sizes[r - 1] >= 8 &&
        layout.sizes[r - 2] >= 8) {
      tiled_copy<W>(layout, out, in);
      return;
    }
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

Tensor host_values(const Tensor& x) {
  const Tensor host = x.device().type == DeviceType::CPU ? x : x.cpu();
  if (is_storage_only(host.dtype()))
    return cpu::storage_converted(host, compute_dtype(host.dtype()), "host values");
  return materialize(host);
}

}  // namespace ef::detail
