// Neural-network ops (ef.nn: activations, softmax and cross-entropies, convolution,
// pooling, normalization, dropout), with TensorFlow's argument names.
#include "bindings.h"
#include "convert.h"
#include "window_args.h"

namespace efpy {
namespace {

using namespace pybind11::literals;
constexpr ef::CallSite kPython{};

// The convolution and pooling ops are NHWC only.
void check_nhwc(py::handle data_format, const char* op) { check_data_format(data_format, "NHWC", op); }

ef::Tensor optional_tensor(py::handle obj) {
  return obj.is_none() ? ef::Tensor() : to_tensor(obj, std::nullopt);
}

// Docstrings of the ops registered in loops below.
constexpr const char* kMaxPool2dDoc = R"doc(Max pooling over 2-D windows of an NHWC batch of images.

Each output is the maximum of a ksize window of input, per channel. With "SAME"
padding, padded positions never win.

>>> x = ef.reshape(ef.range(16, dtype=ef.float32), [1, 4, 4, 1])
>>> ef.nn.max_pool2d(x, 2, 2, "VALID")[0, :, :, 0].numpy()
array([[ 5.,  7.],
       [13., 15.]], dtype=float32)

Args:
  input: A [batch, height, width, channels] tensor-like of a float dtype.
  ksize: The window: an int, [height, width], or [1, height, width, 1].
  strides: The window's steps, in the same forms as ksize.
  padding: "VALID" (no padding; the window must fit) or "SAME" (output size
    ceil(input size / stride)).
  data_format: None or "NHWC" (the only layout supported).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input's dtype, [batch, out_height, out_width, channels].

Raises:
  InvalidArgumentError: input is not rank 4 or not float, a bad window, stride
    or padding, or a "VALID" window larger than the input.
  UnimplementedError: data_format is not "NHWC".
)doc";
constexpr const char* kAvgPool2dDoc = R"doc(Average pooling over 2-D windows of an NHWC batch of images.

Each output is the mean of a ksize window of input, per channel. With "SAME"
padding the mean counts only the window's positions inside the input (as
TensorFlow).

>>> x = ef.reshape(ef.range(16, dtype=ef.float32), [1, 4, 4, 1])
>>> ef.nn.avg_pool2d(x, 2, 2, "VALID")[0, :, :, 0].numpy()
array([[ 2.5,  4.5],
       [10.5, 12.5]], dtype=float32)

Args:
  input: A [batch, height, width, channels] tensor-like of a float dtype.
  ksize: The window: an int, [height, width], or [1, height, width, 1].
  strides: The window's steps, in the same forms as ksize.
  padding: "VALID" (no padding; the window must fit) or "SAME" (output size
    ceil(input size / stride)).
  data_format: None or "NHWC" (the only layout supported).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input's dtype, [batch, out_height, out_width, channels].

Raises:
  InvalidArgumentError: input is not rank 4 or not float, a bad window, stride
    or padding, or a "VALID" window larger than the input.
  UnimplementedError: data_format is not "NHWC".
)doc";
constexpr const char* kMaxPool2dGradDoc = R"doc(The gradient of max_pool2d with respect to its input.

Each value of `grad` (one per pooling window) goes to the position of its
window's maximum in `input` (the first one on ties); overlapping windows add up.

>>> x = ef.reshape(ef.range(16, dtype=ef.float32), [1, 4, 4, 1])
>>> ef.nn.max_pool2d_grad(x, ef.ones([1, 2, 2, 1]), 2, 2, "VALID")[0, :, :, 0].numpy()
array([[0., 0., 0., 0.],
       [0., 1., 0., 1.],
       [0., 0., 0., 0.],
       [0., 1., 0., 1.]], dtype=float32)

Args:
  input: The [batch, height, width, channels] float input of max_pool2d.
  grad: The gradient of max_pool2d's output: its shape, input's dtype.
  ksize: The window: an int, [height, width], or [1, height, width, 1].
  strides: The window's steps, in the same forms as ksize.
  padding: "VALID" or "SAME", as given to max_pool2d.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input's shape and dtype.

Raises:
  InvalidArgumentError: shapes, dtypes or window attributes that do not fit.
)doc";
constexpr const char* kMaxPool2dGradGradDoc =
    R"doc(The gradient of max_pool2d_grad with respect to its `grad` argument.

Reads `grad` (of input's shape) at the position of each window's maximum in
`input`, giving a tensor of max_pool2d's output shape.

>>> x = ef.reshape(ef.range(16, dtype=ef.float32), [1, 4, 4, 1])
>>> ef.nn.max_pool2d_grad_grad(x, x, 2, 2, "VALID")[0, :, :, 0].numpy()
array([[ 5.,  7.],
       [13., 15.]], dtype=float32)

Args:
  input: The [batch, height, width, channels] float input of max_pool2d.
  grad: A tensor of input's shape and dtype.
  ksize: The window: an int, [height, width], or [1, height, width, 1].
  strides: The window's steps, in the same forms as ksize.
  padding: "VALID" or "SAME", as given to max_pool2d.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input's dtype and of max_pool2d's output shape.

Raises:
  InvalidArgumentError: shapes, dtypes or window attributes that do not fit.
)doc";
// The convolution, pooling and batch-normalization ops of ef.nn.
void bind_conv_ops(py::module_& m) {
  m.def(
      "conv2d",
      [](TensorArg input, TensorArg filters, py::handle strides, const std::string& padding,
         py::handle data_format, py::handle dilations, py::handle) {
        check_nhwc(data_format, "conv2d");
        const auto s = window_ints(strides, "conv2d: strides"),
                   d = window_ints(dilations, "conv2d: dilations", {1});
        return maybe_without_gil(input.value.num_elements(),
                                 [&] { return ef::conv2d(input, filters, s, padding, d, kPython); });
      },
      R"doc(Computes a 2-D convolution (cross-correlation) of an NHWC batch of images.

input [batch, height, width, in_channels] with filters [filter_height,
filter_width, in_channels, out_channels] gives [batch, out_height, out_width,
out_channels]. Dilations > 1 space the filter taps apart (atrous convolution).

>>> ef.nn.conv2d(ef.ones([1, 5, 5, 1]), ef.ones([3, 3, 1, 2]), 2, "SAME").shape
TensorShape([1, 3, 3, 2])

Args:
  input: A rank-4 NHWC tensor-like of a float dtype.
  filters: A rank-4 tensor-like of input's dtype and in_channels.
  strides: An int, [height, width], or [1, height, width, 1]; all positive.
  padding: "SAME" (output size ceil(input size / stride), zeros split as
    TensorFlow does) or "VALID" (no padding). Upper case only.
  data_format: None or "NHWC" (the only layout supported).
  dilations: None (1), an int, [height, width], or [1, height, width, 1].
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input's dtype, [batch, out_height, out_width, out_channels].

Raises:
  InvalidArgumentError: wrong ranks, dtypes or channel counts, a bad
    stride, dilation or padding, or a "VALID" window that does not fit.
  UnimplementedError: data_format is not "NHWC".
)doc",
      "input"_a, "filters"_a, "strides"_a, "padding"_a, "data_format"_a = py::none(),
      "dilations"_a = py::none(), "name"_a = py::none());
  m.def(
      "conv2d_transpose",
      [](TensorArg input, TensorArg filters, ShapeArg output_shape, py::handle strides,
         const std::string& padding, py::handle data_format, py::handle dilations, py::handle) {
        check_nhwc(data_format, "conv2d_transpose");
        const auto s = window_ints(strides, "conv2d_transpose: strides");
        const auto d = window_ints(dilations, "conv2d_transpose: dilations", {1});
        return maybe_without_gil(input.value.num_elements(), [&] {
          return ef::conv2d_transpose(input, filters, output_shape, s, padding, d, kPython);
        });
      },
      R"doc(The transpose of conv2d (sometimes called deconvolution).

input [batch, height, width, out_channels] and filters [filter_height,
filter_width, in_channels, out_channels] give output_shape [batch, out_height,
out_width, in_channels]: the gradient of a conv2d whose output had input's shape.

>>> ef.nn.conv2d_transpose(ef.ones([1, 2, 2, 5]), ef.ones([3, 3, 2, 5]), [1, 4, 4, 2], 2).shape
TensorShape([1, 4, 4, 2])

Args:
  input: A rank-4 NHWC tensor-like of a float dtype.
  filters: A rank-4 tensor-like of input's dtype; its last axis matches input's.
  output_shape: A list of 4 ints, the shape of the result.
  strides: An int, [height, width], or [1, height, width, 1].
  padding: "SAME" (default) or "VALID", as for the conv2d being transposed.
  data_format: None or "NHWC" (the only layout supported).
  dilations: None (1), an int, [height, width], or [1, height, width, 1].
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input's dtype and of shape output_shape.

Raises:
  InvalidArgumentError: shapes that a conv2d with these attributes would not
    map onto each other, or bad attributes.
  UnimplementedError: data_format is not "NHWC".
)doc",
      "input"_a, "filters"_a, "output_shape"_a, "strides"_a, "padding"_a = "SAME",
      "data_format"_a = py::none(), "dilations"_a = py::none(), "name"_a = py::none());
  m.def(
      "depthwise_conv2d",
      [](TensorArg input, TensorArg filter, py::handle strides, const std::string& padding,
         py::handle data_format, py::handle dilations, py::handle) {
        check_nhwc(data_format, "depthwise_conv2d");
        const auto s = window_ints(strides, "depthwise_conv2d: strides"),
                   d = window_ints(dilations, "depthwise_conv2d: dilations", {1});
        return maybe_without_gil(input.value.num_elements(),
                                 [&] { return ef::depthwise_conv2d(input, filter, s, padding, d, kPython); });
      },
      R"doc(Convolves each channel of an NHWC batch of images with its own filters.

input [batch, height, width, channels] with filter [filter_height,
filter_width, channels, channel_multiplier] gives [batch, out_height,
out_width, channels * channel_multiplier], output channel c * multiplier + m
from input channel c and filter m (as tf.nn.depthwise_conv2d).

>>> ef.nn.depthwise_conv2d(ef.ones([1, 5, 5, 3]), ef.ones([3, 3, 3, 2]), 1, "SAME").shape
TensorShape([1, 5, 5, 6])

Args:
  input: A rank-4 NHWC tensor-like of a float dtype (known height, width and
    channels).
  filter: A rank-4 tensor-like of input's dtype and channel count.
  strides: An int, [height, width], or [1, height, width, 1]; all positive.
  padding: "SAME" or "VALID", as for conv2d.
  data_format: None or "NHWC" (the only layout supported).
  dilations: None (1), an int, [height, width], or [1, height, width, 1].
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input's dtype.

Raises:
  InvalidArgumentError: wrong ranks, dtypes or channel counts, bad attributes,
    or a "VALID" window that does not fit.
  UnimplementedError: data_format is not "NHWC".
)doc",
      "input"_a, "filter"_a, "strides"_a, "padding"_a, "data_format"_a = py::none(),
      "dilations"_a = py::none(), "name"_a = py::none());
  m.def(
      "conv2d_backprop_input",
      [](ShapeArg input_sizes, TensorArg filters, TensorArg out_backprop, py::handle strides,
         const std::string& padding, py::handle dilations, py::handle) {
        return ef::conv2d_backprop_input(
            input_sizes, filters, out_backprop, window_ints(strides, "conv2d_backprop_input: strides"),
            padding, window_ints(dilations, "conv2d_backprop_input: dilations", {1}), kPython);
      },
      R"doc(The gradient of conv2d with respect to its input (tf.raw_ops.Conv2DBackpropInput).

Maps out_backprop, the gradient of conv2d's output, back to an input of shape
input_sizes; linear in filters and in out_backprop.

>>> ef.nn.conv2d_backprop_input([1, 4, 4, 2], ef.ones([3, 3, 2, 5]), ef.ones([1, 4, 4, 5]), 1, "SAME").shape
TensorShape([1, 4, 4, 2])

Args:
  input_sizes: A list of 4 ints, [batch, height, width, in_channels].
  filters: A [filter_height, filter_width, in_channels, out_channels] float tensor-like.
  out_backprop: A [batch, out_height, out_width, out_channels] tensor-like of
    filters' dtype.
  strides: An int, [height, width], or [1, height, width, 1].
  padding: "SAME" or "VALID", as given to conv2d.
  dilations: None (1), an int, [height, width], or [1, height, width, 1].
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of filters' dtype and of shape input_sizes.

Raises:
  InvalidArgumentError: shapes, dtypes or attributes that do not fit together.
)doc",
      "input_sizes"_a, "filters"_a, "out_backprop"_a, "strides"_a, "padding"_a, "dilations"_a = py::none(),
      "name"_a = py::none());
  m.def(
      "conv2d_backprop_filter",
      [](TensorArg input, ShapeArg filter_sizes, TensorArg out_backprop, py::handle strides,
         const std::string& padding, py::handle dilations, py::handle) {
        return ef::conv2d_backprop_filter(
            input, filter_sizes, out_backprop, window_ints(strides, "conv2d_backprop_filter: strides"),
            padding, window_ints(dilations, "conv2d_backprop_filter: dilations", {1}), kPython);
      },
      R"doc(The gradient of conv2d with respect to its filters (tf.raw_ops.Conv2DBackpropFilter).

>>> ef.nn.conv2d_backprop_filter(ef.ones([1, 4, 4, 2]), [3, 3, 2, 5], ef.ones([1, 4, 4, 5]), 1, "SAME").shape
TensorShape([3, 3, 2, 5])

Args:
  input: The [batch, height, width, in_channels] float input of conv2d.
  filter_sizes: A list of 4 ints, [filter_height, filter_width, in_channels,
    out_channels].
  out_backprop: The gradient of conv2d's output, [batch, out_height, out_width,
    out_channels], of input's dtype.
  strides: An int, [height, width], or [1, height, width, 1].
  padding: "SAME" or "VALID", as given to conv2d.
  dilations: None (1), an int, [height, width], or [1, height, width, 1].
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input's dtype and of shape filter_sizes.

Raises:
  InvalidArgumentError: shapes, dtypes or attributes that do not fit together.
)doc",
      "input"_a, "filter_sizes"_a, "out_backprop"_a, "strides"_a, "padding"_a, "dilations"_a = py::none(),
      "name"_a = py::none());
  using Pool = ef::Tensor (*)(const ef::Tensor&, const std::vector<int64_t>&, const std::vector<int64_t>&,
                              const std::string&, ef::CallSite);
  struct PoolDef {
    const char* name;
    Pool op;
    const char* doc;
  };
  for (auto [name, op, doc] : {PoolDef{"max_pool2d", &ef::max_pool2d, kMaxPool2dDoc},
                               PoolDef{"avg_pool2d", &ef::avg_pool2d, kAvgPool2dDoc}}) {
    m.def(
        name,
        [name = std::string(name), op = op](TensorArg input, py::handle ksize, py::handle strides,
                                            const std::string& padding, py::handle data_format, py::handle) {
          check_nhwc(data_format, name.c_str());
          const auto k = window_ints(ksize, (name + ": ksize").c_str());
          const auto s = window_ints(strides, (name + ": strides").c_str());
          return maybe_without_gil(input.value.num_elements(),
                                   [&] { return op(input, k, s, padding, kPython); });
        },
        doc, "input"_a, "ksize"_a, "strides"_a, "padding"_a, "data_format"_a = py::none(),
        "name"_a = py::none());
  }
  using PoolGrad = ef::Tensor (*)(const ef::Tensor&, const ef::Tensor&, const std::vector<int64_t>&,
                                  const std::vector<int64_t>&, const std::string&, ef::CallSite);
  struct PoolGradDef {
    const char* name;
    PoolGrad op;
    const char* doc;
  };
  for (auto [name, op, doc] :
       {PoolGradDef{"max_pool2d_grad", &ef::max_pool2d_grad, kMaxPool2dGradDoc},
        PoolGradDef{"max_pool2d_grad_grad", &ef::max_pool2d_grad_grad, kMaxPool2dGradGradDoc}}) {
    m.def(
        name,
        [op = op](TensorArg input, TensorArg grad, py::handle ksize, py::handle strides,
                  const std::string& padding, py::handle) {
          return op(input, grad, window_ints(ksize, "ksize"), window_ints(strides, "strides"), padding,
                    kPython);
        },
        doc, "input"_a, "grad"_a, "ksize"_a, "strides"_a, "padding"_a, "name"_a = py::none());
  }
  m.def(
      "avg_pool2d_grad",
      [](ShapeArg input_sizes, TensorArg grad, py::handle ksize, py::handle strides,
         const std::string& padding, py::handle) {
        return ef::avg_pool2d_grad(input_sizes, grad, window_ints(ksize, "avg_pool2d_grad: ksize"),
                                   window_ints(strides, "avg_pool2d_grad: strides"), padding, kPython);
      },
      R"doc(The gradient of avg_pool2d with respect to its input.

Spreads each value of `grad` evenly over its pooling window in an input of shape
input_sizes; overlapping windows add up.

>>> ef.nn.avg_pool2d_grad([1, 2, 2, 1], ef.ones([1, 1, 1, 1]), 2, 2, "VALID")[0, :, :, 0].numpy()
array([[0.25, 0.25],
       [0.25, 0.25]], dtype=float32)

Args:
  input_sizes: A list of 4 ints, the [batch, height, width, channels] shape of
    avg_pool2d's input.
  grad: The gradient of avg_pool2d's output, a float tensor-like.
  ksize: The window: an int, [height, width], or [1, height, width, 1].
  strides: The window's steps, in the same forms as ksize.
  padding: "VALID" or "SAME", as given to avg_pool2d.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of grad's dtype and of shape input_sizes.

Raises:
  InvalidArgumentError: shapes or window attributes that do not fit.
)doc",
      "input_sizes"_a, "grad"_a, "ksize"_a, "strides"_a, "padding"_a, "name"_a = py::none());
  m.def(
      "batch_normalization",
      [](TensorArg x, TensorArg mean, TensorArg variance, py::handle offset, py::handle scale,
         double variance_epsilon, py::handle) {
        return ef::batch_normalization(x, mean, variance, optional_tensor(offset), optional_tensor(scale),
                                       variance_epsilon, kPython);
      },
      R"doc(Normalizes x: (x - mean) / sqrt(variance + variance_epsilon) * scale + offset.

mean, variance, offset and scale broadcast against x (as tf.nn.batch_normalization);
ef.nn.moments computes mean and variance.

>>> ef.nn.batch_normalization([1., 3.], 2., 1., 10., 2., 0.).numpy()
array([ 8., 12.], dtype=float32)

Args:
  x: A tensor-like of a float dtype.
  mean: A tensor-like of x's dtype that broadcasts against x.
  variance: A tensor-like of x's dtype that broadcasts against x.
  offset: None (0), or a tensor-like of x's dtype (beta).
  scale: None (1), or a tensor-like of x's dtype (gamma).
  variance_epsilon: A small float added to the variance.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and of the broadcast shape.

Raises:
  InvalidArgumentError: the dtypes differ or the shapes do not broadcast.
)doc",
      "x"_a, "mean"_a, "variance"_a, "offset"_a, "scale"_a, "variance_epsilon"_a, "name"_a = py::none());
  m.def(
      "moments",
      [](TensorArg x, py::handle axes, py::handle, bool keepdims, py::handle) {
        auto [mean, variance] = ef::moments(x, to_ints(axes, "moments: axes"), keepdims, kPython);
        return py::make_tuple(mean, variance);
      },
      R"doc(Computes the mean and (population) variance of x over `axes`.

For batch normalization of NHWC images the axes are [0, 1, 2].

>>> mean, variance = ef.nn.moments([[1., 2.], [3., 4.]], axes=[0])
>>> mean.numpy(), variance.numpy()
(array([2., 3.], dtype=float32), array([1., 1.], dtype=float32))

Args:
  x: A tensor-like of a float dtype.
  axes: An int or a list of ints, the axes to reduce.
  shift: Ignored (TensorFlow compatibility).
  keepdims: If True, reduced axes stay with size 1.
  name: Ignored (TensorFlow compatibility).

Returns:
  A tuple (mean, variance) of Tensors of x's dtype.

Raises:
  InvalidArgumentError: x is not float, or an axis is out of range or repeated.
)doc",
      "x"_a, "axes"_a, "shift"_a = py::none(), "keepdims"_a = false, "name"_a = py::none());
}

}  // namespace

// l2_normalize and local_response_normalization (normalization_ops.cpp).
void bind_normalization_ops(py::module_& m);
// conv1d and conv3d (conv_composite_ops.cpp).
void bind_conv_composite_ops(py::module_& m);

void bind_nn_ops(py::module_& m) {
  bind_normalization_ops(m);
  bind_conv_composite_ops(m);
  // ---- nn ----
  m.def(
      "softmax",
      [](TensorArg x, int64_t axis, py::handle) {
        return maybe_without_gil(x.value.num_elements(), [&] { return ef::softmax(x, axis, kPython); });
      },
      R"doc(Computes softmax: exp(logits) / sum(exp(logits)) along `axis`, stably.

>>> ef.nn.softmax([1., 1.]).numpy()
array([0.5, 0.5], dtype=float32)

Args:
  logits: A tensor-like of a float dtype and rank >= 1.
  axis: An int, the class axis (default -1).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of logits' dtype and shape; each slice along axis sums to 1.

Raises:
  InvalidArgumentError: logits is a scalar or not float, or axis is out of range.
)doc",
      "logits"_a, "axis"_a = -1, "name"_a = py::none());
  m.def(
      "log_softmax",
      [](TensorArg x, int64_t axis, py::handle) {
        return maybe_without_gil(x.value.num_elements(), [&] { return ef::log_softmax(x, axis, kPython); });
      },
      R"doc(Computes log(softmax(logits)) = logits - log(sum(exp(logits))) along `axis`, stably.

>>> ef.nn.log_softmax([0., 0.]).numpy()
array([-0.6931472, -0.6931472], dtype=float32)

Args:
  logits: A tensor-like of a float dtype and rank >= 1.
  axis: An int, the class axis (default -1).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of logits' dtype and shape.

Raises:
  InvalidArgumentError: logits is a scalar or not float, or axis is out of range.
)doc",
      "logits"_a, "axis"_a = -1, "name"_a = py::none());
  m.def(
      "softmax_cross_entropy_with_logits",
      [](TensorArg labels, TensorArg logits, int64_t axis, py::handle) {
        return ef::softmax_cross_entropy_with_logits(labels, logits, axis, kPython);
      },
      R"doc(Computes -sum(labels * log_softmax(logits)) along `axis`, per example.

labels is a probability distribution over the classes (one-hot or soft).

>>> ef.nn.softmax_cross_entropy_with_logits([[0., 1.]], [[0., 0.]]).numpy()
array([0.6931472], dtype=float32)

Args:
  labels: A tensor-like of logits' shape and dtype.
  logits: A tensor-like of a float dtype, the unnormalized log-probabilities.
  axis: An int, the class axis (default -1).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of logits' dtype and of logits' shape without `axis`.

Raises:
  InvalidArgumentError: labels and logits differ in shape or dtype.
)doc",
      "labels"_a, "logits"_a, "axis"_a = -1, "name"_a = py::none());
  m.def(
      "_ctc_loss",
      [](TensorArg labels, TensorArg logits, TensorArg label_length, TensorArg logit_length,
         bool logits_time_major, int64_t blank_index) {
        return ef::ctc_loss(labels, logits, label_length, logit_length, logits_time_major, blank_index,
                            kPython);
      },
      "ef::ctc_loss (ef.nn.ctc_loss is the documented form).", "labels"_a, "logits"_a, "label_length"_a,
      "logit_length"_a, "logits_time_major"_a = true, "blank_index"_a = 0);
  m.def(
      "sparse_softmax_cross_entropy_with_logits",
      [](TensorArg labels, TensorArg logits, py::handle) {
        return ef::sparse_softmax_cross_entropy_with_logits(labels, logits, kPython);
      },
      R"doc(Computes -log_softmax(logits)[label] per example, for integer class ids.

>>> ef.nn.sparse_softmax_cross_entropy_with_logits([1], [[0., 0.]]).numpy()
array([0.6931472], dtype=float32)

Args:
  labels: An int32 or int64 tensor-like of shape logits.shape[:-1], each in
    [0, num_classes).
  logits: A [..., num_classes] tensor-like of a float dtype.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of logits' dtype and of labels' shape.

Raises:
  InvalidArgumentError: a label outside [0, num_classes) (named in the message),
    labels that are not integers, or shapes that do not fit.
)doc",
      "labels"_a, "logits"_a, "name"_a = py::none());
  m.def(
      "sigmoid_cross_entropy_with_logits",
      [](TensorArg labels, TensorArg logits, py::handle) {
        return ef::sigmoid_cross_entropy_with_logits(labels, logits, kPython);
      },
      R"doc(Computes the elementwise logistic loss of logits x against labels z.

max(x, 0) - x * z + log1p(exp(-|x|)): stable for large |x|.

>>> ef.nn.sigmoid_cross_entropy_with_logits([1.], [0.]).numpy()
array([0.6931472], dtype=float32)

Args:
  labels: A tensor-like of logits' shape and dtype, values in [0, 1].
  logits: A tensor-like of a float dtype.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of logits' dtype and shape.

Raises:
  InvalidArgumentError: labels and logits differ in shape or dtype.
)doc",
      "labels"_a, "logits"_a, "name"_a = py::none());
  m.def(
      "bias_add",
      [](TensorArg value, TensorArg bias, py::handle data_format, py::handle) {
        return ef::bias_add(value, bias, data_format.is_none() ? "NHWC" : data_format.cast<std::string>(),
                            kPython);
      },
      R"doc(Adds a 1-D bias to `value` along its channel axis.

The channel axis is the last one for "NHWC" (the default) and axis 1 for "NCHW".

>>> ef.nn.bias_add(ef.zeros([2, 3]), [1., 2., 3.]).numpy()
array([[1., 2., 3.],
       [1., 2., 3.]], dtype=float32)

Args:
  value: A tensor-like of rank >= 2 and a float dtype.
  bias: A 1-D tensor-like of value's dtype, one entry per channel.
  data_format: None or "NHWC" (channels last), or "NCHW" (channels at axis 1).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of value's dtype and shape.

Raises:
  InvalidArgumentError: value has rank < 2, bias does not match the channel
    count or dtype, or a data_format other than "NHWC" / "NCHW".
)doc",
      "value"_a, "bias"_a, "data_format"_a = py::none(), "name"_a = py::none());
  m.def(
      "dropout",
      [](TensorArg x, double rate, py::handle noise_shape, py::handle seed, py::handle) {
        std::optional<ef::Shape> ns;
        if (!noise_shape.is_none()) ns = to_shape(noise_shape, "dropout: noise_shape");
        return ef::dropout(x, rate, seed_of(seed), ns, kPython);
      },
      R"doc(Zeroes each element with probability `rate` and scales the others by 1 / (1 - rate).

Always applied (it has no training flag; keras.layers.Dropout has one). Seeds
follow TensorFlow's global / op seed rules (see ef.random.set_seed).

>>> y = ef.nn.dropout(ef.ones([1000]), 0.5, seed=1)
>>> sorted(set(y.numpy().tolist()))
[0.0, 2.0]

Args:
  x: A tensor-like of a float dtype.
  rate: A float in [0, 1), the probability of dropping each element.
  noise_shape: None, or a shape broadcastable to x's: elements that share a
    position of it are kept or dropped together.
  seed: None, or an int op seed.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: rate outside [0, 1), x not float, or a noise_shape that
    does not broadcast.
)doc",
      "x"_a, "rate"_a, "noise_shape"_a = py::none(), "seed"_a = py::none(), "name"_a = py::none());

  bind_conv_ops(m);
}

}  // namespace efpy
