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
void reduction(py::module_& m, const char* name) {
  m.def(
      name,
      [](TensorArg x, AxesArg axis, bool keepdims, py::handle) {
        return maybe_without_gil(x.value.num_elements(), [&] { return op(x, axis, keepdims, kPython); });
      },
      "input_tensor"_a, "axis"_a = py::none(), "keepdims"_a = false, "name"_a = py::none());
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

// The convolution, pooling and batch-normalization ops of ef.nn.
void bind_conv_ops(py::module_& m) {
  m.def(
      "conv2d",
      [](TensorArg input, TensorArg filters, py::handle strides, const std::string& padding, py::handle data_format,
         py::handle dilations, py::handle) {
        check_nhwc(data_format, "conv2d");
        const auto s = window_ints(strides, "conv2d: strides"), d = window_ints(dilations, "conv2d: dilations", {1});
        return maybe_without_gil(input.value.num_elements(),
                                 [&] { return ef::conv2d(input, filters, s, padding, d, kPython); });
      },
      "input"_a, "filters"_a, "strides"_a, "padding"_a, "data_format"_a = py::none(), "dilations"_a = py::none(),
      "name"_a = py::none());
  m.def(
      "conv2d_transpose",
      [](TensorArg input, TensorArg filters, ShapeArg output_shape, py::handle strides, const std::string& padding,
         py::handle data_format, py::handle dilations, py::handle) {
        check_nhwc(data_format, "conv2d_transpose");
        const auto s = window_ints(strides, "conv2d_transpose: strides");
        const auto d = window_ints(dilations, "conv2d_transpose: dilations", {1});
        return maybe_without_gil(input.value.num_elements(), [&] {
          return ef::conv2d_transpose(input, filters, output_shape, s, padding, d, kPython);
        });
      },
      "input"_a, "filters"_a, "output_shape"_a, "strides"_a, "padding"_a = "SAME", "data_format"_a = py::none(),
      "dilations"_a = py::none(), "name"_a = py::none());
  m.def(
      "conv2d_backprop_input",
      [](ShapeArg input_sizes, TensorArg filters, TensorArg out_backprop, py::handle strides,
         const std::string& padding, py::handle dilations, py::handle) {
        return ef::conv2d_backprop_input(input_sizes, filters, out_backprop,
                                         window_ints(strides, "conv2d_backprop_input: strides"), padding,
                                         window_ints(dilations, "conv2d_backprop_input: dilations", {1}), kPython);
      },
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
      "input"_a, "filter_sizes"_a, "out_backprop"_a, "strides"_a, "padding"_a, "dilations"_a = py::none(),
      "name"_a = py::none());
  using Pool = ef::Tensor (*)(const ef::Tensor&, const std::vector<int64_t>&, const std::vector<int64_t>&,
                              const std::string&, ef::CallSite);
  for (auto [name, op] : {std::pair<const char*, Pool>{"max_pool2d", &ef::max_pool2d},
                          std::pair<const char*, Pool>{"avg_pool2d", &ef::avg_pool2d}}) {
    m.def(
        name,
        [name = std::string(name), op = op](TensorArg input, py::handle ksize, py::handle strides,
                                            const std::string& padding, py::handle data_format, py::handle) {
          check_nhwc(data_format, name.c_str());
          const auto k = window_ints(ksize, (name + ": ksize").c_str());
          const auto s = window_ints(strides, (name + ": strides").c_str());
          return maybe_without_gil(input.value.num_elements(), [&] { return op(input, k, s, padding, kPython); });
        },
        "input"_a, "ksize"_a, "strides"_a, "padding"_a, "data_format"_a = py::none(), "name"_a = py::none());
  }
  using PoolGrad = ef::Tensor (*)(const ef::Tensor&, const ef::Tensor&, const std::vector<int64_t>&,
                                  const std::vector<int64_t>&, const std::string&, ef::CallSite);
  for (auto [name, op] : {std::pair<const char*, PoolGrad>{"max_pool2d_grad", &ef::max_pool2d_grad},
                          std::pair<const char*, PoolGrad>{"max_pool2d_grad_grad", &ef::max_pool2d_grad_grad}}) {
    m.def(
        name,
        [op = op](TensorArg input, TensorArg grad, py::handle ksize, py::handle strides, const std::string& padding,
                  py::handle) {
          return op(input, grad, window_ints(ksize, "ksize"), window_ints(strides, "strides"), padding, kPython);
        },
        "input"_a, "grad"_a, "ksize"_a, "strides"_a, "padding"_a, "name"_a = py::none());
  }
  m.def(
      "avg_pool2d_grad",
      [](ShapeArg input_sizes, TensorArg grad, py::handle ksize, py::handle strides, const std::string& padding,
         py::handle) {
        return ef::avg_pool2d_grad(input_sizes, grad, window_ints(ksize, "avg_pool2d_grad: ksize"),
                                   window_ints(strides, "avg_pool2d_grad: strides"), padding, kPython);
      },
      "input_sizes"_a, "grad"_a, "ksize"_a, "strides"_a, "padding"_a, "name"_a = py::none());
  m.def(
      "batch_normalization",
      [](TensorArg x, TensorArg mean, TensorArg variance, py::handle offset, py::handle scale,
         double variance_epsilon, py::handle) {
        return ef::batch_normalization(x, mean, variance, optional_tensor(offset), optional_tensor(scale),
                                       variance_epsilon, kPython);
      },
      "x"_a, "mean"_a, "variance"_a, "offset"_a, "scale"_a, "variance_epsilon"_a, "name"_a = py::none());
  m.def(
      "moments",
      [](TensorArg x, py::handle axes, py::handle, bool keepdims, py::handle) {
        auto [mean, variance] = ef::moments(x, to_ints(axes, "moments: axes"), keepdims, kPython);
        return py::make_tuple(mean, variance);
      },
      "x"_a, "axes"_a, "shift"_a = py::none(), "keepdims"_a = false, "name"_a = py::none());
}

ef::Tensor constant(py::handle value, DTypeArg dtype, py::handle shape, py::handle /*name*/) {
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
  m.def("as_dtype", [](py::handle d) { return to_dtype(d); }, "type_value"_a);
  m.def("constant", &constant, "value"_a, "dtype"_a = py::none(), "shape"_a = py::none(), "name"_a = py::none());
  m.def(
      "convert_to_tensor",
      [](py::handle value, DTypeArg dtype, py::handle, py::handle) { return to_tensor(value, dtype.value); },
      "value"_a, "dtype"_a = py::none(), "dtype_hint"_a = py::none(), "name"_a = py::none());
  m.def(
      "zeros", [](ShapeArg shape, DTypeArg dtype, py::handle) { return ef::zeros(shape, dtype.value.value_or(ef::DType::Float32), kPython); },
      "shape"_a, "dtype"_a = py::none(), "name"_a = py::none());
  m.def(
      "ones", [](ShapeArg shape, DTypeArg dtype, py::handle) { return ef::ones(shape, dtype.value.value_or(ef::DType::Float32), kPython); },
      "shape"_a, "dtype"_a = py::none(), "name"_a = py::none());
  m.def(
      "zeros_like",
      [](TensorArg x, DTypeArg dtype, py::handle) {
        ef::Tensor z = ef::zeros_like(x, kPython);
        return dtype.value ? ef::cast(z, *dtype.value, kPython) : z;
      },
      "input"_a, "dtype"_a = py::none(), "name"_a = py::none());
  m.def(
      "ones_like",
      [](TensorArg x, DTypeArg dtype, py::handle) {
        ef::Tensor o = ef::ones_like(x, kPython);
        return dtype.value ? ef::cast(o, *dtype.value, kPython) : o;
      },
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
      "dims"_a, "value"_a, "name"_a = py::none());
  m.def(
      "range",
      [](py::handle start, py::handle limit, py::handle delta, DTypeArg dtype, py::handle) {
        if (limit.is_none()) std::swap(start, limit), start = py::int_(0);  // range(n)
        ef::TensorOrScalar a = to_operand(start), b = to_operand(limit), d = to_operand(delta);
        if (dtype.value) return ef::range(a, b, d, *dtype.value, kPython);
        return ef::range(a, b, d, kPython);
      },
      "start"_a, "limit"_a = py::none(), "delta"_a = 1, "dtype"_a = py::none(), "name"_a = py::none());
  m.def(
      "linspace",
      [](double start, double stop, int64_t num, DTypeArg dtype, py::handle) {
        return ef::linspace(start, stop, num, dtype.value.value_or(ef::DType::Float32), kPython);
      },
      "start"_a, "stop"_a, "num"_a, "dtype"_a = py::none(), "name"_a = py::none());
  m.def(
      "eye",
      [](int64_t rows, std::optional<int64_t> columns, DTypeArg dtype, py::handle) {
        return ef::eye(rows, columns.value_or(-1), dtype.value.value_or(ef::DType::Float32), kPython);
      },
      "num_rows"_a, "num_columns"_a = py::none(), "dtype"_a = py::none(), "name"_a = py::none());

  // ---- reductions and scans ----
  reduction<ef::reduce_sum>(m, "reduce_sum");
  reduction<ef::reduce_prod>(m, "reduce_prod");
  reduction<ef::reduce_max>(m, "reduce_max");
  reduction<ef::reduce_min>(m, "reduce_min");
  reduction<ef::reduce_any>(m, "reduce_any");
  reduction<ef::reduce_all>(m, "reduce_all");
  reduction<ef::reduce_mean>(m, "reduce_mean");
  reduction<ef::reduce_logsumexp>(m, "reduce_logsumexp");
  reduction<ef::reduce_variance>(m, "reduce_variance");
  reduction<ef::reduce_std>(m, "reduce_std");
  for (auto [name, op] : {std::pair{"argmax", &ef::argmax}, std::pair{"argmin", &ef::argmin}}) {
    auto f = op;
    m.def(
        name,
        [f](TensorArg x, std::optional<int64_t> axis, DTypeArg output_type, py::handle) {
          return f(x, axis.value_or(0), output_type.value.value_or(ef::DType::Int64), kPython);
        },
        "input"_a, "axis"_a = py::none(), "output_type"_a = py::none(), "name"_a = py::none());
  }
  for (auto [name, op] : {std::pair{"cumsum", &ef::cumsum}, std::pair{"cumprod", &ef::cumprod}}) {
    auto f = op;
    m.def(
        name,
        [f](TensorArg x, int64_t axis, bool exclusive, bool reverse, py::handle) {
          return maybe_without_gil(x.value.num_elements(), [&] { return f(x, axis, exclusive, reverse, kPython); });
        },
        "x"_a, "axis"_a = 0, "exclusive"_a = false, "reverse"_a = false, "name"_a = py::none());
  }

  // ---- linear algebra ----
  m.def(
      "matmul",
      [](TensorArg a, TensorArg b, bool transpose_a, bool transpose_b, py::handle) {
        const int64_t work = a.value.num_elements() * std::max<int64_t>(1, b.value.shape().rank() ? b.value.shape()[-1] : 1);
        return maybe_without_gil(work, [&] { return ef::matmul(a, b, transpose_a, transpose_b, kPython); });
      },
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
      "a"_a, "b"_a, "axes"_a, "name"_a = py::none());
  m.def(
      "norm",
      [](TensorArg x, py::handle ord, AxesArg axis, bool keepdims, py::handle) {
        ef::linalg::NormOrd o = py::isinstance<py::str>(ord) ? ef::linalg::NormOrd(ord.cast<std::string>())
                                                             : ef::linalg::NormOrd(ord.cast<double>());
        return ef::linalg::norm(x, o, axis, keepdims, kPython);
      },
      "tensor"_a, "ord"_a = "euclidean", "axis"_a = py::none(), "keepdims"_a = false, "name"_a = py::none());

  // ---- nn ----
  m.def(
      "softmax",
      [](TensorArg x, int64_t axis, py::handle) {
        return maybe_without_gil(x.value.num_elements(), [&] { return ef::softmax(x, axis, kPython); });
      },
      "logits"_a,
        "axis"_a = -1, "name"_a = py::none());
  m.def(
      "log_softmax",
      [](TensorArg x, int64_t axis, py::handle) {
        return maybe_without_gil(x.value.num_elements(), [&] { return ef::log_softmax(x, axis, kPython); });
      },
        "logits"_a, "axis"_a = -1, "name"_a = py::none());
  m.def(
      "softmax_cross_entropy_with_logits",
      [](TensorArg labels, TensorArg logits, int64_t axis, py::handle) {
        return ef::softmax_cross_entropy_with_logits(labels, logits, axis, kPython);
      },
      "labels"_a, "logits"_a, "axis"_a = -1, "name"_a = py::none());
  m.def(
      "sparse_softmax_cross_entropy_with_logits",
      [](TensorArg labels, TensorArg logits, py::handle) {
        return ef::sparse_softmax_cross_entropy_with_logits(labels, logits, kPython);
      },
      "labels"_a, "logits"_a, "name"_a = py::none());
  m.def(
      "sigmoid_cross_entropy_with_logits",
      [](TensorArg labels, TensorArg logits, py::handle) {
        return ef::sigmoid_cross_entropy_with_logits(labels, logits, kPython);
      },
      "labels"_a, "logits"_a, "name"_a = py::none());
  m.def(
      "bias_add",
      [](TensorArg value, TensorArg bias, py::handle data_format, py::handle) {
        return ef::bias_add(value, bias, data_format.is_none() ? "NHWC" : data_format.cast<std::string>(), kPython);
      },
      "value"_a, "bias"_a, "data_format"_a = py::none(), "name"_a = py::none());
  m.def(
      "l2_normalize",
      [](TensorArg x, AxesArg axis, double epsilon, py::handle) { return ef::l2_normalize(x, axis, epsilon, kPython); },
      "x"_a, "axis"_a = py::none(), "epsilon"_a = 1e-12, "name"_a = py::none());
  m.def(
      "dropout",
      [](TensorArg x, double rate, py::handle noise_shape, py::handle seed, py::handle) {
        std::optional<ef::Shape> ns;
        if (!noise_shape.is_none()) ns = to_shape(noise_shape, "dropout: noise_shape");
        return ef::dropout(x, rate, seed_of(seed), ns, kPython);
      },
      "x"_a, "rate"_a, "noise_shape"_a = py::none(), "seed"_a = py::none(), "name"_a = py::none());

  bind_conv_ops(m);

  // ---- random ----
  m.def("set_seed", [](py::handle seed) { ef::random::set_seed(seed_of(seed)); }, "seed"_a);
  m.def(
      "random_uniform",
      [](ShapeArg shape, py::handle minval, py::handle maxval, DTypeArg dtype, py::handle seed, py::handle) {
        std::optional<ef::TensorOrScalar> hi;
        if (!maxval.is_none()) hi = to_operand(maxval);
        return ef::random::uniform(shape, to_operand(minval), hi, dtype.value.value_or(ef::DType::Float32),
                                   seed_of(seed), kPython);
      },
      "shape"_a, "minval"_a = 0, "maxval"_a = py::none(), "dtype"_a = py::none(), "seed"_a = py::none(),
      "name"_a = py::none());
  m.def(
      "random_normal",
      [](ShapeArg shape, double mean, double stddev, DTypeArg dtype, py::handle seed, py::handle) {
        return ef::random::normal(shape, mean, stddev, dtype.value.value_or(ef::DType::Float32), seed_of(seed), kPython);
      },
      "shape"_a, "mean"_a = 0.0, "stddev"_a = 1.0, "dtype"_a = py::none(), "seed"_a = py::none(),
      "name"_a = py::none());
  m.def(
      "truncated_normal",
      [](ShapeArg shape, double mean, double stddev, DTypeArg dtype, py::handle seed, py::handle) {
        return ef::random::truncated_normal(shape, mean, stddev, dtype.value.value_or(ef::DType::Float32),
                                            seed_of(seed), kPython);
      },
      "shape"_a, "mean"_a = 0.0, "stddev"_a = 1.0, "dtype"_a = py::none(), "seed"_a = py::none(),
      "name"_a = py::none());
}

}  // namespace efpy
