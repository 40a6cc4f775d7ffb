// Float16 and BFloat16: conversions bit for bit (every half pattern; float32s around
// every rounding boundary), and ops computing in float32 and rounding once (Note
// [half-precision dtypes] in eagerflow/core/half.h). PyTorch parity of the conversions
// is in tests/python/test_half.py.
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "test_util.h"

namespace ef {
namespace {

uint32_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }
float float_of(uint32_t b) { return std::bit_cast<float>(b); }

TEST(Half, EveryFloat16RoundTripsExactly) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = float16_to_float(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_EQ(float_to_float16(f), (h & 0x8000u) | 0x7e00u) << h;  // canonical quiet NaN, sign kept
      continue;
    }
    ASSERT_EQ(float_to_float16(f), h) << "pattern " << h;
  }
}

TEST(Half, EveryBFloat16RoundTripsExactly) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = bfloat16_to_float(static_cast<uint16_t>(h));
    EXPECT_EQ(bits_of(f), h << 16);
    if (std::isnan(f))
      EXPECT_EQ(float_to_bfloat16(f), (h & 0x8000u) | 0x7fc0u) << h;
    else
      ASSERT_EQ(float_to_bfloat16(f), h) << "pattern " << h;
  }
}

TEST(Half, Float16DecodesSubnormalsInfAndNaN) {
  EXPECT_EQ(float16_to_float(0x0001), std::ldexp(1.f, -24));
  EXPECT_EQ(float16_to_float(0x03ff), std::ldexp(1023.f, -24));
  EXPECT_EQ(float16_to_float(0x0400), std::ldexp(1.f, -14));
  EXPECT_EQ(float16_to_float(0x7bff), 65504.f);
  EXPECT_EQ(float16_to_float(0xfc00), -INFINITY);
  EXPECT_EQ(bits_of(float16_to_float(0x8000)), 0x80000000u);
  EXPECT_EQ(bits_of(float16_to_float(0x7c01)), 0x7fc02000u);  // signalling NaN comes back quiet, payload kept
}

// Midpoints between neighbouring halves are where rounding decides: each one, and the
// float32s just below and above it, must round as IEEE 754 says.
TEST(Half, Float16RoundsToNearestEvenAtEveryMidpoint) {
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    const double lo = float16_to_float(static_cast<uint16_t>(h));
    const double hi = h + 1 == 0x7c00 ? 65536.0 : float16_to_float(static_cast<uint16_t>(h + 1));
    const float mid = static_cast<float>((lo + hi) / 2);  // exact in float32
    const uint16_t even = (h & 1) ? static_cast<uint16_t>(h + 1) : static_cast<uint16_t>(h);
    ASSERT_EQ(float_to_float16(mid), even) << "midpoint above pattern " << h;
    ASSERT_EQ(float_to_float16(std::nextafter(mid, 0.f)), h) << h;
    ASSERT_EQ(float_to_float16(std::nextafter(mid, INFINITY)), h + 1) << h;
    ASSERT_EQ(float_to_float16(-mid), 0x8000u | even) << h;
  }
  EXPECT_EQ(float_to_float16(65519.996f), 0x7bff);       // below the 65520 midpoint: the largest half
  EXPECT_EQ(float_to_float16(1e30f), 0x7c00);            // overflow is inf, as IEEE 754 says
  EXPECT_EQ(float_to_float16(std::ldexp(1.f, -25)), 0);  // a tie with zero goes to zero (even)
  EXPECT_EQ(float_to_float16(-std::ldexp(1.f, -30)), 0x8000);
}

TEST(Half, BFloat16RoundsToNearestEvenAndOverflowsToInf) {
  EXPECT_EQ(float_to_bfloat16(float_of(0x3f808000)), 0x3f80);  // tie, even below
  EXPECT_EQ(float_to_bfloat16(float_of(0x3f818000)), 0x3f82);  // tie, even above
  EXPECT_EQ(float_to_bfloat16(float_of(0x3f808001)), 0x3f81);
  EXPECT_EQ(float_to_bfloat16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(float_to_bfloat16(float_of(0x00010000)), 0x0001);  // subnormals are kept
  EXPECT_EQ(float_to_bfloat16(-NAN) & 0xffc0u, 0xffc0u);
}

// The vectorized conversions agree with the scalar ones on every pattern and on a
// spread of float32s, NaNs included.
TEST(Half, BulkConversionsMatchScalarOnes) {
  std::vector<uint16_t> halves(65536);
  for (uint32_t h = 0; h < 65536; ++h) halves[h] = static_cast<uint16_t>(h);
  std::vector<float> wide(65536);
  float16_to_float(halves.data(), wide.data(), halves.size());
  for (uint32_t h = 0; h < 65536; ++h) ASSERT_EQ(bits_of(wide[h]), bits_of(float16_to_float(halves[h]))) << h;
  bfloat16_to_float(halves.data(), wide.data(), halves.size());
  for (uint32_t h = 0; h < 65536; ++h) ASSERT_EQ(bits_of(wide[h]), h << 16);

  std::vector<float> floats;
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 65521)
    floats.push_back(float_of(static_cast<uint32_t>(b)));
  std::vector<uint16_t> narrowed(floats.size());
  float_to_float16(floats.data(), narrowed.data(), floats.size());
  for (size_t i = 0; i < floats.size(); ++i) ASSERT_EQ(narrowed[i], float_to_float16(floats[i])) << floats[i];
  float_to_bfloat16(floats.data(), narrowed.data(), floats.size());
  for (size_t i = 0; i < floats.size(); ++i)
    ASSERT_EQ(narrowed[i], float_to_bfloat16(floats[i])) << floats[i];
}

// ---- tensors and ops ----

TEST(Half, CastRoundsAndPrintsAsNumPyDoes) {
  Tensor h = cast(constant({0.1f, 1.f / 3, 65519.f, 70000.f}), DType::Float16);
  EXPECT_EQ(h.dtype(), DType::Float16);
  EXPECT_EQ(h.to_vector<float>(), (std::vector<float>{0.0999755859375f, 0.333251953125f, 65504.f, INFINITY}));
  EXPECT_EQ(cast(constant(0.1f), DType::Float16).to_string(), "Tensor(0.1, shape=(), dtype=float16)");
  EXPECT_EQ(cast(constant({1.5f, 0.1f}), DType::BFloat16).to_string(),
            "Tensor([1.5 0.1], shape=(2,), dtype=bfloat16)");
  EXPECT_EQ(cast(cast(constant({2.7f, -2.7f}), DType::BFloat16), DType::Int32).to_vector<int>(),
            (std::vector<int>{2, -2}));
}

TEST(Half, ElementwiseOpsRoundOnceFromFloat32) {
  for (DType dt : {DType::Float16, DType::BFloat16}) {
    Tensor a = cast(constant({1.f, 2.f, 3.f, -0.5f}), dt);
    Tensor b = cast(constant({0.1f, 0.2f, 0.3f, 4.f}), dt);
    Tensor got = a * b + a;
    EXPECT_EQ(got.dtype(), dt);
    // Each op rounds once: compare with the same two roundings done by hand.
    Tensor by_hand = cast(cast(cast(cast(a, DType::Float32) * cast(b, DType::Float32), dt), DType::Float32) +
                              cast(a, DType::Float32),
                          dt);
    EXPECT_EQ(got.to_vector<float>(), by_hand.to_vector<float>()) << dt;
    EXPECT_EQ(exp(a).to_vector<float>(), cast(exp(cast(a, DType::Float32)), dt).to_vector<float>()) << dt;
  }
}

// A sum of 4096 ones: a float16 accumulator stops at 2048 (2049 is not a float16);
// accumulating in float32, as the dtype's contract says, gives 4096.
TEST(Half, ReductionsAccumulateInFloat32) {
  Tensor ones = cast(ef::ones({4096}), DType::Float16);
  EXPECT_EQ(reduce_sum(ones).item<float>(), 4096.f);
  EXPECT_EQ(reduce_sum(ones).dtype(), DType::Float16);
  Tensor b = cast(ef::ones({64, 64}), DType::BFloat16);
  EXPECT_EQ(matmul(b, b).to_vector<float>()[0], 64.f);
  EXPECT_EQ(reduce_mean(cast(ef::ones({3000}), DType::BFloat16)).item<float>(), 1.f);
}

TEST(Half, MixingWithFloat32IsAnErrorNamingBoth) {
  Tensor h = cast(constant({1.f}), DType::Float16);
  EXPECT_ERROR(h + constant({1.f}), InvalidArgumentError, "add", "float16", "float32");
  EXPECT_ERROR(matmul(cast(ef::ones({2, 2}), DType::BFloat16), ef::ones({2, 2})), InvalidArgumentError,
               "matmul", "bfloat16", "float32");
  // A Python-style number follows the tensor's dtype.
  EXPECT_EQ((h * 2.5).to_vector<float>(), std::vector<float>{2.5f});
}

TEST(Half, StridedViewsWidenCorrectly) {
  Tensor h = cast(reshape(range(0, 12, 1, DType::Float32), {3, 4}), DType::Float16);
  Tensor t = transpose(h);  // a view with strides, no copy
  EXPECT_EQ(t.dtype(), DType::Float16);
  EXPECT_EQ((t + 0.0).to_vector<float>(), transpose(cast(h, DType::Float32)).to_vector<float>());
}

TEST(Half, GradientsFlowInTheHalfDtype) {
  for (DType dt : {DType::Float16, DType::BFloat16}) {
    Variable w(cast(constant({1.f, -2.f, 3.f}), dt), "w");
    GradientTape tape;
    Tensor loss = reduce_sum(square(w.value()) * 0.5);
    Tensor g = tape.gradient(loss, w);
    EXPECT_EQ(g.dtype(), dt);
    EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{1.f, -2.f, 3.f}));
  }
}

// Computed in float32 and rounded, values just below maxval would round up to it; the
// interval must stay half-open in the half dtype, with bounds rounded to it first.
TEST(Half, UniformStaysBelowMaxvalAfterRounding) {
  for (DType dt : {DType::Float16, DType::BFloat16}) {
    const std::vector<float> v = random::uniform({200000}, 0, 1, dt, 7).to_vector<float>();
    EXPECT_LT(*std::max_element(v.begin(), v.end()), 1.f) << dt;
    EXPECT_GE(*std::min_element(v.begin(), v.end()), 0.f) << dt;
    const float lo = cast(constant(0.1f), dt).item<float>();
    const std::vector<float> w = random::uniform({20000}, 0.1, 0.2, dt, 8).to_vector<float>();
    EXPECT_GE(*std::min_element(w.begin(), w.end()), lo) << dt;
    EXPECT_LT(*std::max_element(w.begin(), w.end()), cast(constant(0.2f), dt).item<float>()) << dt;
  }
  EXPECT_ERROR(random::uniform({2}, 0, 1e5, DType::Float16), InvalidArgumentError,
               "within the range of float16");
}

TEST(Half, FunctionsTraceAndRunHalfOps) {
  auto f = function([](Tensor x) { return tanh(x) * x; });
  Tensor x = cast(constant({0.5f, -1.f, 2.f}), DType::BFloat16);
  Tensor eager = tanh(x) * x;
  Tensor traced = f(x);
  EXPECT_EQ(traced.dtype(), DType::BFloat16);
  EXPECT_EQ(traced.to_vector<float>(), eager.to_vector<float>());
}

}  // namespace
}  // namespace ef
