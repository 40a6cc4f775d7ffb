// random::uniform: floats in [minval, maxval) and integers in [minval, maxval).
// Random ops are primitives without tensor inputs whose attributes carry the resolved
// Philox key and stream (Note [random seeds]), so the kernel is a pure function of
// its attributes and graph mode can record it like any other op.
#include <algorithm>
#include <cmath>

#include "eagerflow/ops/random.h"
#include "ops/batch_helpers.h"
#include "ops/op_helpers.h"
#include "ops/random/philox_fill.h"
#include "ops/random/random_stream.h"

namespace ef {
namespace {

enum UniformAttr { kShape, kMinval, kMaxval, kDType, kKey, kStream };

constexpr std::string_view kNotDifferentiable =
    "random values do not depend differentiably on any input (it has no tensor inputs)";

Shape checked_output_shape(const OpCall& call, DType dtype) {
  Shape shape(call.attrs.get_ints(kShape));
  validate_shape(shape, call.op.name, "shape", size_of(dtype));
  return shape;
}

// ---- floats ----

// The largest value of half dtype `dtype` below hi (itself a value of it), or lo.
float largest_half_below(float lo, float hi, DType dtype) {
  if (!(hi > lo)) return lo;
  auto to_bits = [&](float v) {
    return dtype == DType::Float16 ? float_to_float16(v) : float_to_bfloat16(v);
  };
  auto from_bits = [&](uint16_t b) {
    return dtype == DType::Float16 ? float16_to_float(b) : bfloat16_to_float(b);
  };
  uint16_t h = to_bits(hi);
  while (from_bits(h) >= hi) h = h == 0 ? 0x8001 : (h & 0x8000) ? h + 1 : h - 1;  // one step towards -inf
  return from_bits(h);
}

void infer_uniform(const OpCall& call, OutputMetas& out) {
  DType dtype = call.attrs.get_dtype(kDType);
  detail::check_dtype(call, dtype, cpu::kFloatTypes, "dtype");
  double lo = call.attrs.get_float(kMinval), hi = call.attrs.get_float(kMaxval);
  if (!std::isfinite(lo) || !std::isfinite(hi))
    fail(call.op.name, ": minval and maxval must be finite, got ", lo, " and ", hi);
  if (lo > hi) fail(call.op.name, ": minval (", lo, ") must not exceed maxval (", hi, ")");
  if (!(std::isfinite(rounded_to(dtype, lo)) && std::isfinite(rounded_to(dtype, hi))))
    fail(call.op.name, ": minval (", lo, ") and maxval (", hi, ") must be within the range of ", dtype);
  out.add(dtype, checked_output_shape(call, dtype));
}

// lo (1 - u) + hi u (which, unlike lo + (hi - lo) u, cannot overflow for bounds near
// the dtype's limits). Rounding could carry the result up to hi: such values become
// `top`, the largest value below hi, so the interval stays half-open.
template <class T>
T scale_uniform(T u, T lo, T hi, T top) {
  const T r = lo * (T(1) - u) + hi * u;
  return r >= hi ? top : r;
}

template <class T>
T largest_below(T lo, T hi) {
  return hi > lo ? std::nextafter(hi, lo) : lo;
}

void uniform_cpu(const OpCall& call, std::span<Tensor> outputs) {
  Tensor& out = outputs[0];
  const uint64_t key = static_cast<uint64_t>(call.attrs.get_int(kKey));
  const uint64_t stream = static_cast<uint64_t>(call.attrs.get_int(kStream));
  // A half dtype is computed in float32 and rounded (Note [half-precision dtypes]): the
  // bounds are first rounded to it (TensorFlow converts them to the dtype), and values
  // that would round up to maxval are kept below it, so the interval stays half-open.
  const DType target = call.attrs.get_dtype(kDType);
  const double lo =
      is_half(target) ? rounded_to(target, call.attrs.get_float(kMinval)) : call.attrs.get_float(kMinval);
  const double hi =
      is_half(target) ? rounded_to(target, call.attrs.get_float(kMaxval)) : call.attrs.get_float(kMaxval);
  const int64_t n = out.num_elements();
  constexpr int B = detail::kPhiloxBatch;
  if (out.dtype() == DType::Float32) {
    const float flo = static_cast<float>(lo), fhi = static_cast<float>(hi);
    const float top = is_half(target) ? largest_half_below(flo, fhi, target) : largest_below(flo, fhi);
    detail::fill_philox_blocks<4>(cpu::typed_output<float>(out), n, key, stream,
                                  [&](const detail::PhiloxWords& w, uint64_t, float* v) {
                                    for (int l = 0; l < 4; ++l) {
#pragma omp simd
                                      for (int b = 0; b < B; ++b)
                                        v[4 * b + l] =
                                            std::min(scale_uniform(philox::uint32_to_float(w.word[l][b]), flo,
                                                                   fhi, top),
                                                     top);
                                    }
                                  });
  } else {
    const double top = largest_below(lo, hi);
    detail::fill_philox_blocks<2>(cpu::typed_output<double>(out), n, key, stream,
                                  [&](const detail::PhiloxWords& w, uint64_t, double* v) {
#pragma omp simd
                                    for (int b = 0; b < B; ++b) {
                                      v[2 * b] = scale_uniform(philox::uint64_to_double(w.word[0][b], w.word[1][b]),
                                                               lo, hi, top);
                                      v[2 * b + 1] = scale_uniform(
                                          philox::uint64_to_double(w.word[2][b], w.word[3][b]), lo, hi, top);
                                    }
                                  });
  }
}

const OpDef& kUniform = define_op({
    .name = "random_uniform",
    .attr_names = {"shape", "minval", "maxval", "dtype", "key", "stream"},
    .infer = infer_uniform,
    .kernels = {uniform_cpu, detail::computed_on_host<uniform_cpu>},
    .not_differentiable = kNotDifferentiable,
    .batch = detail::batch_random,
    .traits = {.random = true},
});

// ---- integers ----
void infer_uniform_int(const OpCall& call, OutputMetas& out) {
  DType dtype = call.attrs.get_dtype(kDType);
  detail::check_dtype(call, dtype, cpu::kIntTypes, "dtype");
  int64_t lo = call.attrs.get_int(kMinval), hi = call.attrs.get_int(kMaxval);
  if (lo >= hi)
    fail(call.op.name, ": need minval < maxval for integer dtype ", dtype, ", got minval ", lo, " and maxval ",
         hi);
  out.add(dtype, checked_output_shape(call, dtype));
}

// minval + floor(x * range / 2^64) for a 64-bit random x: bias at most range / 2^64.
template <class T>
T scale_int(uint32_t w0, uint32_t w1, int64_t lo, uint64_t range) {
  const uint64_t x = static_cast<uint64_t>(w1) << 32 | w0;
  const uint64_t r = static_cast<uint64_t>((static_cast<unsigned __int128>(x) * range) >> 64);
  return static_cast<T>(static_cast<int64_t>(static_cast<uint64_t>(lo) + r));
}

void uniform_int_cpu(const OpCall& call, std::span<Tensor> outputs) {
  Tensor& out = outputs[0];
  const uint64_t key = static_cast<uint64_t>(call.attrs.get_int(kKey));
  const uint64_t stream = static_cast<uint64_t>(call.attrs.get_int(kStream));
  const int64_t lo = call.attrs.get_int(kMinval), hi = call.attrs.get_int(kMaxval);
  const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);  // > 0, wraps safely
  cpu::dispatch_in<cpu::kIntTypes>(out.dtype(), call.op.name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    detail::fill_philox_blocks<2>(cpu::typed_output<T>(out), out.num_elements(), key, stream,
                                  [&](const detail::PhiloxWords& w, uint64_t, T* v) {
                                    for (int b = 0; b < detail::kPhiloxBatch; ++b) {
                                      v[2 * b] = scale_int<T>(w.word[0][b], w.word[1][b], lo, range);
                                      v[2 * b + 1] = scale_int<T>(w.word[2][b], w.word[3][b], lo, range);
                                    }
                                  });
  });
}

const OpDef& kUniformInt = define_op({
    .name = "random_uniform_int",
    .attr_names = {"shape", "minval", "maxval", "dtype", "key", "stream"},
    .infer = infer_uniform_int,
    .kernels = {uniform_int_cpu, detail::computed_on_host<uniform_int_cpu>},
    .not_differentiable = kNotDifferentiable,
    .batch = detail::batch_random,
    .traits = {.random = true},
});

// `claim` resolves the stream once the arguments are valid, so a failed call
// consumes no stream.
template <class ClaimStream>
Tensor run_uniform(const Shape& shape, const TensorOrScalar& minval, const std::optional<TensorOrScalar>& maxval,
                   DType dtype, ClaimStream claim, CallSite where) {
  try {
    if (minval.is_tensor() || (maxval && maxval->is_tensor()))
      fail("random_uniform: minval and maxval must be numbers, not tensors");
    if (is_integer(dtype)) {
      if (!maxval) fail("random_uniform_int: argument 'maxval' is required for integer dtype ", dtype);
      // scalar_tensor checks that the bounds fit the dtype exactly.
      int64_t lo = scalar_tensor(minval, dtype, "random_uniform_int").item<int64_t>();
      int64_t hi = scalar_tensor(*maxval, dtype, "random_uniform_int").item<int64_t>();
      detail::RandomStream s = claim();
      return run_op(kUniformInt, {},
                    {shape.dims(), lo, hi, dtype, static_cast<int64_t>(s.key), static_cast<int64_t>(s.stream)},
                    where);
    }
    double lo = minval.value(), hi = maxval ? maxval->value() : 1.0;
    detail::RandomStream s = claim();
    return run_op(kUniform, {},
                  {shape.dims(), lo, hi, dtype, static_cast<int64_t>(s.key), static_cast<int64_t>(s.stream)},
                  where);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

}  // namespace

Tensor random::uniform(const Shape& shape, const TensorOrScalar& minval, const std::optional<TensorOrScalar>& maxval,
                       DType dtype, std::optional<int64_t> seed, CallSite where) {
  return run_uniform(shape, minval, maxval, dtype, [&] { return detail::next_random_stream(seed); }, where);
}

Tensor random::stateless_uniform(const Shape& shape, StatelessSeed seed, const TensorOrScalar& minval,
                                 const std::optional<TensorOrScalar>& maxval, DType dtype, CallSite where) {
  return run_uniform(shape, minval, maxval, dtype, [&] { return detail::stateless_random_stream(seed); }, where);
}

}  // namespace ef
