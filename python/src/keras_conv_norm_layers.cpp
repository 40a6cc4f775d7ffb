// ef.keras.layers Conv2DTranspose, DepthwiseConv2D, SeparableConv2D
// (eagerflow/nn/conv_variant_layers.h), GroupNormalization, PReLU and SpatialDropout2D,
// under Keras' names and arguments.
#include <pybind11/stl.h>

#include "bindings.h"
#include "convert.h"
#include "py_layer.h"

namespace efpy {
namespace {

using namespace pybind11::literals;
namespace nn = ef::nn;

template <class L>
py::class_<L, nn::Layer, std::shared_ptr<L>> layer_class(py::module_& m, const char* name, const char* doc) {
  return py::class_<L, nn::Layer, std::shared_ptr<L>>(m, name, doc);
}

// The layers compute on NHWC images only (Keras' default "channels_last").
void check_channels_last(py::handle data_format, const char* layer) {
  if (!data_format.is_none() && data_format.cast<std::string>() != "channels_last")
    throw ef::UnimplementedError(std::string(layer) +
                                 ": only data_format \"channels_last\" is supported, got \"" +
                                 data_format.cast<std::string>() + "\"");
}

void bind_conv_variants(py::module_& keras) {
  layer_class<nn::Conv2DTranspose>(
      keras, "Conv2DTranspose",
      R"doc(A transposed 2-D convolution on NHWC images (the gradient of Conv2D with respect to its input).

kernel is [kh, kw, filters, channels] (Keras' layout). The output size along each
spatial axis is Keras': in * stride for "same" padding, in * stride + max(k - stride, 0)
for "valid", or (in - 1) * stride + k - 2 * (k // 2 if "same" else 0) + output_padding
when output_padding is given (k the dilated kernel size).

>>> up = ef.keras.layers.Conv2DTranspose(4, 3, strides=2, padding="same")
>>> up(ef.ones([1, 5, 5, 3])).shape, up.kernel.shape
(TensorShape([1, 10, 10, 4]), TensorShape([3, 3, 4, 3]))

Args:
  filters: The number of output channels.
  kernel_size: An int or a pair of ints (height, width).
  strides: An int or a pair of ints (default 1).
  padding: "valid" (default) or "same", in either case.
  output_padding: None, or an int or pair: extra rows and columns at the bottom
    and right, each smaller than its stride.
  data_format: None or "channels_last" (the only layout).
  dilation_rate: An int or a pair of ints (default 1).
  activation: None (linear), a Keras name such as "relu", or a function of a tensor.
  use_bias: Whether to add a bias (default True).
  kernel_initializer: a Keras name, an Initializer, or a function (shape, dtype)
    -> tensor (default "glorot_uniform").
  bias_initializer: The same forms (default "zeros").
  name: The layer's name (default "conv2d_transpose").

Raises:
  InvalidArgumentError: bad arguments (naming them); when called, inputs not of
    rank 4, another channel count than the layer was built for, or an output size
    that does not convolve back to the input's.
)doc")
      .def(py::init([](int64_t filters, py::handle kernel_size, py::handle strides,
                       const std::string& padding, py::handle output_padding, py::handle data_format,
                       py::handle dilation_rate, py::handle activation, bool use_bias,
                       py::handle kernel_initializer, py::handle bias_initializer, py::handle name) {
             check_channels_last(data_format, "Conv2DTranspose");
             nn::Conv2DTransposeOptions o;
             o.strides = to_ints(strides, "strides");
             o.padding = padding;
             if (!output_padding.is_none()) o.output_padding = to_ints(output_padding, "output_padding");
             o.dilation_rate = to_ints(dilation_rate, "dilation_rate");
             o.activation = activation_of(activation, "Conv2DTranspose");
             o.use_bias = use_bias;
             o.kernel_initializer = initializer_of(kernel_initializer);
             o.bias_initializer = initializer_of(bias_initializer);
             o.name = name_or(name, "conv2d_transpose");
             return std::make_shared<nn::Conv2DTranspose>(filters, to_ints(kernel_size, "kernel_size"),
                                                          std::move(o));
           }),
           "filters"_a, "kernel_size"_a, "strides"_a = 1, "padding"_a = "valid",
           "output_padding"_a = py::none(), "data_format"_a = py::none(), "dilation_rate"_a = 1,
           "activation"_a = py::none(), "use_bias"_a = true, "kernel_initializer"_a = "glorot_uniform",
           "bias_initializer"_a = "zeros", "name"_a = py::none())
      .def_property_readonly("kernel", &nn::Conv2DTranspose::kernel,
                             "The [kh, kw, filters, channels] Variable (after the first call).")
      .def_property_readonly("bias", &nn::Conv2DTranspose::bias,
                             "The [filters] Variable (after the first call).");

  layer_class<nn::DepthwiseConv2D>(
      keras, "DepthwiseConv2D",
      R"doc(A depthwise 2-D convolution on NHWC images: each channel convolved with its own filters.

kernel is [kh, kw, channels, depth_multiplier]; the output has channels *
depth_multiplier channels, channel c's filters together (ef.nn.depthwise_conv2d).

>>> dw = ef.keras.layers.DepthwiseConv2D(3, depth_multiplier=2, padding="same")
>>> dw(ef.ones([1, 5, 5, 3])).shape, dw.kernel.shape
(TensorShape([1, 5, 5, 6]), TensorShape([3, 3, 3, 2]))

Args:
  kernel_size: An int or a pair of ints (height, width).
  strides: An int or a pair of ints (default 1).
  padding: "valid" (default) or "same", in either case.
  depth_multiplier: Filters per input channel (default 1).
  data_format: None or "channels_last" (the only layout).
  dilation_rate: An int or a pair of ints (default 1).
  activation: None (linear), a Keras name such as "relu", or a function of a tensor.
  use_bias: Whether to add a bias (default True).
  depthwise_initializer: a Keras name, an Initializer, or a function (shape,
    dtype) -> tensor (default "glorot_uniform").
  bias_initializer: The same forms (default "zeros").
  name: The layer's name (default "depthwise_conv2d").

Raises:
  InvalidArgumentError: bad arguments (naming them); when called, inputs not of
    rank 4 or another channel count than the layer was built for.
)doc")
      .def(py::init([](py::handle kernel_size, py::handle strides, const std::string& padding,
                       int64_t depth_multiplier, py::handle data_format, py::handle dilation_rate,
                       py::handle activation, bool use_bias, py::handle depthwise_initializer,
                       py::handle bias_initializer, py::handle name) {
             check_channels_last(data_format, "DepthwiseConv2D");
             nn::DepthwiseConv2DOptions o;
             o.strides = to_ints(strides, "strides");
             o.padding = padding;
             o.depth_multiplier = depth_multiplier;
             o.dilation_rate = to_ints(dilation_rate, "dilation_rate");
             o.activation = activation_of(activation, "DepthwiseConv2D");
             o.use_bias = use_bias;
             o.depthwise_initializer = initializer_of(depthwise_initializer);
             o.bias_initializer = initializer_of(bias_initializer);
             o.name = name_or(name, "depthwise_conv2d");
             return std::make_shared<nn::DepthwiseConv2D>(to_ints(kernel_size, "kernel_size"), std::move(o));
           }),
           "kernel_size"_a, "strides"_a = 1, "padding"_a = "valid", "depth_multiplier"_a = 1,
           "data_format"_a = py::none(), "dilation_rate"_a = 1, "activation"_a = py::none(),
           "use_bias"_a = true, "depthwise_initializer"_a = "glorot_uniform", "bias_initializer"_a = "zeros",
           "name"_a = py::none())
      .def_property_readonly("kernel", &nn::DepthwiseConv2D::kernel,
                             "The [kh, kw, channels, depth_multiplier] Variable (after the first call).")
      .def_property_readonly("bias", &nn::DepthwiseConv2D::bias,
                             "The [channels * depth_multiplier] Variable (after the first call).");

  layer_class<nn::SeparableConv2D>(
      keras, "SeparableConv2D",
      R"doc(A depthwise-separable 2-D convolution: a depthwise convolution, then a 1x1 one.

strides, padding and dilation_rate apply to the depthwise step. Weights as Keras:
depthwise_kernel [kh, kw, channels, depth_multiplier], pointwise_kernel
[1, 1, channels * depth_multiplier, filters], bias [filters].

>>> sep = ef.keras.layers.SeparableConv2D(8, 3, padding="same")
>>> sep(ef.ones([1, 5, 5, 3])).shape, sep.pointwise_kernel.shape
(TensorShape([1, 5, 5, 8]), TensorShape([1, 1, 3, 8]))

Args:
  filters: The number of output channels.
  kernel_size: An int or a pair of ints (height, width).
  strides: An int or a pair of ints (default 1).
  padding: "valid" (default) or "same", in either case.
  data_format: None or "channels_last" (the only layout).
  dilation_rate: An int or a pair of ints (default 1).
  depth_multiplier: Depthwise filters per input channel (default 1).
  activation: None (linear), a Keras name such as "relu", or a function of a tensor.
  use_bias: Whether to add a bias (default True).
  depthwise_initializer: a Keras name, an Initializer, or a function (shape,
    dtype) -> tensor (default "glorot_uniform").
  pointwise_initializer: The same forms (default "glorot_uniform").
  bias_initializer: The same forms (default "zeros").
  name: The layer's name (default "separable_conv2d").

Raises:
  InvalidArgumentError: bad arguments (naming them); when called, inputs not of
    rank 4 or another channel count than the layer was built for.
)doc")
      .def(
          py::init([](int64_t filters, py::handle kernel_size, py::handle strides, const std::string& padding,
                      py::handle data_format, py::handle dilation_rate, int64_t depth_multiplier,
                      py::handle activation, bool use_bias, py::handle depthwise_initializer,
                      py::handle pointwise_initializer, py::handle bias_initializer, py::handle name) {
            check_channels_last(data_format, "SeparableConv2D");
            nn::SeparableConv2DOptions o;
            o.strides = to_ints(strides, "strides");
            o.padding = padding;
            o.depth_multiplier = depth_multiplier;
            o.dilation_rate = to_ints(dilation_rate, "dilation_rate");
            o.activation = activation_of(activation, "SeparableConv2D");
            o.use_bias = use_bias;
            o.depthwise_initializer = initializer_of(depthwise_initializer);
            o.pointwise_initializer = initializer_of(pointwise_initializer);
            o.bias_initializer = initializer_of(bias_initializer);
            o.name = name_or(name, "separable_conv2d");
            return std::make_shared<nn::SeparableConv2D>(filters, to_ints(kernel_size, "kernel_size"),
                                                         std::move(o));
          }),
          "filters"_a, "kernel_size"_a, "strides"_a = 1, "padding"_a = "valid", "data_format"_a = py::none(),
          "dilation_rate"_a = 1, "depth_multiplier"_a = 1, "activation"_a = py::none(), "use_bias"_a = true,
          "depthwise_initializer"_a = "glorot_uniform", "pointwise_initializer"_a = "glorot_uniform",
          "bias_initializer"_a = "zeros", "name"_a = py::none())
      .def_property_readonly("depthwise_kernel", &nn::SeparableConv2D::depthwise_kernel,
                             "The [kh, kw, channels, depth_multiplier] Variable (after the first call).")
      .def_property_readonly(
          "pointwise_kernel", &nn::SeparableConv2D::pointwise_kernel,
          "The [1, 1, channels * depth_multiplier, filters] Variable (after the first call).")
      .def_property_readonly("bias", &nn::SeparableConv2D::bias,
                             "The [filters] Variable (after the first call).");
}

}  // namespace

void bind_conv_norm_layers(py::module_& keras) {
  bind_conv_variants(keras);
  layer_class<nn::GroupNormalization>(
      keras, "GroupNormalization",
      R"doc(Normalizes groups of channels of each example: (x - mean) / sqrt(variance + epsilon) * gamma + beta.

The channels on `axis` are split into `groups` groups of consecutive channels;
mean and variance are per example and group, over the group's channels and every
other non-batch axis. gamma and beta are per channel.

>>> ef.keras.layers.GroupNormalization(2)(ef.ones([1, 3, 3, 4])).shape
TensorShape([1, 3, 3, 4])

Args:
  groups: The number of groups (default 32); -1 means one per channel. The
    channel count must be a multiple of it.
  axis: The channel axis (default -1).
  epsilon: Added to the variance (default 1e-3).
  center: Whether to learn the offset beta (default True).
  scale: Whether to learn the factor gamma (default True).
  beta_initializer: a Keras name, an Initializer, or a function (shape, dtype)
    -> tensor (default "zeros").
  gamma_initializer: The same forms (default "ones").
  name: The layer's name (default "group_normalization").

Raises:
  InvalidArgumentError: groups not positive or -1, or (at the first call) a
    channel count that is not a multiple of groups.
)doc")
      .def(py::init([](int64_t groups, int64_t axis, double epsilon, bool center, bool scale,
                       py::handle beta_initializer, py::handle gamma_initializer, py::handle name) {
             return std::make_shared<nn::GroupNormalization>(
                 groups, nn::GroupNormalizationOptions{
                             axis, epsilon, center, scale, initializer_of(beta_initializer),
                             initializer_of(gamma_initializer), name_or(name, "group_normalization")});
           }),
           "groups"_a = 32, "axis"_a = -1, "epsilon"_a = 1e-3, "center"_a = true, "scale"_a = true,
           "beta_initializer"_a = "zeros", "gamma_initializer"_a = "ones", "name"_a = py::none())
      .def_property_readonly("gamma", &nn::GroupNormalization::gamma,
                             "The per-channel factor (after the first call).")
      .def_property_readonly("beta", &nn::GroupNormalization::beta,
                             "The per-channel offset (after the first call).");
  layer_class<nn::PReLU>(keras, "PReLU", R"doc(Parametric ReLU: x for x >= 0, alpha * x below, alpha learned.

alpha has the shape of one example (input_shape[1:]) with the shared axes set to 1.

>>> prelu = ef.keras.layers.PReLU(alpha_initializer=ef.keras.initializers.Constant(0.25), shared_axes=[1, 2])
>>> prelu(ef.constant([[[[-4.0, 2.0]]]])).numpy(), prelu.alpha.shape
(array([[[[-1.,  2.]]]], dtype=float32), TensorShape([1, 1, 2]))

Args:
  alpha_initializer: a Keras name, an Initializer, or a function (shape, dtype)
    -> tensor (default "zeros").
  shared_axes: None, an int or a list of ints: axes (1 is the first after the
    batch axis) along which one alpha is shared.
  name: The layer's name (default "p_re_lu").

Raises:
  InvalidArgumentError: a shared axis outside [1, rank) of the inputs.
)doc")
      .def(py::init([](py::handle alpha_initializer, py::handle shared_axes, py::handle name) {
             nn::PReLUOptions o;
             o.alpha_initializer = initializer_of(alpha_initializer);
             if (!shared_axes.is_none()) o.shared_axes = to_ints(shared_axes, "shared_axes");
             o.name = name_or(name, "p_re_lu");
             return std::make_shared<nn::PReLU>(std::move(o));
           }),
           "alpha_initializer"_a = "zeros", "shared_axes"_a = py::none(), "name"_a = py::none())
      .def_property_readonly("alpha", &nn::PReLU::alpha, "The slopes Variable (after the first call).");
  layer_class<nn::SpatialDropout2D>(
      keras, "SpatialDropout2D",
      R"doc(Dropout of whole channels of NHWC images while training; the identity otherwise.

Each channel of each example is zeroed with probability `rate`; the others are
scaled by 1 / (1 - rate).

>>> ef.keras.layers.SpatialDropout2D(0.5)(ef.ones([1, 2, 2, 3])).shape
TensorShape([1, 2, 2, 3])

Args:
  rate: A float in [0, 1), the fraction of channels to drop.
  data_format: None or "channels_last" (the only layout).
  seed: None, or an int seed (see ef.random.set_seed).
  name: The layer's name (default "spatial_dropout2d").
)doc")
      .def(py::init([](double rate, py::handle data_format, std::optional<int64_t> seed, py::handle name) {
             check_channels_last(data_format, "SpatialDropout2D");
             return std::make_shared<nn::SpatialDropout2D>(rate, seed, name_or(name, "spatial_dropout2d"));
           }),
           "rate"_a, "data_format"_a = py::none(), "seed"_a = py::none(), "name"_a = py::none());
}

}  // namespace efpy
