// Complex numbers (Note [complex dtypes] in eagerflow/core/dtype.h): the primitives
// complex(real, imag), real(z), imag(z) and abs(z), and the complex forms of the
// arithmetic ops, composed from them so that every gradient follows from theirs.
#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/linalg.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/reduction.h"
#include "ops/batch_helpers.h"
#include "ops/jvp_helpers.h"
#include "ops/math/complex.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

using Grads = std::vector<Tensor>;
constexpr cpu::DTypeSet kRealParts = cpu::dtype_bit(DType::Float32) | cpu::dtype_bit(DType::Float64);
constexpr cpu::DTypeSet kComplexTypes = cpu::dtype_bit(DType::Complex64) | cpu::dtype_bit(DType::Complex128);

// Calls fn(TypeTag<R>) with R the real type of a complex dtype (float for complex64).
template <class Fn>
void dispatch_parts(DType t, Fn&& fn) {
  if (t == DType::Complex64) return fn(TypeTag<float>{});
  if (t == DType::Complex128) return fn(TypeTag<double>{});
  fail<InternalError>("complex kernel reached with dtype ", t);
}

// ---- complex(real, imag) ----

void infer_complex(const OpCall& call, OutputMetas& out) {
  detail::check_input_count(call, 2);
  detail::check_dtype(call, call.inputs[0].dtype(), kRealParts, "real");
  detail::check_same_dtype(call, 0, 1, "real", "imag");
  out.add(complex_dtype(call.inputs[0].dtype()),
          broadcast_shapes(call.inputs[0].shape(), call.inputs[1].shape(), call.op.name));
}

struct MakeComplexFn {
  template <class R>
  std::complex<R> operator()(R re, R im) const {
    return {re, im};
  }
};

void complex_cpu(const OpCall& call, std::span<Tensor> outputs) {
  dispatch_parts(outputs[0].dtype(), [&](auto tag) {
    using R = typename decltype(tag)::type;
    cpu::run_binary<MakeComplexFn, R>(MakeComplexFn{}, call.inputs[0], call.inputs[1], outputs[0],
                                      cpu::kCheapElementNs);
  });
}

// The gradient of a real loss in z is dL/dRe + i dL/dIm, so each part takes its own.
Grads complex_grad(const GradCall& c) {
  const Tensor& g = c.output_grads[0];
  return {sum_to_shape_of(real(g), c.forward.inputs[0]), sum_to_shape_of(imag(g), c.forward.inputs[1])};
}

const OpDef& kComplex = define_op({
    .name = "complex",
    .infer = infer_complex,
    .kernels = {complex_cpu},
    .gradient = complex_grad,
    .gradient_uses = kGradientReadsInputs,  // their shapes, to sum broadcast gradients back
    .jvp = detail::jvp_linear<>,
    .traits = {.elementwise = true, .complex = true},
});

// ---- real(z), imag(z), abs(z): complex in, real out ----

void infer_complex_part(const OpCall& call, OutputMetas& out) {
  detail::check_input_count(call, 1);
  detail::check_dtype(call, call.inputs[0].dtype(), kComplexTypes, "input");
  out.add(real_dtype(call.inputs[0].dtype()), call.inputs[0].shape());
}

template <class PartFn>
void complex_part_cpu(const OpCall& call, std::span<Tensor> outputs) {
  dispatch_parts(call.inputs[0].dtype(), [&](auto tag) {
    using R = typename decltype(tag)::type;
    cpu::run_unary<PartFn, std::complex<R>>(PartFn{}, call.inputs[0], outputs[0], cpu::kCheapElementNs);
  });
}

struct RealFn {
  template <class R>
  R operator()(std::complex<R> z) const {
    return z.real();
  }
};
struct ImagFn {
  template <class R>
  R operator()(std::complex<R> z) const {
    return z.imag();
  }
};
struct ComplexAbsFn {  // std::abs is hypot: no overflow for parts beyond sqrt(max)
  template <class R>
  R operator()(std::complex<R> z) const {
    return std::abs(z);
  }
};

Grads real_grad(const GradCall& c) { return {complex(c.output_grads[0], zeros_like(c.output_grads[0]))}; }
Grads imag_grad(const GradCall& c) { return {complex(zeros_like(c.output_grads[0]), c.output_grads[0])}; }

// v / r, and 0 where r is 0 (at z = 0: TensorFlow's and PyTorch's choice for |z|).
Tensor divide_or_zero(const Tensor& v, const Tensor& r) {
  const Tensor at_zero = equal(r, 0);
  return where(at_zero, zeros_like(r), divide(v, where(at_zero, ones_like(r), r)));
}

// d|z| = g z / |z|.
Grads complex_abs_grad(const GradCall& c) {
  const Tensor& z = c.forward.inputs[0];
  const Tensor scale = divide_or_zero(c.output_grads[0], c.outputs[0]);
  return {complex(multiply(scale, real(z)), multiply(scale, imag(z)))};
}

// The tangent of |z| is Re(conj(z) t) / |z|, not the gradient's formula (which maps a
// real cotangent to a complex one).
Grads complex_abs_jvp(const JvpCall& c) {
  const Tensor& z = c.forward.inputs[0];
  const Tensor& t = c.input_tangents[0];
  const Tensor dot = add(multiply(real(z), real(t)), multiply(imag(z), imag(t)));
  return {divide_or_zero(dot, c.outputs[0])};
}

OpDef complex_part(std::string_view name, KernelFn kernel, GradFn gradient, GradientUses uses, JvpFn jvp) {
  return OpDef{
      .name = name,
      .infer = infer_complex_part,
      .kernels = {kernel},
      .gradient = gradient,
      .gradient_uses = uses,
      .jvp = jvp,
      .traits = {.elementwise = true, .complex = true},
  };
}

const OpDef& kReal = define_op(
    complex_part("real", complex_part_cpu<RealFn>, real_grad, kGradientReadsNoValues, detail::jvp_linear<>));
const OpDef& kImag = define_op(
    complex_part("imag", complex_part_cpu<ImagFn>, imag_grad, kGradientReadsNoValues, detail::jvp_linear<>));
const OpDef& kComplexAbs = define_op(complex_part("complex_abs", complex_part_cpu<ComplexAbsFn>,
                                                  complex_abs_grad, GradientUses{}, complex_abs_jvp));

// Both operands complex, of one dtype (TensorFlow's rule: no implicit real-to-complex).
std::pair<Tensor, Tensor> complex_operands(std::string_view op, const TensorOrScalar& x,
                                           const TensorOrScalar& y) {
  auto [a, b] = resolve_operands(x, y, op);
  if (a.dtype() != b.dtype())
    fail(op, ": argument 'x' has dtype ", a.dtype(), " and argument 'y' has dtype ", b.dtype(),
         "; they must be the same (cast the real one with ef::cast)");
  return {a, b};
}

}  // namespace

Tensor complex(const Tensor& real_part, const Tensor& imag_part, CallSite where) {
  return run_op(kComplex, {real_part, imag_part}, {}, where);
}

Tensor real(const Tensor& x, CallSite where) {
  if (x.defined() && !is_complex(x.dtype())) return x;  // TensorFlow: the real part of a real tensor
  return run_op(kReal, {x}, {}, where);
}

Tensor imag(const Tensor& x, CallSite where) {
  if (x.defined() && !is_complex(x.dtype()))
    return detail::with_call_site(where, [&] { return zeros_like(x); });
  return run_op(kImag, {x}, {}, where);
}

Tensor conj(const Tensor& x, CallSite where) {
  if (x.defined() && !is_complex(x.dtype())) return x;
  return detail::with_call_site(where, [&] { return complex(real(x), negative(imag(x))); });
}

Tensor angle(const Tensor& x, CallSite where) {
  return detail::with_call_site(where, [&] {
    if (is_complex(x.dtype())) return atan2(imag(x), real(x));
    // A real number's angle: pi below zero, else 0, NaN for NaN (TensorFlow, PyTorch).
    const Tensor pi = scalar_tensor(std::numbers::pi, x.dtype(), "angle");
    return ef::where(isnan(x), x, ef::where(less(x, 0), pi, zeros_like(x)));
  });
}

namespace detail {

bool involves_complex(const TensorOrScalar& x, const TensorOrScalar& y) {
  return (x.is_tensor() && x.tensor().defined() && is_complex(x.tensor().dtype())) ||
         (y.is_tensor() && y.tensor().defined() && is_complex(y.tensor().dtype()));
}

std::optional<Tensor> complex_binary(std::string_view op, const TensorOrScalar& x, const TensorOrScalar& y) {
  constexpr std::string_view kComposed[] = {"add", "subtract", "multiply", "divide", "equal", "not_equal"};
  if (std::find(std::begin(kComposed), std::end(kComposed), op) == std::end(kComposed)) return std::nullopt;
  auto [a, b] = complex_operands(op, x, y);
  const Tensor ar = real(a), ai = imag(a), br = real(b), bi = imag(b);
  if (op == "add") return complex(add(ar, br), add(ai, bi));
  if (op == "subtract") return complex(subtract(ar, br), subtract(ai, bi));
  if (op == "multiply")
    return complex(subtract(multiply(ar, br), multiply(ai, bi)), add(multiply(ar, bi), multiply(ai, br)));
  if (op == "divide") {
    // Scaled by the larger part of b (as Smith's method), so |b|^2 neither overflows nor
    // underflows where the quotient itself is representable.
    const Tensor s = maximum(abs(br), abs(bi));
    const Tensor cr = divide(br, s), ci = divide(bi, s);
    const Tensor d = multiply(add(multiply(cr, cr), multiply(ci, ci)), s);
    return complex(divide(add(multiply(ar, cr), multiply(ai, ci)), d),
                   divide(subtract(multiply(ai, cr), multiply(ar, ci)), d));
  }
  if (op == "equal") return logical_and(equal(ar, br), equal(ai, bi));
  return logical_or(not_equal(ar, br), not_equal(ai, bi));  // not_equal
}

std::optional<Tensor> complex_unary(std::string_view op, const Tensor& x) {
  if (op == "negative") return complex(negative(real(x)), negative(imag(x)));
  if (op == "abs") return run_op(kComplexAbs, {x}, {}, CallSite::current());
  if (op == "square") return multiply(x, x);
  if (op == "exp") {  // e^re (cos im + i sin im)
    const Tensor magnitude = exp(real(x)), im = imag(x);
    return complex(multiply(magnitude, cos(im)), multiply(magnitude, sin(im)));
  }
  if (op == "log")
    return complex(log(run_op(kComplexAbs, {x}, {}, CallSite::current())), atan2(imag(x), real(x)));
  return std::nullopt;
}

Tensor complex_reduce(std::string_view op, const Tensor& x, const Axes& axis, bool keepdims) {
  if (op == "reduce_sum")
    return complex(reduce_sum(real(x), axis, keepdims), reduce_sum(imag(x), axis, keepdims));
  if (op == "reduce_mean")
    return complex(reduce_mean(real(x), axis, keepdims), reduce_mean(imag(x), axis, keepdims));
  fail<InternalError>("complex_reduce: no complex form of ", op);
}

Tensor complex_matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  if (a.dtype() != b.dtype())
    fail("matmul: argument 'a' has dtype ", a.dtype(), " and argument 'b' has dtype ", b.dtype(),
         "; they must be the same");
  const Tensor ar = real(a), ai = imag(a), br = real(b), bi = imag(b);
  auto mm = [&](const Tensor& p, const Tensor& q) { return matmul(p, q, transpose_a, transpose_b); };
  return complex(subtract(mm(ar, br), mm(ai, bi)), add(mm(ar, bi), mm(ai, br)));
}

Tensor complex_cast(const Tensor& x, DType dtype) {
  if (is_complex(x.dtype()) && is_complex(dtype))
    return complex(cast(real(x), real_dtype(dtype)), cast(imag(x), real_dtype(dtype)));
  if (is_complex(x.dtype())) return cast(real(x), dtype);  // the real part, as TensorFlow and NumPy
  const Tensor re = cast(x, real_dtype(dtype));
  return complex(re, zeros_like(re));
}

}  // namespace detail
}  // namespace ef
