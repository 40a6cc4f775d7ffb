// ef.math's special functions (special.cpp, special_composite.cpp and the truncating
// divisions of binary.cpp in src/ops/math), with TensorFlow's argument names.
#include <optional>

#include <pybind11/stl.h>

#include "unary_binding.h"

namespace efpy {
namespace {

using namespace pybind11::literals;

constexpr ef::CallSite kPython{};

using BinaryOp = ef::Tensor (*)(const ef::TensorOrScalar&, const ef::TensorOrScalar&, ef::CallSite);

template <BinaryOp op>
void binary(py::module_& m, const char* name, const char* x_name, const char* y_name, const char* doc) {
  m.def(
      name,
      [](py::handle x, py::handle y, py::handle) {
        auto [a, b] = to_operands(x, y);
        return op(a, b, kPython);
      },
      doc, py::arg(x_name), py::arg(y_name), "name"_a = py::none());
}

#define EF_FLOAT_UNARY_DOC(summary, example, output, extra)                      \
  summary "\n\n" extra ">>> " example "\n" output                                \
          "\n\n"                                                                 \
          "Args:\n"                                                              \
          "  x: A tensor-like of dtype float16, bfloat16, float32 or float64.\n" \
          "  name: Ignored (TensorFlow compatibility).\n\n"                      \
          "Returns:\n"                                                           \
          "  A Tensor of x's dtype and shape.\n\n"                               \
          "Raises:\n"                                                            \
          "  InvalidArgumentError: x has an integer or bool dtype (use ef.cast first).\n"

#define EF_BINARY_DOC(summary, example, output, x_doc, y_doc, raises)           \
  summary "\n\n>>> " example "\n" output                                        \
          "\n\n"                                                                \
          "Args:\n"                                                             \
          "  " x_doc                                                            \
          "\n"                                                                  \
          "  " y_doc                                                            \
          "\n"                                                                  \
          "  name: Ignored (TensorFlow compatibility).\n\n"                     \
          "Returns:\n"                                                          \
          "  A Tensor of the operands' dtype and of their broadcast shape.\n\n" \
          "Raises:\n"                                                           \
          "  InvalidArgumentError: " raises "\n"

// The argument and error lines the binary ops share.
#define EF_FLOAT_ARG(arg) arg ": A tensor-like of dtype float16, bfloat16, float32 or float64."
#define EF_NUMERIC_ARG(arg) \
  arg ": A tensor-like of dtype float16, bfloat16, float32, float64, int32 or int64."
#define EF_OTHER_ARG(arg, like) \
  arg ": A tensor-like of " like "'s dtype; a Python number takes the other operand's dtype."
#define EF_FLOAT_RAISES "the dtypes differ or are not float dtypes, or the shapes do not broadcast."
#define EF_DIVISION_RAISES \
  "an integer y holds a zero, the dtypes differ or are not\n    supported, or the shapes do not broadcast."

}  // namespace

void bind_special_ops(py::module_& m) {
  bind_unary<ef::asinh>(m, "asinh",
                        EF_FLOAT_UNARY_DOC("Returns the inverse hyperbolic sine of x elementwise.",
                                           "ef.math.asinh([0.]).numpy()", "array([0.], dtype=float32)", ""));
  bind_unary<ef::acosh>(
      m, "acosh",
      EF_FLOAT_UNARY_DOC("Returns the inverse hyperbolic cosine of x elementwise.",
                         "ef.math.acosh([1.]).numpy()", "array([0.], dtype=float32)", "NaN for x < 1.\n\n"));
  bind_unary<ef::atanh>(
      m, "atanh",
      EF_FLOAT_UNARY_DOC("Returns the inverse hyperbolic tangent of x elementwise.",
                         "ef.math.atanh([0., 1.]).numpy()", "array([ 0., inf], dtype=float32)",
                         "+-inf at +-1 and NaN for |x| > 1.\n\n"));
  bind_unary<ef::lgamma>(
      m, "lgamma",
      EF_FLOAT_UNARY_DOC("Returns log |Gamma(x)| elementwise.", "ef.math.lgamma([1., 3.]).numpy()",
                         "array([0.       , 0.6931472], dtype=float32)",
                         "+inf at 0 and at the negative integers. Its gradient is digamma.\n\n"));
  bind_unary<ef::digamma>(
      m, "digamma",
      EF_FLOAT_UNARY_DOC("Returns the digamma function psi(x) = d/dx lgamma(x) elementwise.",
                         "ef.math.digamma([1.]).numpy()", "array([-0.5772157], dtype=float32)",
                         "-inf at +0, +inf at -0 and NaN at the negative integers (as PyTorch\n"
                         "and SciPy). Its gradient is polygamma(1, x).\n\n"));
  bind_unary<ef::erfc>(m, "erfc",
                       EF_FLOAT_UNARY_DOC("Returns the complementary error function 1 - erf(x) elementwise.",
                                          "ef.math.erfc([0.]).numpy()", "array([1.], dtype=float32)",
                                          "Accurate where erf(x) is near 1.\n\n"));
  bind_unary<ef::erfinv>(
      m, "erfinv",
      EF_FLOAT_UNARY_DOC("Returns the inverse error function of x elementwise.",
                         "ef.math.erfinv([0., 1.]).numpy()", "array([ 0., inf], dtype=float32)",
                         "+-inf at +-1 and NaN outside [-1, 1].\n\n"));
  bind_unary<ef::bessel_i0e>(
      m, "bessel_i0e",
      EF_FLOAT_UNARY_DOC(
          "Returns exp(-|x|) I0(x) elementwise, the scaled modified Bessel function of order 0.",
          "ef.math.bessel_i0e([0.]).numpy()", "array([1.], dtype=float32)", ""));
  bind_unary<ef::bessel_i1e>(
      m, "bessel_i1e",
      EF_FLOAT_UNARY_DOC(
          "Returns exp(-|x|) I1(x) elementwise, the scaled modified Bessel function of order 1.",
          "ef.math.bessel_i1e([0.]).numpy()", "array([0.], dtype=float32)", ""));
  bind_unary<ef::log_sigmoid>(
      m, "log_sigmoid",
      EF_FLOAT_UNARY_DOC("Returns log(sigmoid(x)) = -softplus(-x) elementwise, without overflow.",
                         "ef.math.log_sigmoid([0.]).numpy()", "array([-0.6931472], dtype=float32)", ""));

  binary<ef::atan2>(
      m, "atan2", "y", "x",
      EF_BINARY_DOC("Returns the angle of the point (x, y), atan(y / x) in the right quadrant.\n\n"
                    "The result is in [-pi, pi], with C's signed zeros: atan2(0., -1.) is pi\n"
                    "and atan2(-0., -1.) is -pi. NumPy broadcasting.",
                    "ef.math.atan2([1.], [0.]).numpy()", "array([1.5707964], dtype=float32)",
                    EF_FLOAT_ARG("y"), EF_OTHER_ARG("x", "y"), EF_FLOAT_RAISES));
  binary<ef::polygamma>(
      m, "polygamma", "a", "x",
      EF_BINARY_DOC("Returns the polygamma function psi^(a)(x), the a-th derivative of digamma.\n\n"
                    "NaN unless a is a non-negative integer; polygamma(0, x) is digamma(x).\n"
                    "Differentiable in x only (a gradient for a raises UnimplementedError).",
                    "ef.math.polygamma(1., [1.]).numpy()", "array([1.644934], dtype=float32)",
                    EF_FLOAT_ARG("a") " The order.", EF_OTHER_ARG("x", "a"), EF_FLOAT_RAISES));
  binary<ef::xlogy>(
      m, "xlogy", "x", "y",
      EF_BINARY_DOC("Returns x * log(y) elementwise, and 0 wherever x == 0 (whatever y is).\n\n"
                    "The gradient is 0 there too. NumPy broadcasting.",
                    "ef.math.xlogy([0., 2.], [0., 1.]).numpy()", "array([0., 0.], dtype=float32)",
                    EF_FLOAT_ARG("x"), EF_OTHER_ARG("y", "x"), EF_FLOAT_RAISES));
  binary<ef::xdivy>(
      m, "xdivy", "x", "y",
      EF_BINARY_DOC("Returns x / y elementwise, and 0 wherever x == 0 (whatever y is).\n\n"
                    "The gradient is 0 there too. NumPy broadcasting.",
                    "ef.math.xdivy([0., 3.], [0., 2.]).numpy()", "array([0. , 1.5], dtype=float32)",
                    EF_FLOAT_ARG("x"), EF_OTHER_ARG("y", "x"), EF_FLOAT_RAISES));
  binary<ef::xlog1py>(
      m, "xlog1py", "x", "y",
      EF_BINARY_DOC("Returns x * log1p(y) elementwise, and 0 wherever x == 0 (whatever y is).\n\n"
                    "The gradient is 0 there too. NumPy broadcasting.",
                    "ef.math.xlog1py([0., 2.], [-1., 0.]).numpy()", "array([0., 0.], dtype=float32)",
                    EF_FLOAT_ARG("x"), EF_OTHER_ARG("y", "x"), EF_FLOAT_RAISES));
  binary<ef::truncatediv>(
      m, "truncatediv", "x", "y",
      EF_BINARY_DOC("Returns x / y rounded toward zero elementwise (C's `/`), with NumPy broadcasting.\n\n"
                    "Not differentiable (its gradient is None).",
                    "ef.math.truncatediv([7, -7], 2).numpy()", "array([ 3, -3], dtype=int32)",
                    EF_NUMERIC_ARG("x"), EF_OTHER_ARG("y", "x"), EF_DIVISION_RAISES));
  binary<ef::truncatemod>(
      m, "truncatemod", "x", "y",
      EF_BINARY_DOC("Returns x - truncatediv(x, y) * y elementwise (C's `fmod`): the sign of x.\n\n"
                    "NumPy broadcasting.",
                    "ef.math.truncatemod([7, -7], 3).numpy()", "array([ 1, -1], dtype=int32)",
                    EF_NUMERIC_ARG("x"), EF_OTHER_ARG("y", "x"), EF_DIVISION_RAISES));

  m.def(
      "nan_to_num",
      [](TensorArg x, double nan, std::optional<double> posinf, std::optional<double> neginf, py::handle) {
        return ef::nan_to_num(x, nan, posinf, neginf, kPython);
      },
      R"doc(Replaces NaN, +inf and -inf in x with finite numbers.

By default NaN becomes 0 and the infinities the largest and lowest finite values
of x's dtype (NumPy's and PyTorch's nan_to_num). The gradient passes where x is
finite and is 0 elsewhere.

>>> ef.math.nan_to_num([float("nan"), 1., float("-inf")], neginf=-5.).numpy()
array([ 0.,  1., -5.], dtype=float32)

Args:
  x: A tensor-like; integer and bool tensors come back unchanged.
  nan: The value for NaN.
  posinf: The value for +inf (None: the dtype's largest finite value).
  neginf: The value for -inf (None: the dtype's lowest finite value).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.

Raises:
  InvalidArgumentError: a replacement value does not fit x's dtype.
)doc",
      "x"_a, "nan"_a = 0.0, "posinf"_a = py::none(), "neginf"_a = py::none(), "name"_a = py::none());
}

}  // namespace efpy
