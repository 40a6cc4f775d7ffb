// Composite special functions: xlogy, xdivy, xlog1py, log_sigmoid, nan_to_num. Plain
// functions over public ops: no kernel and no gradient of their own. Where x == 0 the
// x * f(y) family is 0 whatever y is (TensorFlow's rule), and so are both partial
// derivatives: y is replaced by a harmless value there before f runs, so no inf or NaN
// reaches the gradient through the branch `where` discards.
#include <limits>
#include <optional>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/nn.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

// x and y as tensors of one float dtype with broadcastable shapes, or an error naming `op`.
std::pair<Tensor, Tensor> float_operands(const TensorOrScalar& x, const TensorOrScalar& y,
                                         std::string_view op) {
  auto [a, b] = resolve_operands(x, y, op);
  for (const Tensor* t : {&a, &b})
    if (!is_floating(t->dtype()))
      fail(op, ": argument '", t == &a ? "x" : "y", "' has dtype ", t->dtype(),
           ", which this op does not support (supported: float16, bfloat16, float32, float64)");
  if (a.dtype() != b.dtype())
    fail(op, ": arguments 'x' and 'y' have different dtypes (", a.dtype(), " and ", b.dtype(), "); use cast");
  broadcast_shapes(a.shape(), b.shape(), op);  // a clear error before any op runs
  return {a, b};
}

// x * f(y) where x != 0, else 0; `safe` is the y that f is given where x == 0.
template <class F>
Tensor x_times(const TensorOrScalar& x, const TensorOrScalar& y, double safe, std::string_view op, F f,
               CallSite where) {
  return detail::with_call_site(where, [&] {
    auto [a, b] = float_operands(x, y, op);
    Tensor zero = equal(a, 0);
    return ef::where(zero, 0, multiply(a, f(ef::where(zero, safe, b))));
  });
}

}  // namespace

Tensor xlogy(const TensorOrScalar& x, const TensorOrScalar& y, CallSite where) {
  return x_times(
      x, y, 1, "xlogy", [](const Tensor& v) { return log(v); }, where);
}

Tensor xdivy(const TensorOrScalar& x, const TensorOrScalar& y, CallSite where) {
  return x_times(
      x, y, 1, "xdivy", [](const Tensor& v) { return reciprocal(v); }, where);
}

Tensor xlog1py(const TensorOrScalar& x, const TensorOrScalar& y, CallSite where) {
  return x_times(
      x, y, 0, "xlog1py", [](const Tensor& v) { return log1p(v); }, where);
}

Tensor log_sigmoid(const Tensor& x, CallSite where) {
  return detail::with_call_site(where, [&] {
    if (x.defined() && !is_floating(x.dtype()))
      fail("log_sigmoid: argument 'x' has dtype ", x.dtype(),
           ", which this op does not support (supported: float16, bfloat16, float32, float64)");
    return negative(softplus(negative(x)));
  });
}

Tensor nan_to_num(const Tensor& x, double nan, std::optional<double> posinf, std::optional<double> neginf,
                  CallSite where) {
  return detail::with_call_site(where, [&] {
    if (!x.defined()) fail("nan_to_num: argument 'x' is undefined");
    if (!is_floating(x.dtype())) return x;  // integers and bools have no NaN or infinity
    // The largest finite value of the dtype (as torch.finfo(dtype).max).
    const double big = x.dtype() == DType::Float64   ? std::numeric_limits<double>::max()
                       : x.dtype() == DType::Float32 ? double(std::numeric_limits<float>::max())
                       : x.dtype() == DType::Float16 ? 65504.0
                                                     : 0x1.fep127;  // bfloat16
    const double inf = std::numeric_limits<double>::infinity();
    Tensor result = ef::where(isnan(x), nan, x);
    result = ef::where(equal(x, inf), posinf.value_or(big), result);
    return ef::where(equal(x, -inf), neginf.value_or(-big), result);
  });
}

}  // namespace ef
