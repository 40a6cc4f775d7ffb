// ef.nn.conv1d and ef.nn.conv3d (TensorFlow's signatures; NWC and NDHWC only).
#include "bindings.h"
#include "convert.h"
#include "window_args.h"

namespace efpy {
namespace {

using namespace pybind11::literals;
constexpr ef::CallSite kPython{};

// conv1d's stride and dilation: one value, or [1, value, 1] in NWC order.
int64_t width_entry(py::handle obj, const char* what) {
  const std::vector<int64_t> v = window_ints(obj, what, {1});
  if (v.size() == 1) return v[0];
  if (v.size() == 3 && v[0] == 1 && v[2] == 1) return v[1];
  throw ef::InvalidArgumentError(std::string(what) + " must be an int, [value] or [1, value, 1]");
}

}  // namespace

void bind_conv_composite_ops(py::module_& m) {
  m.def(
      "conv1d",
      [](TensorArg input, TensorArg filters, py::handle stride, const std::string& padding,
         py::handle data_format, py::handle dilations, py::handle) {
        check_data_format(data_format, "NWC", "conv1d");
        const int64_t s = width_entry(stride, "conv1d: stride"),
                      d = width_entry(dilations, "conv1d: dilations");
        return maybe_without_gil(input.value.num_elements(),
                                 [&] { return ef::conv1d(input, filters, s, padding, d, kPython); });
      },
      R"doc(Computes a 1-D convolution of a batch of sequences (tf.nn.conv1d).

input [batch, width, in_channels] with filters [filter_width, in_channels,
out_channels] gives [batch, out_width, out_channels]: conv2d over rows one pixel high.

>>> ef.nn.conv1d(ef.ones([1, 8, 2]), ef.ones([3, 2, 4]), stride=2, padding="SAME").shape
TensorShape([1, 4, 4])

Args:
  input: A rank-3 float tensor-like.
  filters: A rank-3 tensor-like of input's dtype and in_channels.
  stride: An int, or [1, stride, 1].
  padding: "SAME" or "VALID".
  data_format: None or "NWC" (the only layout supported).
  dilations: None (1), an int, or [1, dilation, 1].
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input's dtype, [batch, out_width, out_channels].
)doc",
      "input"_a, "filters"_a, "stride"_a, "padding"_a, "data_format"_a = py::none(),
      "dilations"_a = py::none(), "name"_a = py::none());
  m.def(
      "conv3d",
      [](TensorArg input, TensorArg filters, py::handle strides, const std::string& padding,
         py::handle data_format, py::handle dilations, py::handle) {
        check_data_format(data_format, "NDHWC", "conv3d");
        const auto s = window_ints(strides, "conv3d: strides"),
                   d = window_ints(dilations, "conv3d: dilations", {1});
        return maybe_without_gil(input.value.num_elements(),
                                 [&] { return ef::conv3d(input, filters, s, padding, d, kPython); });
      },
      R"doc(Computes a 3-D convolution of a batch of volumes (tf.nn.conv3d).

input [batch, depth, height, width, in_channels] with filters [filter_depth,
filter_height, filter_width, in_channels, out_channels] gives [batch, out_depth,
out_height, out_width, out_channels].

>>> ef.nn.conv3d(ef.ones([1, 4, 6, 6, 1]), ef.ones([3, 3, 3, 1, 2]), [1, 2, 2, 2, 1], "VALID").shape
TensorShape([1, 1, 2, 2, 2])

Args:
  input: A rank-5 float tensor-like.
  filters: A rank-5 tensor-like of input's dtype and in_channels.
  strides: An int, [depth, height, width], or [1, depth, height, width, 1].
  padding: "SAME" or "VALID".
  data_format: None or "NDHWC" (the only layout supported).
  dilations: None (1), an int, [depth, height, width], or [1, d, h, w, 1].
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input's dtype, [batch, out_depth, out_height, out_width, out_channels].
)doc",
      "input"_a, "filters"_a, "strides"_a, "padding"_a, "data_format"_a = py::none(),
      "dilations"_a = py::none(), "name"_a = py::none());
}

}  // namespace efpy
