// Special functions, elementwise on float32/float64: the inverse hyperbolic functions,
// the gamma family (lgamma, digamma, polygamma), erfc, erfinv, and the exponentially
// scaled modified Bessel functions i0e and i1e. Values at poles and outside the domain
// are PyTorch's and SciPy's (listed at each declaration in eagerflow/ops/math.h).
// Float32 is computed in double and rounded once.
#include <cmath>
#include <limits>
#include <numbers>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/math.h"
#include "ops/jvp_helpers.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

using cpu::dtype_bit;
using cpu::DTypeSet;

constexpr DTypeSet kFloat32Or64 = cpu::kFloatTypes;  // half types compute in float32 (dispatch)
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kPi = std::numbers::pi;

// ---- Scalar algorithms, in double ----

// psi(x): reflection for x < 0, the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10,
// then the asymptotic series (its first omitted term is below 1e-16 there).
double digamma_of(double x) {
  if (std::isnan(x)) return x;
  if (x == 0) return std::copysign(kInf, -x);  // -inf at +0, as PyTorch and SciPy
  if (x < 0) {
    if (x == std::floor(x)) return kNaN;
    // psi(x) = psi(1 - x) - pi cot(pi x); cot has period 1, so reduce x first.
    return digamma_of(1 - x) - kPi / std::tan(kPi * (x - std::floor(x)));
  }
  double result = 0;
  for (; x < 10; x += 1) result -= 1 / x;
  const double f = 1 / (x * x);
  const double series =
      f * (-1.0 / 12 +
           f * (1.0 / 120 +
                f * (-1.0 / 252 + f * (1.0 / 240 + f * (-1.0 / 132 + f * (691.0 / 32760 - f / 12))))));
  return result + std::log(x) - 0.5 / x + series;
}

// The Hurwitz zeta function sum_k (k + q)^-s for s > 1, by Euler-Maclaurin summation
// (the algorithm of Cephes' zeta.c, Moshier 1984).
double hurwitz_zeta(double s, double q) {
  // (2k)! / B_2k for k = 1..12.
  static constexpr double kA[] = {12.0,
                                  -720.0,
                                  30240.0,
                                  -1209600.0,
                                  47900160.0,
                                  -1.8924375803183791606e9,
                                  7.47242496e10,
                                  -2.950130727918164224e12,
                                  1.1646782814350067249e14,
                                  -4.5979787224074726105e15,
                                  1.8152105401943546773e17,
                                  -7.1661652561756670113e18};
  constexpr double kEpsilon = std::numeric_limits<double>::epsilon() / 2;
  if (s == 1) return kInf;
  if (s < 1 || std::isnan(s) || std::isnan(q)) return kNaN;
  if (q <= 0) {
    if (q == std::floor(q)) return kInf;  // a pole
    if (s != std::floor(s)) return kNaN;  // (k + q)^-s is complex
  }
  double sum = std::pow(q, -s), a = q, b = 0;
  for (int i = 0; i < 9 || a <= 9; ++i) {
    a += 1;
    b = std::pow(a, -s);
    sum += b;
    if (std::fabs(b / sum) < kEpsilon) return sum;
  }
  const double w = a;
  sum += b * w / (s - 1) - 0.5 * b;
  double factor = 1, k = 0;
  for (double coefficient : kA) {
    factor *= s + k;
    b /= w;
    const double term = factor * b / coefficient;
    sum += term;
    if (std::fabs(term / sum) < kEpsilon) break;
    k += 1;
    factor *= s + k;
    b /= w;
    k += 1;
  }
  return sum;
}

// psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x) for integer n >= 1; digamma for n = 0.
double polygamma_of(double n, double x) {
  if (std::isnan(n) || std::isnan(x) || n < 0 || n != std::floor(n)) return kNaN;
  if (n == 0) return digamma_of(x);
  const double sign = std::fmod(n, 2) == 0 ? -1 : 1;
  return sign * std::exp(std::lgamma(n + 1)) * hurwitz_zeta(n + 1, x);
}

// Giles' single-precision approximation ("Approximating the erfinv function", 2010),
// then Newton steps on erf (on erfc near +-1, where 1 - |x| is exact) for double.
double erfinv_of(double x) {
  if (std::isnan(x) || std::fabs(x) > 1) return kNaN;
  if (std::fabs(x) == 1) return std::copysign(kInf, x);
  if (x == 0) return x;
  double w = -std::log((1 - x) * (1 + x)), p;
  if (w < 5) {
    w -= 2.5;
    p = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                     -0.00417768164, 0.246640727, 1.50140941})
      p = c + p * w;
  } else {
    w = std::sqrt(w) - 3;
    p = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                     0.00943887047, 1.00167406, 2.83297682})
      p = c + p * w;
  }
  const double a = std::fabs(x);
  double y = p * a;
  // Newton's error shrinks as y e^2 per step: two steps suffice near 0, more in the tails
  // beyond the approximation's float32 range.
  for (int step = 0; step < 12; ++step) {
    const double slope = 2 / std::sqrt(kPi) * std::exp(-y * y);
    const double residual = a < 0.5 ? std::erf(y) - a : (1 - a) - std::erfc(y);
    if (slope == 0) break;
    const double delta = residual / slope;
    y -= delta;
    if (std::fabs(delta) <= 1e-16 * y) break;
  }
  return std::copysign(y, x);
}

// exp(-|x|) I_nu(x) for nu = 0 or 1: the power series of I_nu for |x| <= 20 (positive
// terms, no cancellation), else the asymptotic series of Abramowitz & Stegun 9.7.1.
double scaled_bessel_i(int nu, double x) {
  if (std::isnan(x)) return x;
  const double a = std::fabs(x);
  double sum;
  if (a <= 20) {
    const double q = a * a / 4;
    double term = nu == 0 ? 1 : a / 2;
    sum = term;
    for (int k = 1; k < 500; ++k) {
      term *= q / (k * double(k + nu));
      sum += term;
      if (term < sum * 1e-17) break;
    }
    sum *= std::exp(-a);
  } else {
    const double mu = 4.0 * nu * nu;
    double term = 1;
    sum = 1;
    for (int k = 1; k < 60; ++k) {
      const double odd = 2.0 * k - 1;
      const double next = term * -(mu - odd * odd) / (8.0 * k * a);
      if (std::fabs(next) >= std::fabs(term)) break;  // the series has started to diverge
      term = next;
      sum += term;
      if (std::fabs(term) < std::fabs(sum) * 1e-17) break;
    }
    sum /= std::sqrt(2 * kPi * a);
  }
  return nu == 1 && x < 0 ? -sum : sum;
}

// ---- Functors ----
// Each computes in double; the CPU driver calls them with float or double.
#define EF_SPECIAL_FN(Name, expr)  \
  struct Name {                    \
    template <class T>             \
    T operator()(T a) const {      \
      const double x = a;          \
      return static_cast<T>(expr); \
    }                              \
  };
EF_SPECIAL_FN(AsinhFn, std::asinh(x))
EF_SPECIAL_FN(AcoshFn, std::acosh(x))
EF_SPECIAL_FN(AtanhFn, std::atanh(x))
EF_SPECIAL_FN(DigammaFn, digamma_of(x))
EF_SPECIAL_FN(ErfcFn, std::erfc(x))
EF_SPECIAL_FN(ErfinvFn, erfinv_of(x))
EF_SPECIAL_FN(BesselI0eFn, scaled_bessel_i(0, x))
EF_SPECIAL_FN(BesselI1eFn, scaled_bessel_i(1, x))
#undef EF_SPECIAL_FN

// lgamma_r: std::lgamma writes the global signgam, a data race across kernel threads.
struct LgammaFn {
  template <class T>
  T operator()(T a) const {
    int sign;
    return static_cast<T>(::lgamma_r(static_cast<double>(a), &sign));
  }
};
struct PolygammaFn {
  template <class T>
  T operator()(T n, T x) const {
    return static_cast<T>(polygamma_of(n, x));
  }
};

// ---- Gradients: written with public ops, so they are differentiable themselves ----
using Grads = std::vector<Tensor>;
#define EF_GRAD(name, expr)                                                                            \
  Grads name(const GradCall& c) {                                                                      \
    [[maybe_unused]] const Tensor &g = c.output_grads[0], &x = c.forward.inputs[0], &z = c.outputs[0]; \
    return {expr};                                                                                     \
  }
EF_GRAD(asinh_grad, multiply(g, rsqrt(add(multiply(x, x), 1))))
EF_GRAD(acosh_grad, multiply(g, rsqrt(subtract(multiply(x, x), 1))))
EF_GRAD(atanh_grad, divide(g, subtract(1, multiply(x, x))))
EF_GRAD(lgamma_grad, multiply(g, digamma(x)))
EF_GRAD(digamma_grad, multiply(g, polygamma(1, x)))
EF_GRAD(erfc_grad, multiply(g, multiply(exp(negative(multiply(x, x))), -1.1283791670955126)))  // -2/sqrt(pi)
EF_GRAD(erfinv_grad, multiply(g, multiply(exp(multiply(z, z)), 0.88622692545275801)))          // sqrt(pi)/2
// d/dx exp(-|x|) I0(x) = i1e(x) - sign(x) i0e(x).
EF_GRAD(bessel_i0e_grad, multiply(g, subtract(bessel_i1e(x), multiply(sign(x), z))))
#undef EF_GRAD

// d/dx exp(-|x|) I1(x) = i0e(x) - i1e(x) (sign(x) + 1/x), which tends to 1/2 at x = 0.
Grads bessel_i1e_grad(const GradCall& c) {
  const Tensor &g = c.output_grads[0], &x = c.forward.inputs[0], &z = c.outputs[0];
  Tensor zero = equal(x, 0);
  Tensor safe_x = where(zero, 1, x);
  Tensor slope = subtract(bessel_i0e(x), multiply(z, add(sign(x), reciprocal(safe_x))));
  return {multiply(g, where(zero, 0.5, slope))};
}

// d/dx psi^(n)(x) = psi^(n+1)(x); the order n takes no gradient (TensorFlow's too).
Grads polygamma_grad(const GradCall& c) {
  if (c.needs(0))
    fail<UnimplementedError>(
        "polygamma: no gradient with respect to the order a (it is an integer); "
        "stop the gradient to a");
  const Tensor &g = c.output_grads[0], &n = c.forward.inputs[0], &x = c.forward.inputs[1];
  return {Tensor(), multiply(g, polygamma(add(n, 1), x))};
}

template <class F>
OpDef special(std::string_view name, GradFn gradient, GradientUses uses) {
  OpDef def = detail::with_gradient(detail::not_fused(detail::unary_op<F, kFloat32Or64, false, true>(name)),
                                    gradient, uses);
  def.jvp = detail::jvp_elementwise;  // elementwise: the gradient gives the jvp
  return def;
}
constexpr GradientUses kX = kGradientReadsInputs, kZ = kGradientReadsOutputs;
constexpr GradientUses kXAndZ{.inputs = kAllValues, .outputs = kAllValues};

const OpDef& kAsinh = define_op(special<AsinhFn>("asinh", asinh_grad, kX));
const OpDef& kAcosh = define_op(special<AcoshFn>("acosh", acosh_grad, kX));
const OpDef& kAtanh = define_op(special<AtanhFn>("atanh", atanh_grad, kX));
const OpDef& kLgamma = define_op(special<LgammaFn>("lgamma", lgamma_grad, kX));
const OpDef& kDigamma = define_op(special<DigammaFn>("digamma", digamma_grad, kX));
const OpDef& kErfc = define_op(special<ErfcFn>("erfc", erfc_grad, kX));
const OpDef& kErfinv = define_op(special<ErfinvFn>("erfinv", erfinv_grad, kZ));
const OpDef& kBesselI0e = define_op(special<BesselI0eFn>("bessel_i0e", bessel_i0e_grad, kXAndZ));
const OpDef& kBesselI1e = define_op(special<BesselI1eFn>("bessel_i1e", bessel_i1e_grad, kXAndZ));
const OpDef& kPolygamma = define_op([] {
  OpDef def = detail::with_gradient(
      detail::not_fused(detail::binary_op<PolygammaFn, kFloat32Or64, false, true>("polygamma")),
      polygamma_grad, kGradientReadsInputs);
  def.jvp = detail::jvp_elementwise;  // a tangent of the order reaches polygamma_grad's error
  return def;
}());

}  // namespace

#define EF_UNARY_OP(function, def) \
  Tensor function(const Tensor& x, CallSite where) { return run_op(def, {x}, {}, where); }
EF_UNARY_OP(asinh, kAsinh)
EF_UNARY_OP(acosh, kAcosh)
EF_UNARY_OP(atanh, kAtanh)
EF_UNARY_OP(lgamma, kLgamma)
EF_UNARY_OP(digamma, kDigamma)
EF_UNARY_OP(erfc, kErfc)
EF_UNARY_OP(erfinv, kErfinv)
EF_UNARY_OP(bessel_i0e, kBesselI0e)
EF_UNARY_OP(bessel_i1e, kBesselI1e)
#undef EF_UNARY_OP

Tensor polygamma(const TensorOrScalar& a, const TensorOrScalar& x, CallSite where) {
  return detail::with_call_site(where, [&] {
    auto [n, y] = resolve_operands(a, x, "polygamma");
    return run_op(kPolygamma, {n, y}, {}, where);
  });
}

}  // namespace ef
