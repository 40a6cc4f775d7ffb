// ef.math: elementwise ops, with TensorFlow's argument names.
#include "bindings.h"
#include "convert.h"

namespace efpy {
namespace {

using namespace pybind11::literals;

constexpr ef::CallSite kPython{};  // errors name no C++ location for Python callers

using UnaryOp = ef::Tensor (*)(const ef::Tensor&, ef::CallSite);
using BinaryOp = ef::Tensor (*)(const ef::TensorOrScalar&, const ef::TensorOrScalar&, ef::CallSite);

template <UnaryOp op>
void unary(py::module_& m, const char* name) {
  m.def(
      name,
      [](TensorArg x, py::handle) {
        return maybe_without_gil(x.value.num_elements(), [&] { return op(x, kPython); });
      },
      "x"_a, "name"_a = py::none());
}

// Two Python numbers become tensors with TensorFlow's defaults (ef.add(1., 2.) is
// float32); otherwise a number takes the tensor's dtype.
template <BinaryOp op>
void binary(py::module_& m, const char* name) {
  m.def(
      name,
      [](py::handle x, py::handle y, py::handle) {
        auto [a, b] = to_operands(x, y);
        return op(a, b, kPython);
      },
      "x"_a, "y"_a, "name"_a = py::none());
}

}  // namespace

void bind_math_ops(py::module_& m) {
  binary<ef::add>(m, "add");
  binary<ef::subtract>(m, "subtract");
  binary<ef::multiply>(m, "multiply");
  binary<true_divide>(m, "divide");
  binary<ef::floordiv>(m, "floordiv");
  binary<ef::floormod>(m, "floormod");
  binary<ef::pow>(m, "pow");
  binary<ef::maximum>(m, "maximum");
  binary<ef::minimum>(m, "minimum");
  binary<ef::squared_difference>(m, "squared_difference");
  binary<ef::equal>(m, "equal");
  binary<ef::not_equal>(m, "not_equal");
  binary<ef::less>(m, "less");
  binary<ef::less_equal>(m, "less_equal");
  binary<ef::greater>(m, "greater");
  binary<ef::greater_equal>(m, "greater_equal");
  binary<ef::logical_and>(m, "logical_and");
  binary<ef::logical_or>(m, "logical_or");
  binary<ef::logical_xor>(m, "logical_xor");

  unary<ef::logical_not>(m, "logical_not");
  unary<ef::negative>(m, "negative");
  unary<ef::abs>(m, "abs");
  unary<ef::sign>(m, "sign");
  unary<ef::square>(m, "square");
  unary<ef::reciprocal>(m, "reciprocal");
  unary<ef::exp>(m, "exp");
  unary<ef::expm1>(m, "expm1");
  unary<ef::log>(m, "log");
  unary<ef::log1p>(m, "log1p");
  unary<ef::sqrt>(m, "sqrt");
  unary<ef::rsqrt>(m, "rsqrt");
  unary<ef::sin>(m, "sin");
  unary<ef::cos>(m, "cos");
  unary<ef::tan>(m, "tan");
  unary<ef::asin>(m, "asin");
  unary<ef::acos>(m, "acos");
  unary<ef::atan>(m, "atan");
  unary<ef::sinh>(m, "sinh");
  unary<ef::cosh>(m, "cosh");
  unary<ef::tanh>(m, "tanh");
  unary<ef::erf>(m, "erf");
  unary<ef::floor>(m, "floor");
  unary<ef::ceil>(m, "ceil");
  unary<ef::round>(m, "round");
  unary<ef::isnan>(m, "is_nan");
  unary<ef::isinf>(m, "is_inf");
  unary<ef::isfinite>(m, "is_finite");
  unary<ef::sigmoid>(m, "sigmoid");
  m.def(
      "sigmoid_grad", [](TensorArg y, TensorArg dy, py::handle) { return ef::sigmoid_grad(y, dy, kPython); }, "y"_a,
      "dy"_a, "name"_a = py::none());
  unary<ef::relu>(m, "relu");
  unary<ef::relu6>(m, "relu6");
  unary<ef::elu>(m, "elu");
  unary<ef::selu>(m, "selu");
  unary<ef::softplus>(m, "softplus");
  unary<ef::softsign>(m, "softsign");

  m.def(
      "clip_by_value",
      [](TensorArg t, OperandArg lo, OperandArg hi, py::handle) { return ef::clip_by_value(t, lo, hi, kPython); },
      "t"_a, "clip_value_min"_a, "clip_value_max"_a, "name"_a = py::none());
  m.def(
      "cast",
      [](TensorArg x, DTypeArg dtype, py::handle) {
        if (!dtype.value) throw py::type_error("cast: dtype is required");
        return ef::cast(x, *dtype.value, kPython);
      },
      "x"_a, "dtype"_a, "name"_a = py::none());
  m.def(
      "leaky_relu", [](TensorArg x, double alpha, py::handle) { return ef::leaky_relu(x, alpha, kPython); },
      "features"_a, "alpha"_a = 0.2, "name"_a = py::none());
  m.def(
      "gelu", [](TensorArg x, bool approximate, py::handle) { return ef::gelu(x, approximate, kPython); },
      "features"_a, "approximate"_a = false, "name"_a = py::none());
}

}  // namespace efpy
