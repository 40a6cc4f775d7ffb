// resize_images and its gradient op resize_images_grad (NHWC): TensorFlow 2's
// tf.image.resize with method "bilinear" or "nearest" (half-pixel centers, no
// antialiasing), which is PyTorch's interpolate with mode "bilinear" /
// "nearest-exact" and align_corners=False. Both ops are linear and adjoint to each
// other, so each one's gradient is the other.
//
// Output pixel o of an axis samples the input at s = (o + 0.5) * in / out - 0.5:
// bilinear reads floor(s) and the next pixel (both clamped to the axis) weighted by the
// fraction of s (s below 0 reads pixel 0); nearest reads min(floor(s + 0.5), in - 1).
#include <cmath>
#include <vector>

#include "eagerflow/ops/image.h"
#include "ops/jvp_helpers.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

using namespace cpu;

enum ResizeAttr { kSize, kMethod };
enum ResizeGradAttr { kGradMethod, kInputSizes };

constexpr double kResizeElementNs = 0.5;

bool is_bilinear(const std::string& method, std::string_view op) {
  if (method == "bilinear") return true;
  if (method == "nearest") return false;
  fail<UnimplementedError>(op, ": argument 'method' = \"", method,
                           "\" is not supported; use \"bilinear\" or \"nearest\"");
}

// Where one output pixel of an axis reads: pixels lo and hi, hi weighted by `frac`.
struct Tap {
  int64_t lo = 0, hi = 0;
  double frac = 0;
};

std::vector<Tap> taps(int64_t in, int64_t out, bool bilinear) {
  std::vector<Tap> t(static_cast<size_t>(out));
  const double scale = static_cast<double>(in) / static_cast<double>(out);
  for (int64_t o = 0; o < out; ++o) {
    const double s = (static_cast<double>(o) + 0.5) * scale - 0.5;
    Tap& tap = t[static_cast<size_t>(o)];
    if (bilinear) {
      const double clamped = std::max(s, 0.0);
      tap.lo = std::min(static_cast<int64_t>(std::floor(clamped)), in - 1);
      tap.hi = std::min(tap.lo + 1, in - 1);
      tap.frac = clamped - static_cast<double>(tap.lo);
    } else {
      tap.lo = tap.hi = std::min(static_cast<int64_t>(std::floor(s + 0.5)), in - 1);
    }
  }
  return t;
}

Shape resized_shape(const Shape& images, const Dims& size) {
  return Shape{images[0], size[0], size[1], images[3]};
}

void check_size(const Dims& size, std::string_view op) {
  if (size.size() != 2 || size[0] <= 0 || size[1] <= 0)
    fail(op, ": argument 'size' must be two positive integers [height, width], got ", Shape(size));
}

void infer_resize(const OpCall& call, OutputMetas& out) {
  const Tensor& x = call.inputs[0];
  const bool bilinear = is_bilinear(call.attrs.get<std::string>(kMethod), call.op.name);
  detail::check_dtype(call, x.dtype(), bilinear ? kFloatTypes : kNumericTypes, "images");
  if (x.rank() != 4) fail(call.op.name, ": argument 'images' must have rank 4 (NHWC), got shape ", x.shape());
  const Dims& size = call.attrs.get_ints(kSize);
  check_size(size, call.op.name);
  if (x.shape()[1] == 0 || x.shape()[2] == 0)
    fail(call.op.name, ": argument 'images' of shape ", x.shape(), " has no pixels to resize from");
  out.add(x.dtype(), resized_shape(x.shape(), size));
}

// Input: grad (resized shape). Output: input_sizes.
void infer_resize_grad(const OpCall& call, OutputMetas& out) {
  const Tensor& dy = call.inputs[0];
  is_bilinear(call.attrs.get<std::string>(kGradMethod), call.op.name);
  detail::check_dtype(call, dy.dtype(), kFloatTypes, "grad");
  Shape sizes(call.attrs.get_ints(kInputSizes));
  validate_shape(sizes, call.op.name, "input_sizes");
  if (sizes.rank() != 4 || sizes[1] == 0 || sizes[2] == 0)
    fail(call.op.name, ": argument 'input_sizes' must be a non-empty NHWC shape, got ", sizes);
  bool ok = dy.rank() == 4;
  for (int i : {0, 3}) ok = ok && (dy.shape()[i] == sizes[i] || dy.shape()[i] == kUnknownDim);
  if (!ok || dy.shape()[1] == 0 || dy.shape()[2] == 0)
    fail(call.op.name, ": argument 'grad' of shape ", dy.shape(), " is not a resize of input_sizes ", sizes);
  out.add(dy.dtype(), std::move(sizes));
}

template <class T>
void resize_typed(const Tensor& x_in, Tensor& out, bool bilinear) {
  const Tensor x = x_in.contiguous();
  const int64_t n = x.shape()[0], in_h = x.shape()[1], in_w = x.shape()[2], c = x.shape()[3];
  const int64_t out_h = out.shape()[1], out_w = out.shape()[2];
  const std::vector<Tap> ty = taps(in_h, out_h, bilinear), tx = taps(in_w, out_w, bilinear);
  const T* xd = typed_data<T>(x);
  T* y = typed_output<T>(out);
  parallel_for(n * out_h, kResizeElementNs * static_cast<double>(out_w * c), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t b = r / out_h, oh = r % out_h;
      const Tap& v = ty[static_cast<size_t>(oh)];
      const T* top = xd + (b * in_h + v.lo) * in_w * c;
      const T* bottom = xd + (b * in_h + v.hi) * in_w * c;
      for (int64_t ow = 0; ow < out_w; ++ow) {
        const Tap& h = tx[static_cast<size_t>(ow)];
        T* o = y + (r * out_w + ow) * c;
        if (!bilinear) {
          std::copy(top + h.lo * c, top + h.lo * c + c, o);
          continue;
        }
        if constexpr (std::is_floating_point_v<T>) {
          const T fy = static_cast<T>(v.frac), fx = static_cast<T>(h.frac);
          const T* a = top + h.lo * c;
          const T* bb = top + h.hi * c;
          const T* cc = bottom + h.lo * c;
          const T* d = bottom + h.hi * c;
#pragma omp simd
          for (int64_t ci = 0; ci < c; ++ci) {
            const T upper = a[ci] + (bb[ci] - a[ci]) * fx;
            const T lower = cc[ci] + (d[ci] - cc[ci]) * fx;
            o[ci] = upper + (lower - upper) * fy;
          }
        }
      }
    }
  });
}

void resize_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const bool bilinear = is_bilinear(call.attrs.get<std::string>(kMethod), call.op.name);
  dispatch_in<kNumericTypes>(outputs[0].dtype(), call.op.name, [&](auto tag) {
    resize_typed<typename decltype(tag)::type>(call.inputs[0], outputs[0], bilinear);
  });
}

// dx[taps] += weights * dy. Output pixels of one image share input pixels: images run
// in parallel.
template <class T>
void resize_grad_typed(const OpCall& call, Tensor& out) {
  const Tensor dy = call.inputs[0].contiguous();
  const bool bilinear = is_bilinear(call.attrs.get<std::string>(kGradMethod), call.op.name);
  const int64_t n = out.shape()[0], in_h = out.shape()[1], in_w = out.shape()[2], c = out.shape()[3];
  const int64_t out_h = dy.shape()[1], out_w = dy.shape()[2];
  const std::vector<Tap> ty = taps(in_h, out_h, bilinear), tx = taps(in_w, out_w, bilinear);
  const T* g = typed_data<T>(dy);
  T* dx = typed_output<T>(out);
  parallel_for(n, kResizeElementNs * static_cast<double>(out_h * out_w * c), [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      T* image = dx + b * in_h * in_w * c;
      std::fill(image, image + in_h * in_w * c, T(0));
      for (int64_t oh = 0; oh < out_h; ++oh) {
        const Tap& v = ty[static_cast<size_t>(oh)];
        for (int64_t ow = 0; ow < out_w; ++ow) {
          const Tap& h = tx[static_cast<size_t>(ow)];
          const T* gi = g + ((b * out_h + oh) * out_w + ow) * c;
          if (!bilinear) {
            T* p = image + (v.lo * in_w + h.lo) * c;
#pragma omp simd
            for (int64_t ci = 0; ci < c; ++ci) p[ci] += gi[ci];
            continue;
          }
          const T fy = static_cast<T>(v.frac), fx = static_cast<T>(h.frac);
          const struct {
            int64_t row, col;
            T weight;
          } corners[] = {{v.lo, h.lo, (1 - fy) * (1 - fx)},
                         {v.lo, h.hi, (1 - fy) * fx},
                         {v.hi, h.lo, fy * (1 - fx)},
                         {v.hi, h.hi, fy * fx}};
          for (const auto& k : corners) {
            T* p = image + (k.row * in_w + k.col) * c;
#pragma omp simd
            for (int64_t ci = 0; ci < c; ++ci) p[ci] += gi[ci] * k.weight;
          }
        }
      }
    }
  });
}

void resize_grad_cpu(const OpCall& call, std::span<Tensor> outputs) {
  dispatch_in<kFloatTypes>(outputs[0].dtype(), call.op.name, [&](auto tag) {
    resize_grad_typed<typename decltype(tag)::type>(call, outputs[0]);
  });
}

std::vector<Tensor> resize_gradient(const GradCall& call) {
  return {resize_images_grad(call.forward.inputs[0].shape(), call.output_grads[0],
                             call.forward.attrs.get<std::string>(kMethod))};
}

// resize_images_grad is resize_images's adjoint, so its own gradient is resize_images.
std::vector<Tensor> resize_grad_gradient(const GradCall& call) {
  const Shape& out = call.forward.inputs[0].shape();
  return {resize_images(call.output_grads[0], {out[1], out[2]},
                        call.forward.attrs.get<std::string>(kGradMethod))};
}

const OpDef& kResize = define_op({
    .name = "resize_images",
    .attr_names = {"size", "method"},
    .infer = infer_resize,
    .kernels = {resize_cpu},
    .gradient = resize_gradient,
    .gradient_uses = kGradientReadsNoValues,  // the images' shape only (Note [gradient uses])
    .jvp = detail::jvp_linear<>,
});

const OpDef& kResizeGrad = define_op({
    .name = "resize_images_grad",
    .attr_names = {"method", "input_sizes"},
    .infer = infer_resize_grad,
    .kernels = {resize_grad_cpu},
    .gradient = resize_grad_gradient,
    .gradient_uses = kGradientReadsNoValues,
    .jvp = detail::jvp_linear<>,
});

}  // namespace

Tensor resize_images(const Tensor& images, const std::vector<int64_t>& size, const std::string& method,
                     CallSite where) {
  return run_op(kResize, {images}, {Dims(size.begin(), size.end()), method}, where);
}

Tensor resize_images_grad(const Shape& input_sizes, const Tensor& grad, const std::string& method,
                          CallSite where) {
  return run_op(kResizeGrad, {grad}, {method, input_sizes.dims()}, where);
}

}  // namespace ef
