// avg_pool2d and its gradient op avg_pool2d_grad (NHWC). Both are linear and adjoint
// to each other, so each one's gradient is the other.
//
// With "SAME" padding a window's mean is over its positions inside the input only
// (TensorFlow's rule; PyTorch's count_include_pad=False). Direct loops, vectorized over
// the contiguous channels.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "eagerflow/ops/conv.h"
#include "ops/batch_helpers.h"
#include "ops/jvp_helpers.h"
#include "ops/nn/pool_common.h"
#include "ops/nn/window_geometry.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

using namespace cpu;
using detail::float_kernel;
using detail::pool_attrs;
using detail::PoolArgs;
using detail::PoolDims;
using detail::pool_dims;
using detail::Window2d;

constexpr double kPoolElementNs = 0.3;


Shape pooled_shape(const Shape& input, const Window2d& g) { return Shape{input[0], g.out_h, g.out_w, input[3]}; }

void infer_avg_pool(const OpCall& call, OutputMetas& out) {
  const Tensor& x = call.inputs[0];
  detail::check_dtype(call, x.dtype(), kFloatTypes, "input");
  out.add(x.dtype(), pooled_shape(x.shape(), detail::make_pool_window(x.shape(), call.attrs, call.op.name, "input")));
}

// Input: grad (pooled shape). Output: input_sizes.
void infer_avg_pool_grad(const OpCall& call, OutputMetas& out) {
  const Tensor& dy = call.inputs[0];
  detail::check_dtype(call, dy.dtype(), kFloatTypes, "grad");
  Shape sizes(call.attrs.get_ints(detail::kSizesAttr));
  detail::check_rank4(sizes, call.op.name, "input_sizes");
  validate_shape(sizes, call.op.name, "input_sizes");
  const Shape expected = pooled_shape(sizes, detail::make_pool_window(sizes, call.attrs, call.op.name, "input_sizes"));
  bool ok = dy.rank() == 4;
  for (int i = 0; ok && i < 4; ++i) ok = dy.shape()[i] == expected[i] || dy.shape()[i] == kUnknownDim;
  if (!ok)
    fail(call.op.name, ": argument 'grad' must have the pooled shape ", expected, " of input_sizes ", sizes, ", got ",
         dy.shape());
  out.add(dy.dtype(), std::move(sizes));
}

template <class T>
void avg_pool_typed(const OpCall& call, Tensor& out) {
  const Tensor x = call.inputs[0].contiguous();
  const PoolDims d = pool_dims(call, x.shape());
  const T* xd = typed_data<T>(x);
  T* y = typed_output<T>(out);
  parallel_for(d.n * d.g.out_h, d.row_cost(kPoolElementNs), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t n = r / d.g.out_h, oh = r % d.g.out_h;
      const T* xi = xd + n * d.image_size();
      const detail::Span rows = detail::window_rows(d.g, oh);
      for (int64_t ow = 0; ow < d.g.out_w; ++ow) {
        const detail::Span cols = detail::window_cols(d.g, ow);
        T* o = y + (r * d.g.out_w + ow) * d.c;
        std::fill(o, o + d.c, T(0));
        for (int64_t ih = rows.begin; ih < rows.end; ++ih)
          for (int64_t iw = cols.begin; iw < cols.end; ++iw) {
            const T* p = xi + (ih * d.g.in_w + iw) * d.c;
#pragma omp simd
            for (int64_t ci = 0; ci < d.c; ++ci) o[ci] += p[ci];
          }
        const T scale = T(1) / static_cast<T>((rows.end - rows.begin) * (cols.end - cols.begin));
#pragma omp simd
        for (int64_t ci = 0; ci < d.c; ++ci) o[ci] *= scale;
      }
    }
  });
}

// dx[window] += dy / count. Windows of one image may overlap: images run in parallel.
template <class T>
void avg_pool_grad_typed(const OpCall& call, Tensor& out) {
  const Tensor dy = call.inputs[0].contiguous();
  const PoolDims d = pool_dims(call, out.shape(), "input_sizes");
  const T* dyd = typed_data<T>(dy);
  T* dx = typed_output<T>(out);
  parallel_for(d.n, d.row_cost(kPoolElementNs) * static_cast<double>(d.g.out_h), [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n) {
      T* dxi = dx + n * d.image_size();
      std::fill(dxi, dxi + d.image_size(), T(0));
      for (int64_t oh = 0; oh < d.g.out_h; ++oh) {
        const detail::Span rows = detail::window_rows(d.g, oh);
        for (int64_t ow = 0; ow < d.g.out_w; ++ow) {
          const detail::Span cols = detail::window_cols(d.g, ow);
          const T scale = T(1) / static_cast<T>((rows.end - rows.begin) * (cols.end - cols.begin));
          const T* g = dyd + ((n * d.g.out_h + oh) * d.g.out_w + ow) * d.c;
          for (int64_t ih = rows.begin; ih < rows.end; ++ih)
            for (int64_t iw = cols.begin; iw < cols.end; ++iw) {
              T* p = dxi + (ih * d.g.in_w + iw) * d.c;
#pragma omp simd
              for (int64_t ci = 0; ci < d.c; ++ci) p[ci] += g[ci] * scale;
            }
        }
      }
    }
  });
}

// y = avg_pool2d(x): dx = avg_pool2d_grad(dy).
std::vector<Tensor> avg_pool_gradient(const GradCall& call) {
  const PoolArgs a(call.forward.attrs);
  return {avg_pool2d_grad(call.forward.inputs[0].shape(), call.output_grads[0], a.ksize, a.strides, a.padding)};
}

// avg_pool2d_grad is avg_pool2d's adjoint, so its own gradient is avg_pool2d.
std::vector<Tensor> avg_pool_grad_gradient(const GradCall& call) {
  const PoolArgs a(call.forward.attrs);
  return {avg_pool2d(call.output_grads[0], a.ksize, a.strides, a.padding)};
}

// CUDA kernels: direct loops (backends/cuda/codegen_window.cpp).
void avg_pool_cuda(const OpCall& call, std::span<Tensor> outputs) {
  const PoolDims d = pool_dims(call, call.inputs[0].shape());
  cuda::run_window(cuda::WindowKernel::AvgPool, detail::cuda_window(d.g, d.n, d.c, d.c), call.inputs,
                   outputs[0], call.op.name);
}
void avg_pool_grad_cuda(const OpCall& call, std::span<Tensor> outputs) {
  const Shape sizes(call.attrs.get_ints(detail::kSizesAttr));
  const Window2d g = detail::make_pool_window(sizes, call.attrs, call.op.name, "input_sizes");
  cuda::run_window(cuda::WindowKernel::AvgPoolGrad, detail::cuda_window(g, sizes[0], sizes[3], sizes[3]),
                   call.inputs, outputs[0], call.op.name);
}

const OpDef& kAvgPool = define_op({
    .name = "avg_pool2d",
    .attr_names = {"strides", "padding", "ksize"},
    .infer = infer_avg_pool,
    .kernels = {float_kernel<avg_pool_typed<float>, avg_pool_typed<double>>, avg_pool_cuda},
    .gradient = avg_pool_gradient,
    .gradient_uses = kGradientReadsNoValues,  // x's shape only (Note [gradient uses])
    .jvp = detail::jvp_linear<>,
    .batch = [](const BatchCall& call) { return detail::batch_merging_rows(call, value_bit(0)); },
});

const OpDef& kAvgPoolGrad = define_op({
    .name = "avg_pool2d_grad",
    .attr_names = {"strides", "padding", "ksize", "input_sizes"},
    .infer = infer_avg_pool_grad,
    .kernels = {float_kernel<avg_pool_grad_typed<float>, avg_pool_grad_typed<double>>, avg_pool_grad_cuda},
    .gradient = avg_pool_grad_gradient,
    .gradient_uses = kGradientReadsNoValues,  // Note [gradient uses]
    .jvp = detail::jvp_linear<>,
    .batch =
        [](const BatchCall& call) {
          return detail::batch_merging_rows(call, value_bit(0), detail::kSizesAttr);
        },
});

}  // namespace

Tensor avg_pool2d(const Tensor& input, const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
                  const std::string& padding, CallSite where) {
  return run_op(kAvgPool, {input}, pool_attrs(ksize, strides, padding), where);
}

Tensor avg_pool2d_grad(const Shape& input_sizes, const Tensor& grad, const std::vector<int64_t>& ksize,
                       const std::vector<int64_t>& strides, const std::string& padding, CallSite where) {
  return run_op(kAvgPoolGrad, {grad}, pool_attrs(ksize, strides, padding, input_sizes), where);
}

}  // namespace ef
