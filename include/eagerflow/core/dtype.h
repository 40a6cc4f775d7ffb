// DType: the element types a tensor can hold, their sizes and names, and
// `dispatch_dtype`, the one switch that turns a runtime dtype into a C++ type.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string_view>
#include <type_traits>
#include <utility>

#include "eagerflow/core/half.h"

namespace ef {

// Element types. Nothing may assume that a dtype is 4 or 8 bytes wide — use size_of(dtype).
// New dtypes go at the end: DTypeSet bit masks and saved graphs use these values.
enum class DType : uint8_t {
  Float32,
  Float64,
  Int32,
  Int64,
  Bool,
  Float16,
  BFloat16,
  Int8,
  UInt8,
  Int16,
  UInt16,
  UInt32,
  Complex64,   // two float32: real, imaginary (std::complex<float>)
  Complex128,  // two float64
};

inline constexpr DType kAllDTypes[] = {DType::Float32,   DType::Float64,   DType::Int32,    DType::Int64,
                                       DType::Bool,      DType::Float16,   DType::BFloat16, DType::Int8,
                                       DType::UInt8,     DType::Int16,     DType::UInt16,   DType::UInt32,
                                       DType::Complex64, DType::Complex128};

constexpr size_t size_of(DType t) {
  switch (t) {
    case DType::Float32: return 4;
    case DType::Float64: return 8;
    case DType::Int32: return 4;
    case DType::Int64: return 8;
    case DType::Bool: return 1;
    case DType::Float16:
      return 2;
    case DType::BFloat16:
      return 2;
    case DType::Int8:
      return 1;
    case DType::UInt8:
      return 1;
    case DType::Int16:
      return 2;
    case DType::UInt16:
      return 2;
    case DType::UInt32:
      return 4;
    case DType::Complex64:
      return 8;
    case DType::Complex128:
      return 16;
  }
  return 0;
}

constexpr std::string_view name(DType t) {
  switch (t) {
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::Bool: return "bool";
    case DType::Float16:
      return "float16";
    case DType::BFloat16:
      return "bfloat16";
    case DType::Int8:
      return "int8";
    case DType::UInt8:
      return "uint8";
    case DType::Int16:
      return "int16";
    case DType::UInt16:
      return "uint16";
    case DType::UInt32:
      return "uint32";
    case DType::Complex64:
      return "complex64";
    case DType::Complex128:
      return "complex128";
  }
  return "unknown";
}

// Float16 and BFloat16: stored in two bytes, computed in float32 (Note [half-precision
// dtypes] in half.h).
constexpr bool is_half(DType t) { return t == DType::Float16 || t == DType::BFloat16; }
constexpr bool is_floating(DType t) { return t == DType::Float32 || t == DType::Float64 || is_half(t); }
// Int8, UInt8, Int16, UInt16 and UInt32: stored in their own width, computed in int32 or
// int64 (Note [small integer dtypes]).
constexpr bool is_small_integer(DType t) {
  return t == DType::Int8 || t == DType::UInt8 || t == DType::Int16 || t == DType::UInt16 ||
         t == DType::UInt32;
}
constexpr bool is_integer(DType t) { return t == DType::Int32 || t == DType::Int64 || is_small_integer(t); }
constexpr bool is_unsigned(DType t) { return t == DType::UInt8 || t == DType::UInt16 || t == DType::UInt32; }
constexpr bool is_complex(DType t) { return t == DType::Complex64 || t == DType::Complex128; }
// Real dtypes that compute: everything but bool and the complex dtypes.
constexpr bool is_numeric(DType t) { return t != DType::Bool && !is_complex(t); }
// The real dtype of a complex dtype's parts (complex64: float32), and back.
constexpr DType real_dtype(DType t) {
  return t == DType::Complex64 ? DType::Float32 : t == DType::Complex128 ? DType::Float64 : t;
}
constexpr DType complex_dtype(DType real) {
  return real == DType::Float64 ? DType::Complex128 : DType::Complex64;
}

// Note [complex dtypes]: complex64 and complex128 tensors are stored as std::complex
// pairs, but only the ops that say so (OpTraits::complex) accept them: the ones that
// move elements without computing (reshape, transpose, slicing, concat, gather, ...),
// complex/real/imag, abs of a complex, the FFTs and cast. The dispatcher refuses every
// other op with an UnimplementedError naming it, so no real kernel ever reads complex
// bytes. Complex arithmetic (add, multiply, matmul, reduce_sum, conj, angle, ...) is
// composed from real/imag/complex in the ops' public functions, which makes every
// gradient follow from those three: the gradient of a real loss with respect to z is
// dL/dRe(z) + i dL/dIm(z), TensorFlow's and PyTorch's convention.

// Note [small integer dtypes]: like the half dtypes (Note [half-precision dtypes] in
// half.h), the narrow integer dtypes have storage but no kernels of their own. The
// dispatcher widens their inputs to the compute dtype below (exact), runs the op's
// int32 or int64 kernel, and narrows the outputs back, keeping the low bits: so
// arithmetic wraps modulo 2^bits as in C, TensorFlow and NumPy, comparisons and
// shifts see the true values, and sums accumulate in 32 or 64 bits before they wrap.
// Casting a float to one of them saturates at its range (cast.cpp), as into int32.
constexpr DType compute_dtype(DType t) {
  if (is_half(t)) return DType::Float32;
  if (t == DType::UInt32) return DType::Int64;
  if (is_small_integer(t)) return DType::Int32;
  return t;
}
// A dtype that kernels never see: the dispatcher converts it to compute_dtype(t).
constexpr bool is_storage_only(DType t) { return compute_dtype(t) != t; }

inline std::ostream& operator<<(std::ostream& os, DType t) { return os << name(t); }

// The dtype called `text` ("float32"), the inverse of name(); nothing for another text.
constexpr std::optional<DType> dtype_named(std::string_view text) {
  for (DType d : kAllDTypes)
    if (name(d) == text) return d;
  return std::nullopt;
}

// The dtype of a C++ element type: dtype_of<float> == DType::Float32.
template <class T> struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::Float32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::Float64; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::Int32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::Int64; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::Bool; };
template <>
struct DTypeOf<float16_t> {
  static constexpr DType value = DType::Float16;
};
template <>
struct DTypeOf<bfloat16_t> {
  static constexpr DType value = DType::BFloat16;
};
template <>
struct DTypeOf<int8_t> {
  static constexpr DType value = DType::Int8;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::UInt8;
};
template <>
struct DTypeOf<int16_t> {
  static constexpr DType value = DType::Int16;
};
template <>
struct DTypeOf<uint16_t> {
  static constexpr DType value = DType::UInt16;
};
template <>
struct DTypeOf<uint32_t> {
  static constexpr DType value = DType::UInt32;
};
template <>
struct DTypeOf<std::complex<float>> {
  static constexpr DType value = DType::Complex64;
};
template <>
struct DTypeOf<std::complex<double>> {
  static constexpr DType value = DType::Complex128;
};
template <class T> inline constexpr DType dtype_of = DTypeOf<T>::value;

// v rounded to the nearest value of floating dtype t (inf beyond its range), as a double.
inline double rounded_to(DType t, double v) {
  const float f = static_cast<float>(v);
  switch (t) {
    case DType::Float32:
      return f;
    case DType::Float16:
      return float16_to_float(float_to_float16(f));
    case DType::BFloat16:
      return bfloat16_to_float(float_to_bfloat16(f));
    default:
      return v;
  }
}

template <class T>
inline constexpr bool is_half_storage = std::is_same_v<T, float16_t> || std::is_same_v<T, bfloat16_t>;
template <class T>
inline constexpr bool is_small_integer_storage =
    std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t> || std::is_same_v<T, int16_t> ||
    std::is_same_v<T, uint16_t> || std::is_same_v<T, uint32_t>;

// A value standing for a C++ type, so generic lambdas can receive a type.
template <class T> struct TypeTag { using type = T; };

namespace detail {
// Thrown when a kernel is reached with a storage-only dtype, which the dispatcher
// widens to compute_dtype(t) before any kernel runs.
[[noreturn]] void fail_storage_only_in_kernel(DType t);
// Thrown when complex values reach code that computes in real numbers only: an
// UnimplementedError (Note [complex dtypes]).
[[noreturn]] void fail_complex_in_kernel(DType t);
}  // namespace detail

// Calls fn(TypeTag<T>{}) with T the C++ type of `t`, for the dtypes kernels compute in.
// The storage-only dtypes (half and small integer) throw InternalError: no kernel
// computes in them (Notes [half-precision dtypes], [small integer dtypes]); code that
// only moves or reads stored elements uses dispatch_storage_dtype.
template <class Fn>
decltype(auto) dispatch_dtype(DType t, Fn&& fn) {
  switch (t) {
    case DType::Float32: return fn(TypeTag<float>{});
    case DType::Float64: return fn(TypeTag<double>{});
    case DType::Int32: return fn(TypeTag<int32_t>{});
    case DType::Int64: return fn(TypeTag<int64_t>{});
    case DType::Bool: return fn(TypeTag<bool>{});
    case DType::Float16:
    case DType::BFloat16:
    case DType::Int8:
    case DType::UInt8:
    case DType::Int16:
    case DType::UInt16:
    case DType::UInt32:
      break;
    case DType::Complex64:
    case DType::Complex128:
      detail::fail_complex_in_kernel(t);
  }
  detail::fail_storage_only_in_kernel(t);
}

// dispatch_dtype that also calls fn with the storage types: float16_t and bfloat16_t,
// which convert to and from float explicitly, and int8_t ... uint32_t (reading
// elements, printing, scalars). Mind that int8_t and uint8_t print as characters.
template <class Fn>
decltype(auto) dispatch_storage_dtype(DType t, Fn&& fn) {
  switch (t) {
    case DType::Float16:
      return fn(TypeTag<float16_t>{});
    case DType::BFloat16:
      return fn(TypeTag<bfloat16_t>{});
    case DType::Int8:
      return fn(TypeTag<int8_t>{});
    case DType::UInt8:
      return fn(TypeTag<uint8_t>{});
    case DType::Int16:
      return fn(TypeTag<int16_t>{});
    case DType::UInt16:
      return fn(TypeTag<uint16_t>{});
    case DType::UInt32:
      return fn(TypeTag<uint32_t>{});
    default:
      return dispatch_dtype(t, std::forward<Fn>(fn));
  }
}

}  // namespace ef
