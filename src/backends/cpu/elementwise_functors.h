// The scalar functions of the elementwise ops that fused programs can run (Note
// [elementwise blocks] in op_def.h), one functor per op, for every dtype the op takes.
// They live in one header because two kinds of code compile them: the library (its
// kernels, backends/cpu/elementwise.h, and the fused interpreter) and the fused kernels
// generated at run time (Note [compiled fused kernels] in ops/math/fused_compile.cpp),
// which include this file as text, so a compiled chain computes each step with the same
// code, bit for bit. Hence: nothing here may depend on the rest of the library beyond
// float_math.h and the standard headers, and every functor is straight-line code
// where it can be, so that its loops vectorize. Ops whose functors read attrs or
// return bool are defined with their ops instead.
#pragma once

#include <cmath>
#include <functional>
#include <type_traits>

#include "backends/cpu/float_math.h"

namespace ef::cpu::functors {

// Functors that compute T with libm say so (kCallsLibm<T>): compiled fused kernels leave
// them to the interpreter. libm's vector and scalar versions may differ in the last bit
// (Note [vector math]), and whether a loop calls one or the other depends on the whole
// loop, so a compiled chain could differ from the ops alone. The rest are exact IEEE
// operations or our own straight-line math: the same bits anywhere.
template <class F, class T>
constexpr bool calls_libm() {
  if constexpr (requires { F::template kCallsLibm<T>; }) return F::template kCallsLibm<T>;
  else return false;
}

// ---- unary math (ops/math/unary.cpp) ----
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
// Floats clear the sign bit, as std::abs does: abs(-0.0) is +0.0 (atan2(abs(y), -1)
// is pi for y = -0.0) and abs(-NaN) a positive NaN, as in TensorFlow and NumPy.
struct AbsFn {
  template <class T>
  T operator()(T a) const {
    if constexpr (std::is_floating_point_v<T>)
      return std::fabs(a);
    else
      return a < 0 ? wrap_negate(a) : a;
  }
};
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
struct ExpFn {
  template <class T> static constexpr bool kCallsLibm = !std::is_same_v<T, float>;  // ours for float
  template <class T> T operator()(T a) const { return vm::exp(a); }
};
struct Expm1Fn {
  template <class T> static constexpr bool kCallsLibm = true;
  template <class T> T operator()(T a) const { return std::expm1(a); }
};
struct LogFn {
  template <class T> static constexpr bool kCallsLibm = true;
  template <class T> T operator()(T a) const { return std::log(a); }
};
struct Log1pFn {
  template <class T> static constexpr bool kCallsLibm = true;
  template <class T> T operator()(T a) const { return std::log1p(a); }
};
struct SqrtFn { template <class T> T operator()(T a) const { return std::sqrt(a); } };
struct RsqrtFn { template <class T> T operator()(T a) const { return T(1) / std::sqrt(a); } };
struct SinFn {
  template <class T> static constexpr bool kCallsLibm = true;
  template <class T> T operator()(T a) const { return std::sin(a); }
};
struct CosFn {
  template <class T> static constexpr bool kCallsLibm = true;
  template <class T> T operator()(T a) const { return std::cos(a); }
};
struct TanFn {
  template <class T> static constexpr bool kCallsLibm = true;
  template <class T> T operator()(T a) const { return std::tan(a); }
};
struct AsinFn {
  template <class T> static constexpr bool kCallsLibm = true;
  template <class T> T operator()(T a) const { return std::asin(a); }
};
struct AcosFn {
  template <class T> static constexpr bool kCallsLibm = true;
  template <class T> T operator()(T a) const { return std::acos(a); }
};
struct AtanFn {
  template <class T> static constexpr bool kCallsLibm = true;
  template <class T> T operator()(T a) const { return std::atan(a); }
};
struct SinhFn {
  template <class T> static constexpr bool kCallsLibm = true;
  template <class T> T operator()(T a) const { return std::sinh(a); }
};
struct CoshFn {
  template <class T> static constexpr bool kCallsLibm = true;
  template <class T> T operator()(T a) const { return std::cosh(a); }
};
struct TanhFn {
  template <class T> static constexpr bool kCallsLibm = !std::is_same_v<T, float>;  // ours for float
  template <class T> T operator()(T a) const { return vm::tanh(a); }
};
struct ErfFn {
  template <class T> static constexpr bool kCallsLibm = true;
  template <class T> T operator()(T a) const { return std::erf(a); }
};
struct FloorFn { template <class T> T operator()(T a) const { return std::floor(a); } };
struct CeilFn { template <class T> T operator()(T a) const { return std::ceil(a); } };
// nearbyint rounds half to even in the default rounding mode (TensorFlow's round).
struct RoundFn { template <class T> T operator()(T a) const { return std::nearbyint(a); } };

// ---- binary math (ops/math/binary.cpp) ----
// Integer arithmetic wraps on overflow (as TensorFlow's does) instead of being
// undefined behaviour: it is computed on the unsigned type.
template <class T, class Op>
T wrapping(T a, T b, Op op) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(op(static_cast<U>(a), static_cast<U>(b)));
  } else {
    return op(a, b);
  }
}

struct AddFn { template <class T> T operator()(T a, T b) const { return wrapping(a, b, std::plus<>{}); } };
struct SubtractFn { template <class T> T operator()(T a, T b) const { return wrapping(a, b, std::minus<>{}); } };
struct MultiplyFn {
  template <class T> T operator()(T a, T b) const { return wrapping(a, b, std::multiplies<>{}); }
};
struct SquaredDifferenceFn {
  template <class T> T operator()(T a, T b) const {
    T d = wrapping(a, b, std::minus<>{});
    return wrapping(d, d, std::multiplies<>{});
  }
};

// Integer division and modulo: divisors are checked for zero before the kernel runs
// (see checked_division_kernel), and x / -1 is computed as a wrapping negation because
// INT_MIN / -1 traps on x86.
template <class T>
T wrapping_negate(T a) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(U(0) - static_cast<U>(a));
}

struct DivideFn {
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return b == -1 ? wrapping_negate(a) : a / b;
    else return a / b;
  }
};
struct FloorDivFn {
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      if (b == -1) return wrapping_negate(a);
      T q = a / b;
      return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
    } else {
      return std::floor(a / b);
    }
  }
};
struct FloorModFn {
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      if (b == -1) return 0;
      T r = a % b;
      return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    } else {
      T r = std::fmod(a, b);
      return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    }
  }
};
struct PowFn {
  template <class T> static constexpr bool kCallsLibm = true;
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      // Exponents are non-negative (checked before the kernel); wrap like C unsigned math.
      using U = std::make_unsigned_t<T>;
      U result = 1, base = static_cast<U>(a);
      for (T e = b; e > 0; e >>= 1) {
        if (e & 1) result *= base;
        base *= base;
      }
      return static_cast<T>(result);
    } else {
      return std::pow(a, b);
    }
  }
};
// NaN propagates through maximum and minimum, as in TensorFlow and PyTorch.
struct MaximumFn {
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return (a > b || a != a) ? a : b;
    else return a > b ? a : b;
  }
};
struct MinimumFn {
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return (a < b || a != a) ? a : b;
    else return a < b ? a : b;
  }
};

// ---- activations (ops/nn/activations.cpp, ops/nn/sigmoid_grad.cpp) ----
// sigmoid(x) = 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0, where e = exp(-|x|):
// exp never overflows, and sigmoid(-100) keeps its tiny value instead of rounding to 0
// through 1 - sigmoid(100). (Written with the select in the numerator so that GCC
// if-converts and vectorizes it.)
struct SigmoidFn {
  template <class T> static constexpr bool kCallsLibm = !std::is_same_v<T, float>;  // ours for float
  template <class T> T operator()(T x) const {
    const T e = vm::exp_nonpositive(-std::fabs(x));
    return (x >= T(0) ? T(1) : e) / (T(1) + e);
  }
};
// NaN propagates (x != x), as in PyTorch and TensorFlow's relu.
struct ReluFn { template <class T> T operator()(T x) const { return (x > T(0) || x != x) ? x : T(0); } };
struct Relu6Fn {
  template <class T> T operator()(T x) const {
    return x != x ? x : (x < T(0) ? T(0) : (x > T(6) ? T(6) : x));  // one select chain: vectorizes
  }
};
struct EluFn {
  template <class T> static constexpr bool kCallsLibm = true;
  template <class T> T operator()(T x) const { return x > T(0) ? x : std::expm1(x); }
};
// The constants of Klambauer et al. (2017), as in TensorFlow.
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;
struct SeluFn {
  template <class T> static constexpr bool kCallsLibm = true;
  template <class T> T operator()(T x) const {
    return static_cast<T>(kSeluScale) * (x > T(0) ? x : static_cast<T>(kSeluAlpha) * std::expm1(x));
  }
};
// log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)): exp never overflows, and for very
// negative x the result is exp(x) to full precision (log1p of a tiny value).
struct SoftplusFn {
  template <class T> static constexpr bool kCallsLibm = true;
  template <class T> T operator()(T x) const {
    return (x > T(0) ? x : T(0)) + std::log1p(std::exp(-std::fabs(x)));
  }
};
struct SoftsignFn { template <class T> T operator()(T x) const { return x / (T(1) + std::fabs(x)); } };
// sigmoid_grad(y, dy) = dy * y * (1 - y), sigmoid's gradient from its output.
struct SigmoidGradFn {
  template <class T>
  T operator()(T y, T dy) const {
    return dy * (y * (T(1) - y));
  }
};

}  // namespace ef::cpu::functors
