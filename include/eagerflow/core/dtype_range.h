// The range of values each dtype holds, exactly: for saturating conversions, empty
// reductions' identities, and dtype.min / dtype.max.
#pragma once

#include <cstdint>
#include <utility>

#include "eagerflow/core/dtype.h"

namespace ef {

// The lowest and the largest value of an integer dtype (bool and floats: 0 and 1).
constexpr std::pair<int64_t, int64_t> integer_range(DType t) {
  switch (t) {
    case DType::Int8:
      return {-128, 127};
    case DType::UInt8:
      return {0, 255};
    case DType::Int16:
      return {-32768, 32767};
    case DType::UInt16:
      return {0, 65535};
    case DType::Int32:
      return {INT32_MIN, INT32_MAX};
    case DType::UInt32:
      return {0, UINT32_MAX};
    case DType::Int64:
      return {INT64_MIN, INT64_MAX};
    default:
      return {0, 1};
  }
}

// The lowest and the largest finite value of any dtype, as doubles (int64's round).
constexpr std::pair<double, double> finite_range(DType t) {
  switch (t) {
    case DType::Float16:
      return {-65504.0, 65504.0};
    case DType::BFloat16:
      return {-0x1.fep127, 0x1.fep127};
    case DType::Float32:
      return {-0x1.fffffep127, 0x1.fffffep127};
    case DType::Float64:
      return {-0x1.fffffffffffffp1023, 0x1.fffffffffffffp1023};
    default:
      return {static_cast<double>(integer_range(t).first), static_cast<double>(integer_range(t).second)};
  }
}

}  // namespace ef
