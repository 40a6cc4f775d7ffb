// ef.nn's normalizations that are not layers' building blocks of their own:
// l2_normalize and local_response_normalization.
#include "bindings.h"
#include "convert.h"

namespace efpy {
namespace {

using namespace pybind11::literals;
constexpr ef::CallSite kPython{};

}  // namespace

void bind_normalization_ops(py::module_& m) {
  m.def(
      "local_response_normalization",
      [](TensorArg input, int64_t depth_radius, double bias, double alpha, double beta, py::handle) {
        return ef::local_response_normalization(input, depth_radius, bias, alpha, beta, kPython);
      },
      R"doc(Local response normalization of NHWC `input` (tf.nn.local_response_normalization).

Each value is divided by (bias + alpha * s) ** beta, where s is the sum of the
squares of the channels within depth_radius of its own, at the same pixel.

>>> ef.nn.local_response_normalization(ef.ones([1, 1, 1, 3]), depth_radius=1).numpy().ravel()
array([0.57735026, 0.5       , 0.57735026], dtype=float32)

Args:
  input: A float tensor-like [batch, height, width, channels].
  depth_radius: The half-width of the channel window (>= 0).
  bias, alpha, beta: The formula's constants.
  name: Ignored (TensorFlow compatibility).

Raises:
  InvalidArgumentError: another rank or dtype, a negative depth_radius.
)doc",
      "input"_a, "depth_radius"_a = 5, "bias"_a = 1.0, "alpha"_a = 1.0, "beta"_a = 0.5,
      "name"_a = py::none());
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
}

}  // namespace efpy
