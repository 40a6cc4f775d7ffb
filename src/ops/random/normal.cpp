// random::normal and random::truncated_normal, by the Box-Muller transform of Philox
// words (as TensorFlow's). See uniform.cpp for how random ops carry their seeds.
#include <cmath>
#include <numbers>

#include "eagerflow/ops/random.h"
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
  Shape shape(call.attrs.get_ints(kShape));
  validate_shape(shape, call.op.name, "shape", size_of(dtype));
  out.add(dtype, shape);
}

// Box-Muller: two uniforms give two independent standard normals. 1 - u lies in
// (0, 1], so the logarithm is finite.
template <class T>
void box_muller(T u1, T u2, T* out) {
  const T radius = std::sqrt(T(-2) * std::log(T(1) - u1));
  const T theta = T(2) * std::numbers::pi_v<T> * u2;
  out[0] = radius * std::sin(theta);
  out[1] = radius * std::cos(theta);
}

// Standard normals per Philox block: 4 for float32 (23-bit uniforms), 2 for float64.
template <class T> constexpr int kPerBlock = sizeof(T) == 4 ? 4 : 2;

template <class T>
void standard_normals(const philox::Counter& w, T* z) {
  if constexpr (sizeof(T) == 4) {
    box_muller(philox::uint32_to_float(w[0]), philox::uint32_to_float(w[1]), z);
    box_muller(philox::uint32_to_float(w[2]), philox::uint32_to_float(w[3]), z + 2);
  } else {
    box_muller(philox::uint64_to_double(w[0], w[1]), philox::uint64_to_double(w[2], w[3]), z);
  }
}

// Truncated normals redraw beyond 2 stddev. Element l of block j tries attempt a at
// counter index a * blocks + j (attempt 0 being the block itself), so redraws stay a
// function of (key, stream, element) and never overlap another block's numbers.
// Each attempt is accepted with probability 0.954, so the cap is never reached in
// practice; it only bounds the loop.
constexpr int kMaxAttempts = 1000;

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
    const T m = static_cast<T>(mean), s = static_cast<T>(stddev);
    const uint64_t blocks = static_cast<uint64_t>(n / P + (n % P != 0));
    detail::fill_philox_blocks<P>(cpu::typed_output<T>(out), n, key, stream,
                                  [&](const philox::Counter& w, int64_t j, T* v) {
                                    T z[P];
                                    standard_normals(w, z);
                                    if constexpr (Truncated) {
                                      for (int l = 0; l < P; ++l) {
                                        for (int a = 1; std::fabs(z[l]) > T(2) && a < kMaxAttempts; ++a) {
                                          T redraw[P];
                                          uint64_t index = static_cast<uint64_t>(a) * blocks + static_cast<uint64_t>(j);
                                          standard_normals(philox::block(key, index, stream), redraw);
                                          z[l] = redraw[l];
                                        }
                                        if (std::fabs(z[l]) > T(2)) z[l] = 0;  // unreachable in practice
                                      }
                                    }
                                    for (int l = 0; l < P; ++l) v[l] = m + s * z[l];
                                  });
  });
}

const OpDef& kNormal = define_op({
    .name = "random_normal",
    .attr_names = {"shape", "mean", "stddev", "dtype", "key", "stream"},
    .infer = infer_normal,
    .kernels = {normal_cpu<false>},
    .not_differentiable = "random values do not depend differentiably on any input (it has no tensor inputs)",
    .traits = {.random = true},
});

const OpDef& kTruncatedNormal = define_op({
    .name = "truncated_normal",
    .attr_names = {"shape", "mean", "stddev", "dtype", "key", "stream"},
    .infer = infer_normal,
    .kernels = {normal_cpu<true>},
    .not_differentiable = "random values do not depend differentiably on any input (it has no tensor inputs)",
    .traits = {.random = true},
});

Tensor run_normal(const OpDef& op, const Shape& shape, double mean, double stddev, DType dtype,
                  std::optional<int64_t> seed, CallSite where) {
  detail::RandomStream s = detail::next_random_stream(seed);
  return run_op(op, {},
                {shape.dims(), mean, stddev, dtype, static_cast<int64_t>(s.key), static_cast<int64_t>(s.stream)},
                where);
}

}  // namespace

Tensor random::normal(const Shape& shape, double mean, double stddev, DType dtype, std::optional<int64_t> seed,
                      CallSite where) {
  return run_normal(kNormal, shape, mean, stddev, dtype, seed, where);
}

Tensor random::truncated_normal(const Shape& shape, double mean, double stddev, DType dtype,
                                std::optional<int64_t> seed, CallSite where) {
  return run_normal(kTruncatedNormal, shape, mean, stddev, dtype, seed, where);
}

}  // namespace ef
