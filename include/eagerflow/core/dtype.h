// DType: the element types a tensor can hold, their sizes and names, and
// `dispatch_dtype`, the one switch that turns a runtime dtype into a C++ type.
#pragma once

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
enum class DType : uint8_t { Float32, Float64, Int32, Int64, Bool, Float16, BFloat16 };

inline constexpr DType kAllDTypes[] = {DType::Float32, DType::Float64, DType::Int32,   DType::Int64,
                                       DType::Bool,    DType::Float16, DType::BFloat16};

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
  }
  return "unknown";
}

// Float16 and BFloat16: stored in two bytes, computed in float32 (Note [half-precision
// dtypes] in half.h).
constexpr bool is_half(DType t) { return t == DType::Float16 || t == DType::BFloat16; }
constexpr bool is_floating(DType t) { return t == DType::Float32 || t == DType::Float64 || is_half(t); }
constexpr bool is_integer(DType t) { return t == DType::Int32 || t == DType::Int64; }
constexpr bool is_numeric(DType t) { return t != DType::Bool; }

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

// A value standing for a C++ type, so generic lambdas can receive a type.
template <class T> struct TypeTag { using type = T; };

namespace detail {
// Thrown when a kernel is reached with a half-precision dtype, which the dispatcher
// widens to float32 before any kernel runs.
[[noreturn]] void fail_half_in_kernel(DType t);
}  // namespace detail

// Calls fn(TypeTag<T>{}) with T the C++ type of `t`, for the dtypes kernels compute in.
// Float16 and BFloat16 throw InternalError: no kernel computes in them (Note
// [half-precision dtypes]); code that only moves or reads stored elements uses
// dispatch_storage_dtype.
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
      break;
  }
  detail::fail_half_in_kernel(t);
}

// dispatch_dtype that also calls fn with the storage types float16_t and bfloat16_t,
// which convert to and from float explicitly (reading elements, printing, scalars).
template <class Fn>
decltype(auto) dispatch_storage_dtype(DType t, Fn&& fn) {
  if (t == DType::Float16) return fn(TypeTag<float16_t>{});
  if (t == DType::BFloat16) return fn(TypeTag<bfloat16_t>{});
  return dispatch_dtype(t, std::forward<Fn>(fn));
}

}  // namespace ef
