// conv2d and its two gradient ops, conv2d_backprop_input and conv2d_backprop_filter
// (TensorFlow's names). The three are one family: each one's gradient is written with
// the other two (and conv2d), so derivatives of any order stay within the family.
//
// Kernels: im2col + GEMM (backends/cpu/blas.h). The input is unrolled into a column
// matrix [N * OH * OW, KH * KW * C], one block of kRowsPerGemm rows at a time (blocks
// may span images, which keeps GEMMs large when images are small), and multiplied by
// the filter seen as a [KH * KW * C, O] matrix, which writes NHWC output rows
// directly. Blocks run in parallel on ef::parallel_for (Note [one thread pool]). A 1x1
// window with stride 1 and no padding needs no unrolling: the input is the column
// matrix. A tiny inner dimension (a first layer on grayscale images) uses direct
// loops instead of GEMM for the forward pass and the filter gradient.
//
// float32 convolutions run on oneDNN instead where this build has it and the case
// suits it (Note [conv2d on oneDNN] in conv2d_onednn.cpp); the kernels below are the
// fallback and the float64 path.
#include <algorithm>
#include <climits>
#include <type_traits>
#include <vector>

#include "backends/cpu/blas.h"
#include "eagerflow/ops/conv.h"
#include "ops/jvp_helpers.h"
#include "ops/nn/conv2d_batching.h"
#include "ops/nn/conv2d_onednn.h"
#include "ops/nn/im2col.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

using namespace cpu;
using detail::Window2d;

constexpr int64_t kRowsPerGemm = 1024;
// Below this inner dimension (KH * KW * C, e.g. 9 for a 3x3 filter on a grayscale
// image) GEMM spends more on packing and im2col than on arithmetic: direct loops
// accumulate each output row over the window taps instead, vectorized over O.
constexpr int64_t kDirectMaxK = 16;
// Rough cost of one multiply-add inside GEMM, for parallel_for's break-even test.
constexpr double kGemmNsPerMac = 0.04;

Dims to_dims(const std::vector<int64_t>& v) { return Dims(v.begin(), v.end()); }
std::vector<int64_t> to_vector(const Dims& d) { return {d.begin(), d.end()}; }

Attrs conv_attrs(const std::vector<int64_t>& strides, const std::string& padding,
                 const std::vector<int64_t>& dilations) {
  return {to_dims(strides), padding, to_dims(dilations)};
}
Attrs conv_attrs(const std::vector<int64_t>& strides, const std::string& padding,
                 const std::vector<int64_t>& dilations, const Shape& sizes) {
  return {to_dims(strides), padding, to_dims(dilations), sizes.dims()};
}

Window2d window_of(const OpCall& call, const Shape& input, const Shape& filter) {
  const bool known_k = filter[0] != kUnknownDim && filter[1] != kUnknownDim;
  return detail::make_window(known_k ? input[1] : kUnknownDim, known_k ? input[2] : kUnknownDim, filter[0], filter[1],
                             call.attrs.get_ints(detail::kStridesAttr), call.attrs.get<std::string>(detail::kPaddingAttr),
                             call.attrs.get_ints(detail::kDilationsOrKsizeAttr), call.op.name);
}

// Validates an (input, filter) pair and returns conv2d's output shape.
Shape conv_output_shape(const OpCall& call, const Shape& input, const Shape& filter, std::string_view input_arg,
                        std::string_view filter_arg) {
  detail::check_rank4(input, call.op.name, input_arg);
  detail::check_rank4(filter, call.op.name, filter_arg);
  if (input[3] != filter[2] && input[3] != kUnknownDim && filter[2] != kUnknownDim)
    fail(call.op.name, ": ", input_arg, " of shape ", input, " has ", input[3], " channels but ", filter_arg,
         " of shape ", filter, " (HWIO) expects ", filter[2], " input channels");
  const Window2d g = window_of(call, input, filter);
  Shape out{input[0], g.out_h, g.out_w, filter[3]};
  validate_shape(out, call.op.name, "output", size_of(call.inputs[0].dtype()), /*allow_unknown=*/true);
  return out;
}

// The shape stored in attribute kSizesAttr, which must be fully defined and valid.
Shape sizes_attr(const OpCall& call, std::string_view arg) {
  Shape s(call.attrs.get_ints(detail::kSizesAttr));
  detail::check_rank4(s, call.op.name, arg);
  validate_shape(s, call.op.name, arg);
  return s;
}

// out_backprop must have the shape conv2d gives for the (input, filter) pair.
void check_out_backprop(const OpCall& call, const Shape& expected, const Shape& got) {
  detail::check_rank4(got, call.op.name, "out_backprop");
  for (int i = 0; i < 4; ++i)
    if (got[i] != expected[i] && got[i] != kUnknownDim && expected[i] != kUnknownDim)
      fail(call.op.name, ": argument 'out_backprop' has shape ", got, " but the convolution's output has shape ",
           expected);
}

void infer_conv2d(const OpCall& call, OutputMetas& out) {
  detail::check_dtype(call, call.inputs[0].dtype(), kFloatTypes, "input");
  detail::check_same_dtype(call, 0, 1, "input", "filters");
  out.add(call.inputs[0].dtype(), conv_output_shape(call, call.inputs[0].shape(), call.inputs[1].shape(), "input",
                                                    "filters"));
}

// Inputs: filters, out_backprop. Output: input_sizes.
void infer_backprop_input(const OpCall& call, OutputMetas& out) {
  detail::check_dtype(call, call.inputs[0].dtype(), kFloatTypes, "filters");
  detail::check_same_dtype(call, 0, 1, "filters", "out_backprop");
  Shape sizes = sizes_attr(call, "input_sizes");
  check_out_backprop(call, conv_output_shape(call, sizes, call.inputs[0].shape(), "input_sizes", "filters"),
                     call.inputs[1].shape());
  out.add(call.inputs[0].dtype(), std::move(sizes));
}

// Inputs: input, out_backprop. Output: filter_sizes.
void infer_backprop_filter(const OpCall& call, OutputMetas& out) {
  detail::check_dtype(call, call.inputs[0].dtype(), kFloatTypes, "input");
  detail::check_same_dtype(call, 0, 1, "input", "out_backprop");
  Shape sizes = sizes_attr(call, "filter_sizes");
  check_out_backprop(call, conv_output_shape(call, call.inputs[0].shape(), sizes, "input", "filter_sizes"),
                     call.inputs[1].shape());
  out.add(call.inputs[0].dtype(), std::move(sizes));
}

// Everything a kernel needs about one convolution, from the input and filter shapes.
// The column matrix has one row per output pixel of every image (n * OH * OW rows),
// processed in blocks of kRowsPerGemm rows, so its buffer stays small whatever the
// image size.
struct ConvDims {
  Window2d g;
  int64_t n = 0, c = 0, o = 0;
  int64_t k = 0;       // KH * KW * C: the GEMM's inner dimension
  int64_t pixels = 0;  // OH * OW
  int64_t rows = 0;    // n * pixels
  int64_t blocks = 0;  // ceil(rows / kRowsPerGemm)

  int64_t block_end(int64_t b) const { return std::min(rows, (b + 1) * kRowsPerGemm); }
  bool direct() const { return k < kDirectMaxK && !g.pointwise(); }
  // Elements of one block's column matrix (none for a pointwise window).
  size_t col_size() const { return g.pointwise() || direct() ? 0 : static_cast<size_t>(kRowsPerGemm * k); }
  double block_cost() const {
    return kGemmNsPerMac * static_cast<double>(kRowsPerGemm) * static_cast<double>(k) * static_cast<double>(o);
  }
};

detail::ConvProblem problem_of(const ConvDims& d) { return {d.g, d.n, d.c, d.o}; }

ConvDims conv_dims(const OpCall& call, const Shape& input, const Shape& filter) {
  ConvDims d;
  d.g = window_of(call, input, filter);
  d.n = input[0];
  d.c = input[3];
  d.o = filter[3];
  d.k = filter[0] * filter[1] * d.c;
  d.pixels = d.g.out_h * d.g.out_w;
  d.rows = d.n * d.pixels;
  d.blocks = (d.rows + kRowsPerGemm - 1) / kRowsPerGemm;
  if (d.k > INT_MAX || d.o > INT_MAX)
    fail<ResourceExhaustedError>(call.op.name, ": dimensions too large for BLAS (a ", d.k, " x ", d.o,
                                 " filter matrix)");
  return d;
}

// Rows [r0, r1) of the column matrix: read in place for a pointwise window (row r is
// input pixel r), else unrolled into col.
template <class T>
const T* columns(const ConvDims& d, const T* x, int64_t r0, int64_t r1, std::vector<T>& col) {
  if (d.g.pointwise()) return x + r0 * d.c;
  detail::im2col(x, d.g, d.c, r0, r1, col.data());
  return col.data();
}

// Calls fn(tap, pixel) for the taps of window row r (output pixel r % (OH * OW) of
// image r / (OH * OW)) that fall inside the input: tap = kh * KW + kw indexes the
// filter, pixel the input pixel (n * H + ih) * W + iw.
template <class Fn>
void for_each_tap(const Window2d& g, int64_t r, Fn&& fn) {
  const int64_t pixels = g.out_h * g.out_w, n = r / pixels, oh = (r % pixels) / g.out_w, ow = r % g.out_w;
  for (int64_t kh = 0; kh < g.k_h; ++kh) {
    const int64_t ih = oh * g.stride_h - g.pad_top + kh * g.dilation_h;
    if (ih < 0 || ih >= g.in_h) continue;
    for (int64_t kw = 0; kw < g.k_w; ++kw) {
      const int64_t iw = ow * g.stride_w - g.pad_left + kw * g.dilation_w;
      if (iw >= 0 && iw < g.in_w) fn(kh * g.k_w + kw, (n * g.in_h + ih) * g.in_w + iw);
    }
  }
}

// Output rows [r0, r1) by direct loops: y[r] = sum over taps and channels of x * W.
template <class T>
void direct_forward(const ConvDims& d, const T* x, const T* w, int64_t r0, int64_t r1, T* y) {
  for (int64_t r = r0; r < r1; ++r) {
    T* yr = y + r * d.o;
    std::fill(yr, yr + d.o, T(0));
    for_each_tap(d.g, r, [&](int64_t tap, int64_t pixel) {
      for (int64_t ci = 0; ci < d.c; ++ci) {
        const T xv = x[pixel * d.c + ci];
        const T* wr = w + (tap * d.c + ci) * d.o;
#pragma omp simd
        for (int64_t oo = 0; oo < d.o; ++oo) yr[oo] += xv * wr[oo];
      }
    });
  }
}

// acc (the [K, O] filter gradient) += the contribution of rows [r0, r1), directly.
template <class T>
void direct_filter(const ConvDims& d, const T* x, const T* dy, int64_t r0, int64_t r1, T* acc) {
  for (int64_t r = r0; r < r1; ++r) {
    const T* dyr = dy + r * d.o;
    for_each_tap(d.g, r, [&](int64_t tap, int64_t pixel) {
      for (int64_t ci = 0; ci < d.c; ++ci) {
        const T xv = x[pixel * d.c + ci];
        T* ar = acc + (tap * d.c + ci) * d.o;
#pragma omp simd
        for (int64_t oo = 0; oo < d.o; ++oo) ar[oo] += xv * dyr[oo];
      }
    });
  }
}

// y = columns(x) * W, block by block.
template <class T>
void conv2d_typed(const OpCall& call, Tensor& out) {
  const Tensor x = call.inputs[0].contiguous(), w = call.inputs[1].contiguous();
  const ConvDims d = conv_dims(call, x.shape(), w.shape());
  T* y = typed_output<T>(out);
  if (out.num_elements() == 0) return;
  if (d.k == 0) return std::fill(y, y + out.num_elements(), T(0));
  const T *xd = typed_data<T>(x), *wd = typed_data<T>(w);
  if constexpr (std::is_same_v<T, float>)
    if (detail::onednn_conv2d(problem_of(d), xd, wd, y)) return;
  parallel_for(d.blocks, d.block_cost(), [&](int64_t begin, int64_t end) {
    std::vector<T> col(d.col_size());
    for (int64_t b = begin; b < end; ++b) {
      const int64_t r0 = b * kRowsPerGemm, r1 = d.block_end(b);
      if (d.direct()) direct_forward(d, xd, wd, r0, r1, y);
      else
        gemm(BlasMatrix{false, d.k}, BlasMatrix{false, d.o}, r1 - r0, d.o, d.k, columns(d, xd, r0, r1, col), wd,
             y + r0 * d.o, d.o);
    }
  });
}

// dx = col2im(dy * W^T). Blocks of different images touch different pixels of dx, so
// images run in parallel; a pointwise window writes dx rows directly, block by block.
template <class T>
void backprop_input_typed(const OpCall& call, Tensor& out) {
  const Tensor w = call.inputs[0].contiguous(), dy = call.inputs[1].contiguous();
  const ConvDims d = conv_dims(call, out.shape(), w.shape());
  T* dx = typed_output<T>(out);
  if (out.num_elements() == 0) return;
  if (d.k == 0 || d.o == 0 || d.pixels == 0) return std::fill(dx, dx + out.num_elements(), T(0));
  const T *wd = typed_data<T>(w), *dyd = typed_data<T>(dy);
  if constexpr (std::is_same_v<T, float>)
    if (detail::onednn_conv2d_backprop_input(problem_of(d), wd, dyd, dx)) return;
  auto dcol = [&](int64_t r0, int64_t r1, T* dst) {
    gemm(BlasMatrix{false, d.o}, BlasMatrix{true, d.o}, r1 - r0, d.k, d.o, dyd + r0 * d.o, wd, dst, d.k);
  };
  if (d.g.pointwise()) {
    parallel_for(d.blocks, d.block_cost(), [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) dcol(b * kRowsPerGemm, d.block_end(b), dx + b * kRowsPerGemm * d.c);
    });
    return;
  }
  const int64_t image_size = d.g.in_h * d.g.in_w * d.c;
  const double image_cost = kGemmNsPerMac * static_cast<double>(d.pixels) * static_cast<double>(d.k * d.o);
  parallel_for(d.n, image_cost, [&](int64_t begin, int64_t end) {
    std::vector<T> col(static_cast<size_t>(kRowsPerGemm * d.k));
    for (int64_t i = begin; i < end; ++i) {
      std::fill(dx + i * image_size, dx + (i + 1) * image_size, T(0));
      for (int64_t r0 = i * d.pixels; r0 < (i + 1) * d.pixels; r0 += kRowsPerGemm) {
        const int64_t r1 = std::min((i + 1) * d.pixels, r0 + kRowsPerGemm);
        dcol(r0, r1, col.data());
        detail::col2im(col.data(), d.g, d.c, r0, r1, dx);
      }
    }
  });
}

// dW = sum over blocks of columns(x)^T * dy. Block b adds into slot b % slots, and the
// slots are summed in order: a fixed association, so dW does not depend on the number
// of threads, with memory for at most kFilterSlots partial sums.
constexpr int64_t kFilterSlots = 8;

template <class T>
void backprop_filter_typed(const OpCall& call, Tensor& out) {
  const Tensor x = call.inputs[0].contiguous(), dy = call.inputs[1].contiguous();
  const ConvDims d = conv_dims(call, x.shape(), out.shape());
  T* dw = typed_output<T>(out);
  const int64_t size = out.num_elements();
  if (size == 0) return;
  if (d.rows == 0) return std::fill(dw, dw + size, T(0));
  const T *xd = typed_data<T>(x), *dyd = typed_data<T>(dy);
  if constexpr (std::is_same_v<T, float>)
    if (detail::onednn_conv2d_backprop_filter(problem_of(d), xd, dyd, dw)) return;
  const int64_t slots = std::min(d.blocks, kFilterSlots);
  std::vector<T> partial(static_cast<size_t>(slots * size));
  const double slot_cost = d.block_cost() * static_cast<double>((d.blocks + slots - 1) / slots);
  parallel_for(slots, slot_cost, [&](int64_t begin, int64_t end) {
    std::vector<T> col(d.col_size()), product(static_cast<size_t>(size));
    for (int64_t s = begin; s < end; ++s) {
      T* acc = partial.data() + s * size;
      if (d.direct()) {
        std::fill(acc, acc + size, T(0));
        for (int64_t b = s; b < d.blocks; b += slots) direct_filter(d, xd, dyd, b * kRowsPerGemm, d.block_end(b), acc);
        continue;
      }
      for (int64_t b = s; b < d.blocks; b += slots) {
        const int64_t r0 = b * kRowsPerGemm, r1 = d.block_end(b);
        T* dst = b == s ? acc : product.data();
        gemm(BlasMatrix{true, d.k}, BlasMatrix{false, d.o}, d.k, d.o, r1 - r0, columns(d, xd, r0, r1, col),
             dyd + r0 * d.o, dst, d.o);
        if (dst != acc) {
#pragma omp simd
          for (int64_t i = 0; i < size; ++i) acc[i] += dst[i];
        }
      }
    }
  });
  std::copy(partial.begin(), partial.begin() + size, dw);
  for (int64_t s = 1; s < slots; ++s) {
    const T* p = partial.data() + s * size;
#pragma omp simd
    for (int64_t i = 0; i < size; ++i) dw[i] += p[i];
  }
}

template <template <class> class Typed>
void float_kernel(const OpCall& call, std::span<Tensor> outputs) {
  dispatch_in<kFloatTypes>(outputs[0].dtype(), call.op.name,
                           [&](auto tag) { Typed<typename decltype(tag)::type>::run(call, outputs[0]); });
}
template <class T>
struct Conv2dK { static void run(const OpCall& c, Tensor& o) { conv2d_typed<T>(c, o); } };
template <class T>
struct InputK { static void run(const OpCall& c, Tensor& o) { backprop_input_typed<T>(c, o); } };
template <class T>
struct FilterK { static void run(const OpCall& c, Tensor& o) { backprop_filter_typed<T>(c, o); } };

// The attributes a gradient passes on, unchanged.
struct WindowArgs {
  std::vector<int64_t> strides, dilations;
  std::string padding;
  explicit WindowArgs(const Attrs& a)
      : strides(to_vector(a.get_ints(detail::kStridesAttr))),
        dilations(to_vector(a.get_ints(detail::kDilationsOrKsizeAttr))),
        padding(a.get<std::string>(detail::kPaddingAttr)) {}
};

// y = conv2d(x, w): dx = backprop_input(dy, w), dw = backprop_filter(x, dy).
std::vector<Tensor> conv2d_grad(const GradCall& call) {
  const Tensor &x = call.forward.inputs[0], &w = call.forward.inputs[1], &g = call.output_grads[0];
  const WindowArgs a(call.forward.attrs);
  return {call.needs(0) ? conv2d_backprop_input(x.shape(), w, g, a.strides, a.padding, a.dilations) : Tensor(),
          call.needs(1) ? conv2d_backprop_filter(x, w.shape(), g, a.strides, a.padding, a.dilations) : Tensor()};
}

// dx = backprop_input(w, dy) is bilinear with <dx, g> = <conv2d(g, w), dy>, so
// d/dw = backprop_filter(g, dy) and d/ddy = conv2d(g, w).
std::vector<Tensor> backprop_input_grad(const GradCall& call) {
  const Tensor &w = call.forward.inputs[0], &dy = call.forward.inputs[1], &g = call.output_grads[0];
  const WindowArgs a(call.forward.attrs);
  return {call.needs(0) ? conv2d_backprop_filter(g, w.shape(), dy, a.strides, a.padding, a.dilations) : Tensor(),
          call.needs(1) ? conv2d(g, w, a.strides, a.padding, a.dilations) : Tensor()};
}

// dw = backprop_filter(x, dy) is bilinear with <dw, g> = <conv2d(x, g), dy>, so
// d/dx = backprop_input(g, dy) and d/ddy = conv2d(x, g).
std::vector<Tensor> backprop_filter_grad(const GradCall& call) {
  const Tensor &x = call.forward.inputs[0], &dy = call.forward.inputs[1], &g = call.output_grads[0];
  const WindowArgs a(call.forward.attrs);
  return {call.needs(0) ? conv2d_backprop_input(x.shape(), g, dy, a.strides, a.padding, a.dilations) : Tensor(),
          call.needs(1) ? conv2d(x, g, a.strides, a.padding, a.dilations) : Tensor()};
}

// ---- CUDA kernels: direct loops (backends/cuda/codegen_window.cpp) ----
void conv2d_cuda(const OpCall& call, std::span<Tensor> outputs) {
  const Shape &x = call.inputs[0].shape(), &f = call.inputs[1].shape();
  cuda::run_window(cuda::WindowKernel::Conv2d, detail::cuda_window(window_of(call, x, f), x[0], x[3], f[3]),
                   call.inputs, outputs[0], call.op.name);
}
void backprop_input_cuda(const OpCall& call, std::span<Tensor> outputs) {
  const Shape sizes = sizes_attr(call, "input_sizes");
  const Shape& f = call.inputs[0].shape();
  cuda::run_window(cuda::WindowKernel::Conv2dBackpropInput,
                   detail::cuda_window(window_of(call, sizes, f), sizes[0], sizes[3], f[3]), call.inputs,
                   outputs[0], call.op.name);
}
void backprop_filter_cuda(const OpCall& call, std::span<Tensor> outputs) {
  const Shape sizes = sizes_attr(call, "filter_sizes");
  const Shape& x = call.inputs[0].shape();
  cuda::run_window(cuda::WindowKernel::Conv2dBackpropFilter,
                   detail::cuda_window(window_of(call, x, sizes), x[0], x[3], sizes[3]), call.inputs,
                   outputs[0], call.op.name);
}

const OpDef& kConv2d = define_op({
    .name = "conv2d",
    .attr_names = {"strides", "padding", "dilations"},
    .infer = infer_conv2d,
    .kernels = {float_kernel<Conv2dK>, conv2d_cuda},
    .gradient = conv2d_grad,
    .gradient_uses = kGradientReadsInputs,  // never y (Note [gradient uses])
    .jvp = detail::jvp_multilinear<>,
    .batch = detail::batch_conv2d,
});

const OpDef& kConv2dBackpropInput = define_op({
    .name = "conv2d_backprop_input",
    .attr_names = {"strides", "padding", "dilations", "input_sizes"},
    .infer = infer_backprop_input,
    .kernels = {float_kernel<InputK>, backprop_input_cuda},
    .gradient = backprop_input_grad,
    .gradient_uses = kGradientReadsInputs,  // never dx (Note [gradient uses])
    .jvp = detail::jvp_multilinear<>,
    .batch = detail::batch_conv2d_backprop_input,
});

const OpDef& kConv2dBackpropFilter = define_op({
    .name = "conv2d_backprop_filter",
    .attr_names = {"strides", "padding", "dilations", "filter_sizes"},
    .infer = infer_backprop_filter,
    .kernels = {float_kernel<FilterK>, backprop_filter_cuda},
    .gradient = backprop_filter_grad,
    .gradient_uses = kGradientReadsInputs,  // never dw (Note [gradient uses])
    .jvp = detail::jvp_multilinear<>,
    .batch = detail::batch_conv2d_backprop_filter,
});

}  // namespace

Tensor conv2d(const Tensor& input, const Tensor& filters, const std::vector<int64_t>& strides,
              const std::string& padding, const std::vector<int64_t>& dilations, CallSite where) {
  return run_op(kConv2d, {input, filters}, conv_attrs(strides, padding, dilations), where);
}

Tensor conv2d_backprop_input(const Shape& input_sizes, const Tensor& filters, const Tensor& out_backprop,
                             const std::vector<int64_t>& strides, const std::string& padding,
                             const std::vector<int64_t>& dilations, CallSite where) {
  return run_op(kConv2dBackpropInput, {filters, out_backprop}, conv_attrs(strides, padding, dilations, input_sizes),
                where);
}

Tensor conv2d_backprop_filter(const Tensor& input, const Shape& filter_sizes, const Tensor& out_backprop,
                              const std::vector<int64_t>& strides, const std::string& padding,
                              const std::vector<int64_t>& dilations, CallSite where) {
  return run_op(kConv2dBackpropFilter, {input, out_backprop}, conv_attrs(strides, padding, dilations, filter_sizes),
                where);
}

Tensor conv2d_transpose(const Tensor& input, const Tensor& filters, const Shape& output_shape,
                        const std::vector<int64_t>& strides, const std::string& padding,
                        const std::vector<int64_t>& dilations, CallSite where) {
  return run_op(kConv2dBackpropInput, {filters, input}, conv_attrs(strides, padding, dilations, output_shape), where);
}

}  // namespace ef
