// Binary elementwise ops: arithmetic, comparisons, logical. Each op is one functor (the
// arithmetic ones in backends/cpu/elementwise_functors.h, shared with compiled fused
// kernels); src/backends/cpu/elementwise.h does dtypes, broadcasting, vectorization and threads.
// Gradients: see the autodiff layer's slot in each OpDef (filled where the op is defined).
#include <cmath>
#include <functional>
#include <limits>
#include <type_traits>

#include "backends/cpu/elementwise_functors.h"
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/math.h"
#include "ops/jvp_helpers.h"
#include "ops/math/complex.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

using namespace cpu;
using namespace cpu::functors;
using detail::binary_op;

struct EqualFn { template <class T> bool operator()(T a, T b) const { return a == b; } };
struct NotEqualFn { template <class T> bool operator()(T a, T b) const { return a != b; } };
struct LessFn { template <class T> bool operator()(T a, T b) const { return a < b; } };
struct LessEqualFn { template <class T> bool operator()(T a, T b) const { return a <= b; } };
struct GreaterFn { template <class T> bool operator()(T a, T b) const { return a > b; } };
struct GreaterEqualFn { template <class T> bool operator()(T a, T b) const { return a >= b; } };
struct LogicalAndFn { bool operator()(bool a, bool b) const { return a && b; } };
struct LogicalOrFn { bool operator()(bool a, bool b) const { return a || b; } };
struct LogicalXorFn { bool operator()(bool a, bool b) const { return a != b; } };
// atan2(y, x): the angle of the point (x, y), with C's quadrants and signed zeros.
struct Atan2Fn {
  template <class T>
  T operator()(T y, T x) const {
    return std::atan2(y, x);
  }
};
// Division rounding toward zero (C's / and %); the integer ones never see a zero divisor.
struct TruncateDivFn {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return b == -1 ? wrapping_negate(a) : a / b;
    else
      return std::trunc(a / b);
  }
};
struct TruncateModFn {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return b == -1 ? 0 : a % b;
    else
      return std::fmod(a, b);
  }
};

// Runs `reject(value)` on every element of the integer input `y`, and throws
// InvalidArgumentError with `what` if it returns true for any.
template <class Reject>
void check_integer_operand(const OpCall& call, const char* what, Reject reject) {
  if (!is_integer(call.inputs[1].dtype())) return;
  // On a GPU the divisors are read on the host (one copy and a wait), so a bad one is
  // the same error as on the CPU rather than garbage from the device.
  const Tensor y = call.inputs[1].device().type == DeviceType::CPU ? call.inputs[1] : call.inputs[1].cpu();
  dispatch_in<kIntTypes>(y.dtype(), call.op.name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const TensorImpl& impl = *y.impl();
    int64_t n = y.num_elements();
    bool bad = false;
    if (impl.is_contiguous()) {
      const T* p = static_cast<const T*>(impl.storage->data()) + impl.offset;
      for (int64_t i = 0; i < n; ++i) bad |= reject(p[i]);
    } else {
      for (int64_t i = 0; i < n && !bad; ++i) bad = reject(detail::read_element<T>(impl, i));
    }
    // No dtype in the message: a small integer dtype arrives here widened (Note [small
    // integer dtypes]), and naming int32 for a uint8 operand would mislead.
    if (bad)
      fail(call.op.name, ": ", what, " (x shape ", call.inputs[0].shape(), ", y shape ", y.shape(), ")");
  });
}

template <class F>
void checked_division_kernel(const OpCall& call, std::span<Tensor> outputs) {
  check_integer_operand(call, "integer division by zero", [](auto v) { return v == 0; });
  binary_kernel<F, kNumericTypes>(call, outputs);
}

void checked_division_cuda(const OpCall& call, std::span<Tensor> outputs) {
  check_integer_operand(call, "integer division by zero", [](auto v) { return v == 0; });
  cuda::elementwise_kernel(call, outputs);
}

void checked_pow_cuda(const OpCall& call, std::span<Tensor> outputs) {
  check_integer_operand(call, "integers cannot be raised to negative integer powers",
                        [](auto v) { return v < 0; });
  cuda::elementwise_kernel(call, outputs);
}

void checked_pow_kernel(const OpCall& call, std::span<Tensor> outputs) {
  check_integer_operand(call, "integers cannot be raised to negative integer powers",
                        [](auto v) { return v < 0; });
  binary_kernel<PowFn, kNumericTypes, true>(call, outputs);
}

// The op with checked kernels: integer operands are validated before computing. A null
// `cuda` leaves the op without a CUDA kernel.
OpDef with_checked_kernels(OpDef def, KernelFn cpu, KernelFn cuda) {
  def.kernels[static_cast<int>(DeviceType::CPU)] = cpu;
  def.kernels[static_cast<int>(DeviceType::CUDA)] = cuda;
  return def;
}

// ---- Gradients: written with public ops, so they are differentiable themselves ----
// Each OpDef below says which forward values its gradient reads (Note [gradient uses]
// in op_def.h): none for add and subtract, the inputs for the others but pow.
using Grads = std::vector<Tensor>;

Grads add_grad(const GradCall& c) { return {c.output_grads[0], c.output_grads[0]}; }
Grads subtract_grad(const GradCall& c) {
  return {c.output_grads[0], c.needs(1) ? negative(c.output_grads[0]) : Tensor()};  // x - constant: no pass
}
Grads multiply_grad(const GradCall& c) {
  const Tensor &g = c.output_grads[0], &x = c.forward.inputs[0], &y = c.forward.inputs[1];
  return {c.needs(0) ? multiply(g, y) : Tensor(), c.needs(1) ? multiply(g, x) : Tensor()};
}
Grads divide_grad(const GradCall& c) {
  const Tensor &g = c.output_grads[0], &x = c.forward.inputs[0], &y = c.forward.inputs[1];
  return {c.needs(0) ? divide(g, y) : Tensor(),
          c.needs(1) ? negative(divide(multiply(g, x), multiply(y, y))) : Tensor()};
}
// d/dx x^y = y x^(y-1), which is 0 where y == 0 (x^0 is 1 everywhere): at x == 0 the
// formula's 0 * 0^-1 would be NaN, and so would the second derivative of x^1 or the third
// of x^2 there (each reaches an x^0). The base is replaced by 1 at exactly those points,
// not by a `where` around the product: a where would still differentiate the NaN branch
// at the next order (0 * inf). d/dy x^y = x^y log x; like TensorFlow, taken as 0 where
// x <= 0 (log undefined).
Grads pow_grad(const GradCall& c) {
  const Tensor &g = c.output_grads[0], &x = c.forward.inputs[0], &y = c.forward.inputs[1];
  const Tensor& z = c.outputs[0];
  Tensor dx;
  if (c.needs(0)) {
    Tensor base = where(logical_and(equal(y, 0), equal(x, 0)), 1, x);
    dx = multiply(g, multiply(y, pow(base, subtract(y, 1))));
  }
  if (!c.needs(1)) return {dx, Tensor()};
  Tensor positive = greater(x, 0);
  Tensor log_x = where(positive, log(where(positive, x, 1)), 0);
  return {dx, multiply(g, multiply(z, log_x))};
}
// Ties send the whole gradient to x, as TensorFlow does.
Grads maximum_grad(const GradCall& c) {
  const Tensor& g = c.output_grads[0];
  Tensor to_x = greater_equal(c.forward.inputs[0], c.forward.inputs[1]);
  return {where(to_x, g, 0), where(to_x, 0, g)};
}
Grads minimum_grad(const GradCall& c) {
  const Tensor& g = c.output_grads[0];
  Tensor to_x = less_equal(c.forward.inputs[0], c.forward.inputs[1]);
  return {where(to_x, g, 0), where(to_x, 0, g)};
}
Grads squared_difference_grad(const GradCall& c) {
  Tensor d = multiply(multiply(c.output_grads[0], 2), subtract(c.forward.inputs[0], c.forward.inputs[1]));
  return {d, negative(d)};
}
// floormod(x, y) = x - floordiv(x, y) * y, and floordiv is piecewise constant.
Grads floormod_grad(const GradCall& c) {
  const Tensor& g = c.output_grads[0];
  return {g, negative(multiply(g, floordiv(c.forward.inputs[0], c.forward.inputs[1])))};
}

// truncatemod(x, y) = x - truncatediv(x, y) * y (PyTorch's fmod gradient).
Grads truncatemod_grad(const GradCall& c) {
  const Tensor& g = c.output_grads[0];
  return {g, c.needs(1) ? negative(multiply(g, truncatediv(c.forward.inputs[0], c.forward.inputs[1])))
                        : Tensor()};
}
// d atan2(y, x) = (x dy - y dx) / (x^2 + y^2); NaN at the origin, as TensorFlow and PyTorch.
Grads atan2_grad(const GradCall& c) {
  const Tensor &y = c.forward.inputs[0], &x = c.forward.inputs[1];
  Tensor scaled = divide(c.output_grads[0], add(multiply(x, x), multiply(y, y)));
  return {c.needs(0) ? multiply(scaled, x) : Tensor(), c.needs(1) ? negative(multiply(scaled, y)) : Tensor()};
}

constexpr std::string_view kBoolOutput = "its output is bool";
constexpr std::string_view kPiecewiseConstant = "piecewise constant: its gradient is zero wherever it exists";

using detail::not_differentiable;
// Every differentiable op here is elementwise, so its jvp rule comes from its gradient
// (detail::jvp_elementwise).
OpDef with_gradient(OpDef def, GradFn gradient, GradientUses uses = {}) {
  def = detail::with_gradient(std::move(def), gradient, uses);
  def.jvp = detail::jvp_elementwise;
  return def;
}

const OpDef& kAdd =
    define_op(with_gradient(binary_op<AddFn, kNumericTypes>("add"), add_grad, kGradientReadsNoValues));
const OpDef& kSubtract = define_op(with_gradient(binary_op<SubtractFn, kNumericTypes>("subtract"), subtract_grad,
                                                 kGradientReadsNoValues));
const OpDef& kMultiply = define_op(with_gradient(binary_op<MultiplyFn, kNumericTypes>("multiply"), multiply_grad,
                                                 kGradientReadsInputs));
const OpDef& kDivide =
    define_op(with_gradient(with_checked_kernels(binary_op<DivideFn, kNumericTypes>("divide"),
                                                 checked_division_kernel<DivideFn>, checked_division_cuda),
                            divide_grad, kGradientReadsInputs));
const OpDef& kFloorDiv = define_op(
    not_differentiable(with_checked_kernels(binary_op<FloorDivFn, kNumericTypes>("floordiv"),
                                            checked_division_kernel<FloorDivFn>, checked_division_cuda),
                       kPiecewiseConstant));
const OpDef& kFloorMod =
    define_op(with_gradient(with_checked_kernels(binary_op<FloorModFn, kNumericTypes>("floormod"),
                                                 checked_division_kernel<FloorModFn>, checked_division_cuda),
                            floormod_grad, kGradientReadsInputs));
const OpDef& kTruncateDiv = define_op(not_differentiable(
    with_checked_kernels(detail::not_fused(binary_op<TruncateDivFn, kNumericTypes>("truncatediv")),
                         checked_division_kernel<TruncateDivFn>, nullptr),
    kPiecewiseConstant));
const OpDef& kTruncateMod = define_op(with_gradient(
    with_checked_kernels(detail::not_fused(binary_op<TruncateModFn, kNumericTypes>("truncatemod")),
                         checked_division_kernel<TruncateModFn>, nullptr),
    truncatemod_grad, kGradientReadsInputs));
const OpDef& kAtan2 =
    define_op(with_gradient(detail::not_fused(binary_op<Atan2Fn, kFloatTypes, false, true>("atan2")),
                            atan2_grad, kGradientReadsInputs));
const OpDef& kPow = define_op(with_gradient(
    with_checked_kernels(binary_op<PowFn, kNumericTypes>("pow"), checked_pow_kernel, checked_pow_cuda),
    pow_grad));
const OpDef& kMaximum =
    define_op(with_gradient(binary_op<MaximumFn, kNumericTypes>("maximum"), maximum_grad, kGradientReadsInputs));
const OpDef& kMinimum =
    define_op(with_gradient(binary_op<MinimumFn, kNumericTypes>("minimum"), minimum_grad, kGradientReadsInputs));
const OpDef& kSquaredDifference = define_op(
    with_gradient(binary_op<SquaredDifferenceFn, kNumericTypes>("squared_difference"), squared_difference_grad,
                  kGradientReadsInputs));

const OpDef& kEqual = define_op(not_differentiable(binary_op<EqualFn, kAllTypes, true>("equal"), kBoolOutput));
const OpDef& kNotEqual = define_op(not_differentiable(binary_op<NotEqualFn, kAllTypes, true>("not_equal"), kBoolOutput));
const OpDef& kLess = define_op(not_differentiable(binary_op<LessFn, kNumericTypes, true>("less"), kBoolOutput));
const OpDef& kLessEqual = define_op(not_differentiable(binary_op<LessEqualFn, kNumericTypes, true>("less_equal"), kBoolOutput));
const OpDef& kGreater = define_op(not_differentiable(binary_op<GreaterFn, kNumericTypes, true>("greater"), kBoolOutput));
const OpDef& kGreaterEqual = define_op(not_differentiable(binary_op<GreaterEqualFn, kNumericTypes, true>("greater_equal"), kBoolOutput));
const OpDef& kLogicalAnd = define_op(not_differentiable(binary_op<LogicalAndFn, kBoolType, true>("logical_and"), kBoolOutput));
const OpDef& kLogicalOr = define_op(not_differentiable(binary_op<LogicalOrFn, kBoolType, true>("logical_or"), kBoolOutput));
const OpDef& kLogicalXor = define_op(not_differentiable(binary_op<LogicalXorFn, kBoolType, true>("logical_xor"), kBoolOutput));

// Resolves numbers to tensors of the other operand's dtype, then dispatches.
Tensor call_binary(const OpDef& op, const TensorOrScalar& x, const TensorOrScalar& y, CallSite where) {
  if (x.is_tensor() && y.is_tensor() && !detail::involves_complex(x, y))
    return run_op(op, {x.tensor(), y.tensor()}, {}, where);
  try {
    if (detail::involves_complex(x, y))
      if (std::optional<Tensor> result = detail::complex_binary(op.name, x, y)) return *result;
    auto [a, b] = resolve_operands(x, y, op.name);
    return run_op(op, {a, b}, {}, where);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

}  // namespace

#define EF_BINARY_OP(function, def)                                                      \
  Tensor function(const TensorOrScalar& x, const TensorOrScalar& y, CallSite where) {   \
    return call_binary(def, x, y, where);                                                \
  }
EF_BINARY_OP(add, kAdd)
EF_BINARY_OP(subtract, kSubtract)
EF_BINARY_OP(multiply, kMultiply)
EF_BINARY_OP(divide, kDivide)
EF_BINARY_OP(floordiv, kFloorDiv)
EF_BINARY_OP(floormod, kFloorMod)
EF_BINARY_OP(truncatediv, kTruncateDiv)
EF_BINARY_OP(truncatemod, kTruncateMod)
EF_BINARY_OP(atan2, kAtan2)
EF_BINARY_OP(pow, kPow)
EF_BINARY_OP(maximum, kMaximum)
EF_BINARY_OP(minimum, kMinimum)
EF_BINARY_OP(squared_difference, kSquaredDifference)
EF_BINARY_OP(equal, kEqual)
EF_BINARY_OP(not_equal, kNotEqual)
EF_BINARY_OP(less, kLess)
EF_BINARY_OP(less_equal, kLessEqual)
EF_BINARY_OP(greater, kGreater)
EF_BINARY_OP(greater_equal, kGreaterEqual)
EF_BINARY_OP(logical_and, kLogicalAnd)
EF_BINARY_OP(logical_or, kLogicalOr)
EF_BINARY_OP(logical_xor, kLogicalXor)
#undef EF_BINARY_OP

}  // namespace ef
