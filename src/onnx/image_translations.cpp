// The NHWC image ops (conv2d, the pools, resize_images) as ONNX nodes, which work in
// NCHW: each is wrapped in Transposes, which ONNX runtimes fold away. See
// op_translations.cpp for the rest.
#include "onnx/emitter.h"
#include "ops/nn/window_geometry.h"

namespace ef::onnx::detail {

namespace {

// ---- convolution and pooling: NHWC around ONNX's NCHW ----

constexpr int64_t kToNchw[] = {0, 3, 1, 2};
constexpr int64_t kToNhwc[] = {0, 2, 3, 1};

std::string to_nchw(Emitter& e, const std::string& x) {
  return e.op("Transpose", {x},
              [](pb::NodeProto& t) { set_attr(t, "perm", std::span<const int64_t>(kToNchw)); });
}
void from_nchw(Emitter& e, const std::string& y, const std::string& out) {
  set_attr(e.add("Transpose", {y}, {out}), "perm", std::span<const int64_t>(kToNhwc));
}
Dims pair(const OpNode& n, std::string_view attr) {
  const auto [h, w] = ef::detail::spatial_pair(n.attr_ints(attr), n.op(), attr);
  return {h, w};
}
// TensorFlow's SAME puts the smaller half of the padding first: ONNX's SAME_UPPER.
void set_window(const OpNode& n, pb::NodeProto& node) {
  const std::string& padding = n.attr_string("padding");
  if (padding != "SAME" && padding != "VALID") n.unsupported("has padding \"", padding, "\"");
  set_attr(node, "auto_pad", std::string(padding == "SAME" ? "SAME_UPPER" : "VALID"));
  const Dims strides = pair(n, "strides");
  set_attr(node, "strides", std::span<const int64_t>(strides));
}

void conv2d(const OpNode& n, Emitter& e) {
  const Shape& x = n.input_metas[0].shape;
  const Shape& w = n.input_metas[1].shape;  // [kh, kw, in, out]
  if (x[3] == kUnknownDim || (w[2] != kUnknownDim && x[3] != w[2]))
    n.unsupported("has input channels ", x, " and filter ", w, " that ONNX's Conv cannot take as one group");
  static constexpr int64_t kHwioToOihw[] = {3, 2, 0, 1};
  const std::string filter = e.op("Transpose", {n.inputs[1]}, [](pb::NodeProto& t) {
    set_attr(t, "perm", std::span<const int64_t>(kHwioToOihw));
  });
  const Dims dilations = pair(n, "dilations");
  const std::string y = e.op("Conv", {to_nchw(e, n.inputs[0]), filter}, [&](pb::NodeProto& c) {
    set_window(n, c);
    set_attr(c, "dilations", std::span<const int64_t>(dilations));
  });
  from_nchw(e, y, n.outputs[0]);
}

void pool(const OpNode& n, Emitter& e) {
  const Dims kernel = pair(n, "ksize");
  const bool max = n.op() == "max_pool2d";
  const std::string y =
      e.op(max ? "MaxPool" : "AveragePool", {to_nchw(e, n.inputs[0])}, [&](pb::NodeProto& p) {
        set_window(n, p);
        set_attr(p, "kernel_shape", std::span<const int64_t>(kernel));
        // avg_pool2d divides by the number of input pixels under the window, padding excluded.
        if (!max) set_attr(p, "count_include_pad", int64_t{0});
      });
  from_nchw(e, y, n.outputs[0]);
}

// resize_images: Resize in NCHW to sizes [N, C, height, width], with the half-pixel
// geometry; nearest rounds s + 0.5 down, which is ONNX's round_prefer_ceil, and bicubic
// is ONNX's cubic with a = -0.5 and the taps outside the image excluded (ONNX Runtime's
// CPU kernel runs cubic for upscaling only, and refuses a bicubic downscale of such a
// valid model at run time). Area has no ONNX counterpart.
void resize_images(const OpNode& n, Emitter& e) {
  const std::string method = n.attr_string("method");
  if (method == "area")
    fail<UnimplementedError>("onnx export: resize_images with method \"area\" (node '", n.node.name,
                             "') has no ONNX counterpart");
  const std::string x = to_nchw(e, n.inputs[0]);
  const std::string batch_channels = e.op("Slice", {e.op("Shape", {x}), e.ints(Dims{0}), e.ints(Dims{2})});
  const std::string sizes = e.op("Concat", {batch_channels, e.ints(n.attr_ints("size"))},
                                 [](pb::NodeProto& c) { set_attr(c, "axis", int64_t{0}); });
  const std::string y = e.op("Resize", {x, "", "", sizes}, [&](pb::NodeProto& r) {
    set_attr(r, "mode",
             std::string(method == "bilinear"  ? "linear"
                         : method == "bicubic" ? "cubic"
                                               : "nearest"));
    set_attr(r, "coordinate_transformation_mode", std::string("half_pixel"));
    if (method == "nearest") set_attr(r, "nearest_mode", std::string("round_prefer_ceil"));
    if (method == "bicubic") {
      set_attr(r, "cubic_coeff_a", -0.5);
      set_attr(r, "exclude_outside", int64_t{1});
    }
  });
  from_nchw(e, y, n.outputs[0]);
}

}  // namespace

const std::unordered_map<std::string_view, Translation>& image_translations() {
  static const std::unordered_map<std::string_view, Translation> table{
      {"conv2d", conv2d},
      {"max_pool2d", pool},
      {"avg_pool2d", pool},
      {"resize_images", resize_images},
  };
  return table;
}

}  // namespace ef::onnx::detail
