// random::normal and random::truncated_normal, by the Box-Muller transform of Philox
// words (as TensorFlow's). See uniform.cpp for how random ops carry their seeds.
#include <cmath>
#include <numbers>

#include "eagerflow/ops/random.h"
#include "ops/batch_helpers.h"
#include "ops/op_helpers.h"
#include "ops/random/philox_fill.h"
#include "ops/random/random_stream.h"

namespace ef {
namespace {

enum NormalAttr { kShape, kMean, kStddev, kDType, kKey, kStream };

void infer_normal(const OpCall& call, OutputMetas& out) {
  DType dtype = call.attrs.get_dtype(kDType);
  detail::check_dtype(call, dtype, cpu::kFloatTypes, "dtype");
  double mean = call.attrs.get_float(kMean), stddev = call.attrs.get_float(kStddev);
  if (!std::isfinite(mean)) fail(call.op.name, ": argument 'mean' must be finite, got ", mean);
  if (!std::isfinite(stddev) || stddev < 0)
    fail(call.op.name, ": argument 'stddev' must be finite and non-negative, got ", stddev);
  if (!(std::isfinite(rounded_to(dtype, mean)) && std::isfinite(rounded_to(dtype, stddev))))
    fail(call.op.name, ": mean (", mean, ") and stddev (", stddev, ") must be within the range of ", dtype);
  Shape shape(call.attrs.get_ints(kShape));
  validate_shape(shape, call.op.name, "shape", size_of(dtype));
  out.add(dtype, shape);
}

// Box-Muller: two uniforms give two independent standard normals. 1 - u1 lies in
// (0, 1], so the logarithm is finite.
template <class T>
void box_muller(T u1, T u2, T& z1, T& z2) {
  const T radius = std::sqrt(T(-2) * std::log(T(1) - u1));
  const T theta = T(2) * std::numbers::pi_v<T> * u2;
  z1 = radius * std::sin(theta);
  z2 = radius * std::cos(theta);
}

// Standard normals per Philox block: 4 for float32 (23-bit uniforms), 2 for float64.
template <class T> constexpr int kPerBlock = sizeof(T) == 4 ? 4 : 2;

// The normals of one block (used for the rare redraws of truncated_normal).
template <class T>
void standard_normals(const philox::Counter& w, T* z) {
  using philox::uint32_to_float, philox::uint64_to_double;
  if constexpr (sizeof(T) == 4) {
    box_muller(uint32_to_float(w[0]), uint32_to_float(w[1]), z[0], z[1]);
    box_muller(uint32_to_float(w[2]), uint32_to_float(w[3]), z[2], z[3]);
  } else {
    box_muller(uint64_to_double(w[0], w[1]), uint64_to_double(w[2], w[3]), z[0], z[1]);
  }
}

// Box-Muller as values (the form GCC vectorizes, with libmvec's log, sin and cos).
template <class T>
T bm_radius(T u1) { return std::sqrt(T(-2) * std::log(T(1) - u1)); }
template <class T>
T bm_angle(T u2) { return T(2) * std::numbers::pi_v<T> * u2; }

// The normals of a batch of blocks, z[l][b] = normal l of block b. Radii, sines and
// cosines are separate loops: in one loop GCC fuses sin and cos of the same angle
// into sincos, which has no vector version, and nothing vectorizes.
template <class T>
void standard_normals(const detail::PhiloxWords& w, T (*z)[detail::kPhiloxBatch]) {
  using philox::uint32_to_float, philox::uint64_to_double;
  constexpr int B = detail::kPhiloxBatch;
  constexpr int Pairs = sizeof(T) == 4 ? 2 : 1;
  alignas(64) T radius[Pairs][B], angle[Pairs][B];
  for (int p = 0; p < Pairs; ++p) {
    T* __restrict r = radius[p];
    T* __restrict a = angle[p];
#pragma omp simd
    for (int b = 0; b < B; ++b) {
      if constexpr (sizeof(T) == 4) {
        r[b] = bm_radius(uint32_to_float(w.word[2 * p][b]));
        a[b] = bm_angle(uint32_to_float(w.word[2 * p + 1][b]));
      } else {
        r[b] = bm_radius(uint64_to_double(w.word[0][b], w.word[1][b]));
        a[b] = bm_angle(uint64_to_double(w.word[2][b], w.word[3][b]));
      }
    }
  }
  for (int p = 0; p < Pairs; ++p) {
    T* __restrict zs = z[2 * p];
#pragma omp simd
    for (int b = 0; b < B; ++b) zs[b] = radius[p][b] * std::sin(angle[p][b]);
  }
  for (int p = 0; p < Pairs; ++p) {
    T* __restrict zc = z[2 * p + 1];
#pragma omp simd
    for (int b = 0; b < B; ++b) zc[b] = radius[p][b] * std::cos(angle[p][b]);
  }
}

// Truncated normals redraw beyond 2 stddev. Normal l of block j tries attempt a at
// counter index a * stride + j (attempt 0 being the block itself), where stride is
// the number of blocks the output spans (rounded up to whole batches): redraws stay a
// function of (key, stream, element) and never reuse another block's numbers. Each
// attempt is accepted with probability 0.954, so the cap only bounds the loop.
constexpr int kMaxAttempts = 1000;

template <class T>
T redraw_within_two(T z, int lane, uint64_t block, uint64_t stride, uint64_t key, uint64_t stream) {
  for (int a = 1; std::fabs(z) > T(2) && a < kMaxAttempts; ++a) {
    T redraw[kPerBlock<T>];
    standard_normals(philox::block(key, static_cast<uint64_t>(a) * stride + block, stream), redraw);
    z = redraw[lane];
  }
  return std::fabs(z) > T(2) ? T(0) : z;  // the fallback is unreachable in practice
}

template <bool Truncated>
void normal_cpu(const OpCall& call, std::span<Tensor> outputs) {
  Tensor& out = outputs[0];
  const uint64_t key = static_cast<uint64_t>(call.attrs.get_int(kKey));
  const uint64_t stream = static_cast<uint64_t>(call.attrs.get_int(kStream));
  const double mean = call.attrs.get_float(kMean), stddev = call.attrs.get_float(kStddev);
  const int64_t n = out.num_elements();
  cpu::dispatch_in<cpu::kFloatTypes>(out.dtype(), call.op.name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr int P = kPerBlock<T>;
    constexpr int B = detail::kPhiloxBatch;
    const T m = static_cast<T>(mean), s = static_cast<T>(stddev);
    const int64_t per_batch = int64_t{P} * B;
    [[maybe_unused]] const uint64_t stride = static_cast<uint64_t>((n / per_batch + (n % per_batch != 0)) * B);
    detail::fill_philox_blocks<P>(cpu::typed_output<T>(out), n, key, stream,
                                  [&](const detail::PhiloxWords& w, uint64_t first_block, T* v) {
                                    alignas(64) T z[P][B];
                                    standard_normals(w, z);
                                    if constexpr (Truncated) {
                                      for (int l = 0; l < P; ++l)
                                        for (int b = 0; b < B; ++b)
                                          if (std::fabs(z[l][b]) > T(2))
                                            z[l][b] = redraw_within_two(z[l][b], l, first_block + b, stride, key,
                                                                        stream);
                                    }
                                    for (int l = 0; l < P; ++l) {
#pragma omp simd
                                      for (int b = 0; b < B; ++b) v[P * b + l] = m + s * z[l][b];
                                    }
                                  });
  });
}

const OpDef& kNormal = define_op({
    .name = "random_normal",
    .attr_names = {"shape", "mean", "stddev", "dtype", "key", "stream"},
    .infer = infer_normal,
    .kernels = {normal_cpu<false>, detail::computed_on_host<normal_cpu<false>>},
    .not_differentiable = "random values do not depend differentiably on any input (it has no tensor inputs)",
    .batch = detail::batch_random,
    .traits = {.random = true},
});

const OpDef& kTruncatedNormal = define_op({
    .name = "truncated_normal",
    .attr_names = {"shape", "mean", "stddev", "dtype", "key", "stream"},
    .infer = infer_normal,
    .kernels = {normal_cpu<true>, detail::computed_on_host<normal_cpu<true>>},
    .not_differentiable = "random values do not depend differentiably on any input (it has no tensor inputs)",
    .batch = detail::batch_random,
    .traits = {.random = true},
});

Tensor run_normal(const OpDef& op, const Shape& shape, double mean, double stddev, DType dtype,
                  const detail::RandomStream& s, CallSite where) {
  return run_op(op, {},
                {shape.dims(), mean, stddev, dtype, static_cast<int64_t>(s.key), static_cast<int64_t>(s.stream)},
                where);
}

}  // namespace

Tensor random::normal(const Shape& shape, double mean, double stddev, DType dtype, std::optional<int64_t> seed,
                      CallSite where) {
  return run_normal(kNormal, shape, mean, stddev, dtype, detail::next_random_stream(seed), where);
}

Tensor random::stateless_normal(const Shape& shape, StatelessSeed seed, double mean, double stddev, DType dtype,
                                CallSite where) {
  return run_normal(kNormal, shape, mean, stddev, dtype, detail::stateless_random_stream(seed), where);
}

Tensor random::truncated_normal(const Shape& shape, double mean, double stddev, DType dtype,
                                std::optional<int64_t> seed, CallSite where) {
  return run_normal(kTruncatedNormal, shape, mean, stddev, dtype, detail::next_random_stream(seed), where);
}

Tensor random::stateless_truncated_normal(const Shape& shape, StatelessSeed seed, double mean, double stddev,
                                          DType dtype, CallSite where) {
  return run_normal(kTruncatedNormal, shape, mean, stddev, dtype, detail::stateless_random_stream(seed), where);
}

}  // namespace ef
