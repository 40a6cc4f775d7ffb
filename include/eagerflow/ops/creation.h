// Creating tensors: from C++ values, filled, ranges, identity matrices.
//
//   auto a = ef::constant({{1.f, 2.f}, {3.f, 4.f}});     // float32, shape (2, 2)
//   auto b = ef::constant(std::vector<int64_t>{1, 2, 3, 4, 5, 6}, {2, 3});
//   auto z = ef::zeros({3, 4});                          // float32 by default
//   auto r = ef::range(0, 10, 2);                        // int32: [0 2 4 6 8]
//
// C++ element types map to dtypes as float → float32, double → float64,
// int → int32, int64_t → int64, bool → bool.
#pragma once

#include <initializer_list>
#include <vector>

#include "eagerflow/core/tensor.h"
#include "eagerflow/ops/scalar.h"

namespace ef {

namespace detail {
// The C++ type a value is stored as (int → int32_t, long → int64_t, ...). The small
// integer types keep their dtype (uint8_t → uint8), as NumPy's scalars do; char and
// the 64-bit unsigned types become int32 and int64.
template <class T>
using StoredType = std::conditional_t<
    std::is_same_v<T, bool> || is_small_integer_storage<T>, T,
    std::conditional_t<std::is_floating_point_v<T>, std::conditional_t<sizeof(T) <= 4, float, double>,
                       std::conditional_t<sizeof(T) <= 4, int32_t, int64_t>>>;

// Walks a nested initializer list, recording its shape and flattening its values;
// throws InvalidArgumentError for ragged lists.
// (Arithmetic T only: StoredType of a list type is int64_t, which made int64 lists ambiguous.)
template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
void flatten(const T& value, int, Dims&, std::vector<StoredType<T>>& out, bool) {
  out.push_back(static_cast<StoredType<T>>(value));
}
template <class T>
void flatten(const std::initializer_list<T>& list, int depth, Dims& shape, auto& out, bool first) {
  if (first) {
    if (static_cast<int>(shape.size()) == depth) shape.push_back(static_cast<int64_t>(list.size()));
  } else if (shape[depth] != static_cast<int64_t>(list.size())) {
    fail("constant: ragged nested list: a list at depth ", depth, " has ", list.size(),
         " elements where the first had ", shape[depth]);
  }
  bool first_child = first;
  for (const T& item : list) {
    flatten(item, depth + 1, shape, out, first_child);
    first_child = false;
  }
}

Tensor tensor_from_host(DType dtype, const Shape& shape, const void* data, std::string_view op);

template <class T, class List>
Tensor constant_from_list(const List& list) {
  static_assert(std::is_arithmetic_v<T>, "constant: elements must be numbers or bools");
  Dims shape;
  std::vector<StoredType<T>> values;
  flatten(list, 0, shape, values, true);
  using S = StoredType<T>;
  if constexpr (std::is_same_v<S, bool>) {
    std::vector<uint8_t> bytes(values.begin(), values.end());
    return tensor_from_host(DType::Bool, Shape(shape), bytes.data(), "constant");
  } else {
    return tensor_from_host(dtype_of<S>, Shape(shape), values.data(), "constant");
  }
}
}  // namespace detail

// A scalar (rank-0) tensor.
template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
Tensor constant(T value) {
  using S = detail::StoredType<T>;
  S v = static_cast<S>(value);
  return detail::tensor_from_host(dtype_of<S>, Shape{}, &v, "constant");
}
// A tensor from nested initializer lists, rank 1 to 8; the nesting gives the shape.
// Throws InvalidArgumentError for ragged lists.
//
// The parameter types spell std::initializer_list out at every level (EF_IL is only a
// local abbreviation): clang, 14 at least, cannot deduce T from a braced list through an
// alias template of std::initializer_list, which GCC can. tests/cpp/clang_headers_check.cpp
// keeps every form compiling with clang.
#define EF_IL std::initializer_list
template <class T>
Tensor constant(EF_IL<T> v) {
  return detail::constant_from_list<T>(v);
}
template <class T>
Tensor constant(EF_IL<EF_IL<T>> v) {
  return detail::constant_from_list<T>(v);
}
template <class T>
Tensor constant(EF_IL<EF_IL<EF_IL<T>>> v) {
  return detail::constant_from_list<T>(v);
}
template <class T>
Tensor constant(EF_IL<EF_IL<EF_IL<EF_IL<T>>>> v) {
  return detail::constant_from_list<T>(v);
}
template <class T>
Tensor constant(EF_IL<EF_IL<EF_IL<EF_IL<EF_IL<T>>>>> v) {
  return detail::constant_from_list<T>(v);
}
template <class T>
Tensor constant(EF_IL<EF_IL<EF_IL<EF_IL<EF_IL<EF_IL<T>>>>>> v) {
  return detail::constant_from_list<T>(v);
}
template <class T>
Tensor constant(EF_IL<EF_IL<EF_IL<EF_IL<EF_IL<EF_IL<EF_IL<T>>>>>>> v) {
  return detail::constant_from_list<T>(v);
}
template <class T>
Tensor constant(EF_IL<EF_IL<EF_IL<EF_IL<EF_IL<EF_IL<EF_IL<EF_IL<T>>>>>>>> v) {
  return detail::constant_from_list<T>(v);
}
#undef EF_IL

// A tensor of `shape` holding `values` in row-major order. Throws InvalidArgumentError
// when the counts differ or the shape is invalid.
template <class T>
Tensor constant(const std::vector<T>& values, const Shape& shape) {
  static_assert(std::is_arithmetic_v<T>, "constant: elements must be numbers or bools");
  using S = detail::StoredType<T>;
  validate_shape(shape, "constant", "shape", sizeof(S));
  if (static_cast<int64_t>(values.size()) != shape.num_elements())
    fail("constant: ", values.size(), " values cannot fill shape ", shape, " (", shape.num_elements(),
         " elements)");
  std::vector<S> stored(values.begin(), values.end());
  if constexpr (std::is_same_v<S, bool>) {
    std::vector<uint8_t> bytes(stored.begin(), stored.end());
    return detail::tensor_from_host(DType::Bool, shape, bytes.data(), "constant");
  } else {
    return detail::tensor_from_host(dtype_of<S>, shape, stored.data(), "constant");
  }
}

// A tensor of `shape` with every element `value`, of dtype `dtype`.
Tensor fill(const Shape& shape, const TensorOrScalar& value, DType dtype, CallSite where = CallSite::current());
// As above, with the number's own dtype (1.f → float32, 1.0 → float64, 1 → int32).
Tensor fill(const Shape& shape, const TensorOrScalar& value, CallSite where = CallSite::current());
Tensor zeros(const Shape& shape, DType dtype = DType::Float32, CallSite where = CallSite::current());
Tensor ones(const Shape& shape, DType dtype = DType::Float32, CallSite where = CallSite::current());
// Same shape and dtype as x (works on symbolic tensors with unknown dimensions).
Tensor zeros_like(const Tensor& x, CallSite where = CallSite::current());
Tensor ones_like(const Tensor& x, CallSite where = CallSite::current());

// [start, start + delta, ...) up to but excluding `limit`, like Python's range; numbers or 0-d eager tensors
// (cast to dtype). The dtype unless given: the widest argument's in int32 < int64 < float16 < bfloat16 <
// float32 < float64 (TensorFlow's rule; all ints → int32, a double → float64). delta == 0 throws.
Tensor range(const TensorOrScalar& start, const TensorOrScalar& limit, const TensorOrScalar& delta = 1,
             CallSite where = CallSite::current());
Tensor range(const TensorOrScalar& start, const TensorOrScalar& limit, const TensorOrScalar& delta, DType dtype,
             CallSite where = CallSite::current());
// `num` evenly spaced values from start to stop inclusive (float32 unless given).
Tensor linspace(double start, double stop, int64_t num, DType dtype = DType::Float32,
                CallSite where = CallSite::current());
// An identity matrix with `num_rows` rows and `num_columns` columns (default: square).
Tensor eye(int64_t num_rows, int64_t num_columns = -1, DType dtype = DType::Float32,
           CallSite where = CallSite::current());

}  // namespace ef
