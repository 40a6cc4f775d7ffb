// Strided copies shared by the array kernels (internal to src/ops/array). They move
// elements by size only — copying never needs to know the dtype — and split large
// copies across the thread pool. No op dispatch happens here, so kernels can use them
// without a tape or graph builder seeing extra ops.
#pragma once

#include <cstring>

#include "backends/cpu/strided_loop.h"
#include "eagerflow/core/tensor.h"
#include "eagerflow/ops/scalar.h"
#include "eagerflow/runtime/op_def.h"

namespace ef::detail {

// Copies the elements of `src` into `dst` (same shape, any strides; dst must not
// overlap itself). Both are eager CPU tensors of one dtype.
void copy_elements(const TensorImpl& src, TensorImpl& dst);

// A new contiguous tensor with the values of x (x itself when already contiguous).
Tensor materialize(const Tensor& x);

// x's values contiguous on the host in compute_dtype(x.dtype()), for code that reads an
// input's values itself: inference (which sees inputs before the dispatcher widens them:
// Notes [half-precision dtypes], [small integer dtypes]) and host-side helpers.
Tensor host_values(const Tensor& x);

// Unsigned integer type of `size` bytes, for dtype-agnostic element moves.
template <size_t Size> struct Word;
template <> struct Word<1> { using type = uint8_t; };
template <> struct Word<2> { using type = uint16_t; };
template <> struct Word<4> { using type = uint32_t; };
template <> struct Word<8> { using type = uint64_t; };

// Calls fn(TypeTag<W>) with W an unsigned type of the element size of `dtype`.
template <class Fn>
void dispatch_word(DType dtype, Fn&& fn) {
  struct Word16 {
    uint64_t low, high;
  };
  switch (size_of(dtype)) {
    case 1: fn(TypeTag<uint8_t>{}); return;
    case 2: fn(TypeTag<uint16_t>{}); return;
    case 4: fn(TypeTag<uint32_t>{}); return;
    case 8: fn(TypeTag<uint64_t>{}); return;
    case 16:
      fn(TypeTag<Word16>{});
      return;  // complex128
  }
  fail<InternalError>("copy: unsupported element size ", size_of(dtype));
}

// Rough nanoseconds per copied element (for parallel_for's break-even).
inline constexpr double kCopyElementNs = 0.3;

// Multiplies int64 values, throwing ResourceExhaustedError naming `op` on overflow.
inline int64_t product(const int64_t* begin, const int64_t* end, std::string_view op) {
  int64_t n = 1;
  for (const int64_t* p = begin; p != end; ++p) n = checked_mul(n, *p, op);
  return n;
}

// a + b, throwing ResourceExhaustedError naming `op` on overflow.
inline int64_t checked_add(int64_t a, int64_t b, std::string_view op) {
  int64_t sum;
  if (__builtin_add_overflow(a, b, &sum))
    fail<ResourceExhaustedError>(op, ": size overflows a 64-bit integer (", a, " + ", b, ")");
  return sum;
}

// A fill number (pad's constant, one_hot's on/off values) as an attr for `dtype`:
// int64 for integers and bool (exact), double for floats. Throws naming `op` when the
// dtype cannot hold it. Defined in pad_tile.cpp.
AttrValue fill_value_for(const TensorOrScalar& value, DType dtype, std::string_view op);

// Bit i of a TensorFlow-style int64 bit mask.
inline bool bit(int64_t mask, int i) { return i < 64 && ((static_cast<uint64_t>(mask) >> i) & 1u); }

}  // namespace ef::detail
