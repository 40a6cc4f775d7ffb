// The discrete Fourier transforms over the innermost axis: fft (complex to complex,
// either direction), rfft (real to its non-negative frequencies) and irfft (back), on
// FftPlan (fft_plan.h), in double precision. Each takes a `scale` attr multiplying its
// output, which makes every gradient an op of this file again: the adjoint of
// s * DFT is s * (inverse DFT, unnormalized), and with the convention that the gradient
// of a real loss in z is dL/dRe + i dL/dIm, an op's gradient is its adjoint applied to
// the output gradient (Note [complex dtypes] in core/dtype.h).
#include <algorithm>
#include <complex>
#include <vector>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/signal.h"
#include "ops/array/copy.h"
#include "ops/batch_helpers.h"
#include "ops/jvp_helpers.h"
#include "ops/op_helpers.h"
#include "ops/signal/fft_plan.h"

namespace ef {
namespace {

using detail::FftPlan;
using Complex = std::complex<double>;
constexpr cpu::DTypeSet kComplexTypes = cpu::dtype_bit(DType::Complex64) | cpu::dtype_bit(DType::Complex128);
constexpr cpu::DTypeSet kRealTypes = cpu::dtype_bit(DType::Float32) | cpu::dtype_bit(DType::Float64);

// Rough cost of one row of n points, for parallel_for (n log n butterflies).
double row_cost_ns(int64_t n) {
  return 8.0 * static_cast<double>(n) * std::max(1.0, std::log2(static_cast<double>(n)));
}

// Runs body(plan, row_begin, row_end, scratch) over `rows` rows in parallel, each
// thread with its own plan (KISS FFT's generic butterflies keep a mutable buffer).
template <class Body>
void for_rows(int64_t rows, int64_t n, bool inverse, Body&& body) {
  parallel_for(rows, row_cost_ns(n), [&](int64_t begin, int64_t end) {
    const FftPlan plan(n, inverse);
    std::vector<Complex> in(static_cast<size_t>(n)), out(static_cast<size_t>(n)), scratch;
    for (int64_t row = begin; row < end; ++row) body(plan, row, in.data(), out.data(), scratch);
  });
}

// Calls fn(TypeTag<R>) with R = float or double, the precision of `dtype`'s parts.
template <class Fn>
void dispatch_precision(DType dtype, Fn&& fn) {
  if (real_dtype(dtype) == DType::Float64)
    fn(TypeTag<double>{});
  else
    fn(TypeTag<float>{});
}

void check_rank(const OpCall& call) {
  if (call.inputs[0].rank() < 1)
    fail(call.op.name, ": argument 'input' must have at least one axis to transform, got a scalar");
}

int64_t fft_length_attr(const OpCall& call, size_t attr) {
  const int64_t n = call.attrs.get_int(attr);
  if (n < 1) fail(call.op.name, ": argument 'fft_length' must be at least 1, got ", n);
  return n;
}

// ---- fft(input; inverse, scale): complex -> complex ----

enum FftAttr { kInverse, kScale };

void infer_fft(const OpCall& call, OutputMetas& out) {
  detail::check_input_count(call, 1);
  const Tensor& x = call.inputs[0];
  detail::check_dtype(call, x.dtype(), kComplexTypes, "input");
  check_rank(call);
  if (x.shape()[x.rank() - 1] == 0)
    fail(call.op.name, ": the innermost axis of argument 'input' (shape ", x.shape(),
         ") has no points; a transform needs at least one");
  out.add(x.dtype(), x.shape());
}

void fft_cpu(const OpCall& call, std::span<Tensor> outputs) {
  Tensor& y = outputs[0];
  if (y.num_elements() == 0) return;
  const Tensor x = detail::materialize(call.inputs[0]);
  const int64_t n = x.shape()[x.rank() - 1], rows = x.num_elements() / n;
  const double scale = call.attrs.get_float(kScale);
  dispatch_precision(x.dtype(), [&](auto tag) {
    using R = typename decltype(tag)::type;
    const auto* src = static_cast<const std::complex<R>*>(x.raw_data());
    auto* dst = cpu::typed_output<std::complex<R>>(y);
    for_rows(rows, n, call.attrs.get_bool(kInverse),
             [&](const FftPlan& plan, int64_t row, Complex* in, Complex* out, std::vector<Complex>& scratch) {
               std::copy(src + row * n, src + (row + 1) * n, in);
               plan.transform(in, out, scratch);
               for (int64_t j = 0; j < n; ++j) dst[row * n + j] = std::complex<R>(out[j] * scale);
             });
  });
}

Tensor run_fft(const Tensor& x, bool inverse, double scale);

// The adjoint of s F is s F^H: the transform the other way, unnormalized, same scale.
std::vector<Tensor> fft_grad(const GradCall& c) {
  return {run_fft(c.output_grads[0], !c.forward.attrs.get_bool(kInverse), c.forward.attrs.get_float(kScale))};
}

const OpDef& kFft = define_op({
    .name = "fft",
    .attr_names = {"inverse", "scale"},
    .infer = infer_fft,
    .kernels = {fft_cpu},
    .gradient = fft_grad,
    .gradient_uses = kGradientReadsNoValues,
    .jvp = detail::jvp_linear<>,
    .batch = detail::batch_leading_dims,
    .traits = {.complex = true},
});

Tensor run_fft(const Tensor& x, bool inverse, double scale) {
  return run_op(kFft, {x}, {inverse, scale}, CallSite::current());
}

// ---- rfft(input; fft_length, scale): real [..., m] -> complex [..., n / 2 + 1] ----

enum RfftAttr { kRfftLength, kRfftScale };

void infer_rfft(const OpCall& call, OutputMetas& out) {
  detail::check_input_count(call, 1);
  const Tensor& x = call.inputs[0];
  detail::check_dtype(call, x.dtype(), kRealTypes, "input");
  check_rank(call);
  const int64_t n = fft_length_attr(call, kRfftLength);
  Dims dims = x.shape().dims();
  dims.back() = n / 2 + 1;
  out.add(complex_dtype(x.dtype()), Shape(dims));
}

void rfft_cpu(const OpCall& call, std::span<Tensor> outputs) {
  Tensor& y = outputs[0];
  if (y.num_elements() == 0) return;
  const Tensor x = detail::materialize(call.inputs[0]);
  const int64_t m = x.shape()[x.rank() - 1], n = call.attrs.get_int(kRfftLength), bins = n / 2 + 1;
  const int64_t rows = y.num_elements() / bins, used = std::min(m, n);
  const double scale = call.attrs.get_float(kRfftScale);
  dispatch_precision(x.dtype(), [&](auto tag) {
    using R = typename decltype(tag)::type;
    const R* src = static_cast<const R*>(x.raw_data());
    auto* dst = cpu::typed_output<std::complex<R>>(y);
    for_rows(rows, n, false,
             [&](const FftPlan& plan, int64_t row, Complex* in, Complex* out, std::vector<Complex>& scratch) {
               // Cropped to n points, or zero-padded to them.
               for (int64_t k = 0; k < n; ++k)
                 in[k] = k < used ? Complex(src[row * m + k], 0.0) : Complex(0.0, 0.0);
               plan.transform(in, out, scratch);
               for (int64_t j = 0; j < bins; ++j) dst[row * bins + j] = std::complex<R>(out[j] * scale);
             });
  });
}

// `x`'s innermost axis cut or zero-padded to `length` (leading sizes may be unknown).
Tensor fit_innermost(const Tensor& x, int64_t length) {
  const int64_t have = x.shape()[x.rank() - 1];
  if (have == length) return x;
  if (have > length) {
    std::vector<int64_t> begin(static_cast<size_t>(x.rank()), 0), size(static_cast<size_t>(x.rank()), -1);
    size.back() = length;
    return slice(x, begin, size);
  }
  std::vector<std::pair<int64_t, int64_t>> paddings(static_cast<size_t>(x.rank()), {0, 0});
  paddings.back().second = length - have;
  if (is_complex(x.dtype())) return complex(pad(real(x), paddings), pad(imag(x), paddings));
  return pad(x, paddings);
}

Tensor run_rfft(const Tensor& x, int64_t n, double scale);
Tensor run_irfft(const Tensor& x, int64_t n, double scale);

// For real x, the gradient is Re(J^H g) with J = s P F Z (Z: crop or pad to n, P: the
// first n/2 + 1 bins): the bins zero-extended to n, transformed back unnormalized,
// the real part cropped or padded back to x's length.
std::vector<Tensor> rfft_grad(const GradCall& c) {
  const Tensor& x = c.forward.inputs[0];
  const int64_t n = c.forward.attrs.get_int(kRfftLength);
  const Tensor full = fit_innermost(c.output_grads[0], n);
  const Tensor back = real(run_fft(full, true, c.forward.attrs.get_float(kRfftScale)));
  return {fit_innermost(back, x.shape()[x.rank() - 1])};
}

const OpDef& kRfft = define_op({
    .name = "rfft",
    .attr_names = {"fft_length", "scale"},
    .infer = infer_rfft,
    .kernels = {rfft_cpu},
    .gradient = rfft_grad,
    .gradient_uses = kGradientReadsInputs,  // only x's shape
    .jvp = detail::jvp_linear<>,
    .batch = detail::batch_leading_dims,
    .traits = {.complex = true},
});

Tensor run_rfft(const Tensor& x, int64_t n, double scale) {
  return run_op(kRfft, {x}, {n, scale}, CallSite::current());
}

// ---- irfft(input; fft_length, scale): complex [..., m] -> real [..., n] ----

enum IrfftAttr { kIrfftLength, kIrfftScale };

void infer_irfft(const OpCall& call, OutputMetas& out) {
  detail::check_input_count(call, 1);
  const Tensor& x = call.inputs[0];
  detail::check_dtype(call, x.dtype(), kComplexTypes, "input");
  check_rank(call);
  Dims dims = x.shape().dims();
  dims.back() = fft_length_attr(call, kIrfftLength);
  out.add(real_dtype(x.dtype()), Shape(dims));
}

void irfft_cpu(const OpCall& call, std::span<Tensor> outputs) {
  Tensor& y = outputs[0];
  if (y.num_elements() == 0) return;
  const Tensor x = detail::materialize(call.inputs[0]);
  const int64_t m = x.shape()[x.rank() - 1], n = call.attrs.get_int(kIrfftLength);
  const int64_t rows = y.num_elements() / n, bins = n / 2 + 1, used = std::min(m, bins);
  const double scale = call.attrs.get_float(kIrfftScale);
  dispatch_precision(x.dtype(), [&](auto tag) {
    using R = typename decltype(tag)::type;
    const auto* src = static_cast<const std::complex<R>*>(x.raw_data());
    R* dst = cpu::typed_output<R>(y);
    for_rows(rows, n, true,
             [&](const FftPlan& plan, int64_t row, Complex* in, Complex* out, std::vector<Complex>& scratch) {
               // The Hermitian spectrum of a real signal from its first n/2 + 1 bins; the
               // imaginary parts of bin 0 and (n even) bin n/2 cannot be a real signal's.
               for (int64_t j = 0; j < bins; ++j)
                 in[j] = j < used ? Complex(src[row * m + j]) : Complex(0.0, 0.0);
               in[0].imag(0.0);
               if (n % 2 == 0) in[n / 2].imag(0.0);
               for (int64_t j = bins; j < n; ++j) in[j] = std::conj(in[n - j]);
               plan.transform(in, out, scratch);
               for (int64_t k = 0; k < n; ++k) dst[row * n + k] = static_cast<R>(out[k].real() * scale);
             });
  });
}

// x_k = s Re(sum_j w_j y_j e^(2 pi i jk / n)), w_j = 1 for bin 0 and (n even) bin n/2,
// else 2; so dL/dy_j = s w_j rfft(g)_j, and 0 for bins beyond n/2 + 1.
std::vector<Tensor> irfft_grad(const GradCall& c) {
  const Tensor& y = c.forward.inputs[0];
  const int64_t n = c.forward.attrs.get_int(kIrfftLength), bins = n / 2 + 1;
  const Tensor spectrum = run_rfft(c.output_grads[0], n, c.forward.attrs.get_float(kIrfftScale));
  std::vector<double> weights(static_cast<size_t>(bins), 2.0);
  weights[0] = 1.0;
  if (n % 2 == 0) weights.back() = 1.0;
  const Tensor w = cast(constant(weights, Shape{bins}), real_dtype(y.dtype()));
  const Tensor weighted = complex(multiply(real(spectrum), w), multiply(imag(spectrum), w));
  return {fit_innermost(weighted, y.shape()[y.rank() - 1])};
}

const OpDef& kIrfft = define_op({
    .name = "irfft",
    .attr_names = {"fft_length", "scale"},
    .infer = infer_irfft,
    .kernels = {irfft_cpu},
    .gradient = irfft_grad,
    .gradient_uses = kGradientReadsInputs,  // only y's shape and dtype
    .jvp = detail::jvp_linear<>,
    .batch = detail::batch_leading_dims,
    .traits = {.complex = true},
});

Tensor run_irfft(const Tensor& x, int64_t n, double scale) {
  return run_op(kIrfft, {x}, {n, scale}, CallSite::current());
}

// The innermost size of `x`, which must be known (the transforms' lengths are attrs).
int64_t innermost(const Tensor& x, std::string_view op) {
  if (!x.defined()) fail(op, ": argument 'input' is an undefined tensor");
  if (x.rank() < 1) fail(op, ": argument 'input' must have at least one axis to transform, got a scalar");
  const int64_t n = x.shape()[x.rank() - 1];
  if (n == kUnknownDim)
    fail(op, ": the innermost axis of argument 'input' (shape ", x.shape(),
         ") has an unknown size; give fft_length, or a signature with that size");
  return n;
}

Tensor swap_innermost(const Tensor& x, std::string_view op) {
  if (x.rank() < 2) fail(op, ": argument 'input' must have at least two axes, got shape ", x.shape());
  std::vector<int64_t> perm(static_cast<size_t>(x.rank()));
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return transpose(x, perm);
}

}  // namespace

namespace signal {

Tensor fft(const Tensor& input, CallSite where) { return run_op(kFft, {input}, {false, 1.0}, where); }

Tensor ifft(const Tensor& input, CallSite where) {
  return detail::with_call_site(where, [&] {
    const int64_t n = innermost(input, "ifft");
    return run_fft(input, true, n > 0 ? 1.0 / static_cast<double>(n) : 1.0);
  });
}

Tensor fft2d(const Tensor& input, CallSite where) {
  return detail::with_call_site(
      where, [&] { return swap_innermost(fft(swap_innermost(fft(input), "fft2d")), "fft2d"); });
}

Tensor ifft2d(const Tensor& input, CallSite where) {
  return detail::with_call_site(
      where, [&] { return swap_innermost(ifft(swap_innermost(ifft(input), "ifft2d")), "ifft2d"); });
}

Tensor rfft(const Tensor& input, std::optional<int64_t> fft_length, CallSite where) {
  return detail::with_call_site(where, [&] {
    const int64_t n = fft_length ? *fft_length : innermost(input, "rfft");
    return run_rfft(input, n, 1.0);
  });
}

Tensor irfft(const Tensor& input, std::optional<int64_t> fft_length, CallSite where) {
  return detail::with_call_site(where, [&] {
    if (input.defined() && !is_complex(input.dtype()))
      fail("irfft: argument 'input' must be complex64 or complex128, got ", input.dtype());
    int64_t n = 0;
    if (fft_length) {
      n = *fft_length;
    } else {
      const int64_t bins = innermost(input, "irfft");
      if (bins < 2)
        fail("irfft: argument 'input' has ", bins, " frequencies (shape ", input.shape(),
             "), too few to imply a signal length; give fft_length");
      n = 2 * (bins - 1);
    }
    return run_irfft(input, n, n > 0 ? 1.0 / static_cast<double>(n) : 1.0);
  });
}

}  // namespace signal
}  // namespace ef
