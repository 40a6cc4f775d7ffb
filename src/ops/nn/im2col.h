// im2col and col2im for NHWC images, the data movement that turns a convolution into
// one GEMM: row (n, oh, ow) of the column matrix holds the input patch under output
// pixel (oh, ow) of image n, ordered (kh, kw, c) — the order of an HWIO filter seen
// as a [KH * KW * C, O] matrix. Padding reads as zeros. Internal to src/ops/nn.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "ops/nn/window_geometry.h"

namespace ef::detail {

// Writes rows [row_begin, row_end) of the column matrix of the images at x (each
// in_h x in_w x c; row r is output pixel r % (out_h * out_w) of image r / (out_h *
// out_w)) to col, k_h * k_w * c values per row.
template <class T>
void im2col(const T* x, const Window2d& g, int64_t c, int64_t row_begin, int64_t row_end, T* col) {
  const int64_t row_len = g.k_h * g.k_w * c, image_size = g.in_h * g.in_w * c, pixels = g.out_h * g.out_w;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t n = r / pixels, oh = (r % pixels) / g.out_w, ow = r % g.out_w;
    const T* xi = x + n * image_size;
    T* row = col + (r - row_begin) * row_len;
    for (int64_t kh = 0; kh < g.k_h; ++kh) {
      const int64_t ih = oh * g.stride_h - g.pad_top + kh * g.dilation_h;
      T* dst = row + kh * g.k_w * c;
      if (ih < 0 || ih >= g.in_h) {
        std::fill(dst, dst + g.k_w * c, T(0));
        continue;
      }
      for (int64_t kw = 0; kw < g.k_w; ++kw, dst += c) {
        const int64_t iw = ow * g.stride_w - g.pad_left + kw * g.dilation_w;
        if (iw < 0 || iw >= g.in_w) std::fill(dst, dst + c, T(0));
        else std::memcpy(dst, xi + (ih * g.in_w + iw) * c, static_cast<size_t>(c) * sizeof(T));
      }
    }
  }
}

// The adjoint of im2col: adds rows [row_begin, row_end) of a column matrix back onto
// the input pixels they were read from (padding entries are dropped).
template <class T>
void col2im(const T* col, const Window2d& g, int64_t c, int64_t row_begin, int64_t row_end, T* dx) {
  const int64_t row_len = g.k_h * g.k_w * c, image_size = g.in_h * g.in_w * c, pixels = g.out_h * g.out_w;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t n = r / pixels, oh = (r % pixels) / g.out_w, ow = r % g.out_w;
    T* di = dx + n * image_size;
    const T* row = col + (r - row_begin) * row_len;
    for (int64_t kh = 0; kh < g.k_h; ++kh) {
      const int64_t ih = oh * g.stride_h - g.pad_top + kh * g.dilation_h;
      if (ih < 0 || ih >= g.in_h) continue;
      for (int64_t kw = 0; kw < g.k_w; ++kw) {
        const int64_t iw = ow * g.stride_w - g.pad_left + kw * g.dilation_w;
        if (iw < 0 || iw >= g.in_w) continue;
        const T* src = row + (kh * g.k_w + kw) * c;
        T* dst = di + (ih * g.in_w + iw) * c;
#pragma omp simd
        for (int64_t ci = 0; ci < c; ++ci) dst[ci] += src[ci];
      }
    }
  }
}

}  // namespace ef::detail
