// Creation, reduction, linear-algebra, neural-network and random ops, with
// TensorFlow's argument names.
#include "bindings.h"
#include "convert.h"

namespace efpy {
namespace {

using namespace pybind11::literals;
constexpr ef::CallSite kPython{};

using ReduceOp = ef::Tensor (*)(const ef::Tensor&, const ef::Axes&, bool, ef::CallSite);

template <ReduceOp op>
void reduction(py::module_& m, const char* name, const char* doc) {
  m.def(
      name,
      [](TensorArg x, AxesArg axis, bool keepdims, py::handle) {
        return maybe_without_gil(x.value.num_elements(), [&] { return op(x, axis, keepdims, kPython); });
      },
      doc, "input_tensor"_a, "axis"_a = py::none(), "keepdims"_a = false, "name"_a = py::none());
}

std::optional<int64_t> seed_of(py::handle seed) {
  if (seed.is_none()) return std::nullopt;
  return int64_of(seed, "seed");
}

// A window attribute (strides, ksize, dilations): an int or a sequence of 1, 2 or 4 ints.
std::vector<int64_t> window_ints(py::handle obj, const char* what, std::vector<int64_t> if_none = {}) {
  if (obj.is_none() && !if_none.empty()) return if_none;
  if (PyLong_Check(obj.ptr())) return {int64_of(obj, what)};
  return to_ints(obj, what);
}

// The convolution and pooling ops are NHWC only.
void check_nhwc(py::handle data_format, const char* op) {
  if (!data_format.is_none() && data_format.cast<std::string>() != "NHWC")
    throw ef::UnimplementedError(std::string(op) + ": only data_format \"NHWC\" is supported, got \"" +
                                 data_format.cast<std::string>() + "\"");
}

ef::Tensor optional_tensor(py::handle obj) { return obj.is_none() ? ef::Tensor() : to_tensor(obj, std::nullopt); }

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
constexpr const char* kArgmaxDoc = R"doc(Returns the index of the largest value along `axis`.

Ties give the first index; the first NaN counts as the largest (as NumPy).

>>> ef.argmax([[1., 5.], [3., 2.]]).numpy()
array([1, 0])
>>> ef.argmax([[1., 5.], [3., 2.]], axis=1, output_type=ef.int32).numpy()
array([1, 0], dtype=int32)

Args:
  input: A tensor-like of any dtype, rank >= 1.
  axis: An int (negative counts from the end); None means 0, as TensorFlow.
  output_type: int64 (default) or int32.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of output_type, input's shape without `axis`.

Raises:
  InvalidArgumentError: input is a scalar, the axis is out of range or empty,
    or it is too long for int32 output.
)doc";
constexpr const char* kArgminDoc = R"doc(Returns the index of the smallest value along `axis`.

Ties give the first index; the first NaN counts as the smallest (as NumPy).

>>> ef.argmin([3, 1, 2]).numpy()
array(1)

Args:
  input: A tensor-like of any dtype, rank >= 1.
  axis: An int (negative counts from the end); None means 0, as TensorFlow.
  output_type: int64 (default) or int32.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of output_type, input's shape without `axis`.

Raises:
  InvalidArgumentError: input is a scalar, the axis is out of range or empty,
    or it is too long for int32 output.
)doc";
constexpr const char* kCumsumDoc = R"doc(Returns the cumulative sum of x along `axis`.

>>> ef.cumsum([1, 2, 3]).numpy()
array([1, 3, 6], dtype=int32)
>>> ef.cumsum([1, 2, 3], exclusive=True, reverse=True).numpy()
array([5, 3, 0], dtype=int32)

Args:
  x: A tensor-like of rank >= 1 and a numeric dtype (not bool).
  axis: An int; negative values count from the end (default 0).
  exclusive: If True, each output leaves out its own element (the first is 0).
  reverse: If True, accumulate from the end of the axis.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: x is a scalar or bool, or axis is out of range.
)doc";
constexpr const char* kCumprodDoc = R"doc(Returns the cumulative product of x along `axis`.

>>> ef.cumprod([1., 2., 3.]).numpy()
array([1., 2., 6.], dtype=float32)
>>> ef.cumprod([1, 2, 3], exclusive=True).numpy()
array([1, 1, 2], dtype=int32)

Args:
  x: A tensor-like of rank >= 1 and a numeric dtype (not bool).
  axis: An int; negative values count from the end (default 0).
  exclusive: If True, each output leaves out its own element (the first is 1).
  reverse: If True, accumulate from the end of the axis.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: x is a scalar or bool, or axis is out of range.
)doc";

// The convolution, pooling and batch-normalization ops of ef.nn.
void bind_conv_ops(py::module_& m) {
  m.def(
      "conv2d",
      [](TensorArg input, TensorArg filters, py::handle strides, const std::string& padding,
         py::handle data_format, py::handle dilations, py::handle) {
        check_nhwc(data_format, "conv2d");
        const auto s = window_ints(strides, "conv2d: strides"), d = window_ints(dilations, "conv2d: dilations", {1});
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
      "conv2d_backprop_input",
      [](ShapeArg input_sizes, TensorArg filters, TensorArg out_backprop, py::handle strides,
         const std::string& padding, py::handle dilations, py::handle) {
        return ef::conv2d_backprop_input(input_sizes, filters, out_backprop,
                                         window_ints(strides, "conv2d_backprop_input: strides"), padding,
                                         window_ints(dilations, "conv2d_backprop_input: dilations", {1}), kPython);
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
        return ef::conv2d_backprop_filter(input, filter_sizes, out_backprop,
                                          window_ints(strides, "conv2d_backprop_filter: strides"), padding,
                                          window_ints(dilations, "conv2d_backprop_filter: dilations", {1}), kPython);
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
          return maybe_without_gil(input.value.num_elements(), [&] { return op(input, k, s, padding, kPython); });
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
          return op(input, grad, window_ints(ksize, "ksize"), window_ints(strides, "strides"), padding, kPython);
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

// TensorFlow refuses to change a tensor's dtype by conversion (ef.cast does that): a
// silent cast would truncate floats given to an integer dtype.
void check_no_tensor_cast(const char* op, py::handle value, const std::optional<ef::DType>& dtype) {
  if (!dtype || !(py::isinstance<ef::Tensor>(value) || py::isinstance<ef::Variable>(value))) return;
  const ef::DType have = py::isinstance<ef::Tensor>(value) ? value.cast<const ef::Tensor&>().dtype()
                                                           : value.cast<const ef::Variable&>().dtype();
  if (have != *dtype)
    throw ef::InvalidArgumentError(std::string(op) + ": value is a tensor of dtype " +
                                   std::string(ef::name(have)) + ", not the requested " +
                                   std::string(ef::name(*dtype)) + "; use ef.cast to convert it");
}

ef::Tensor constant(py::handle value, DTypeArg dtype, py::handle shape, py::handle /*name*/) {
  check_no_tensor_cast("constant", value, dtype.value);
  ef::Tensor t = to_tensor(value, dtype.value);
  if (shape.is_none()) return t;
  ef::Shape s = to_shape(shape);
  if (t.num_elements() == 1 && s.num_elements() != 1)
    return ef::broadcast_to(ef::reshape(t, ef::Shape{}, kPython), s, kPython).contiguous();
  return ef::reshape(t, s, kPython);
}

}  // namespace

void bind_other_ops(py::module_& m) {
  // ---- printing (ef.print builds the format in Python) ----
  m.def(
      "_print_format",
      [](std::string format, TensorListArg inputs, int stream) {
        ef::print_format(std::move(format), inputs, static_cast<ef::PrintStream>(stream), kPython);
      },
      "format"_a, "inputs"_a, "stream"_a);
  // ---- creation ----
  m.def(
      "as_dtype", [](py::handle d) { return to_dtype(d); },
      R"doc(Converts a dtype specification to an ef.DType.

>>> ef.as_dtype("float16")
ef.float16
>>> ef.as_dtype(np.int64)
ef.int64

Args:
  type_value: An ef.DType, a name ("float32", "half", "bfloat16", ...), a NumPy
    dtype or scalar type (int8/int16/uint8/uint16 are refused), or one of
    Python's float (float32), int (int32) and bool.

Returns:
  The ef.DType.

Raises:
  TypeError: the value names no dtype eagerflow has.
)doc",
      "type_value"_a);
  m.def("constant", &constant,
        R"doc(Creates a tensor from a value: a Python scalar, (nested) list, NumPy array or tensor.

Python floats become float32, ints int32 (int64 when a value needs it), bools
bool; NumPy arrays keep their dtype (int8/16 and uint8/16 widen to int32). A list
that holds tensors is their ef.stack, so gradients flow through it.

>>> ef.constant([[1, 2], [3, 4]]).numpy()
array([[1, 2],
       [3, 4]], dtype=int32)
>>> ef.constant(0.5, shape=[2]).numpy()
array([0.5, 0.5], dtype=float32)

Args:
  value: The value: a number, a (nested, not ragged) list or tuple, a NumPy
    array, a Tensor or a Variable.
  dtype: None (inferred), or the dtype to convert to. Lists of floats are not
    truncated to an integer dtype; a tensor must already have it (ef.cast
    converts tensors), as in TensorFlow.
  shape: None, or the result's shape: a single value fills it, otherwise the
    value is reshaped to it (the element counts must agree).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor.

Raises:
  TypeError: the value cannot be converted (strings, objects), or a float value
    would lose its fraction in an integer dtype.
  ValueError: an integer does not fit in 64 bits (or in int32 when asked for),
    or the list is ragged.
  InvalidArgumentError: the value does not reshape to `shape`, or is a tensor of
    another dtype than `dtype`.
)doc",
        "value"_a, "dtype"_a = py::none(), "shape"_a = py::none(), "name"_a = py::none());
  m.def(
      "convert_to_tensor",
      [](py::handle value, DTypeArg dtype, py::handle, py::handle) {
        check_no_tensor_cast("convert_to_tensor", value, dtype.value);
        return to_tensor(value, dtype.value);
      },
      R"doc(Converts a tensor-like value to a Tensor.

"Tensor-like", across eagerflow's docs, means anything this accepts: a Tensor, a
Variable (read, so tapes see it), a NumPy array or scalar (keeps its dtype;
int8/16 and uint8/16 widen to int32), a Python number or a (nested) list or tuple
(float32, int32 or int64 when needed, bool). A list that holds tensors is their
ef.stack.

>>> ef.convert_to_tensor([1., 2.]).numpy()
array([1., 2.], dtype=float32)
>>> ef.convert_to_tensor(np.arange(3)).dtype
ef.int64

Args:
  value: A tensor-like.
  dtype: None, or the dtype to convert to. A tensor or variable must already
    have it (as in TensorFlow; ef.cast changes a tensor's dtype).
  dtype_hint: Ignored (TensorFlow compatibility).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor (value itself when it already is one of `dtype`).

Raises:
  TypeError: the value has no tensor form, or a float would lose its fraction.
  ValueError: an integer does not fit in 64 bits, or a list is ragged.
  InvalidArgumentError: value is a tensor of another dtype than `dtype`.
)doc",
      "value"_a, "dtype"_a = py::none(), "dtype_hint"_a = py::none(), "name"_a = py::none());
  m.def(
      "zeros",
      [](ShapeArg shape, DTypeArg dtype, py::handle) {
        return ef::zeros(shape, dtype.value.value_or(ef::DType::Float32), kPython);
      },
      R"doc(Creates a tensor of `shape` filled with zeros.

>>> ef.zeros([2, 3]).shape
TensorShape([2, 3])
>>> ef.zeros([2], ef.int64).numpy()
array([0, 0])

Args:
  shape: A list or tuple of non-negative ints, an int, or a 1-D integer tensor.
  dtype: Any dtype (default float32).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of `dtype` and `shape`, on the device of the enclosing ef.device.

Raises:
  InvalidArgumentError: a negative or too large dimension.
)doc",
      "shape"_a, "dtype"_a = py::none(), "name"_a = py::none());
  m.def(
      "ones",
      [](ShapeArg shape, DTypeArg dtype, py::handle) {
        return ef::ones(shape, dtype.value.value_or(ef::DType::Float32), kPython);
      },
      R"doc(Creates a tensor of `shape` filled with ones.

>>> ef.ones([2], ef.int32).numpy()
array([1, 1], dtype=int32)

Args:
  shape: A list or tuple of non-negative ints, an int, or a 1-D integer tensor.
  dtype: Any dtype (default float32; bool gives True).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of `dtype` and `shape`, on the device of the enclosing ef.device.

Raises:
  InvalidArgumentError: a negative or too large dimension.
)doc",
      "shape"_a, "dtype"_a = py::none(), "name"_a = py::none());
  m.def(
      "zeros_like",
      [](TensorArg x, DTypeArg dtype, py::handle) {
        ef::Tensor z = ef::zeros_like(x, kPython);
        return dtype.value ? ef::cast(z, *dtype.value, kPython) : z;
      },
      R"doc(Creates a tensor of zeros with the shape (and by default the dtype) of `input`.

Works on symbolic tensors with unknown dimensions too.

>>> ef.zeros_like([[1, 2]]).numpy()
array([[0, 0]], dtype=int32)

Args:
  input: A tensor-like.
  dtype: None (input's dtype), or the dtype of the result.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input's shape.
)doc",
      "input"_a, "dtype"_a = py::none(), "name"_a = py::none());
  m.def(
      "ones_like",
      [](TensorArg x, DTypeArg dtype, py::handle) {
        ef::Tensor o = ef::ones_like(x, kPython);
        return dtype.value ? ef::cast(o, *dtype.value, kPython) : o;
      },
      R"doc(Creates a tensor of ones with the shape (and by default the dtype) of `input`.

Works on symbolic tensors with unknown dimensions too.

>>> ef.ones_like([1, 2], dtype=ef.float32).numpy()
array([1., 1.], dtype=float32)

Args:
  input: A tensor-like.
  dtype: None (input's dtype), or the dtype of the result.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input's shape.
)doc",
      "input"_a, "dtype"_a = py::none(), "name"_a = py::none());
  m.def(
      "fill",
      [](ShapeArg dims, py::handle value, py::handle) {
        ef::TensorOrScalar v = to_operand(value);
        if (v.is_tensor()) {
          if (v.tensor().rank() != 0)
            throw ef::InvalidArgumentError("fill: value must be a scalar, got shape " + v.tensor().shape().to_string());
          return ef::broadcast_to(v.tensor(), dims, kPython).contiguous();
        }
        // A Python number has TensorFlow's default dtype (float32, int32, bool).
        return ef::fill(dims, v, to_tensor(value).dtype(), kPython);
      },
      R"doc(Creates a tensor of shape `dims` with every element equal to `value`.

>>> ef.fill([2, 2], 7).numpy()
array([[7, 7],
       [7, 7]], dtype=int32)

Args:
  dims: A list or tuple of non-negative ints (or a 1-D integer tensor).
  value: A scalar: a Python number (float32, int32 or bool, as TensorFlow) or a
    0-d tensor (its dtype).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of value's dtype and of shape dims.

Raises:
  InvalidArgumentError: value is not a scalar, or a dimension is negative.
)doc",
      "dims"_a, "value"_a, "name"_a = py::none());
  m.def(
      "range",
      [](py::handle start, py::handle limit, py::handle delta, DTypeArg dtype, py::handle) {
        if (limit.is_none()) std::swap(start, limit), start = py::int_(0);  // range(n)
        // As TensorFlow: each argument converted on its own (a Python float is float32, an
        // int int32) or to `dtype`, which casts tensors; ef::range infers the widest dtype.
        ef::Tensor a = to_tensor(start, dtype.value), b = to_tensor(limit, dtype.value),
                   d = to_tensor(delta, dtype.value);
        if (dtype.value) return ef::range(a, b, d, *dtype.value, kPython);
        return ef::range(a, b, d, kPython);
      },
      R"doc(Creates the sequence start, start + delta, ... up to but excluding `limit`.

As Python's range: ef.range(n) counts from 0. Without `dtype` the result has
the widest of the arguments' dtypes in int32 < int64 < float16 < bfloat16 <
float32 < float64, a Python int counting as int32 and a Python float as float32
(TensorFlow's rule); with `dtype`, tensor arguments are cast to it.

>>> ef.range(5).numpy()
array([0, 1, 2, 3, 4], dtype=int32)
>>> ef.range(5, 0, -2).numpy()
array([5, 3, 1], dtype=int32)
>>> ef.range(0., 1., 0.25).numpy()
array([0.  , 0.25, 0.5 , 0.75], dtype=float32)
>>> ef.range(ef.constant(3, ef.int64)).numpy()
array([0, 1, 2])

Args:
  start: A number or 0-d eager tensor; the limit when `limit` is None (start
    is then 0).
  limit: A number or 0-d eager tensor, the (excluded) end, or None.
  delta: A non-zero number or 0-d eager tensor, the step (default 1).
  dtype: None, or the dtype of the result.
  name: Ignored (TensorFlow compatibility).

Returns:
  A 1-D Tensor.

Raises:
  InvalidArgumentError: delta is 0, an argument is not a scalar, or (without
    dtype) a tensor argument is bool.
  UnimplementedError: an argument is a symbolic tensor (inside a function or
    graph): range needs the values.
  TypeError: a Python float given an integer dtype (use ef.cast to truncate).
)doc",
      "start"_a, "limit"_a = py::none(), "delta"_a = 1, "dtype"_a = py::none(), "name"_a = py::none());
  m.def(
      "linspace",
      [](double start, double stop, int64_t num, DTypeArg dtype, py::handle) {
        return ef::linspace(start, stop, num, dtype.value.value_or(ef::DType::Float32), kPython);
      },
      R"doc(Creates `num` evenly spaced values from start to stop, both included.

>>> ef.linspace(0., 1., 5).numpy()
array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float32)

Args:
  start: A Python number, the first value.
  stop: A Python number, the last value (when num > 1).
  num: A non-negative int, the number of values.
  dtype: A float dtype (default float32).
  name: Ignored (TensorFlow compatibility).

Returns:
  A 1-D Tensor of `dtype` with num values.

Raises:
  InvalidArgumentError: dtype is not a float dtype, or num is negative.
)doc",
      "start"_a, "stop"_a, "num"_a, "dtype"_a = py::none(), "name"_a = py::none());
  m.def(
      "eye",
      [](int64_t rows, std::optional<int64_t> columns, DTypeArg dtype, py::handle) {
        return ef::eye(rows, columns.value_or(-1), dtype.value.value_or(ef::DType::Float32), kPython);
      },
      R"doc(Creates an identity matrix (ones on the diagonal, zeros elsewhere).

>>> ef.eye(2, 3).numpy()
array([[1., 0., 0.],
       [0., 1., 0.]], dtype=float32)

Args:
  num_rows: An int, the number of rows.
  num_columns: An int, the number of columns; None means num_rows.
  dtype: Any dtype (default float32).
  name: Ignored (TensorFlow compatibility).

Returns:
  A [num_rows, num_columns] Tensor of `dtype`.

Raises:
  InvalidArgumentError: a negative size.
)doc",
      "num_rows"_a, "num_columns"_a = py::none(), "dtype"_a = py::none(), "name"_a = py::none());

  // ---- reductions and scans ----
  reduction<ef::reduce_sum>(m, "reduce_sum", R"doc(Computes the sum of elements across axes of a tensor.

float32 sums accumulate in float64; integer sums wrap on overflow; an empty
reduction gives 0. Results do not depend on the thread count.

>>> x = [[1., 2.], [3., 4.]]
>>> ef.reduce_sum(x).numpy()
array(10., dtype=float32)
>>> ef.reduce_sum(x, axis=1, keepdims=True).numpy()
array([[3.],
       [7.]], dtype=float32)

Args:
  input_tensor: A tensor-like of a numeric dtype (not bool).
  axis: None (every axis), an int, or a list of ints; negative values count
    from the end; an empty list reduces nothing.
  keepdims: If True, reduced axes stay with size 1.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input_tensor's dtype, without the reduced axes (unless keepdims).

Raises:
  InvalidArgumentError: input_tensor is bool, or an axis is out of range or
    repeated (any axis of a scalar included).
)doc");
  reduction<ef::reduce_prod>(m, "reduce_prod", R"doc(Computes the product of elements across axes of a tensor.

Integer products wrap on overflow; an empty reduction gives 1.

>>> ef.reduce_prod([[1., 2.], [3., 4.]], axis=0).numpy()
array([3., 8.], dtype=float32)

Args:
  input_tensor: A tensor-like of a numeric dtype (not bool).
  axis: None (every axis), an int, or a list of ints; negative values count
    from the end; an empty list reduces nothing.
  keepdims: If True, reduced axes stay with size 1.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input_tensor's dtype, without the reduced axes (unless keepdims).

Raises:
  InvalidArgumentError: input_tensor is bool, or an axis is out of range or
    repeated.
)doc");
  reduction<ef::reduce_max>(m, "reduce_max", R"doc(Computes the maximum of elements across axes of a tensor.

NaN propagates. An empty float reduction gives -inf (as TensorFlow).

>>> ef.reduce_max([[1., 5.], [3., 2.]], axis=1).numpy()
array([5., 3.], dtype=float32)

Args:
  input_tensor: A tensor-like of a numeric dtype (not bool).
  axis: None (every axis), an int, or a list of ints; negative values count
    from the end; an empty list reduces nothing.
  keepdims: If True, reduced axes stay with size 1.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input_tensor's dtype, without the reduced axes (unless keepdims).

Raises:
  InvalidArgumentError: input_tensor is bool, an axis is out of range or
    repeated, or an integer reduction is empty (it has no identity value).
)doc");
  reduction<ef::reduce_min>(m, "reduce_min", R"doc(Computes the minimum of elements across axes of a tensor.

NaN propagates. An empty float reduction gives +inf (as TensorFlow).

>>> ef.reduce_min([3, 1, 2]).numpy()
array(1, dtype=int32)

Args:
  input_tensor: A tensor-like of a numeric dtype (not bool).
  axis: None (every axis), an int, or a list of ints; negative values count
    from the end; an empty list reduces nothing.
  keepdims: If True, reduced axes stay with size 1.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input_tensor's dtype, without the reduced axes (unless keepdims).

Raises:
  InvalidArgumentError: input_tensor is bool, an axis is out of range or
    repeated, or an integer reduction is empty (it has no identity value).
)doc");
  reduction<ef::reduce_any>(m, "reduce_any",
                            R"doc(Computes the logical OR of elements across axes of a bool tensor.

An empty reduction gives False.

>>> ef.reduce_any([[True, False], [False, False]], axis=1).numpy()
array([ True, False])

Args:
  input_tensor: A bool tensor-like.
  axis: None (every axis), an int, or a list of ints; negative values count
    from the end; an empty list reduces nothing.
  keepdims: If True, reduced axes stay with size 1.
  name: Ignored (TensorFlow compatibility).

Returns:
  A bool Tensor, without the reduced axes (unless keepdims).

Raises:
  InvalidArgumentError: input_tensor is not bool, or an axis is out of range or
    repeated.
)doc");
  reduction<ef::reduce_all>(m, "reduce_all",
                            R"doc(Computes the logical AND of elements across axes of a bool tensor.

An empty reduction gives True.

>>> ef.reduce_all([[True, False], [True, True]], axis=1).numpy()
array([False,  True])

Args:
  input_tensor: A bool tensor-like.
  axis: None (every axis), an int, or a list of ints; negative values count
    from the end; an empty list reduces nothing.
  keepdims: If True, reduced axes stay with size 1.
  name: Ignored (TensorFlow compatibility).

Returns:
  A bool Tensor, without the reduced axes (unless keepdims).

Raises:
  InvalidArgumentError: input_tensor is not bool, or an axis is out of range or
    repeated.
)doc");
  reduction<ef::reduce_mean>(m, "reduce_mean", R"doc(Computes the mean of elements across axes of a tensor.

Integer inputs give an integer mean, truncated (as TensorFlow); the mean of an
empty float reduction is NaN.

>>> ef.reduce_mean([[1., 2.], [3., 4.]], axis=0).numpy()
array([2., 3.], dtype=float32)
>>> ef.reduce_mean([1, 2]).numpy()
array(1, dtype=int32)

Args:
  input_tensor: A tensor-like of a numeric dtype (not bool).
  axis: None (every axis), an int, or a list of ints; negative values count
    from the end; an empty list reduces nothing.
  keepdims: If True, reduced axes stay with size 1.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input_tensor's dtype, without the reduced axes (unless keepdims).

Raises:
  InvalidArgumentError: input_tensor is bool, an axis is out of range or
    repeated, or an integer reduction is empty.
)doc");
  reduction<ef::reduce_logsumexp>(
      m, "reduce_logsumexp", R"doc(Computes log(sum(exp(x))) across axes, stably (shifted by the maximum).

-inf inputs and empty reductions give -inf.

>>> ef.reduce_logsumexp([[0., 0.], [1., 1.]], axis=1).numpy()
array([0.6931472, 1.6931472], dtype=float32)

Args:
  input_tensor: A tensor-like of a float dtype (float16, bfloat16, float32,
    float64).
  axis: None (every axis), an int, or a list of ints; negative values count
    from the end; an empty list reduces nothing.
  keepdims: If True, reduced axes stay with size 1.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input_tensor's dtype, without the reduced axes (unless keepdims).

Raises:
  InvalidArgumentError: input_tensor is not float, or an axis is out of range or
    repeated.
)doc");
  reduction<ef::reduce_variance>(
      m, "reduce_variance", R"doc(Computes the (population) variance of elements across axes: divides by N.

>>> ef.reduce_variance([1., 2., 3., 4.]).numpy()
array(1.25, dtype=float32)

Args:
  input_tensor: A tensor-like of a float dtype (float16, bfloat16, float32,
    float64).
  axis: None (every axis), an int, or a list of ints; negative values count
    from the end; an empty list reduces nothing.
  keepdims: If True, reduced axes stay with size 1.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input_tensor's dtype, without the reduced axes (unless keepdims).

Raises:
  InvalidArgumentError: input_tensor is not float, or an axis is out of range or
    repeated.
)doc");
  reduction<ef::reduce_std>(
      m, "reduce_std", R"doc(Computes the (population) standard deviation, sqrt(reduce_variance), across axes.

>>> ef.reduce_std([1., 3.]).numpy()
array(1., dtype=float32)

Args:
  input_tensor: A tensor-like of a float dtype (float16, bfloat16, float32,
    float64).
  axis: None (every axis), an int, or a list of ints; negative values count
    from the end; an empty list reduces nothing.
  keepdims: If True, reduced axes stay with size 1.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of input_tensor's dtype, without the reduced axes (unless keepdims).

Raises:
  InvalidArgumentError: input_tensor is not float, or an axis is out of range or
    repeated.
)doc");
  using ArgReduce = ef::Tensor (*)(const ef::Tensor&, int64_t, ef::DType, ef::CallSite);
  struct ArgReduceDef {
    const char* name;
    ArgReduce op;
    const char* doc;
  };
  for (auto [name, op, doc] :
       {ArgReduceDef{"argmax", &ef::argmax, kArgmaxDoc}, ArgReduceDef{"argmin", &ef::argmin, kArgminDoc}}) {
    auto f = op;
    m.def(
        name,
        [f](TensorArg x, std::optional<int64_t> axis, DTypeArg output_type, py::handle) {
          return f(x, axis.value_or(0), output_type.value.value_or(ef::DType::Int64), kPython);
        },
        doc, "input"_a, "axis"_a = py::none(), "output_type"_a = py::none(), "name"_a = py::none());
  }
  using Scan = ef::Tensor (*)(const ef::Tensor&, int64_t, bool, bool, ef::CallSite);
  struct ScanDef {
    const char* name;
    Scan op;
    const char* doc;
  };
  for (auto [name, op, doc] :
       {ScanDef{"cumsum", &ef::cumsum, kCumsumDoc}, ScanDef{"cumprod", &ef::cumprod, kCumprodDoc}}) {
    auto f = op;
    m.def(
        name,
        [f](TensorArg x, int64_t axis, bool exclusive, bool reverse, py::handle) {
          return maybe_without_gil(x.value.num_elements(), [&] { return f(x, axis, exclusive, reverse, kPython); });
        },
        doc, "x"_a, "axis"_a = 0, "exclusive"_a = false, "reverse"_a = false, "name"_a = py::none());
  }

  // ---- linear algebra ----
  m.def(
      "matmul",
      [](TensorArg a, TensorArg b, bool transpose_a, bool transpose_b, py::handle) {
        const int64_t work = a.value.num_elements() * std::max<int64_t>(1, b.value.shape().rank() ? b.value.shape()[-1] : 1);
        return maybe_without_gil(work, [&] { return ef::matmul(a, b, transpose_a, transpose_b, kPython); });
      },
      R"doc(Multiplies matrix a by matrix b: the product of their last two axes.

Leading (batch) axes broadcast as in NumPy: [..., m, k] x [..., k, n] gives
[..., m, n]. transpose_a / transpose_b transpose the last two axes first, without
a copy. Floats use BLAS (half dtypes accumulate in float32); integers wrap.

>>> ef.matmul([[1., 2.]], [[3.], [4.]]).numpy()
array([[11.]], dtype=float32)
>>> ef.matmul(ef.ones([5, 2, 3]), ef.ones([3, 4])).shape
TensorShape([5, 2, 4])

Args:
  a: A tensor-like of rank >= 2 and a numeric dtype (not bool).
  b: A tensor-like of rank >= 2 and a's dtype.
  transpose_a: If True, use the transpose of a's last two axes.
  transpose_b: If True, use the transpose of b's last two axes.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of a's dtype. An inner dimension of 0 gives zeros.

Raises:
  InvalidArgumentError: a rank below 2, inner or batch dimensions that do not
    match, different dtypes, or bool inputs.
)doc",
      "a"_a, "b"_a, "transpose_a"_a = false, "transpose_b"_a = false, "name"_a = py::none());
  m.def(
      "tensordot",
      [](TensorArg a, TensorArg b, py::handle axes, py::handle) {
        if (PyLong_Check(axes.ptr())) return ef::tensordot(a, b, int64_of(axes, "tensordot: axes"), kPython);
        py::list pair = owned_items(axes);
        if (pair.size() != 2)
          throw ef::InvalidArgumentError("tensordot: axes must be an int or a pair of axis lists");
        return ef::tensordot(a, b, ef::TensordotAxes(to_ints(pair[0], "tensordot: axes"), to_ints(pair[1], "tensordot: axes")),
                             kPython);
      },
      R"doc(Sums the products of a and b over the given axes (tf.tensordot).

The result has a's free axes, then b's.

>>> ef.tensordot(ef.ones([2, 3]), ef.ones([3, 4]), 1).shape
TensorShape([2, 4])
>>> ef.tensordot(ef.ones([2, 3]), ef.ones([4, 3]), [[1], [1]]).shape
TensorShape([2, 4])

Args:
  a: A tensor-like of a numeric dtype.
  b: A tensor-like of a's dtype.
  axes: An int N (a's last N axes against b's first N, in order; 0 is the outer
    product), or a pair of equally long lists [a_axes, b_axes].
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of a's dtype.

Raises:
  InvalidArgumentError: contracted sizes differ, a bad count, repeated or
    out-of-range axes, or different dtypes.
)doc",
      "a"_a, "b"_a, "axes"_a, "name"_a = py::none());
  m.def(
      "norm",
      [](TensorArg x, py::handle ord, AxesArg axis, bool keepdims, py::handle) {
        ef::linalg::NormOrd o = py::isinstance<py::str>(ord) ? ef::linalg::NormOrd(ord.cast<std::string>())
                                                             : ef::linalg::NormOrd(ord.cast<double>());
        return ef::linalg::norm(x, o, axis, keepdims, kPython);
      },
      R"doc(Computes a vector or matrix norm of a float tensor (tf.norm).

With axis None or one axis: a vector norm ("euclidean", any p > 0, or
np.inf = max |x|). With two axes: a matrix norm ("euclidean"/"fro" =
Frobenius, 1 = largest column sum, np.inf = largest row sum).

>>> ef.norm([3., 4.]).numpy()
array(5., dtype=float32)
>>> ef.norm([[3., 4.], [6., 8.]], ord=1, axis=1).numpy()
array([ 7., 14.], dtype=float32)

Args:
  tensor: A tensor-like of a float dtype.
  ord: "euclidean" (default), "fro", or a number p > 0 (np.inf included).
  axis: None (every axis, flattened), an int, or a list of two ints.
  keepdims: If True, reduced axes stay with size 1.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of tensor's dtype.

Raises:
  InvalidArgumentError: an integer input, a bad ord, or more than two axes.
  UnimplementedError: the matrix 2-norm (it needs an SVD).
)doc",
      "tensor"_a, "ord"_a = "euclidean", "axis"_a = py::none(), "keepdims"_a = false, "name"_a = py::none());

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
        return ef::bias_add(value, bias, data_format.is_none() ? "NHWC" : data_format.cast<std::string>(), kPython);
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
      "l2_normalize",
      [](TensorArg x, AxesArg axis, double epsilon, py::handle) {
        return ef::l2_normalize(x, axis, epsilon, kPython);
      },
      R"doc(Normalizes x along `axis` to unit L2 norm: x / sqrt(max(sum(x ** 2), epsilon)).

>>> ef.nn.l2_normalize([3., 4.]).numpy()
array([0.6, 0.8], dtype=float32)

Args:
  x: A tensor-like of a float dtype.
  axis: None (every axis), an int, or a list of ints.
  epsilon: A lower bound on the squared norm (default 1e-12): a zero vector
    stays zero.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: x is not float, or an axis is out of range.
)doc",
      "x"_a, "axis"_a = py::none(), "epsilon"_a = 1e-12, "name"_a = py::none());
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

  // ---- random ----
  m.def(
      "set_seed", [](py::handle seed) { ef::random::set_seed(seed_of(seed)); },
      R"doc(Sets the global random seed and restarts every random stream.

As in TensorFlow 2: after set_seed, the program's sequence of random ops (and
seeded initializers and dropout) repeats; ops given their own seed use the
(global seed, op seed) pair. None clears the global seed, making unseeded ops
nondeterministic again.

>>> ef.random.set_seed(7); a = ef.random.uniform([2])
>>> ef.random.set_seed(7); b = ef.random.uniform([2])
>>> bool(ef.reduce_all(ef.equal(a, b)))
True

Args:
  seed: An int, or None.
)doc",
      "seed"_a);
  m.def(
      "random_uniform",
      [](ShapeArg shape, py::handle minval, py::handle maxval, DTypeArg dtype, py::handle seed, py::handle) {
        std::optional<ef::TensorOrScalar> hi;
        if (!maxval.is_none()) hi = to_operand(maxval);
        return ef::random::uniform(shape, to_operand(minval), hi, dtype.value.value_or(ef::DType::Float32),
                                   seed_of(seed), kPython);
      },
      R"doc(Draws uniformly distributed values in [minval, maxval).

Float dtypes: maxval defaults to 1. Integer dtypes: maxval is required and
excluded. Numbers come from Philox; element i depends only on the seeds, the
stream position and i, never on the thread count.

>>> x = ef.random.uniform([2, 3], 0, 10, dtype=ef.int32, seed=3)
>>> x.shape, x.dtype
(TensorShape([2, 3]), ef.int32)

Args:
  shape: A list or tuple of non-negative ints (or a 1-D integer tensor).
  minval: The lower bound, a number or 0-d tensor (default 0).
  maxval: The upper bound (excluded); None means 1 for float dtypes.
  dtype: A float dtype (default float32), int32 or int64.
  seed: None, or an int op seed (see ef.random.set_seed).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of `dtype` and `shape`.

Raises:
  InvalidArgumentError: maxval missing for an integer dtype, minval >= maxval
    for integers (minval > maxval for floats), a bound not finite or not
    fitting the dtype, or a bad shape.
)doc",
      "shape"_a, "minval"_a = 0, "maxval"_a = py::none(), "dtype"_a = py::none(), "seed"_a = py::none(),
      "name"_a = py::none());
  m.def(
      "random_normal",
      [](ShapeArg shape, double mean, double stddev, DTypeArg dtype, py::handle seed, py::handle) {
        return ef::random::normal(shape, mean, stddev, dtype.value.value_or(ef::DType::Float32), seed_of(seed), kPython);
      },
      R"doc(Draws normally distributed values with the given mean and standard deviation.

>>> x = ef.random.normal([2, 3], mean=1., stddev=0.5, seed=1)
>>> x.shape, x.dtype
(TensorShape([2, 3]), ef.float32)

Args:
  shape: A list or tuple of non-negative ints (or a 1-D integer tensor).
  mean: A Python float (default 0).
  stddev: A finite, non-negative Python float (default 1).
  dtype: A float dtype (default float32).
  seed: None, or an int op seed (see ef.random.set_seed).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of `dtype` and `shape`.

Raises:
  InvalidArgumentError: a non-float dtype, a negative or non-finite stddev, or a
    bad shape.
)doc",
      "shape"_a, "mean"_a = 0.0, "stddev"_a = 1.0, "dtype"_a = py::none(), "seed"_a = py::none(),
      "name"_a = py::none());
  m.def(
      "truncated_normal",
      [](ShapeArg shape, double mean, double stddev, DTypeArg dtype, py::handle seed, py::handle) {
        return ef::random::truncated_normal(shape, mean, stddev, dtype.value.value_or(ef::DType::Float32),
                                            seed_of(seed), kPython);
      },
      R"doc(Draws normal values, redrawing those more than 2 stddev from the mean.

As TensorFlow's truncated_normal: every value lies within [mean - 2 * stddev,
mean + 2 * stddev].

>>> x = ef.random.truncated_normal([1000], stddev=2., seed=1)
>>> bool(ef.reduce_max(ef.abs(x)) <= 4.)
True

Args:
  shape: A list or tuple of non-negative ints (or a 1-D integer tensor).
  mean: A Python float (default 0).
  stddev: A finite, non-negative Python float (default 1).
  dtype: A float dtype (default float32).
  seed: None, or an int op seed (see ef.random.set_seed).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of `dtype` and `shape`.

Raises:
  InvalidArgumentError: a non-float dtype, a negative or non-finite stddev, or a
    bad shape.
)doc",
      "shape"_a, "mean"_a = 0.0, "stddev"_a = 1.0, "dtype"_a = py::none(), "seed"_a = py::none(),
      "name"_a = py::none());
}

}  // namespace efpy
