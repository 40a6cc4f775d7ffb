// Kernel sources of the sliding-window ops (conv2d, its two gradients, and the 2-D
// pools), NHWC like the CPU's: direct loops, one thread per output element, each
// summing in the CPU kernels' order where it can. Correct first; cuDNN takes over
// their speed later.
#include "backends/cuda/codegen.h"

namespace ef::cuda {
namespace {

// Every window kernel's signature: the output, up to three inputs, its element count,
// and the geometry (EfWindow of device_code/prelude.cuh).
std::string window_kernel(const std::string& t, int inputs, const std::string& body) {
  std::string src = "#include \"functors.cuh\"\nEF_KERNEL void ef_kernel(" + t + "* __restrict__ out";
  for (int i = 0; i < inputs; ++i) src += ", const " + t + "* __restrict__ in" + std::to_string(i);
  src +=
      ", long long total, EfWindow g) {\n"
      "  const long long step = ef_block_count() * ef_block_size();\n"
      "  for (long long i = ef_block_index() * ef_block_size() + ef_thread_in_block(); i < total; i += step) "
      "{\n" +
      body + "  }\n}\n";
  return src;
}

// Thread i's element of an [N, H, W, C] input or an [N, OH, OW, C] pooled output.
const char* kInputPixel =
    "    const long long c = i % g.c, iw = (i / g.c) % g.in_w, ih = (i / g.c / g.in_w) % g.in_h,\n"
    "                    n = i / g.c / g.in_w / g.in_h;\n";
const char* kOutputPixel =
    "    const long long c = i % g.c, ow = (i / g.c) % g.out_w, oh = (i / g.c / g.out_w) % g.out_h,\n"
    "                    n = i / g.c / g.out_w / g.out_h;\n";

// The output rows (or columns) whose undilated window holds input row `in_index`:
// [first, last] clipped to the output.
const char* kWindowsHolding =
    "    const long long oh_first = ef_first_window(ih + g.pad_top, g.k_h, g.stride_h);\n"
    "    const long long oh_last = ef_min((ih + g.pad_top) / g.stride_h, g.out_h - 1);\n"
    "    const long long ow_first = ef_first_window(iw + g.pad_left, g.k_w, g.stride_w);\n"
    "    const long long ow_last = ef_min((iw + g.pad_left) / g.stride_w, g.out_w - 1);\n";

}  // namespace

std::string window_source(WindowKernel kind, DType dtype, std::string_view op) {
  const std::string t(device_type(dtype, op));
  switch (kind) {
    case WindowKernel::Conv2d:  // in0: input [N,H,W,C], in1: filter [KH,KW,C,O]; out [N,OH,OW,O]
      return window_kernel(
          t, 2,
          "    const long long o = i % g.o, ow = (i / g.o) % g.out_w, oh = (i / g.o / g.out_w) % g.out_h,\n"
          "                    n = i / g.o / g.out_w / g.out_h;\n"
          "    " +
              t +
              " acc = 0;\n"
              "    for (long long kh = 0; kh < g.k_h; ++kh) {\n"
              "      const long long ih = oh * g.stride_h - g.pad_top + kh * g.dilation_h;\n"
              "      if (ih < 0 || ih >= g.in_h) continue;\n"
              "      for (long long kw = 0; kw < g.k_w; ++kw) {\n"
              "        const long long iw = ow * g.stride_w - g.pad_left + kw * g.dilation_w;\n"
              "        if (iw < 0 || iw >= g.in_w) continue;\n"
              "        const " +
              t +
              "* x = in0 + ((n * g.in_h + ih) * g.in_w + iw) * g.c;\n"
              "        const " +
              t +
              "* f = in1 + (kh * g.k_w + kw) * g.c * g.o + o;\n"
              "        for (long long c = 0; c < g.c; ++c) acc += x[c] * f[c * g.o];\n"
              "      }\n"
              "    }\n"
              "    out[i] = acc;\n");
    case WindowKernel::Conv2dBackpropInput:  // in0: filter, in1: dy [N,OH,OW,O]; out [N,H,W,C]
      return window_kernel(
          t, 2,
          std::string(kInputPixel) + "    " + t +
              " acc = 0;\n"
              "    for (long long kh = 0; kh < g.k_h; ++kh) {\n"
              "      const long long rh = ih + g.pad_top - kh * g.dilation_h;\n"
              "      if (rh < 0 || rh % g.stride_h != 0 || rh / g.stride_h >= g.out_h) continue;\n"
              "      for (long long kw = 0; kw < g.k_w; ++kw) {\n"
              "        const long long rw = iw + g.pad_left - kw * g.dilation_w;\n"
              "        if (rw < 0 || rw % g.stride_w != 0 || rw / g.stride_w >= g.out_w) continue;\n"
              "        const " +
              t +
              "* dy = in1 + ((n * g.out_h + rh / g.stride_h) * g.out_w + rw / g.stride_w) * g.o;\n"
              "        const " +
              t +
              "* f = in0 + ((kh * g.k_w + kw) * g.c + c) * g.o;\n"
              "        for (long long o = 0; o < g.o; ++o) acc += dy[o] * f[o];\n"
              "      }\n"
              "    }\n"
              "    out[i] = acc;\n");
    case WindowKernel::Conv2dBackpropFilter:  // in0: input, in1: dy; out [KH,KW,C,O]
      return window_kernel(
          t, 2,
          "    const long long o = i % g.o, c = (i / g.o) % g.c, kw = (i / g.o / g.c) % g.k_w,\n"
          "                    kh = i / g.o / g.c / g.k_w;\n"
          "    " +
              t +
              " acc = 0;\n"
              "    for (long long n = 0; n < g.n; ++n)\n"
              "      for (long long oh = 0; oh < g.out_h; ++oh) {\n"
              "        const long long ih = oh * g.stride_h - g.pad_top + kh * g.dilation_h;\n"
              "        if (ih < 0 || ih >= g.in_h) continue;\n"
              "        for (long long ow = 0; ow < g.out_w; ++ow) {\n"
              "          const long long iw = ow * g.stride_w - g.pad_left + kw * g.dilation_w;\n"
              "          if (iw < 0 || iw >= g.in_w) continue;\n"
              "          acc += in0[((n * g.in_h + ih) * g.in_w + iw) * g.c + c] *\n"
              "                 in1[((n * g.out_h + oh) * g.out_w + ow) * g.o + o];\n"
              "        }\n"
              "      }\n"
              "    out[i] = acc;\n");
    case WindowKernel::MaxPool:  // in0: input; out [N,OH,OW,C]
      return window_kernel(
          t, 1, std::string(kOutputPixel) + "    out[i] = in0[ef_window_max(in0, g, n, oh, ow, c)];\n");
    case WindowKernel::MaxPoolGrad:  // in0: input, in1: dy; out: the input's shape
      return window_kernel(t, 2,
                           std::string(kInputPixel) + std::string(kWindowsHolding) + "    " + t +
                               " acc = 0;\n"
                               "    for (long long oh = oh_first; oh <= oh_last; ++oh)\n"
                               "      for (long long ow = ow_first; ow <= ow_last; ++ow)\n"
                               "        if (ef_window_max(in0, g, n, oh, ow, c) == i)\n"
                               "          acc += in1[((n * g.out_h + oh) * g.out_w + ow) * g.c + c];\n"
                               "    out[i] = acc;\n");
    case WindowKernel::MaxPoolGradGrad:  // in0: input, in1: a tensor of its shape; out [N,OH,OW,C]
      return window_kernel(
          t, 2, std::string(kOutputPixel) + "    out[i] = in1[ef_window_max(in0, g, n, oh, ow, c)];\n");
    case WindowKernel::AvgPool:  // in0: input; out [N,OH,OW,C]
      return window_kernel(
          t, 1,
          std::string(kOutputPixel) +
              "    const EfSpan rows = ef_window_span(oh * g.stride_h - g.pad_top, g.k_h, g.in_h);\n"
              "    const EfSpan cols = ef_window_span(ow * g.stride_w - g.pad_left, g.k_w, g.in_w);\n"
              "    " +
              t +
              " acc = 0;\n"
              "    for (long long ih = rows.begin; ih < rows.end; ++ih)\n"
              "      for (long long iw = cols.begin; iw < cols.end; ++iw)\n"
              "        acc += in0[((n * g.in_h + ih) * g.in_w + iw) * g.c + c];\n"
              "    out[i] = acc * (" +
              t + "(1) / static_cast<" + t + ">((rows.end - rows.begin) * (cols.end - cols.begin)));\n");
    case WindowKernel::AvgPoolGrad:  // in0: dy [N,OH,OW,C]; out [N,H,W,C]
      return window_kernel(
          t, 1,
          std::string(kInputPixel) + std::string(kWindowsHolding) + "    " + t +
              " acc = 0;\n"
              "    for (long long oh = oh_first; oh <= oh_last; ++oh) {\n"
              "      const EfSpan rows = ef_window_span(oh * g.stride_h - g.pad_top, g.k_h, g.in_h);\n"
              "      for (long long ow = ow_first; ow <= ow_last; ++ow) {\n"
              "        const EfSpan cols = ef_window_span(ow * g.stride_w - g.pad_left, g.k_w, g.in_w);\n"
              "        acc += in0[((n * g.out_h + oh) * g.out_w + ow) * g.c + c] *\n"
              "               (" +
              t + "(1) / static_cast<" + t +
              ">((rows.end - rows.begin) * (cols.end - cols.begin)));\n"
              "      }\n"
              "    }\n"
              "    out[i] = acc;\n");
  }
  return {};
}

}  // namespace ef::cuda
