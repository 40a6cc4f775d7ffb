// max_pool2d and its gradient ops (NHWC). max_pool2d_grad routes the output gradient
// to each window's maximum; max_pool2d_grad_grad reads a tensor of the input's shape
// at those maxima. The two are adjoint linear maps of their grad argument (for a
// fixed input), so each one's gradient is the other: derivatives of any order stay
// within the family. Both recompute the maxima from the input rather than storing
// them, as TensorFlow's MaxPoolGrad does.
//
// Kernels are direct loops; NHWC keeps a pixel's C channels contiguous, so the inner
// loop runs over channels and vectorizes.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "eagerflow/ops/conv.h"
#include "eagerflow/ops/creation.h"
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

constexpr double kPoolElementNs = 0.5;


Shape pooled_shape(const Shape& input, const Window2d& g) { return Shape{input[0], g.out_h, g.out_w, input[3]}; }

// Throws unless `grad` has the shape `expected`, saying what that shape is.
void check_grad_shape(const OpCall& call, const Shape& got, const Shape& expected, const char* what) {
  if (got.rank() != expected.rank())
    fail(call.op.name, ": argument 'grad' must have the shape of ", what, " ", expected, ", got ", got);
  for (int i = 0; i < got.rank(); ++i)
    if (got[i] != expected[i] && got[i] != kUnknownDim && expected[i] != kUnknownDim)
      fail(call.op.name, ": argument 'grad' must have the shape of ", what, " ", expected, ", got ", got);
}

void infer_max_pool(const OpCall& call, OutputMetas& out) {
  const Tensor& x = call.inputs[0];
  detail::check_dtype(call, x.dtype(), kFloatTypes, "input");
  out.add(x.dtype(), pooled_shape(x.shape(), detail::make_pool_window(x.shape(), call.attrs, call.op.name, "input")));
}

// Inputs: input, grad (pooled shape). Output: input's shape.
void infer_max_pool_grad(const OpCall& call, OutputMetas& out) {
  const Tensor& x = call.inputs[0];
  detail::check_dtype(call, x.dtype(), kFloatTypes, "input");
  detail::check_same_dtype(call, 0, 1, "input", "grad");
  const Window2d g = detail::make_pool_window(x.shape(), call.attrs, call.op.name, "input");
  check_grad_shape(call, call.inputs[1].shape(), pooled_shape(x.shape(), g), "max_pool2d's output");
  out.add(x.dtype(), x.shape());
}

// Inputs: input, grad (input's shape). Output: pooled shape.
void infer_max_pool_grad_grad(const OpCall& call, OutputMetas& out) {
  const Tensor& x = call.inputs[0];
  detail::check_dtype(call, x.dtype(), kFloatTypes, "input");
  detail::check_same_dtype(call, 0, 1, "input", "grad");
  const Window2d g = detail::make_pool_window(x.shape(), call.attrs, call.op.name, "input");
  check_grad_shape(call, call.inputs[1].shape(), x.shape(), "input");
  out.add(x.dtype(), pooled_shape(x.shape(), g));
}

// The per-channel maximum over window (oh, ow) of image xi, into best[0, c), and with
// WithArg its position ih * W + iw into arg. The first maximum wins ties; NaN wins
// over numbers (and then stays), so NaN propagates as in TensorFlow and PyTorch.
template <class T, bool WithArg>
void window_max(const T* xi, const Window2d& g, int64_t c, int64_t oh, int64_t ow, T* best, int64_t* arg) {
  const detail::Span rows = detail::window_rows(g, oh), cols = detail::window_cols(g, ow);
  bool first = true;
  for (int64_t ih = rows.begin; ih < rows.end; ++ih) {
    for (int64_t iw = cols.begin; iw < cols.end; ++iw) {
      const int64_t pos = ih * g.in_w + iw;
      const T* p = xi + pos * c;
      if (first) {
        std::copy(p, p + c, best);
        if constexpr (WithArg) std::fill(arg, arg + c, pos);
        first = false;
        continue;
      }
#pragma omp simd
      for (int64_t ci = 0; ci < c; ++ci) {
        const bool take = p[ci] > best[ci] || (p[ci] != p[ci] && best[ci] == best[ci]);
        best[ci] = take ? p[ci] : best[ci];
        if constexpr (WithArg) arg[ci] = take ? pos : arg[ci];
      }
    }
  }
}

template <class T>
void max_pool_typed(const OpCall& call, Tensor& out) {
  const Tensor x = call.inputs[0].contiguous();
  const PoolDims d = pool_dims(call, x.shape());
  const T* xd = typed_data<T>(x);
  T* y = typed_output<T>(out);
  // Rows (image, oh) in parallel.
  parallel_for(d.n * d.g.out_h, d.row_cost(kPoolElementNs), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t n = r / d.g.out_h, oh = r % d.g.out_h;
      for (int64_t ow = 0; ow < d.g.out_w; ++ow)
        window_max<T, false>(xd + n * d.image_size(), d.g, d.c, oh, ow, y + (r * d.g.out_w + ow) * d.c, nullptr);
    }
  });
}

// dx[argmax] += dy. Windows of one image may overlap, so images (not rows) run in parallel.
template <class T>
void max_pool_grad_typed(const OpCall& call, Tensor& out) {
  const Tensor x = call.inputs[0].contiguous(), dy = call.inputs[1].contiguous();
  const PoolDims d = pool_dims(call, x.shape());
  const T *xd = typed_data<T>(x), *dyd = typed_data<T>(dy);
  T* dx = typed_output<T>(out);
  parallel_for(d.n, d.row_cost(kPoolElementNs) * static_cast<double>(d.g.out_h), [&](int64_t begin, int64_t end) {
    std::vector<T> best(d.c);
    std::vector<int64_t> arg(d.c);
    for (int64_t n = begin; n < end; ++n) {
      T* dxi = dx + n * d.image_size();
      std::fill(dxi, dxi + d.image_size(), T(0));  // here, not before: the image stays in cache
      const T* dyi = dyd + n * d.pooled_image_size();
      for (int64_t oh = 0; oh < d.g.out_h; ++oh) {
        for (int64_t ow = 0; ow < d.g.out_w; ++ow) {
          window_max<T, true>(xd + n * d.image_size(), d.g, d.c, oh, ow, best.data(), arg.data());
          const T* g = dyi + (oh * d.g.out_w + ow) * d.c;
          for (int64_t ci = 0; ci < d.c; ++ci) dxi[arg[ci] * d.c + ci] += g[ci];
        }
      }
    }
  });
}

// out = grad[argmax]: a gather, so rows run in parallel.
template <class T>
void max_pool_grad_grad_typed(const OpCall& call, Tensor& out) {
  const Tensor x = call.inputs[0].contiguous(), gx = call.inputs[1].contiguous();
  const PoolDims d = pool_dims(call, x.shape());
  const T *xd = typed_data<T>(x), *gd = typed_data<T>(gx);
  T* y = typed_output<T>(out);
  parallel_for(d.n * d.g.out_h, d.row_cost(kPoolElementNs), [&](int64_t begin, int64_t end) {
    std::vector<T> best(d.c);
    std::vector<int64_t> arg(d.c);
    for (int64_t r = begin; r < end; ++r) {
      const int64_t n = r / d.g.out_h, oh = r % d.g.out_h;
      for (int64_t ow = 0; ow < d.g.out_w; ++ow) {
        window_max<T, true>(xd + n * d.image_size(), d.g, d.c, oh, ow, best.data(), arg.data());
        T* o = y + (r * d.g.out_w + ow) * d.c;
        const T* gi = gd + n * d.image_size();
        for (int64_t ci = 0; ci < d.c; ++ci) o[ci] = gi[arg[ci] * d.c + ci];
      }
    }
  });
}

// y = max_pool2d(x): dx = max_pool2d_grad(x, dy).
std::vector<Tensor> max_pool_gradient(const GradCall& call) {
  const PoolArgs a(call.forward.attrs);
  return {max_pool2d_grad(call.forward.inputs[0], call.output_grads[0], a.ksize, a.strides, a.padding)};
}

// Both gradient ops are linear in grad; as functions of input they are piecewise
// constant (the maxima move only at ties), so their derivative there is zero.
std::vector<Tensor> max_pool_grad_gradient(const GradCall& call) {
  const PoolArgs a(call.forward.attrs);
  const Tensor& x = call.forward.inputs[0];
  return {call.needs(0) ? zeros_like(x) : Tensor(),
          call.needs(1) ? max_pool2d_grad_grad(x, call.output_grads[0], a.ksize, a.strides, a.padding) : Tensor()};
}

std::vector<Tensor> max_pool_grad_grad_gradient(const GradCall& call) {
  const PoolArgs a(call.forward.attrs);
  const Tensor& x = call.forward.inputs[0];
  return {call.needs(0) ? zeros_like(x) : Tensor(),
          call.needs(1) ? max_pool2d_grad(x, call.output_grads[0], a.ksize, a.strides, a.padding) : Tensor()};
}

// CUDA kernels: direct loops (backends/cuda/codegen_window.cpp), the same maxima.
void max_pool_cuda(const OpCall& call, std::span<Tensor> outputs) {
  const PoolDims d = pool_dims(call, call.inputs[0].shape());
  cuda::run_window(cuda::WindowKernel::MaxPool, detail::cuda_window(d.g, d.n, d.c, d.c), call.inputs,
                   outputs[0], call.op.name);
}
void max_pool_grad_grad_cuda(const OpCall& call, std::span<Tensor> outputs) {
  const PoolDims d = pool_dims(call, call.inputs[0].shape());
  cuda::run_window(cuda::WindowKernel::MaxPoolGradGrad, detail::cuda_window(d.g, d.n, d.c, d.c), call.inputs,
                   outputs[0], call.op.name);
}
void max_pool_grad_cuda(const OpCall& call, std::span<Tensor> outputs) {
  const PoolDims d = pool_dims(call, call.inputs[0].shape());
  cuda::run_window(cuda::WindowKernel::MaxPoolGrad, detail::cuda_window(d.g, d.n, d.c, d.c), call.inputs,
                   outputs[0], call.op.name);
}

// J t where max_pool2d_grad(x, .) is J^T: its transpose, max_pool2d_grad_grad.
std::vector<Tensor> max_pool_jvp(const JvpCall& call) {
  const PoolArgs a(call.forward.attrs);
  return {
      max_pool2d_grad_grad(call.forward.inputs[0], call.input_tangents[0], a.ksize, a.strides, a.padding)};
}

const OpDef& kMaxPool = define_op({
    .name = "max_pool2d",
    .attr_names = {"strides", "padding", "ksize"},
    .infer = infer_max_pool,
    .kernels = {float_kernel<max_pool_typed<float>, max_pool_typed<double>>, max_pool_cuda},
    .gradient = max_pool_gradient,
    .gradient_uses = kGradientReadsInputs,  // x, not y (Note [gradient uses])
    .jvp = max_pool_jvp,
    .batch = [](const BatchCall& call) { return detail::batch_merging_rows(call, kAllValues); },
});

const OpDef& kMaxPoolGrad = define_op({
    .name = "max_pool2d_grad",
    .attr_names = {"strides", "padding", "ksize"},
    .infer = infer_max_pool_grad,
    .kernels = {float_kernel<max_pool_grad_typed<float>, max_pool_grad_typed<double>>, max_pool_grad_cuda},
    .gradient = max_pool_grad_gradient,
    .gradient_uses = kGradientReadsInputs,  // Note [gradient uses]
    .jvp = detail::jvp_linear<value_bit(1)>,
    .batch = [](const BatchCall& call) { return detail::batch_merging_rows(call, kAllValues); },
});

const OpDef& kMaxPoolGradGrad = define_op({
    .name = "max_pool2d_grad_grad",
    .attr_names = {"strides", "padding", "ksize"},
    .infer = infer_max_pool_grad_grad,
    .kernels = {float_kernel<max_pool_grad_grad_typed<float>, max_pool_grad_grad_typed<double>>,
                max_pool_grad_grad_cuda},
    .gradient = max_pool_grad_grad_gradient,
    .gradient_uses = kGradientReadsInputs,  // Note [gradient uses]
    .jvp = detail::jvp_linear<value_bit(1)>,
    .batch = [](const BatchCall& call) { return detail::batch_merging_rows(call, kAllValues); },
});

}  // namespace

Tensor max_pool2d(const Tensor& input, const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
                  const std::string& padding, CallSite where) {
  return run_op(kMaxPool, {input}, pool_attrs(ksize, strides, padding), where);
}

Tensor max_pool2d_grad(const Tensor& input, const Tensor& grad, const std::vector<int64_t>& ksize,
                       const std::vector<int64_t>& strides, const std::string& padding, CallSite where) {
  return run_op(kMaxPoolGrad, {input, grad}, pool_attrs(ksize, strides, padding), where);
}

Tensor max_pool2d_grad_grad(const Tensor& input, const Tensor& grad, const std::vector<int64_t>& ksize,
                            const std::vector<int64_t>& strides, const std::string& padding, CallSite where) {
  return run_op(kMaxPoolGradGrad, {input, grad}, pool_attrs(ksize, strides, padding), where);
}

}  // namespace ef
