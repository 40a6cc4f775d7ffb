// Unary elementwise math: arithmetic, transcendental, rounding, predicates, casts.
// Each op is one functor (those fused programs run are in backends/cpu/elementwise_functors.h,
// the rest here); the CPU driver (backends/cpu/elementwise.h) does the rest.
#include <cmath>
#include <type_traits>

#include "backends/cpu/elementwise_functors.h"
#include "eagerflow/ops/math.h"
#include "ops/jvp_helpers.h"
#include "ops/math/complex.h"
#include "ops/math/fused_eval.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

using namespace cpu;
using namespace cpu::functors;
using detail::unary_op;

struct IsNanFn { template <class T> bool operator()(T a) const { return a != a; } };
struct IsInfFn { template <class T> bool operator()(T a) const { return std::isinf(a); } };
struct IsFiniteFn { template <class T> bool operator()(T a) const { return std::isfinite(a); } };
struct LogicalNotFn { bool operator()(bool a) const { return !a; } };

// ---- Gradients: written with public ops, so they are differentiable themselves ----
using Grads = std::vector<Tensor>;
#define EF_GRAD(name, expr)                                                            \
  Grads name(const GradCall& c) {                                                      \
    [[maybe_unused]] const Tensor &g = c.output_grads[0], &x = c.forward.inputs[0], \
                                  &z = c.outputs[0];                                    \
    return {expr};                                                                     \
  }
EF_GRAD(negative_grad, negative(g))
EF_GRAD(abs_grad, multiply(g, sign(x)))  // 0 at x = 0, as TensorFlow
EF_GRAD(reciprocal_grad, negative(multiply(g, multiply(z, z))))
EF_GRAD(exp_grad, multiply(g, z))
EF_GRAD(expm1_grad, multiply(g, add(z, 1)))
EF_GRAD(log_grad, divide(g, x))
EF_GRAD(log1p_grad, divide(g, add(x, 1)))
EF_GRAD(sqrt_grad, divide(multiply(g, 0.5), z))
EF_GRAD(rsqrt_grad, multiply(multiply(g, -0.5), multiply(z, multiply(z, z))))
EF_GRAD(sin_grad, multiply(g, cos(x)))
EF_GRAD(cos_grad, negative(multiply(g, sin(x))))
EF_GRAD(tan_grad, multiply(g, add(multiply(z, z), 1)))
EF_GRAD(asin_grad, multiply(g, rsqrt(subtract(1, multiply(x, x)))))
EF_GRAD(acos_grad, negative(multiply(g, rsqrt(subtract(1, multiply(x, x))))))
EF_GRAD(atan_grad, divide(g, add(multiply(x, x), 1)))
EF_GRAD(sinh_grad, multiply(g, cosh(x)))
EF_GRAD(cosh_grad, multiply(g, sinh(x)))
EF_GRAD(erf_grad, multiply(g, multiply(exp(negative(multiply(x, x))), 1.1283791670955126)))  // 2/sqrt(pi)
#undef EF_GRAD

// g * (x * 2), in one pass for large tensors (Note [fused gradient expressions]).
Grads square_grad(const GradCall& c) {
  static const FusedProgram program = [] {
    FusedProgram p;  // inputs: g, x, 2
    p.num_inputs = 3;
    p.outputs = {p.add("multiply", {0, p.add("multiply", {1, 2})})};
    return p;
  }();
  const Tensor& x = c.forward.inputs[0];
  const Tensor inputs[] = {c.output_grads[0], x, scalar_tensor(2, x.dtype(), "square")};
  return {detail::evaluate_elementwise(program, inputs)};
}

// g * (1 - z * z), likewise.
Grads tanh_grad(const GradCall& c) {
  static const FusedProgram program = [] {
    FusedProgram p;  // inputs: g, z, 1
    p.num_inputs = 3;
    p.outputs = {p.add("multiply", {0, p.add("subtract", {2, p.add("multiply", {1, 1})})})};
    return p;
  }();
  const Tensor& z = c.outputs[0];
  const Tensor inputs[] = {c.output_grads[0], z, scalar_tensor(1, z.dtype(), "tanh")};
  return {detail::evaluate_elementwise(program, inputs)};
}

constexpr std::string_view kPiecewiseConstant = "piecewise constant: its gradient is zero wherever it exists";
constexpr std::string_view kBoolOutput = "its output is bool";

// `uses`: what the gradient expression above reads, x (input) or z (output) — Note
// [gradient uses] in op_def.h.
template <class F, DTypeSet Set, bool BoolOutput = false, bool Expensive = false>
OpDef unary(std::string_view name, GradFn gradient, GradientUses uses) {
  OpDef def = detail::with_gradient(unary_op<F, Set, BoolOutput, Expensive>(name), gradient, uses);
  def.jvp = detail::jvp_elementwise;  // elementwise: the gradient gives the jvp
  return def;
}
constexpr GradientUses kX = kGradientReadsInputs, kZ = kGradientReadsOutputs, kNeither = kGradientReadsNoValues;
template <class F, DTypeSet Set, bool BoolOutput = false>
OpDef unary_without_gradient(std::string_view name, std::string_view reason) {
  return detail::not_differentiable(unary_op<F, Set, BoolOutput>(name), reason);
}

constexpr bool kExpensive = true;

const OpDef& kNegative = define_op(unary<NegativeFn, kNumericTypes>("negative", negative_grad, kNeither));
const OpDef& kAbs = define_op(unary<AbsFn, kNumericTypes>("abs", abs_grad, kX));
const OpDef& kSign = define_op(unary_without_gradient<SignFn, kNumericTypes>("sign", kPiecewiseConstant));
const OpDef& kSquare = define_op(unary<SquareFn, kNumericTypes>("square", square_grad, kX));
const OpDef& kReciprocal = define_op(unary<ReciprocalFn, kFloatTypes>("reciprocal", reciprocal_grad, kZ));
const OpDef& kExp = define_op(unary<ExpFn, kFloatTypes, false, kExpensive>("exp", exp_grad, kZ));
const OpDef& kExpm1 = define_op(unary<Expm1Fn, kFloatTypes, false, kExpensive>("expm1", expm1_grad, kZ));
const OpDef& kLog = define_op(unary<LogFn, kFloatTypes, false, kExpensive>("log", log_grad, kX));
const OpDef& kLog1p = define_op(unary<Log1pFn, kFloatTypes, false, kExpensive>("log1p", log1p_grad, kX));
const OpDef& kSqrt = define_op(unary<SqrtFn, kFloatTypes>("sqrt", sqrt_grad, kZ));
const OpDef& kRsqrt = define_op(unary<RsqrtFn, kFloatTypes>("rsqrt", rsqrt_grad, kZ));
const OpDef& kSin = define_op(unary<SinFn, kFloatTypes, false, kExpensive>("sin", sin_grad, kX));
const OpDef& kCos = define_op(unary<CosFn, kFloatTypes, false, kExpensive>("cos", cos_grad, kX));
const OpDef& kTan = define_op(unary<TanFn, kFloatTypes, false, kExpensive>("tan", tan_grad, kZ));
const OpDef& kAsin = define_op(unary<AsinFn, kFloatTypes, false, kExpensive>("asin", asin_grad, kX));
const OpDef& kAcos = define_op(unary<AcosFn, kFloatTypes, false, kExpensive>("acos", acos_grad, kX));
const OpDef& kAtan = define_op(unary<AtanFn, kFloatTypes, false, kExpensive>("atan", atan_grad, kX));
const OpDef& kSinh = define_op(unary<SinhFn, kFloatTypes, false, kExpensive>("sinh", sinh_grad, kX));
const OpDef& kCosh = define_op(unary<CoshFn, kFloatTypes, false, kExpensive>("cosh", cosh_grad, kX));
const OpDef& kTanh = define_op(unary<TanhFn, kFloatTypes, false, kExpensive>("tanh", tanh_grad, kZ));
const OpDef& kErf = define_op(unary<ErfFn, kFloatTypes, false, kExpensive>("erf", erf_grad, kX));
const OpDef& kFloor = define_op(unary_without_gradient<FloorFn, kFloatTypes>("floor", kPiecewiseConstant));
const OpDef& kCeil = define_op(unary_without_gradient<CeilFn, kFloatTypes>("ceil", kPiecewiseConstant));
const OpDef& kRound = define_op(unary_without_gradient<RoundFn, kFloatTypes>("round", kPiecewiseConstant));
const OpDef& kIsNan = define_op(unary_without_gradient<IsNanFn, kFloatTypes, true>("isnan", kBoolOutput));
const OpDef& kIsInf = define_op(unary_without_gradient<IsInfFn, kFloatTypes, true>("isinf", kBoolOutput));
const OpDef& kIsFinite = define_op(unary_without_gradient<IsFiniteFn, kFloatTypes, true>("isfinite", kBoolOutput));
const OpDef& kLogicalNot = define_op(unary_without_gradient<LogicalNotFn, kBoolType, true>("logical_not", kBoolOutput));

}  // namespace

// A complex x takes the op's complex form where it has one (Note [complex dtypes]).
Tensor call_unary(const OpDef& op, const Tensor& x, CallSite where) {
  if (x.defined() && is_complex(x.dtype())) [[unlikely]]
    if (std::optional<Tensor> result =
            detail::with_call_site(where, [&] { return detail::complex_unary(op.name, x); }))
      return *result;
  return run_op(op, {x}, {}, where);
}

#define EF_UNARY_OP(function, def) \
  Tensor function(const Tensor& x, CallSite where) { return call_unary(def, x, where); }
EF_UNARY_OP(negative, kNegative)
EF_UNARY_OP(abs, kAbs)
EF_UNARY_OP(sign, kSign)
EF_UNARY_OP(square, kSquare)
EF_UNARY_OP(reciprocal, kReciprocal)
EF_UNARY_OP(exp, kExp)
EF_UNARY_OP(expm1, kExpm1)
EF_UNARY_OP(log, kLog)
EF_UNARY_OP(log1p, kLog1p)
EF_UNARY_OP(sqrt, kSqrt)
EF_UNARY_OP(rsqrt, kRsqrt)
EF_UNARY_OP(sin, kSin)
EF_UNARY_OP(cos, kCos)
EF_UNARY_OP(tan, kTan)
EF_UNARY_OP(asin, kAsin)
EF_UNARY_OP(acos, kAcos)
EF_UNARY_OP(atan, kAtan)
EF_UNARY_OP(sinh, kSinh)
EF_UNARY_OP(cosh, kCosh)
EF_UNARY_OP(tanh, kTanh)
EF_UNARY_OP(erf, kErf)
EF_UNARY_OP(floor, kFloor)
EF_UNARY_OP(ceil, kCeil)
EF_UNARY_OP(round, kRound)
EF_UNARY_OP(isnan, kIsNan)
EF_UNARY_OP(isinf, kIsInf)
EF_UNARY_OP(isfinite, kIsFinite)
EF_UNARY_OP(logical_not, kLogicalNot)
#undef EF_UNARY_OP

Tensor clip_by_value(const Tensor& x, const TensorOrScalar& clip_min, const TensorOrScalar& clip_max,
                     CallSite where) {
  return minimum(maximum(x, clip_min, where), clip_max, where);
}

}  // namespace ef
