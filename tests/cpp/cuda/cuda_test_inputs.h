// Inputs shared by the CUDA tests (cuda_test.cpp on a GPU, cuda_emulation_test.cpp
// without one).
#pragma once

#include <string_view>

#include "eagerflow/eagerflow.h"

namespace ef::testing {

// Random values of `dtype`: floats in [-2.5, 2.5), integers in [-6, 6), bools.
inline Tensor random_of(DType dtype, const Shape& shape, int64_t seed) {
  switch (dtype) {
    case DType::Bool:
      return greater(random::uniform(shape, 0.0, 1.0, DType::Float64, seed), 0.5);
    case DType::Int32:
    case DType::Int64:
      return cast(floor(random::uniform(shape, -6.0, 6.0, DType::Float64, seed)), dtype);
    default:
      return cast(random::uniform(shape, -2.5, 2.5, DType::Float64, seed), dtype);
  }
}

// A second operand the op accepts: integer divisions reject zero divisors and integer
// pow negative exponents (checked before computing, on every device).
inline Tensor valid_second_operand(std::string_view op, Tensor y) {
  if (!is_integer(y.dtype())) return y;
  if (op == "divide" || op == "floordiv" || op == "floormod") return where(equal(y, 0), ones_like(y), y);
  if (op == "pow") return abs(y);
  return y;
}

}  // namespace ef::testing
