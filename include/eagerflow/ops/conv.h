// Convolution, pooling and batch normalization on NHWC images (TensorFlow's tf.nn
// names and argument order, in namespace ef).
//
//   ef::Tensor y = ef::conv2d(x, w, {1, 1}, "SAME");            // x [N,H,W,C], w [KH,KW,C,O]
//   ef::Tensor p = ef::max_pool2d(ef::relu(y), {2, 2}, {2, 2}, "VALID");
//
// Window attributes (strides, ksize, dilations) take 1 value (both spatial
// dimensions), 2 values (height, width) or 4 values in NHWC order whose batch and
// channel entries are 1, all positive. padding is "SAME" (output size ceil(in /
// stride), zero padding split as TensorFlow does, the smaller half first) or "VALID"
// (no padding; the window must fit at least once). The ops take float32 or float64 and
// throw InvalidArgumentError naming the op and the argument for a wrong rank, dtype,
// channel count or attribute.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "eagerflow/core/tensor.h"

namespace ef {

// ---- Convolution ----
// 2-D cross-correlation (as tf.nn.conv2d): input [N, H, W, C] with filters
// [KH, KW, C, O] gives [N, OH, OW, O]. dilations > 1 space the filter taps apart
// (atrous convolution). input and filters must share the dtype and channel count C.
Tensor conv2d(const Tensor& input, const Tensor& filters, const std::vector<int64_t>& strides,
              const std::string& padding, const std::vector<int64_t>& dilations = {1, 1},
              CallSite where = CallSite::current());

// The gradient of conv2d with respect to its input: out_backprop [N, OH, OW, O] (the
// gradient of conv2d's output) mapped back to an input of shape input_sizes
// [N, H, W, C]. Linear in filters and in out_backprop (tf.raw_ops.Conv2DBackpropInput).
Tensor conv2d_backprop_input(const Shape& input_sizes, const Tensor& filters, const Tensor& out_backprop,
                             const std::vector<int64_t>& strides, const std::string& padding,
                             const std::vector<int64_t>& dilations = {1, 1}, CallSite where = CallSite::current());

// The gradient of conv2d with respect to its filters, of shape filter_sizes
// [KH, KW, C, O], from the input and out_backprop (tf.raw_ops.Conv2DBackpropFilter).
Tensor conv2d_backprop_filter(const Tensor& input, const Shape& filter_sizes, const Tensor& out_backprop,
                              const std::vector<int64_t>& strides, const std::string& padding,
                              const std::vector<int64_t>& dilations = {1, 1}, CallSite where = CallSite::current());

// The transpose of conv2d (sometimes called deconvolution), as tf.nn.conv2d_transpose:
// input [N, OH, OW, O] and filters [KH, KW, C, O] give output_shape [N, H, W, C]; the
// same computation as conv2d_backprop_input.
Tensor conv2d_transpose(const Tensor& input, const Tensor& filters, const Shape& output_shape,
                        const std::vector<int64_t>& strides, const std::string& padding = "SAME",
                        const std::vector<int64_t>& dilations = {1, 1}, CallSite where = CallSite::current());

// Depthwise 2-D convolution (as tf.nn.depthwise_conv2d): input [N, H, W, C] with filter
// [KH, KW, C, M] convolves each channel with its own M filters, giving [N, OH, OW, C * M]
// (output channel c * M + m). A composite of public ops; needs known H, W and C.
Tensor depthwise_conv2d(const Tensor& input, const Tensor& filter, const std::vector<int64_t>& strides,
                        const std::string& padding, const std::vector<int64_t>& dilations = {1, 1},
                        CallSite where = CallSite::current());

// 1-D convolution (as tf.nn.conv1d): input [N, W, C] with filters [KW, C, O] gives
// [N, OW, O]; conv2d over a one-pixel-high image, with conv2d's padding and errors.
Tensor conv1d(const Tensor& input, const Tensor& filters, int64_t stride, const std::string& padding,
              int64_t dilation = 1, CallSite where = CallSite::current());

// 3-D convolution (as tf.nn.conv3d): input [N, D, H, W, C] with filters [KD, KH, KW, C, O]
// gives [N, OD, OH, OW, O]. strides and dilations take 1 value, 3 (depth, height, width)
// or 5 in NDHWC order whose batch and channel entries are 1; padding as conv2d's. A
// composite of conv2d (one per filter depth tap); needs known depth, height and width.
Tensor conv3d(const Tensor& input, const Tensor& filters, const std::vector<int64_t>& strides,
              const std::string& padding, const std::vector<int64_t>& dilations = {1},
              CallSite where = CallSite::current());

// ---- Pooling ----
// Maximum over each ksize window of input [N, H, W, C], per channel. With "SAME"
// padding, padded positions never win (they count as -infinity).
Tensor max_pool2d(const Tensor& input, const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
                  const std::string& padding, CallSite where = CallSite::current());

// Mean over each ksize window of input [N, H, W, C], per channel. With "SAME" padding
// the mean is over the window's positions inside the input only (as TensorFlow).
Tensor avg_pool2d(const Tensor& input, const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
                  const std::string& padding, CallSite where = CallSite::current());

// The gradient of max_pool2d: grad (of the pooled shape) routed to the position of each
// window's maximum in input (the first one on ties), summed where windows overlap.
Tensor max_pool2d_grad(const Tensor& input, const Tensor& grad, const std::vector<int64_t>& ksize,
                       const std::vector<int64_t>& strides, const std::string& padding,
                       CallSite where = CallSite::current());

// The gradient of max_pool2d_grad with respect to its grad: grad (of input's shape)
// read at each window's maximum, giving the pooled shape.
Tensor max_pool2d_grad_grad(const Tensor& input, const Tensor& grad, const std::vector<int64_t>& ksize,
                            const std::vector<int64_t>& strides, const std::string& padding,
                            CallSite where = CallSite::current());

// The gradient of avg_pool2d: grad (of the pooled shape) spread evenly over each
// window of an input of shape input_sizes [N, H, W, C].
Tensor avg_pool2d_grad(const Shape& input_sizes, const Tensor& grad, const std::vector<int64_t>& ksize,
                       const std::vector<int64_t>& strides, const std::string& padding,
                       CallSite where = CallSite::current());

// ---- Normalization ----
// (x - mean) / sqrt(variance + variance_epsilon) * scale + offset, broadcasting
// mean, variance, offset and scale against x (as tf.nn.batch_normalization). offset
// and scale may be undefined tensors (Tensor()), meaning 0 and 1.
Tensor batch_normalization(const Tensor& x, const Tensor& mean, const Tensor& variance, const Tensor& offset,
                           const Tensor& scale, double variance_epsilon, CallSite where = CallSite::current());

// Mean and (population) variance of x over `axes` (as tf.nn.moments); with keepdims the
// reduced dimensions stay as size 1. For batch normalization of NHWC images the axes
// are {0, 1, 2}.
std::pair<Tensor, Tensor> moments(const Tensor& x, const std::vector<int64_t>& axes, bool keepdims = false,
                                  CallSite where = CallSite::current());

}  // namespace ef
