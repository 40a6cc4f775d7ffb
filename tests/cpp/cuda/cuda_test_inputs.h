// Inputs and comparisons shared by the CUDA tests (cuda_test.cpp and
// cuda_programs_test.cpp on a GPU, cuda_emulation_test.cpp without one).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string_view>
#include <vector>

#include "eagerflow/eagerflow.h"

namespace ef::testing {

inline const Device kGPU{DeviceType::CUDA, 0};

// Expects `gpu` (on the device) to hold `cpu`'s values: exactly for integers and bools,
// within `rtol` relative to the largest magnitude for floats, with NaN where `cpu` has NaN.
inline void expect_same(const Tensor& cpu, const Tensor& gpu, double rtol = 1e-6) {
  ASSERT_EQ(gpu.device(), kGPU);
  ASSERT_EQ(cpu.dtype(), gpu.dtype());
  ASSERT_EQ(cpu.shape(), gpu.shape());
  std::vector<double> a = cpu.to_vector<double>(), b = gpu.to_vector<double>();
  double scale = 0;
  for (double v : a)
    if (std::isfinite(v)) scale = std::max(scale, std::fabs(v));
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i])) {
      EXPECT_TRUE(std::isnan(b[i])) << "element " << i << ": cpu NaN, gpu " << b[i];
    } else if (!is_floating(cpu.dtype()) || std::isinf(a[i])) {
      EXPECT_EQ(a[i], b[i]) << "element " << i;
    } else {
      EXPECT_NEAR(a[i], b[i], rtol * std::max(scale, 1.0) + rtol * std::fabs(a[i])) << "element " << i;
    }
  }
}

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
