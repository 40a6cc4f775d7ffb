// Unary elementwise math: arithmetic, transcendental, rounding, predicates, casts.
// Each op is one functor; the CPU driver (backends/cpu/elementwise.h) does the rest.
#include <cmath>
#include <type_traits>

#include "eagerflow/ops/math.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

using namespace cpu;
using detail::unary_op;

template <class T>
T wrap_negate(T a) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(U(0) - static_cast<U>(a));  // INT_MIN stays INT_MIN, as in TensorFlow
  } else {
    return -a;
  }
}

struct NegativeFn { template <class T> T operator()(T a) const { return wrap_negate(a); } };
struct AbsFn { template <class T> T operator()(T a) const { return a < 0 ? wrap_negate(a) : a; } };
struct SignFn {
  template <class T> T operator()(T a) const {
    if constexpr (std::is_floating_point_v<T>)
      if (a != a) return a;  // sign(NaN) is NaN
    return static_cast<T>((a > 0) - (a < 0));
  }
};
struct SquareFn {
  template <class T> T operator()(T a) const {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(a) * static_cast<U>(a));
    } else {
      return a * a;
    }
  }
};
struct ReciprocalFn { template <class T> T operator()(T a) const { return T(1) / a; } };
struct ExpFn { template <class T> T operator()(T a) const { return std::exp(a); } };
struct Expm1Fn { template <class T> T operator()(T a) const { return std::expm1(a); } };
struct LogFn { template <class T> T operator()(T a) const { return std::log(a); } };
struct Log1pFn { template <class T> T operator()(T a) const { return std::log1p(a); } };
struct SqrtFn { template <class T> T operator()(T a) const { return std::sqrt(a); } };
struct RsqrtFn { template <class T> T operator()(T a) const { return T(1) / std::sqrt(a); } };
struct SinFn { template <class T> T operator()(T a) const { return std::sin(a); } };
struct CosFn { template <class T> T operator()(T a) const { return std::cos(a); } };
struct TanFn { template <class T> T operator()(T a) const { return std::tan(a); } };
struct AsinFn { template <class T> T operator()(T a) const { return std::asin(a); } };
struct AcosFn { template <class T> T operator()(T a) const { return std::acos(a); } };
struct AtanFn { template <class T> T operator()(T a) const { return std::atan(a); } };
struct SinhFn { template <class T> T operator()(T a) const { return std::sinh(a); } };
struct CoshFn { template <class T> T operator()(T a) const { return std::cosh(a); } };
struct TanhFn { template <class T> T operator()(T a) const { return std::tanh(a); } };
struct ErfFn { template <class T> T operator()(T a) const { return std::erf(a); } };
struct FloorFn { template <class T> T operator()(T a) const { return std::floor(a); } };
struct CeilFn { template <class T> T operator()(T a) const { return std::ceil(a); } };
// nearbyint rounds half to even in the default rounding mode (TensorFlow's round).
struct RoundFn { template <class T> T operator()(T a) const { return std::nearbyint(a); } };
struct IsNanFn { template <class T> bool operator()(T a) const { return a != a; } };
struct IsInfFn { template <class T> bool operator()(T a) const { return std::isinf(a); } };
struct IsFiniteFn { template <class T> bool operator()(T a) const { return std::isfinite(a); } };
struct LogicalNotFn { bool operator()(bool a) const { return !a; } };

constexpr bool kExpensive = true;

const OpDef& kNegative = define_op(unary_op<NegativeFn, kNumericTypes>("negative"));
const OpDef& kAbs = define_op(unary_op<AbsFn, kNumericTypes>("abs"));
const OpDef& kSign = define_op(unary_op<SignFn, kNumericTypes>("sign"));
const OpDef& kSquare = define_op(unary_op<SquareFn, kNumericTypes>("square"));
const OpDef& kReciprocal = define_op(unary_op<ReciprocalFn, kFloatTypes>("reciprocal"));
const OpDef& kExp = define_op(unary_op<ExpFn, kFloatTypes, false, kExpensive>("exp"));
const OpDef& kExpm1 = define_op(unary_op<Expm1Fn, kFloatTypes, false, kExpensive>("expm1"));
const OpDef& kLog = define_op(unary_op<LogFn, kFloatTypes, false, kExpensive>("log"));
const OpDef& kLog1p = define_op(unary_op<Log1pFn, kFloatTypes, false, kExpensive>("log1p"));
const OpDef& kSqrt = define_op(unary_op<SqrtFn, kFloatTypes>("sqrt"));
const OpDef& kRsqrt = define_op(unary_op<RsqrtFn, kFloatTypes>("rsqrt"));
const OpDef& kSin = define_op(unary_op<SinFn, kFloatTypes, false, kExpensive>("sin"));
const OpDef& kCos = define_op(unary_op<CosFn, kFloatTypes, false, kExpensive>("cos"));
const OpDef& kTan = define_op(unary_op<TanFn, kFloatTypes, false, kExpensive>("tan"));
const OpDef& kAsin = define_op(unary_op<AsinFn, kFloatTypes, false, kExpensive>("asin"));
const OpDef& kAcos = define_op(unary_op<AcosFn, kFloatTypes, false, kExpensive>("acos"));
const OpDef& kAtan = define_op(unary_op<AtanFn, kFloatTypes, false, kExpensive>("atan"));
const OpDef& kSinh = define_op(unary_op<SinhFn, kFloatTypes, false, kExpensive>("sinh"));
const OpDef& kCosh = define_op(unary_op<CoshFn, kFloatTypes, false, kExpensive>("cosh"));
const OpDef& kTanh = define_op(unary_op<TanhFn, kFloatTypes, false, kExpensive>("tanh"));
const OpDef& kErf = define_op(unary_op<ErfFn, kFloatTypes, false, kExpensive>("erf"));
const OpDef& kFloor = define_op(unary_op<FloorFn, kFloatTypes>("floor"));
const OpDef& kCeil = define_op(unary_op<CeilFn, kFloatTypes>("ceil"));
const OpDef& kRound = define_op(unary_op<RoundFn, kFloatTypes>("round"));
const OpDef& kIsNan = define_op(unary_op<IsNanFn, kFloatTypes, true>("isnan"));
const OpDef& kIsInf = define_op(unary_op<IsInfFn, kFloatTypes, true>("isinf"));
const OpDef& kIsFinite = define_op(unary_op<IsFiniteFn, kFloatTypes, true>("isfinite"));
const OpDef& kLogicalNot = define_op(unary_op<LogicalNotFn, kBoolType, true>("logical_not"));

}  // namespace

#define EF_UNARY_OP(function, def) \
  Tensor function(const Tensor& x, CallSite where) { return run_op(def, {x}, {}, where); }
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
