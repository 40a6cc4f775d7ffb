// Activations: elementwise unary primitives, one functor each; the CPU driver
// (backends/cpu/elementwise.h) handles strides, vectorization and threads. They are
// primitives rather than composites because each is a single pass over memory where a
// composite would make several, and their stable forms need branch-free selects.
#include <cmath>
#include <numbers>

#include "eagerflow/ops/nn.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

using namespace cpu;
using detail::unary_op;

// sigmoid(x) = 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0, where e = exp(-|x|):
// exp never overflows, and sigmoid(-100) keeps its tiny value instead of rounding to 0
// through 1 - sigmoid(100). (Written with the select in the numerator so that GCC
// if-converts and vectorizes it.)
struct SigmoidFn {
  template <class T> T operator()(T x) const {
    const T e = std::exp(-std::fabs(x));
    return (x >= T(0) ? T(1) : e) / (T(1) + e);
  }
};
// NaN propagates (x != x), as in PyTorch and TensorFlow's relu.
struct ReluFn { template <class T> T operator()(T x) const { return (x > T(0) || x != x) ? x : T(0); } };
struct Relu6Fn {
  template <class T> T operator()(T x) const {
    return x != x ? x : (x < T(0) ? T(0) : (x > T(6) ? T(6) : x));  // one select chain: vectorizes
  }
};
enum LeakyReluAttr { kAlpha };
struct LeakyReluFn {
  explicit LeakyReluFn(const Attrs& attrs) : alpha(attrs.get_float(kAlpha)) {}
  template <class T> T operator()(T x) const { return x > T(0) ? x : static_cast<T>(alpha) * x; }
  double alpha;
};
struct EluFn { template <class T> T operator()(T x) const { return x > T(0) ? x : std::expm1(x); } };
// The constants of Klambauer et al. (2017), as in TensorFlow.
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;
struct SeluFn {
  template <class T> T operator()(T x) const {
    return static_cast<T>(kSeluScale) * (x > T(0) ? x : static_cast<T>(kSeluAlpha) * std::expm1(x));
  }
};
enum GeluAttr { kApproximate };
struct GeluFn {
  explicit GeluFn(const Attrs& attrs) : approximate(attrs.get_bool(kApproximate)) {}
  template <class T> T operator()(T x) const {
    if (approximate) {
      // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), Hendrycks & Gimpel.
      const T k = static_cast<T>(0.7978845608028654);  // sqrt(2 / pi)
      return T(0.5) * x * (T(1) + std::tanh(k * (x + T(0.044715) * x * x * x)));
    }
    return T(0.5) * x * (T(1) + std::erf(x * static_cast<T>(1 / std::numbers::sqrt2)));
  }
  bool approximate;
};
// log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)): exp never overflows, and for very
// negative x the result is exp(x) to full precision (log1p of a tiny value).
struct SoftplusFn {
  template <class T> T operator()(T x) const {
    return (x > T(0) ? x : T(0)) + std::log1p(std::exp(-std::fabs(x)));
  }
};
struct SoftsignFn { template <class T> T operator()(T x) const { return x / (T(1) + std::fabs(x)); } };

constexpr bool kExpensive = true;

const OpDef& kSigmoid = define_op(unary_op<SigmoidFn, kFloatTypes, false, kExpensive>("sigmoid"));
const OpDef& kRelu = define_op(unary_op<ReluFn, kFloatTypes>("relu"));
const OpDef& kRelu6 = define_op(unary_op<Relu6Fn, kFloatTypes>("relu6"));
const OpDef& kLeakyRelu = define_op(unary_op<LeakyReluFn, kFloatTypes>("leaky_relu", {"alpha"}));
const OpDef& kElu = define_op(unary_op<EluFn, kFloatTypes, false, kExpensive>("elu"));
const OpDef& kSelu = define_op(unary_op<SeluFn, kFloatTypes, false, kExpensive>("selu"));
const OpDef& kGelu = define_op(unary_op<GeluFn, kFloatTypes, false, kExpensive>("gelu", {"approximate"}));
const OpDef& kSoftplus = define_op(unary_op<SoftplusFn, kFloatTypes, false, kExpensive>("softplus"));
const OpDef& kSoftsign = define_op(unary_op<SoftsignFn, kFloatTypes>("softsign"));

}  // namespace

#define EF_ACTIVATION(function, def) \
  Tensor function(const Tensor& x, CallSite where) { return run_op(def, {x}, {}, where); }
EF_ACTIVATION(sigmoid, kSigmoid)
EF_ACTIVATION(relu, kRelu)
EF_ACTIVATION(relu6, kRelu6)
EF_ACTIVATION(elu, kElu)
EF_ACTIVATION(selu, kSelu)
EF_ACTIVATION(softplus, kSoftplus)
EF_ACTIVATION(softsign, kSoftsign)
#undef EF_ACTIVATION

Tensor leaky_relu(const Tensor& x, double alpha, CallSite where) {
  return run_op(kLeakyRelu, {x}, {alpha}, where);
}

Tensor gelu(const Tensor& x, bool approximate, CallSite where) {
  return run_op(kGelu, {x}, {approximate}, where);
}

}  // namespace ef
