// DType: the element types a tensor can hold, their sizes and names, and
// `dispatch_dtype`, the one switch that turns a runtime dtype into a C++ type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string_view>

namespace ef {

// Element types. float16/bfloat16 are planned: nothing may assume that a dtype is
// 4 or 8 bytes wide — use size_of(dtype).
enum class DType : uint8_t { Float32, Float64, Int32, Int64, Bool };

inline constexpr DType kAllDTypes[] = {DType::Float32, DType::Float64, DType::Int32, DType::Int64,
                                       DType::Bool};

constexpr size_t size_of(DType t) {
  switch (t) {
    case DType::Float32: return 4;
    case DType::Float64: return 8;
    case DType::Int32: return 4;
    case DType::Int64: return 8;
    case DType::Bool: return 1;
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
  }
  return "unknown";
}

constexpr bool is_floating(DType t) { return t == DType::Float32 || t == DType::Float64; }
constexpr bool is_integer(DType t) { return t == DType::Int32 || t == DType::Int64; }
constexpr bool is_numeric(DType t) { return t != DType::Bool; }

inline std::ostream& operator<<(std::ostream& os, DType t) { return os << name(t); }

// The dtype of a C++ element type: dtype_of<float> == DType::Float32.
template <class T> struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::Float32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::Float64; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::Int32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::Int64; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::Bool; };
template <class T> inline constexpr DType dtype_of = DTypeOf<T>::value;

// A value standing for a C++ type, so generic lambdas can receive a type.
template <class T> struct TypeTag { using type = T; };

// Calls fn(TypeTag<T>{}) with T the C++ type of `t`.
template <class Fn>
decltype(auto) dispatch_dtype(DType t, Fn&& fn) {
  switch (t) {
    case DType::Float32: return fn(TypeTag<float>{});
    case DType::Float64: return fn(TypeTag<double>{});
    case DType::Int32: return fn(TypeTag<int32_t>{});
    case DType::Int64: return fn(TypeTag<int64_t>{});
    case DType::Bool: return fn(TypeTag<bool>{});
  }
  return fn(TypeTag<float>{});  // unreachable: every enumerator is handled above
}

}  // namespace ef
