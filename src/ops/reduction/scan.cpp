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
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/reduction.h"
#include "ops/array/copy.h"
#include "ops/batch_helpers.h"
#include "ops/jvp_helpers.h"
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

// ---- cumprod's gradient, exact at every order ----
// Note [cumprod gradient]: in scan order, with P_k = prod_{j<k} x_j (the exclusive
// cumprod), the gradient of an inclusive cumprod is P_k S_k with the suffix recurrence
// S_k = g_k + x_{k+1} S_{k+1}, and of an exclusive one P_k T_k with
// T_k = g_{k+1} + x_{k+1} T_{k+1}. Neither divides, so zeros in x need no special case.
// The recurrences are cumprod_linear_scan (h_k = b_k + a_k h_{k-1}, h_{-1} = 0, a at the
// first scanned position unused), whose gradient is again that op in the opposite
// direction, with products and rolls; P is cumprod itself. So every order is exact.
// (The gradient used to be TensorFlow's reverse-cumsum(y * g) / x with the first zero
// patched: exact at first order, but its second derivative at a zero dropped the later
// elements' dependence on that zero: sum(cumprod(x)) at x = [0, 2, 3] gave Hessian times
// ones [0, 4, 2] instead of [6, 4, 2].)
enum LinearScanAttr { kLinAxis, kLinReverse };

void infer_linear_scan(const OpCall& call, OutputMetas& out) {
  detail::check_input_count(call, 2);
  const Tensor& a = call.inputs[0];
  detail::check_dtype(call, a.dtype(), kFloatTypes, "a");
  detail::check_same_dtype(call, 0, 1, "a", "b");
  const Shape& s = call.inputs[1].shape();
  if (s.rank() != a.rank() || (s.is_fully_defined() && a.shape().is_fully_defined() && s != a.shape()))
    fail(call.op.name, ": argument 'b' has shape ", s, ", a has shape ", a.shape(), "; they must be equal");
  if (a.rank() == 0)
    fail(call.op.name, ": argument 'a' is a scalar (shape []); it needs an axis to scan along");
  normalize_axis(call.attrs.get_int(kLinAxis), a.rank(), call.op.name);
  out.add(a.dtype(), a.shape());
}

void linear_scan_cpu(const OpCall& call, std::span<Tensor> outputs) {
  Tensor& out = outputs[0];
  if (out.num_elements() == 0) return;
  const Tensor a = detail::materialize(call.inputs[0]), b = detail::materialize(call.inputs[1]);
  const int axis = normalize_axis(call.attrs.get_int(kLinAxis), a.rank(), call.op.name);
  const bool reverse = call.attrs.get_bool(kLinReverse);
  const Shape& shape = a.shape();
  const int64_t n = shape[axis];
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= shape[i];
  for (int i = axis + 1; i < shape.rank(); ++i) inner *= shape[i];
  dispatch_in<kFloatTypes>(a.dtype(), call.op.name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *pa = typed_data<T>(a), *pb = typed_data<T>(b);
    T* dst = typed_output<T>(out);
    parallel_for(outer * inner, static_cast<double>(n) * 2 + 5, [&](int64_t lo, int64_t hi) {
      for (int64_t line = lo; line < hi; ++line) {
        const int64_t base = (line / inner) * n * inner + line % inner;
        double h = 0;
        for (int64_t p = 0; p < n; ++p) {
          const int64_t i = base + (reverse ? n - 1 - p : p) * inner;
          h = p == 0 ? double(pb[i]) : double(pb[i]) + double(pa[i]) * h;
          dst[i] = static_cast<T>(h);
        }
      }
    });
  });
}

Tensor linear_scan(const Tensor& a, const Tensor& b, int64_t axis, bool reverse);

// x moved one place along the scan (reverse: scanning backwards): to_next gives each
// position the next scanned element's value, otherwise the previous one's; the
// position left over takes the wrapped-around element (callers mask or ignore it).
Tensor scan_shift(const Tensor& x, int64_t axis, bool reverse, bool to_next) {
  return roll(x, {(reverse != to_next) ? -1 : 1}, {axis});
}

// The first position in scan order (true there).
Tensor scan_first(const Tensor& x, int64_t axis, bool reverse) {
  return equal(cumsum(ones_like(x), axis, true, reverse), 0);
}

// With cotangent u: lambda_k = u_k + a_{k+1} lambda_{k+1} (the opposite-direction scan
// with a moved back one place; the wrapped-around a lands where it is unused);
// d b = lambda, d a_k = lambda_k h_{k-1} (0 at the first position).
std::vector<Tensor> linear_scan_grad(const GradCall& call) {
  const Tensor &a = call.forward.inputs[0], &h = call.outputs[0], &u = call.output_grads[0];
  const int64_t axis = call.forward.attrs.get_int(kLinAxis);
  const bool reverse = call.forward.attrs.get_bool(kLinReverse);
  Tensor lambda = linear_scan(scan_shift(a, axis, reverse, true), u, axis, !reverse);
  Tensor da;
  if (call.needs(0))
    da = multiply(lambda, where(scan_first(h, axis, reverse), 0, scan_shift(h, axis, reverse, false)));
  return {da, call.needs(1) ? lambda : Tensor()};
}

// dh_k = db_k + da_k h_{k-1} + a_k dh_{k-1}: the same scan of db + da h_{k-1}.
std::vector<Tensor> linear_scan_jvp(const JvpCall& call) {
  const Tensor &a = call.forward.inputs[0], &h = call.outputs[0];
  const int64_t axis = call.forward.attrs.get_int(kLinAxis);
  const bool reverse = call.forward.attrs.get_bool(kLinReverse);
  Tensor b = detail::tangent_or_zeros(call, 1);
  if (call.has_tangent(0))
    b = add(b, multiply(call.input_tangents[0],
                        where(scan_first(h, axis, reverse), 0, scan_shift(h, axis, reverse, false))));
  return {linear_scan(a, b, axis, reverse)};
}

const OpDef& kCumprodLinearScan = define_op({
    .name = "cumprod_linear_scan",
    .attr_names = {"axis", "reverse"},
    .infer = infer_linear_scan,
    .kernels = {linear_scan_cpu},
    .gradient = linear_scan_grad,
    .gradient_uses = {.inputs = value_bit(0), .outputs = kAllValues},
    .jvp = linear_scan_jvp,
    .batch = [](const BatchCall& call) { return detail::batch_shifting_axis(call, kLinAxis); },
});

Tensor linear_scan(const Tensor& a, const Tensor& b, int64_t axis, bool reverse) {
  return run_op(kCumprodLinearScan, {a, b}, {axis, reverse}, CallSite::current());
}

// Note [cumprod gradient].
std::vector<Tensor> cumprod_grad(const GradCall& call) {
  const Attrs& attrs = call.forward.attrs;
  const Tensor &x = call.forward.inputs[0], &g = call.output_grads[0];
  const int64_t axis = attrs.get_int(kAxis);
  const bool exclusive = attrs.get_bool(kExclusive), reverse = attrs.get_bool(kReverse);
  Tensor prefix = cumprod(x, axis, true, reverse);
  // x_{k+1} at k; at the last position the wrapped-around x_0 is unused (first in the
  // backward scan).
  Tensor next_x = scan_shift(x, axis, reverse, true);
  Tensor b = g;
  // g_{k+1} at k, 0 at the last position.
  if (exclusive) b = where(scan_first(g, axis, !reverse), 0, scan_shift(g, axis, reverse, true));
  return {multiply(prefix, linear_scan(next_x, b, axis, !reverse))};
}

// ---- The gradient of cumulative_logsumexp, as an op of its own ----
// Note [cumulative_logsumexp gradient]: with E[k][i] = exp(x_k - y_i) where input k
// feeds output i (at or before it in scan order, strictly before when exclusive), the
// gradient of y = cumulative_logsumexp(x) is E g. cumulative_logsumexp_grad(x, y, v)
// computes E v, or E^T v when `transpose`. Both are linear in v and their gradients are
// again E and E^T products of the same x and y (lse_grad_grad below), so every order is
// exact. TensorFlow's _CumulativeLogsumexpGrad instead takes the log of the positive and
// negative parts of g separately, masked with `where` where a part is 0: its derivative
// in g is then 0 wherever g is exactly 0, and a second derivative that goes through g
// (sum(cumulative_logsumexp(x)^2) where an output is 0, or any third derivative) came
// out finite and wrong. The kernel sums the same two parts in log space (so it neither
// overflows nor underflows where exp(x_k) and exp(-y_i) would), skipping zeros.
enum LseGradAttr { kGradAxis, kGradExclusive, kGradReverse, kGradTranspose };

void infer_lse_grad(const OpCall& call, OutputMetas& out) {
  detail::check_input_count(call, 3);
  const Tensor& x = call.inputs[0];
  detail::check_dtype(call, x.dtype(), kFloatTypes, "x");
  detail::check_same_dtype(call, 0, 1, "x", "y");
  detail::check_same_dtype(call, 0, 2, "x", "v");
  for (size_t i : {1, 2}) {
    const Shape& s = call.inputs[i].shape();
    if (s.rank() != x.rank() || (s.is_fully_defined() && x.shape().is_fully_defined() && s != x.shape()))
      fail(call.op.name, ": argument '", i == 1 ? "y" : "v", "' has shape ", s, ", x has shape ", x.shape(),
           "; they must be equal");
  }
  if (x.rank() == 0)
    fail(call.op.name, ": argument 'x' is a scalar (shape []); it needs an axis to scan along");
  normalize_axis(call.attrs.get_int(kGradAxis), x.rank(), call.op.name);
  out.add(x.dtype(), x.shape());
}

// log(exp(a) + exp(b)) for the kernel below; NaN in, NaN out.
double log_add_exp(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  return LogAddExpOp::apply(a, b);
}

// Sum of v_j exp(w_j) over the terms added so far, kept as the logs of its positive and
// negative parts; zero terms add nothing (and so have exact derivatives in v).
struct SignedLogSum {
  double pos = -std::numeric_limits<double>::infinity(), neg = pos;
  bool any_pos = false, any_neg = false;
  void add(double v, double w) {
    if (v > 0) {
      pos = log_add_exp(pos, std::log(v) + w);
      any_pos = true;
    } else if (v < 0) {
      neg = log_add_exp(neg, std::log(-v) + w);
      any_neg = true;
    } else if (std::isnan(v)) {
      pos = neg = v;
      any_pos = any_neg = true;
    }
  }
  // exp(w) times the sum.
  double times_exp(double w) const {
    return (any_pos ? std::exp(w + pos) : 0.0) - (any_neg ? std::exp(w + neg) : 0.0);
  }
};

void lse_grad_cpu(const OpCall& call, std::span<Tensor> outputs) {
  Tensor& out = outputs[0];
  if (out.num_elements() == 0) return;
  const Tensor x = detail::materialize(call.inputs[0]), y = detail::materialize(call.inputs[1]),
               v = detail::materialize(call.inputs[2]);
  const int axis = normalize_axis(call.attrs.get_int(kGradAxis), x.rank(), call.op.name);
  const bool exclusive = call.attrs.get_bool(kGradExclusive), reverse = call.attrs.get_bool(kGradReverse);
  const bool transpose = call.attrs.get_bool(kGradTranspose);
  const Shape& shape = x.shape();
  const int64_t n = shape[axis];
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= shape[i];
  for (int i = axis + 1; i < shape.rank(); ++i) inner *= shape[i];
  dispatch_in<kFloatTypes>(x.dtype(), call.op.name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *px = typed_data<T>(x), *py = typed_data<T>(y), *pv = typed_data<T>(v);
    T* dst = typed_output<T>(out);
    parallel_for(outer * inner, static_cast<double>(n) * 40 + 5, [&](int64_t b, int64_t e) {
      for (int64_t line = b; line < e; ++line) {
        const int64_t base = (line / inner) * n * inner + line % inner;
        // Position p of the scan visits index at(p) along the axis.
        auto at = [&](int64_t p) { return base + (reverse ? n - 1 - p : p) * inner; };
        SignedLogSum sum;
        if (!transpose) {
          // (E v)_k sums v_i exp(-y_i) over the outputs i at or after position k: walk backwards.
          for (int64_t p = n - 1; p >= 0; --p) {
            const int64_t i = at(p);
            if (!exclusive) sum.add(double(pv[i]), -double(py[i]));
            dst[i] = static_cast<T>(sum.times_exp(double(px[i])));
            if (exclusive) sum.add(double(pv[i]), -double(py[i]));
          }
        } else {
          // (E^T v)_i sums v_k exp(x_k) over the inputs k at or before position i.
          for (int64_t p = 0; p < n; ++p) {
            const int64_t i = at(p);
            if (!exclusive) sum.add(double(pv[i]), double(px[i]));
            dst[i] = static_cast<T>(sum.times_exp(-double(py[i])));
            if (exclusive) sum.add(double(pv[i]), double(px[i]));
          }
        }
      }
    });
  });
}

Tensor lse_grad(const Tensor& x, const Tensor& y, const Tensor& v, const Attrs& scan_attrs, bool transpose);

// With cotangent u: for out = E v, d/dx = u * out, d/dy = -v * (E^T u), d/dv = E^T u;
// for out = E^T v, d/dx = v * (E u), d/dy = -u * out, d/dv = E u.
std::vector<Tensor> lse_grad_grad(const GradCall& call) {
  const Tensor &x = call.forward.inputs[0], &y = call.forward.inputs[1], &v = call.forward.inputs[2];
  const Tensor &out = call.outputs[0], &u = call.output_grads[0];
  const bool transpose = call.forward.attrs.get_bool(kGradTranspose);
  Tensor other;  // E^T u or E u
  if (call.needs(transpose ? 0 : 1) || call.needs(2))
    other = lse_grad(x, y, u, call.forward.attrs, !transpose);
  if (!transpose)
    return {call.needs(0) ? multiply(u, out) : Tensor(),
            call.needs(1) ? negative(multiply(v, other)) : Tensor(), call.needs(2) ? other : Tensor()};
  return {call.needs(0) ? multiply(v, other) : Tensor(),
          call.needs(1) ? negative(multiply(u, out)) : Tensor(), call.needs(2) ? other : Tensor()};
}

// out = E v: d out = t_x out + E (t_v - v t_y); out = E^T v: d out = E^T (v t_x + t_v) - t_y out
// (the transposes of lse_grad_grad's terms). The attrs begin with the scan's.
std::vector<Tensor> lse_grad_jvp(const JvpCall& call) {
  const Tensor &x = call.forward.inputs[0], &y = call.forward.inputs[1], &v = call.forward.inputs[2];
  const Tensor& out = call.outputs[0];
  const bool transpose = call.forward.attrs.get_bool(kGradTranspose);
  Tensor inner = detail::tangent_or_zeros(call, 2);
  if (!transpose && call.has_tangent(1)) inner = subtract(inner, multiply(v, call.input_tangents[1]));
  if (transpose && call.has_tangent(0)) inner = add(inner, multiply(v, call.input_tangents[0]));
  Tensor result = lse_grad(x, y, inner, call.forward.attrs, transpose);
  if (!transpose && call.has_tangent(0)) result = add(result, multiply(call.input_tangents[0], out));
  if (transpose && call.has_tangent(1)) result = subtract(result, multiply(call.input_tangents[1], out));
  return {result};
}

const OpDef& kCumulativeLogsumexpGrad = define_op({
    .name = "cumulative_logsumexp_grad",
    .attr_names = {"axis", "exclusive", "reverse", "transpose"},
    .infer = infer_lse_grad,
    .kernels = {lse_grad_cpu},
    .gradient = lse_grad_grad,
    .jvp = lse_grad_jvp,
    .batch = [](const BatchCall& call) { return detail::batch_shifting_axis(call, kGradAxis); },
});

Tensor lse_grad(const Tensor& x, const Tensor& y, const Tensor& v, const Attrs& scan_attrs, bool transpose) {
  return run_op(
      kCumulativeLogsumexpGrad, {x, y, v},
      {scan_attrs.get_int(kAxis), scan_attrs.get_bool(kExclusive), scan_attrs.get_bool(kReverse), transpose},
      CallSite::current());
}

// d y_i / d x_k = exp(x_k - y_i) for the outputs y_i that x_k feeds: E g (Note
// [cumulative_logsumexp gradient]).
std::vector<Tensor> cumulative_logsumexp_grad(const GradCall& call) {
  return {lse_grad(call.forward.inputs[0], call.outputs[0], call.output_grads[0], call.forward.attrs, false)};
}

const OpDef& kCumsum = define_op({
    .name = "cumsum",
    .attr_names = {"axis", "exclusive", "reverse"},
    .infer = infer_scan<kNumericTypes>,
    .kernels = {scan_cpu<SumOp>, cuda::scan_kernel},
    .gradient = cumsum_grad,
    .jvp = detail::jvp_linear<>,
    .batch = [](const BatchCall& call) { return detail::batch_shifting_axis(call, kAxis); },
});

// Inclusive: dy_k = sum_{j<=k} t_j P_j prod_{j<i<=k} x_i, the scan h_k = t_k P_k + x_k h_{k-1}
// (P the exclusive cumprod; no division, so zeros need no care). Exclusive: that scan
// moved one place on, 0 at the first position.
std::vector<Tensor> cumprod_jvp(const JvpCall& call) {
  const Attrs& attrs = call.forward.attrs;
  const Tensor& x = call.forward.inputs[0];
  const int64_t axis = attrs.get_int(kAxis);
  const bool exclusive = attrs.get_bool(kExclusive), reverse = attrs.get_bool(kReverse);
  Tensor h = linear_scan(x, multiply(call.input_tangents[0], cumprod(x, axis, true, reverse)), axis, reverse);
  if (exclusive) h = where(scan_first(h, axis, reverse), 0, scan_shift(h, axis, reverse, false));
  return {h};
}

const OpDef& kCumprod = define_op({
    .name = "cumprod",
    .attr_names = {"axis", "exclusive", "reverse"},
    .infer = infer_scan<kNumericTypes>,
    .kernels = {scan_cpu<ProdOp>, cuda::scan_kernel},
    .gradient = cumprod_grad,
    .gradient_uses = kGradientReadsInputs,
    .jvp = cumprod_jvp,
    .batch = [](const BatchCall& call) { return detail::batch_shifting_axis(call, kAxis); },
});

// dy_i = sum_k exp(x_k - y_i) t_k = (E^T t)_i (Note [cumulative_logsumexp gradient]).
std::vector<Tensor> cumulative_logsumexp_jvp(const JvpCall& call) {
  return {
      lse_grad(call.forward.inputs[0], call.outputs[0], call.input_tangents[0], call.forward.attrs, true)};
}

const OpDef& kCumulativeLogsumexp = define_op({
    .name = "cumulative_logsumexp",
    .attr_names = {"axis", "exclusive", "reverse"},
    .infer = infer_scan<kFloatTypes>,
    .kernels = {scan_cpu<LogAddExpOp, kFloatTypes>},
    .gradient = cumulative_logsumexp_grad,
    .gradient_uses = {.inputs = kAllValues, .outputs = kAllValues},
    .jvp = cumulative_logsumexp_jvp,
    .batch = [](const BatchCall& call) { return detail::batch_shifting_axis(call, kAxis); },
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
