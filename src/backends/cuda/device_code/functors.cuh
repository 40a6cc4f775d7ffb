// The scalar functions of the elementwise ops and reductions on CUDA devices, one
// functor per op, named after the op (ef_op_<name>). They compute what the CPU's
// functors compute (src/backends/cpu/elementwise_functors.h, and the ops' own files
// for comparisons), in the same order of operations: NaN propagates through maximum,
// minimum and relu; integer arithmetic wraps. The CUDA tests compare every one with
// the CPU on the same inputs.
#pragma once

#include "prelude.cuh"

// Integer arithmetic wraps (computed on the unsigned type), as on the CPU.
template <class T>
EF_DEVICE T ef_wrap_add(T a, T b) {
  if constexpr (ef_is_integer<T>::value) {
    using U = typename ef_unsigned<T>::type;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <class T>
EF_DEVICE T ef_wrap_sub(T a, T b) {
  if constexpr (ef_is_integer<T>::value) {
    using U = typename ef_unsigned<T>::type;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return a - b;
  }
}
template <class T>
EF_DEVICE T ef_wrap_mul(T a, T b) {
  if constexpr (ef_is_integer<T>::value) {
    using U = typename ef_unsigned<T>::type;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

#define EF_UNARY(name, expr)            \
  struct ef_op_##name {                 \
    template <class T>                  \
    EF_DEVICE T operator()(T a) const { \
      return expr;                      \
    }                                   \
  };
#define EF_BINARY(name, expr)                \
  struct ef_op_##name {                      \
    template <class T>                       \
    EF_DEVICE T operator()(T a, T b) const { \
      return expr;                           \
    }                                        \
  };
#define EF_PREDICATE(name, expr)           \
  struct ef_op_##name {                    \
    template <class T>                     \
    EF_DEVICE bool operator()(T a) const { \
      return expr;                         \
    }                                      \
  };
#define EF_COMPARISON(name, expr)               \
  struct ef_op_##name {                         \
    template <class T>                          \
    EF_DEVICE bool operator()(T a, T b) const { \
      return expr;                              \
    }                                           \
  };

// ---- unary math ----
// Floats flip or clear the sign bit, as on the CPU: negative(0.0) is -0.0, abs(-0.0)
// is +0.0 (0 - a would give +0.0 for both).
template <class T>
EF_DEVICE T ef_negate(T a) {
  if constexpr (ef_is_integer<T>::value)
    return ef_wrap_sub(T(0), a);
  else
    return -a;
}
template <class T>
EF_DEVICE T ef_abs_value(T a) {
  if constexpr (ef_is_integer<T>::value)
    return a < T(0) ? ef_wrap_sub(T(0), a) : a;
  else
    return ef_fabs(a);
}
EF_UNARY(negative, ef_negate(a))
EF_UNARY(abs, ef_abs_value(a))
EF_UNARY(sign, a != a ? a : static_cast<T>((a > T(0)) - (a < T(0))))
EF_UNARY(square, ef_wrap_mul(a, a))
EF_UNARY(reciprocal, T(1) / a)
EF_UNARY(exp, ef_exp(a))
EF_UNARY(expm1, ef_expm1(a))
EF_UNARY(log, ef_log(a))
EF_UNARY(log1p, ef_log1p(a))
EF_UNARY(sqrt, ef_sqrt(a))
EF_UNARY(rsqrt, T(1) / ef_sqrt(a))
EF_UNARY(sin, ef_sin(a))
EF_UNARY(cos, ef_cos(a))
EF_UNARY(tan, ef_tan(a))
EF_UNARY(asin, ef_asin(a))
EF_UNARY(acos, ef_acos(a))
EF_UNARY(atan, ef_atan(a))
EF_UNARY(sinh, ef_sinh(a))
EF_UNARY(cosh, ef_cosh(a))
EF_UNARY(tanh, ef_tanh(a))
EF_UNARY(erf, ef_erf(a))
EF_UNARY(floor, ef_floor(a))
EF_UNARY(ceil, ef_ceil(a))
EF_UNARY(round, ef_rint(a))
EF_PREDICATE(isnan, a != a)
EF_PREDICATE(isinf, a - a != a - a && a == a)
EF_PREDICATE(isfinite, a - a == a - a)
EF_PREDICATE(logical_not, !a)

// ---- activations ----
// sigmoid as on the CPU: exp(-|x|) never overflows.
EF_UNARY(sigmoid, (a >= T(0) ? T(1) : ef_exp(-ef_fabs(a))) / (T(1) + ef_exp(-ef_fabs(a))))
EF_UNARY(relu, (a > T(0) || a != a) ? a : T(0))
EF_UNARY(relu6, a != a ? a : (a < T(0) ? T(0) : (a > T(6) ? T(6) : a)))
EF_UNARY(elu, a > T(0) ? a : ef_expm1(a))
EF_UNARY(selu, T(1.0507009873554804934193349852946) *
                   (a > T(0) ? a : T(1.6732632423543772848170429916717) * ef_expm1(a)))
EF_UNARY(softplus, (a > T(0) ? a : T(0)) + ef_log1p(ef_exp(-ef_fabs(a))))
EF_UNARY(softsign, a / (T(1) + ef_fabs(a)))

// ---- binary math ----
EF_BINARY(add, ef_wrap_add(a, b))
EF_BINARY(subtract, ef_wrap_sub(a, b))
EF_BINARY(multiply, ef_wrap_mul(a, b))
EF_BINARY(squared_difference, ef_wrap_mul(ef_wrap_sub(a, b), ef_wrap_sub(a, b)))
// Integer divisors and exponents are checked on the host before these run (zero
// divisors and negative exponents raise there, as on the CPU); x / -1 is a wrapping
// negation (INT_MIN / -1 would trap).
struct ef_op_divide {
  template <class T>
  EF_DEVICE T operator()(T a, T b) const {
    if constexpr (ef_is_integer<T>::value)
      return b == T(-1) ? ef_wrap_sub(T(0), a) : a / b;
    else
      return a / b;
  }
};
struct ef_op_floordiv {
  template <class T>
  EF_DEVICE T operator()(T a, T b) const {
    if constexpr (ef_is_integer<T>::value) {
      if (b == T(-1)) return ef_wrap_sub(T(0), a);
      const T q = a / b;
      return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
    } else {
      return ef_floor(a / b);
    }
  }
};
struct ef_op_floormod {
  template <class T>
  EF_DEVICE T operator()(T a, T b) const {
    if constexpr (ef_is_integer<T>::value) {
      if (b == T(-1)) return 0;
      const T r = a % b;
      return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    } else {
      const T r = ef_fmod(a, b);
      return (r != T(0) && ((r < T(0)) != (b < T(0)))) ? r + b : r;
    }
  }
};
struct ef_op_pow {
  template <class T>
  EF_DEVICE T operator()(T a, T b) const {
    if constexpr (ef_is_integer<T>::value) {  // exponents are non-negative; wraps like C unsigned math
      using U = typename ef_unsigned<T>::type;
      U result = 1, base = static_cast<U>(a);
      for (T e = b; e > 0; e >>= 1) {
        if (e & 1) result *= base;
        base *= base;
      }
      return static_cast<T>(result);
    } else {
      return ef_pow(a, b);
    }
  }
};
EF_BINARY(maximum, (a > b || a != a) ? a : b)
EF_BINARY(minimum, (a < b || a != a) ? a : b)
EF_BINARY(sigmoid_grad, b*(a*(T(1) - a)))
EF_COMPARISON(equal, a == b)
EF_COMPARISON(not_equal, a != b)
EF_COMPARISON(less, a < b)
EF_COMPARISON(less_equal, a <= b)
EF_COMPARISON(greater, a > b)
EF_COMPARISON(greater_equal, a >= b)
EF_COMPARISON(logical_and, a&& b)
EF_COMPARISON(logical_or, a || b)
EF_COMPARISON(logical_xor, a != b)

// The sort order of sort, argsort and top_k: NaN is larger than every number.
template <class T>
EF_DEVICE bool ef_less_total(T a, T b) {
  if (ef_isnan(a)) return false;
  if (ef_isnan(b)) return true;
  return a < b;
}

// ---- conversions ----
// float16 and bfloat16 are stored in two bytes and computed in float32 (Note
// [half-precision dtypes] in eagerflow/core/half.h): the dispatcher widens half inputs
// and rounds half outputs with the cast kernel, so kernels see them only here. The
// conversions are src/core/half.cpp's, bit for bit.
struct ef_float16 {
  unsigned short bits;
};
struct ef_bfloat16 {
  unsigned short bits;
};
template <class T>
struct ef_is_half {
  static constexpr bool value = false;
};
template <>
struct ef_is_half<ef_float16> {
  static constexpr bool value = true;
};
template <>
struct ef_is_half<ef_bfloat16> {
  static constexpr bool value = true;
};

// Exact; a NaN comes back quiet with its payload.
EF_DEVICE float ef_to_float(ef_float16 h) {
  const unsigned sign = static_cast<unsigned>(h.bits & 0x8000u) << 16;
  const unsigned exponent = (h.bits >> 10) & 0x1fu;
  unsigned mantissa = h.bits & 0x3ffu;
  if (exponent == 0x1f)
    return ef_bits_to_float(sign | 0x7f800000u | (mantissa ? 0x400000u | (mantissa << 13) : 0u));
  if (exponent != 0) return ef_bits_to_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
  if (mantissa == 0) return ef_bits_to_float(sign);
  unsigned e = 113;  // subnormal: shift the leading one into the implicit bit
  while (!(mantissa & 0x400u)) {
    mantissa <<= 1;
    --e;
  }
  return ef_bits_to_float(sign | (e << 23) | ((mantissa & 0x3ffu) << 13));
}
EF_DEVICE float ef_to_float(ef_bfloat16 h) { return ef_bits_to_float(static_cast<unsigned>(h.bits) << 16); }

// Round to nearest even; overflow gives ±inf, a NaN the canonical quiet NaN of its sign.
EF_DEVICE ef_float16 ef_round_float16(float value) {
  const unsigned x = ef_float_to_bits(value);
  const unsigned short sign = static_cast<unsigned short>((x >> 16) & 0x8000u);
  const unsigned magnitude = x & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return {static_cast<unsigned short>(sign | 0x7e00u)};
  if (magnitude >= 0x477ff000u) return {static_cast<unsigned short>(sign | 0x7c00u)};  // >= 65520
  if (magnitude >= 0x38800000u) {                                                      // normal (>= 2^-14)
    const unsigned rounded = magnitude + 0xfffu + ((magnitude >> 13) & 1u);
    return {static_cast<unsigned short>(sign | ((rounded - 0x38000000u) >> 13))};
  }
  if (magnitude < 0x33000000u) return {sign};      // <= 2^-25 rounds to zero
  const unsigned shift = 126 - (magnitude >> 23);  // subnormal: units of 2^-24
  const unsigned significand = (magnitude & 0x7fffffu) | 0x800000u;
  unsigned result = significand >> shift;
  const unsigned remainder = significand & ((1u << shift) - 1), halfway = 1u << (shift - 1);
  if (remainder > halfway || (remainder == halfway && (result & 1u))) ++result;
  return {static_cast<unsigned short>(sign | result)};
}
EF_DEVICE ef_bfloat16 ef_round_bfloat16(float value) {
  const unsigned x = ef_float_to_bits(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return {static_cast<unsigned short>(((x >> 16) & 0x8000u) | 0x7fc0u)};
  return {static_cast<unsigned short>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16)};
}
EF_DEVICE void ef_round_to(float v, ef_float16& out) { out = ef_round_float16(v); }
EF_DEVICE void ef_round_to(float v, ef_bfloat16& out) { out = ef_round_bfloat16(v); }

// cast as on the CPU: to bool is "!= 0"; float to integer truncates and saturates,
// NaN gives 0. A half dtype goes through float32 both ways, as the CPU's widening does;
// a small integer dtype widens exactly and narrows keeping the low bits.
template <class To, class From>
EF_DEVICE To ef_convert(From v) {
  if constexpr (ef_is_half<From>::value) {
    return ef_convert<To>(ef_to_float(v));
  } else if constexpr (ef_is_half<To>::value) {
    To out;
    ef_round_to(static_cast<float>(v), out);
    return out;
  } else if constexpr (ef_small_integer<To>::value) {
    // From an integer keep the low bits (the dispatcher's narrowing); from a float
    // truncate and saturate at To's range, NaN giving 0 (cast).
    if constexpr (ef_is_integer<From>::value || ef_small_integer<From>::value || sizeof(From) == 1) {
      return static_cast<To>(v);
    } else {
      if (v != v) return 0;
      if (v <= static_cast<From>(ef_small_integer<To>::lo)) return ef_small_integer<To>::lo;
      if (v >= static_cast<From>(ef_small_integer<To>::hi)) return ef_small_integer<To>::hi;
      return static_cast<To>(v);
    }
  } else if constexpr (sizeof(To) == 1 && !ef_is_integer<To>::value) {  // bool
    return v != From(0);
  } else if constexpr (ef_is_integer<To>::value && !ef_is_integer<From>::value && sizeof(From) != 1 &&
                       !ef_small_integer<From>::value) {
    constexpr To lo = To(1) << (sizeof(To) * 8 - 1);
    constexpr To hi = ~lo;
    if (v != v) return 0;
    if (v <= static_cast<From>(lo)) return lo;
    if (v >= static_cast<From>(hi)) return hi;
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

// ---- reductions: identity given by the host, combine, and finish ----
struct ef_reduce_sum {
  template <class T>
  EF_DEVICE T operator()(T a, T b) const {
    return ef_wrap_add(a, b);
  }
};
struct ef_reduce_prod {
  template <class T>
  EF_DEVICE T operator()(T a, T b) const {
    return ef_wrap_mul(a, b);
  }
};
struct ef_reduce_max {
  template <class T>
  EF_DEVICE T operator()(T a, T b) const {
    return (a > b || a != a) ? a : b;
  }
};
struct ef_reduce_min {
  template <class T>
  EF_DEVICE T operator()(T a, T b) const {
    return (a < b || a != a) ? a : b;
  }
};
struct ef_reduce_any {
  template <class T>
  EF_DEVICE T operator()(T a, T b) const {
    return a || b;
  }
};
struct ef_reduce_all {
  template <class T>
  EF_DEVICE T operator()(T a, T b) const {
    return a && b;
  }
};

// ---- functors with a parameter (an attr of the op, passed as `param`) ----
struct ef_op_leaky_relu {
  template <class T>
  EF_DEVICE T operator()(T x, double alpha) const {
    return x > T(0) ? x : static_cast<T>(alpha) * x;
  }
};
struct ef_op_gelu {  // param: 1 for the tanh approximation
  template <class T>
  EF_DEVICE T operator()(T x, double approximate) const {
    if (approximate != 0) {
      const T k = static_cast<T>(0.7978845608028654);  // sqrt(2 / pi)
      return T(0.5) * x * (T(1) + ef_tanh(k * (x + T(0.044715) * x * x * x)));
    }
    return T(0.5) * x * (T(1) + ef_erf(x * static_cast<T>(0.7071067811865475)));  // 1 / sqrt(2)
  }
};

// ---- select(condition, x, y) ----
struct ef_op_select {
  template <class T>
  EF_DEVICE T operator()(bool c, T a, T b) const {
    return c ? a : b;
  }
};
