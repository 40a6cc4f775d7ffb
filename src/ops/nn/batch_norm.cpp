// batch_normalization and moments: composites over public ops (as in TensorFlow, where
// both are Python functions over primitive ops), so their gradients of every order
// come from the ops they are made of.
// No fused training-mode primitive (yet): STYLE asks for a benchmark that justifies
// one first.
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/conv.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/reduction.h"

namespace ef {
namespace {

void check_float_operand(const Tensor& t, const Tensor& x, const char* arg) {
  if (!t.defined()) fail("batch_normalization: argument '", arg, "' is an undefined tensor");
  if (t.dtype() != x.dtype())
    fail("batch_normalization: argument '", arg, "' has dtype ", t.dtype(), " but x has dtype ", x.dtype());
}

}  // namespace

Tensor batch_normalization(const Tensor& x, const Tensor& mean, const Tensor& variance, const Tensor& offset,
                           const Tensor& scale, double variance_epsilon, CallSite where) {
  try {
    if (!x.defined()) fail("batch_normalization: argument 'x' is an undefined tensor");
    if (!is_floating(x.dtype())) fail("batch_normalization: argument 'x' must be float32 or float64, got ", x.dtype());
    check_float_operand(mean, x, "mean");
    check_float_operand(variance, x, "variance");
    if (offset.defined()) check_float_operand(offset, x, "offset");
    if (scale.defined()) check_float_operand(scale, x, "scale");
    if (variance_epsilon < 0)
      fail("batch_normalization: argument 'variance_epsilon' must be >= 0, got ", variance_epsilon);
    // TensorFlow's arrangement: the per-channel factors are formed on the small
    // statistics tensors, so x is read once by one multiply and one add.
    Tensor inv = rsqrt(add(variance, variance_epsilon));
    if (scale.defined()) inv = multiply(inv, scale);
    Tensor shift = offset.defined() ? subtract(offset, multiply(mean, inv)) : negative(multiply(mean, inv));
    return add(multiply(x, inv), shift);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

std::pair<Tensor, Tensor> moments(const Tensor& x, const std::vector<int64_t>& axes, bool keepdims, CallSite where) {
  try {
    if (!is_floating(x.dtype())) fail("moments: argument 'x' must be float32 or float64, got ", x.dtype());
    Tensor mean = reduce_mean(x, axes, /*keepdims=*/true);
    Tensor variance = reduce_mean(square(subtract(x, mean)), axes, /*keepdims=*/true);
    if (!keepdims) {
      mean = squeeze(mean, axes);
      variance = squeeze(variance, axes);
    }
    return {mean, variance};
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

}  // namespace ef
