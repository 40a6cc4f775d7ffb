// cumsum / cumprod / cumulative_logsumexp: inclusive or exclusive scans along one
// axis, forwards or reversed.
//
// The input is seen as [outer, n, inner] around the scanned axis. With a contiguous
// input and inner > 1, whole inner rows are accumulated at once (vectorized);
// otherwise each line along the axis is scanned on its own, following the strides.
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/reduction.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

using namespace cpu;

enum ScanAttr { kAxis, kExclusive, kReverse };

// Float32 accumulates in float64; integers wrap (unsigned arithmetic).
template <class T, bool = std::is_floating_point_v<T>>
struct ScanAccOf { using type = double; };
template <class T>
struct ScanAccOf<T, false> { using type = std::make_unsigned_t<T>; };
template <class T>
using ScanAcc = typename ScanAccOf<T>::type;

struct SumOp {
  static constexpr int kIdentity = 0;
  template <class A> static A apply(A a, A b) { return a + b; }
};
struct ProdOp {
  static constexpr int kIdentity = 1;
  template <class A> static A apply(A a, A b) { return a * b; }
};

// log(exp(a) + exp(b)) without overflow; -inf is its identity.
struct LogAddExpOp {
  static constexpr double kIdentity = -std::numeric_limits<double>::infinity();
  template <class A>
  static A apply(A a, A b) {
    const A hi = a > b ? a : b, lo = a > b ? b : a;
    if (lo == -std::numeric_limits<A>::infinity() || hi == std::numeric_limits<A>::infinity()) return hi;
    return hi + std::log1p(std::exp(lo - hi));
  }
};

template <DTypeSet Set>
void infer_scan(const OpCall& call, OutputMetas& out) {
  const Tensor& x = call.inputs[0];
  detail::check_dtype(call, x.dtype(), Set, "x");
  if (x.rank() == 0) fail(call.op.name, ": argument 'x' is a scalar (shape []); it needs an axis to scan along");
  normalize_axis(call.attrs.get_int(kAxis), x.rank(), call.op.name);
  out.add(x.dtype(), x.shape());
}

template <class Op, DTypeSet Set = kNumericTypes>
void scan_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor& x = call.inputs[0];
  Tensor& out = outputs[0];
  const TensorImpl& in = *x.impl();
  const int axis = normalize_axis(call.attrs.get_int(kAxis), x.rank(), call.op.name);
  const bool exclusive = call.attrs.get_bool(kExclusive), reverse = call.attrs.get_bool(kReverse);
  const int64_t n = in.shape[axis];
  if (out.num_elements() == 0) return;
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= in.shape[i];
  for (int i = axis + 1; i < in.shape.rank(); ++i) inner *= in.shape[i];

  dispatch_in<Set>(x.dtype(), call.op.name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = ScanAcc<T>;
    const T* src = typed_data<T>(x);
    T* dst = typed_output<T>(out);
    // Position k of the scan visits index (reverse ? n-1-k : k) along the axis.
    if (in.is_contiguous() && inner > 1) {
      constexpr int64_t kWidth = 512;
      const int64_t blocks = (inner + kWidth - 1) / kWidth;
      parallel_for(outer * blocks, static_cast<double>(n * kWidth) * 0.5, [&](int64_t b, int64_t e) {
        A acc[kWidth];
        for (int64_t u = b; u < e; ++u) {
          const int64_t o = u / blocks, j0 = (u % blocks) * kWidth, w = std::min(kWidth, inner - j0);
          std::fill(acc, acc + w, static_cast<A>(Op::kIdentity));
          for (int64_t k = 0; k < n; ++k) {
            const int64_t i = reverse ? n - 1 - k : k;
            const T* s = src + (o * n + i) * inner + j0;
            T* d = dst + (o * n + i) * inner + j0;
            if (exclusive) {
#pragma omp simd
              for (int64_t j = 0; j < w; ++j) {
                d[j] = static_cast<T>(acc[j]);
                acc[j] = Op::apply(acc[j], static_cast<A>(s[j]));
              }
            } else {
#pragma omp simd
              for (int64_t j = 0; j < w; ++j) {
                acc[j] = Op::apply(acc[j], static_cast<A>(s[j]));
                d[j] = static_cast<T>(acc[j]);
              }
            }
          }
        }
      });
      return;
    }
    // One line per (outer, inner) pair, walking the input's strides.
    Dims sizes, strides;
    for (int i = 0; i < in.shape.rank(); ++i)
      if (i != axis) {
        sizes.push_back(in.shape[i]);
        strides.push_back(in.strides[i]);
      }
    const int64_t s_axis = in.strides[axis];
    parallel_for(outer * inner, static_cast<double>(n) * 1.0 + 5, [&](int64_t b, int64_t e) {
      for (int64_t line = b; line < e; ++line) {
        int64_t off = 0, rest = line;
        for (int i = static_cast<int>(sizes.size()) - 1; i >= 0; --i) {
          off += (rest % sizes[i]) * strides[i];
          rest /= sizes[i];
        }
        const int64_t o = line / inner, j = line % inner;
        A acc = static_cast<A>(Op::kIdentity);
        for (int64_t k = 0; k < n; ++k) {
          const int64_t i = reverse ? n - 1 - k : k;
          T* d = dst + (o * n + i) * inner + j;
          const A v = static_cast<A>(src[off + i * s_axis]);
          if (exclusive) {
            *d = static_cast<T>(acc);
            acc = Op::apply(acc, v);
          } else {
            acc = Op::apply(acc, v);
            *d = static_cast<T>(acc);
          }
        }
      }
    });
  });
}

// Each input feeds every output after it in scan order (at or after it when
// inclusive), so its gradient is the opposite-direction scan of the output gradient,
// with the same exclusive flag (as TensorFlow's _CumsumGrad).
std::vector<Tensor> cumsum_grad(const GradCall& call) {
  const Attrs& attrs = call.forward.attrs;
  return {cumsum(call.output_grads[0], attrs.get_int(kAxis), attrs.get_bool(kExclusive),
                 !attrs.get_bool(kReverse))};
}

// d y_i / d x_k = the product of the scanned elements up to i other than x_k. Where no
// zero comes at or before x_k in scan order this is y_i / x_k, which gives TensorFlow's
// _CumprodGrad, reverse-cumsum(y * g) / x. Past that, TensorFlow's formula divides by
// zero; here, the first zero's products are the scan of x with that zero set to 1, and
// every later element has a zero among its "others", so its gradient is 0. This is
// exact at first order everywhere; a second derivative is exact where x has no zero,
// but at a zero it misses the dependence of the later elements' (zero) gradients on
// that zero. The alternative exact at every order costs O(n^2) per scanned line.
std::vector<Tensor> cumprod_grad(const GradCall& call) {
  const Attrs& attrs = call.forward.attrs;
  const Tensor &x = call.forward.inputs[0], &y = call.outputs[0], &g = call.output_grads[0];
  const int64_t axis = attrs.get_int(kAxis);
  const bool exclusive = attrs.get_bool(kExclusive), reverse = attrs.get_bool(kReverse);
  Tensor is_zero = equal(x, 0);
  Tensor zeros_so_far = cumsum(cast(is_zero, DType::Int32), axis, false, reverse);  // x_k included
  Tensor no_zero_yet = equal(zeros_so_far, 0);
  Tensor first_zero = logical_and(is_zero, equal(zeros_so_far, 1));
  Tensor plain = divide(cumsum(multiply(y, g), axis, exclusive, !reverse), where(is_zero, 1, x));
  Tensor skip_zero = cumprod(where(first_zero, 1, x), axis, exclusive, reverse);
  Tensor at_first_zero = cumsum(multiply(skip_zero, g), axis, exclusive, !reverse);
  return {where(no_zero_yet, plain, where(first_zero, at_first_zero, 0))};
}

// TensorFlow's _CumulativeLogsumexpGrad: d y_i / d x_k = exp(x_k - y_i) for the outputs
// y_i that x_k feeds, so the gradient is exp(x_k + logsumexp over those i of
// (log g_i - y_i)), a scan in the opposite direction; the positive and negative parts
// of g go through the log separately.
std::vector<Tensor> cumulative_logsumexp_grad(const GradCall& call) {
  const Attrs& attrs = call.forward.attrs;
  const Tensor &x = call.forward.inputs[0], &y = call.outputs[0], &g = call.output_grads[0];
  const int64_t axis = attrs.get_int(kAxis);
  const bool exclusive = attrs.get_bool(kExclusive), reverse = attrs.get_bool(kReverse);
  auto part = [&](const Tensor& positive, const Tensor& magnitude) {
    // log of the part, the lowest finite number where it is 0 (TensorFlow's choice: -inf
    // would give inf - inf = NaN in the scans below and in their own gradients); the log
    // never sees a non-positive number, so a second derivative gets no NaN from the
    // branch `where` drops.
    const DType t = x.dtype();
    const double lowest = t == DType::Float64   ? std::numeric_limits<double>::lowest()
                          : t == DType::Float32 ? double(std::numeric_limits<float>::lowest())
                          : t == DType::Float16 ? -65504.0
                                                : -0x1.fep127;  // bfloat16
    Tensor log_part = where(positive, log(where(positive, magnitude, 1)), lowest);
    return exp(add(cumulative_logsumexp(subtract(log_part, y), axis, exclusive, !reverse), x));
  };
  return {subtract(part(greater(g, 0), g), part(less(g, 0), negative(g)))};
}

const OpDef& kCumsum = define_op({
    .name = "cumsum",
    .attr_names = {"axis", "exclusive", "reverse"},
    .infer = infer_scan<kNumericTypes>,
    .kernels = {scan_cpu<SumOp>, cuda::scan_kernel},
    .gradient = cumsum_grad,
});

const OpDef& kCumprod = define_op({
    .name = "cumprod",
    .attr_names = {"axis", "exclusive", "reverse"},
    .infer = infer_scan<kNumericTypes>,
    .kernels = {scan_cpu<ProdOp>, cuda::scan_kernel},
    .gradient = cumprod_grad,
});

const OpDef& kCumulativeLogsumexp = define_op({
    .name = "cumulative_logsumexp",
    .attr_names = {"axis", "exclusive", "reverse"},
    .infer = infer_scan<kFloatTypes>,
    .kernels = {scan_cpu<LogAddExpOp, kFloatTypes>},
    .gradient = cumulative_logsumexp_grad,
    .gradient_uses = {.inputs = kAllValues, .outputs = kAllValues},
});

}  // namespace

Tensor cumsum(const Tensor& x, int64_t axis, bool exclusive, bool reverse, CallSite where) {
  return run_op(kCumsum, {x}, {axis, exclusive, reverse}, where);
}
Tensor cumprod(const Tensor& x, int64_t axis, bool exclusive, bool reverse, CallSite where) {
  return run_op(kCumprod, {x}, {axis, exclusive, reverse}, where);
}
Tensor cumulative_logsumexp(const Tensor& x, int64_t axis, bool exclusive, bool reverse, CallSite where) {
  return run_op(kCumulativeLogsumexp, {x}, {axis, exclusive, reverse}, where);
}

}  // namespace ef
