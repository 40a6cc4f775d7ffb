// Image resizing (NHWC), as TensorFlow 2's tf.image.resize:
//  - resize_images: ResizeBilinear, ResizeNearestNeighbor and ResizeBicubic with
//    half-pixel centers, and ResizeArea. Bilinear and nearest are PyTorch's interpolate
//    with align_corners=False (mode "bilinear" / "nearest-exact"); bicubic is Keys' cubic
//    with a = -0.5 and taps outside the image dropped and the rest renormalized (PyTorch's
//    "bicubic" uses a = -0.75 and repeats the edge pixels instead).
//  - scale_and_translate: ScaleAndTranslate, the windowed kernels (lanczos, gaussian,
//    mitchellcubic, ...) and antialiasing, which widens a downscaling kernel to cover
//    every input pixel an output pixel spans (PyTorch's antialias=True for "bilinear"
//    and "bicubic").
// Each method is a linear map per axis (ops/image/resampling.h), computed exactly in
// double: TensorFlow's bicubic looks its weights up in a table of 1024 steps, so its
// results differ from these by up to about 1e-3 of the pixel range. Every op here is
// linear, and each one's gradient op applies the transposed maps.
#include <cmath>
#include <vector>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/image.h"
#include "eagerflow/ops/math.h"
#include "ops/batch_helpers.h"
#include "ops/image/resampling.h"
#include "ops/jvp_helpers.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

enum ResizeAttr { kSize, kMethod };
enum ResizeGradAttr { kGradMethod, kInputSizes };
// scale_and_translate's attributes; its gradient op has input_sizes in place of size.
enum SampleAttr { kSampleSize, kKernel, kAntialias, kScaleY, kScaleX, kTranslateY, kTranslateX };

bool keeps_integers(const std::string& method) { return method == "nearest"; }

void check_size(const Dims& size, std::string_view op) {
  if (size.size() == 2 && size[0] > 0 && size[1] > 0) return;
  std::string given;
  for (int64_t v : size) given += (given.empty() ? "" : ", ") + std::to_string(v);
  fail(op, ": argument 'size' must be two positive integers [height, width], got [", given, "]");
}

void check_images(const OpCall& call, const Tensor& x, cpu::DTypeSet dtypes) {
  detail::check_dtype(call, x.dtype(), dtypes, "images");
  if (x.rank() != 4) fail(call.op.name, ": argument 'images' must have rank 4 (NHWC), got shape ", x.shape());
  if (x.shape()[1] == 0 || x.shape()[2] == 0)
    fail(call.op.name, ": argument 'images' of shape ", x.shape(), " has no pixels to resize from");
}

// The input shape of a gradient op: a non-empty NHWC shape of which `grad` is a resize.
// Its batch and channels may be unknown (-1, from a graph whose batch was unknown when
// the gradient was built); they are grad's.
Shape checked_input_sizes(const OpCall& call, const Dims& input_sizes) {
  const Tensor& dy = call.inputs[0];
  detail::check_dtype(call, dy.dtype(), cpu::kFloatTypes, "grad");
  if (dy.rank() != 4) fail(call.op.name, ": argument 'grad' must have rank 4 (NHWC), got shape ", dy.shape());
  Dims sizes = input_sizes;
  if (sizes.size() == 4)
    for (size_t i : {0, 3})
      if (sizes[i] == kUnknownDim) sizes[i] = dy.shape()[i];
  if (sizes.size() != 4 || sizes[1] <= 0 || sizes[2] <= 0)
    fail(call.op.name,
         ": argument 'input_sizes' must be an NHWC shape of known, positive height and width, got ",
         Shape(input_sizes));
  Shape shape(sizes);
  if (sizes[0] != kUnknownDim && sizes[3] != kUnknownDim) validate_shape(shape, call.op.name, "input_sizes");
  bool ok = true;
  for (int i : {0, 3})
    ok = ok && (dy.shape()[i] == shape[i] || dy.shape()[i] == kUnknownDim || shape[i] == kUnknownDim);
  if (!ok || dy.shape()[1] == 0 || dy.shape()[2] == 0)
    fail(call.op.name, ": argument 'grad' of shape ", dy.shape(), " is not a resize of input_sizes ", shape);
  return shape;
}

// ---- resize_images ----

struct ResizeMaps {
  image::AxisMap rows, cols;
};

ResizeMaps resize_maps(const std::string& method, const Shape& in, const Shape& out, std::string_view op) {
  return {image::resize_axis(method, in[1], out[1], op), image::resize_axis(method, in[2], out[2], op)};
}

void infer_resize(const OpCall& call, OutputMetas& out) {
  const Tensor& x = call.inputs[0];
  const std::string& method = call.attrs.get<std::string>(kMethod);
  image::check_resize_method(method, call.op.name);
  check_images(call, x, keeps_integers(method) ? cpu::kNumericTypes : cpu::kFloatTypes);
  const Dims& size = call.attrs.get_ints(kSize);
  check_size(size, call.op.name);
  out.add(x.dtype(), Shape{x.shape()[0], size[0], size[1], x.shape()[3]});
}

void resize_cpu(const OpCall& call, std::span<Tensor> outputs) {
  if (outputs[0].num_elements() == 0) return;
  const ResizeMaps m = resize_maps(call.attrs.get<std::string>(kMethod), call.inputs[0].shape(),
                                   outputs[0].shape(), call.op.name);
  image::resample(call.inputs[0], outputs[0], m.rows, m.cols);
}

// Input: grad (resized shape). Output: input_sizes.
void infer_resize_grad(const OpCall& call, OutputMetas& out) {
  image::check_resize_method(call.attrs.get<std::string>(kGradMethod), call.op.name);
  const Tensor& dy = call.inputs[0];
  out.add(dy.dtype(), checked_input_sizes(call, call.attrs.get_ints(kInputSizes)));
}

void resize_grad_cpu(const OpCall& call, std::span<Tensor> outputs) {
  if (outputs[0].num_elements() == 0) return;
  const ResizeMaps m = resize_maps(call.attrs.get<std::string>(kGradMethod), outputs[0].shape(),
                                   call.inputs[0].shape(), call.op.name);
  image::resample(call.inputs[0], outputs[0], m.rows.transposed(), m.cols.transposed());
}

Tensor run_resize(const Tensor& images, const Dims& size, const std::string& method, CallSite where);

std::vector<Tensor> resize_gradient(const GradCall& call) {
  return {resize_images_grad(call.forward.inputs[0].shape(), call.output_grads[0],
                             call.forward.attrs.get<std::string>(kMethod))};
}

// resize_images_grad is resize_images's adjoint, so its own gradient is resize_images.
std::vector<Tensor> resize_grad_gradient(const GradCall& call) {
  const Shape& out = call.forward.inputs[0].shape();
  return {run_resize(call.output_grads[0], {out[1], out[2]}, call.forward.attrs.get<std::string>(kGradMethod),
                     CallSite::current())};
}

const OpDef& kResize = define_op({
    .name = "resize_images",
    .attr_names = {"size", "method"},
    .infer = infer_resize,
    .kernels = {resize_cpu},
    .gradient = resize_gradient,
    .gradient_uses = kGradientReadsNoValues,  // the images' shape only (Note [gradient uses])
    .jvp = detail::jvp_linear<>,
    .batch = [](const BatchCall& call) { return detail::batch_merging_rows(call, value_bit(0)); },
});

const OpDef& kResizeGrad = define_op({
    .name = "resize_images_grad",
    .attr_names = {"method", "input_sizes"},
    .infer = infer_resize_grad,
    .kernels = {resize_grad_cpu},
    .gradient = resize_grad_gradient,
    .gradient_uses = kGradientReadsNoValues,
    .jvp = detail::jvp_linear<>,
    .batch =
        [](const BatchCall& call) { return detail::batch_merging_rows(call, value_bit(0), kInputSizes); },
});

Tensor run_resize(const Tensor& images, const Dims& size, const std::string& method, CallSite where) {
  return run_op(kResize, {images}, {size, method}, where);
}

// ---- scale_and_translate ----

ResizeMaps sampling_maps(const Attrs& a, const Shape& in, const Shape& out, std::string_view op) {
  const std::string& kernel = a.get<std::string>(kKernel);
  const bool antialias = a.get_bool(kAntialias);
  return {image::scale_and_translate_axis(kernel, antialias, a.get_float(kScaleY), a.get_float(kTranslateY),
                                          in[1], out[1], op),
          image::scale_and_translate_axis(kernel, antialias, a.get_float(kScaleX), a.get_float(kTranslateX),
                                          in[2], out[2], op)};
}

void check_sampling_attrs(const OpCall& call) {
  // A one-pixel map checks the kernel name, the scales and the translations.
  sampling_maps(call.attrs, Shape{1, 1, 1, 1}, Shape{1, 1, 1, 1}, call.op.name);
}

void infer_scale_and_translate(const OpCall& call, OutputMetas& out) {
  check_sampling_attrs(call);
  const Tensor& x = call.inputs[0];
  check_images(call, x, cpu::kFloatTypes);
  const Dims& size = call.attrs.get_ints(kSampleSize);
  check_size(size, call.op.name);
  out.add(x.dtype(), Shape{x.shape()[0], size[0], size[1], x.shape()[3]});
}

void scale_and_translate_cpu(const OpCall& call, std::span<Tensor> outputs) {
  if (outputs[0].num_elements() == 0) return;
  const ResizeMaps m = sampling_maps(call.attrs, call.inputs[0].shape(), outputs[0].shape(), call.op.name);
  image::resample(call.inputs[0], outputs[0], m.rows, m.cols);
}

void infer_scale_and_translate_grad(const OpCall& call, OutputMetas& out) {
  check_sampling_attrs(call);
  out.add(call.inputs[0].dtype(), checked_input_sizes(call, call.attrs.get_ints(kSampleSize)));
}

void scale_and_translate_grad_cpu(const OpCall& call, std::span<Tensor> outputs) {
  if (outputs[0].num_elements() == 0) return;
  const ResizeMaps m = sampling_maps(call.attrs, outputs[0].shape(), call.inputs[0].shape(), call.op.name);
  image::resample(call.inputs[0], outputs[0], m.rows.transposed(), m.cols.transposed());
}

// The same attributes with `size` replaced (by input_sizes for the gradient op, by the
// output size for its gradient).
Attrs with_size(const Attrs& a, Dims size) {
  Attrs out = a;
  out.set(kSampleSize, std::move(size));
  return out;
}

const OpDef& scale_and_translate_grad_def();

std::vector<Tensor> scale_and_translate_gradient(const GradCall& call) {
  return {run_op(scale_and_translate_grad_def(), {call.output_grads[0]},
                 with_size(call.forward.attrs, call.forward.inputs[0].shape().dims()), CallSite::current())};
}

std::vector<Tensor> scale_and_translate_grad_gradient(const GradCall& call);

const OpDef& kScaleAndTranslate = define_op({
    .name = "scale_and_translate",
    .attr_names = {"size", "kernel_type", "antialias", "scale_y", "scale_x", "translate_y", "translate_x"},
    .infer = infer_scale_and_translate,
    .kernels = {scale_and_translate_cpu},
    .gradient = scale_and_translate_gradient,
    .gradient_uses = kGradientReadsNoValues,
    .jvp = detail::jvp_linear<>,
    .batch = [](const BatchCall& call) { return detail::batch_merging_rows(call, value_bit(0)); },
});

const OpDef& kScaleAndTranslateGrad = define_op({
    .name = "scale_and_translate_grad",
    .attr_names = {"input_sizes", "kernel_type", "antialias", "scale_y", "scale_x", "translate_y",
                   "translate_x"},
    .infer = infer_scale_and_translate_grad,
    .kernels = {scale_and_translate_grad_cpu},
    .gradient = scale_and_translate_grad_gradient,
    .gradient_uses = kGradientReadsNoValues,
    .jvp = detail::jvp_linear<>,
    // input_sizes is the gradient op's first attribute (it stands where size is).
    .batch =
        [](const BatchCall& call) { return detail::batch_merging_rows(call, value_bit(0), kSampleSize); },
});

const OpDef& scale_and_translate_grad_def() { return kScaleAndTranslateGrad; }

std::vector<Tensor> scale_and_translate_grad_gradient(const GradCall& call) {
  const Shape& out = call.forward.inputs[0].shape();
  return {run_op(kScaleAndTranslate, {call.output_grads[0]}, with_size(call.forward.attrs, {out[1], out[2]}),
                 CallSite::current())};
}

// TensorFlow's resize methods that ScaleAndTranslate computes, by its kernel names.
std::string sampling_kernel_of(const std::string& method) {
  if (method == "bilinear") return "triangle";
  if (method == "bicubic") return "keyscubic";
  return method;
}

}  // namespace

Tensor resize_images(const Tensor& images, const std::vector<int64_t>& size, const std::string& method,
                     bool antialias, bool preserve_aspect_ratio, CallSite where) {
  constexpr std::string_view kOp = "resize_images";
  if (images.rank() != 3 && images.rank() != 4)
    fail(kOp, ": argument 'images' must have rank 3 (HWC) or 4 (NHWC), got shape ", images.shape());
  const bool windowed =
      method == "lanczos3" || method == "lanczos5" || method == "gaussian" || method == "mitchellcubic";
  if (!windowed) image::check_resize_method(method, kOp);
  check_size(Dims(size.begin(), size.end()), kOp);
  const bool single = images.rank() == 3;
  Tensor x = single ? expand_dims(images, 0, where) : images;
  const int64_t height = x.shape()[1], width = x.shape()[2];
  const bool sampled = windowed || (antialias && (method == "bilinear" || method == "bicubic"));
  if ((sampled || preserve_aspect_ratio) && (height == kUnknownDim || width == kUnknownDim))
    fail(kOp, ": method \"", method, "\"", sampled ? " with these options" : "",
         preserve_aspect_ratio ? " and preserve_aspect_ratio" : "",
         " needs images of known height and width, got ", images.shape());
  Dims new_size(size.begin(), size.end());
  if (preserve_aspect_ratio && height > 0 && width > 0) {
    // TensorFlow's arithmetic: float32 scale factors, rounded half to even.
    const float factor = std::min(static_cast<float>(size[0]) / static_cast<float>(height),
                                  static_cast<float>(size[1]) / static_cast<float>(width));
    new_size = {
        std::max<int64_t>(1, static_cast<int64_t>(std::nearbyint(factor * static_cast<float>(height)))),
        std::max<int64_t>(1, static_cast<int64_t>(std::nearbyint(factor * static_cast<float>(width))))};
  }
  // Every method but nearest gives float32 for other dtypes than float32 and float64
  // (TensorFlow gives float32 for float64 too; keeping float64 loses nothing).
  if (!keeps_integers(method) && x.dtype() != image::resized_dtype(x.dtype())) {
    if (x.dtype() == DType::Bool) fail(kOp, ": argument 'images' of dtype bool cannot be resized");
    x = cast(x, DType::Float32, where);
  }
  Tensor y;
  if (sampled) {
    const double scale_y = height > 0 ? static_cast<double>(new_size[0]) / static_cast<double>(height) : 1.0;
    const double scale_x = width > 0 ? static_cast<double>(new_size[1]) / static_cast<double>(width) : 1.0;
    y = run_op(kScaleAndTranslate, {x},
               {new_size, sampling_kernel_of(method), antialias, scale_y, scale_x, 0.0, 0.0}, where);
  } else {
    y = run_resize(x, new_size, method, where);
  }
  return single ? squeeze(y, {0}, where) : y;
}

Tensor resize_images_grad(const Shape& input_sizes, const Tensor& grad, const std::string& method,
                          CallSite where) {
  return run_op(kResizeGrad, {grad}, {method, input_sizes.dims()}, where);
}

namespace {

Attrs sampling_attrs(std::string_view op, Dims size, const std::vector<double>& scale,
                     const std::vector<double>& translate, const std::string& kernel_type, bool antialias) {
  if (scale.size() != 2 || translate.size() != 2)
    fail(op, ": arguments 'scale' and 'translate' must hold two values [y, x], got ", scale.size(), " and ",
         translate.size());
  return {std::move(size), kernel_type, antialias, scale[0], scale[1], translate[0], translate[1]};
}

}  // namespace

Tensor scale_and_translate(const Tensor& images, const std::vector<int64_t>& size,
                           const std::vector<double>& scale, const std::vector<double>& translate,
                           const std::string& kernel_type, bool antialias, CallSite where) {
  // As TensorFlow's ScaleAndTranslate: float32 for every dtype but float32 and float64.
  const bool keeps = images.dtype() == image::resized_dtype(images.dtype()) ||
                     images.dtype() == DType::Bool;  // (bool fails in the op, naming it)
  return run_op(kScaleAndTranslate, {keeps ? images : cast(images, DType::Float32, where)},
                sampling_attrs(kScaleAndTranslate.name, Dims(size.begin(), size.end()), scale, translate,
                               kernel_type, antialias),
                where);
}

Tensor scale_and_translate_grad(const Shape& input_sizes, const Tensor& grad,
                                const std::vector<double>& scale, const std::vector<double>& translate,
                                const std::string& kernel_type, bool antialias, CallSite where) {
  return run_op(kScaleAndTranslateGrad, {grad},
                sampling_attrs(kScaleAndTranslateGrad.name, input_sizes.dims(), scale, translate, kernel_type,
                               antialias),
                where);
}

}  // namespace ef
