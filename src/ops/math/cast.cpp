// cast: converts between dtypes. Float → integer truncates toward zero; values outside
// the integer range (and NaN) saturate instead of being undefined behaviour. Integer →
// narrower integer keeps the low bits (wraps), as in C, NumPy and TensorFlow.
#include <cmath>
#include <limits>
#include <type_traits>

#include "backends/cuda/kernels.h"
#include "eagerflow/ops/math.h"
#include "ops/jvp_helpers.h"
#include "ops/math/complex.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

enum CastAttr { kDType };

template <class To, class From>
To convert(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if (v != v) return 0;
    if (v <= static_cast<From>(std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
    if (v >= static_cast<From>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

void infer_cast(const OpCall& call, OutputMetas& out) {
  out.add(call.attrs.get_dtype(kDType), call.inputs[0].shape());
}

// Converts x into outputs[0], through Narrow first: a small integer target arrives
// widened (Note [small integer dtypes]), and floats must saturate at its range.
template <class Narrow>
void cast_through(const Tensor& x, Tensor& out) {
  dispatch_dtype(x.dtype(), [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    dispatch_dtype(out.dtype(), [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      struct ConvertFn {
        To operator()(From v) const {
          if constexpr (std::is_void_v<Narrow>)
            return convert<To>(v);
          else
            return static_cast<To>(convert<Narrow>(v));
        }
      };
      cpu::run_unary<ConvertFn, From>(ConvertFn{}, x, out, cpu::kCheapElementNs);
    });
  });
}

void cast_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const DType target = call.attrs.get_dtype(kDType);
  if (!is_small_integer(target)) return cast_through<void>(call.inputs[0], outputs[0]);
  dispatch_storage_dtype(target, [&](auto tag) {
    using Narrow = typename decltype(tag)::type;
    if constexpr (is_small_integer_storage<Narrow>) cast_through<Narrow>(call.inputs[0], outputs[0]);
  });
}

// The gradient flows back into float inputs, converted to their dtype.
std::vector<Tensor> cast_grad(const GradCall& c) {
  DType in = c.forward.inputs[0].dtype();
  if (!is_floating(in)) return {Tensor()};
  return {cast(c.output_grads[0], in)};
}

// Floats in, floats out: the tangent converted like the value.
std::vector<Tensor> cast_jvp(const JvpCall& c) {
  const DType out = c.outputs[0].dtype();
  if (!is_floating(out)) return {Tensor()};
  return {cast(c.input_tangents[0], out)};
}

const OpDef& kCast = define_op({
    .name = "cast",
    .attr_names = {"dtype"},
    .infer = infer_cast,
    .kernels = {cast_cpu, cuda::cast_kernel},
    .gradient = cast_grad,
    .gradient_uses = kGradientReadsNoValues,  // only the input dtype (Note [gradient uses])
    .jvp = cast_jvp,
    .traits = {.elementwise = true},
});

}  // namespace

Tensor cast(const Tensor& x, DType dtype, CallSite where) {
  if (x.defined() && x.dtype() == dtype) return x;
  if (x.defined() && (is_complex(x.dtype()) || is_complex(dtype)))
    return detail::with_call_site(where, [&] { return detail::complex_cast(x, dtype); });
  return run_op(kCast, {x}, {dtype}, where);
}

}  // namespace ef
