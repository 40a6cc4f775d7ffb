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

// Writes the column matrix of `images` consecutive images starting at x (each
// in_h x in_w x c) to col: images * out_h * out_w rows of k_h * k_w * c values.
template <class T>
void im2col(const T* x, const Window2d& g, int64_t c, int64_t images, T* col) {
  const int64_t row_len = g.k_h * g.k_w * c, image_size = g.in_h * g.in_w * c;
  for (int64_t n = 0; n < images; ++n) {
    const T* xi = x + n * image_size;
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        T* row = col + ((n * g.out_h + oh) * g.out_w + ow) * row_len;
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
  }
}

// The adjoint of im2col: adds every column-matrix entry back onto the input pixel it
// was read from (padding entries are dropped). dx must hold zeros (or values to add to).
template <class T>
void col2im(const T* col, const Window2d& g, int64_t c, int64_t images, T* dx) {
  const int64_t row_len = g.k_h * g.k_w * c, image_size = g.in_h * g.in_w * c;
  for (int64_t n = 0; n < images; ++n) {
    T* di = dx + n * image_size;
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        const T* row = col + ((n * g.out_h + oh) * g.out_w + ow) * row_len;
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
  }
}

}  // namespace ef::detail
