// Activations: elementwise unary primitives, one functor each (in
// backends/cpu/elementwise_functors.h, except those reading attrs); the CPU driver
// (backends/cpu/elementwise.h) handles strides, vectorization and threads. They are
// primitives rather than composites because each is a single pass over memory where a
// composite would make several, and their stable forms need branch-free selects.
#include <cmath>
#include <numbers>

#include "backends/cpu/elementwise_functors.h"
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/nn.h"
#include "eagerflow/ops/operators.h"
#include "ops/jvp_helpers.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

using namespace cpu;
using namespace cpu::functors;
using detail::unary_op;

enum LeakyReluAttr { kAlpha };
struct LeakyReluFn {
  explicit LeakyReluFn(const Attrs& attrs) : alpha(attrs.get_float(kAlpha)) {}
  template <class T> T operator()(T x) const { return x > T(0) ? x : static_cast<T>(alpha) * x; }
  double alpha;
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

constexpr bool kExpensive = true;

// ---- Gradients ----
// Written with public ops of the forward input x or output y, so that they can be
// differentiated again. At kinks the gradient follows TensorFlow: relu, relu6 and
// leaky_relu take the left-hand slope at 0 (and relu6 the right-hand one, 0, at 6).

const Tensor& x_of(const GradCall& call) { return call.forward.inputs[0]; }
const Tensor& y_of(const GradCall& call) { return call.outputs[0]; }
const Tensor& g_of(const GradCall& call) { return call.output_grads[0]; }

// sigmoid' = y (1 - y), fused with the product by the upstream gradient (sigmoid_grad.cpp).
std::vector<Tensor> sigmoid_grad(const GradCall& call) { return {ef::sigmoid_grad(y_of(call), g_of(call))}; }
std::vector<Tensor> relu_grad(const GradCall& call) { return {where(y_of(call) > 0, g_of(call), 0)}; }
std::vector<Tensor> relu6_grad(const GradCall& call) {
  const Tensor& x = x_of(call);
  return {where((x > 0) && (x < 6), g_of(call), 0)};
}
std::vector<Tensor> leaky_relu_grad(const GradCall& call) {
  const Tensor& g = g_of(call);
  return {where(x_of(call) > 0, g, g * call.forward.attrs.get_float(kAlpha))};
}
// elu' = 1 for x > 0, else exp(x) = y + 1.
std::vector<Tensor> elu_grad(const GradCall& call) {
  const Tensor &y = y_of(call), &g = g_of(call);
  return {where(x_of(call) > 0, g, g * (y + 1))};
}
// selu' = scale for x > 0, else scale * alpha * exp(x) = y + scale * alpha.
std::vector<Tensor> selu_grad(const GradCall& call) {
  const Tensor &y = y_of(call), &g = g_of(call);
  return {where(x_of(call) > 0, g * kSeluScale, g * (y + kSeluScale * kSeluAlpha))};
}
std::vector<Tensor> gelu_grad(const GradCall& call) {
  const Tensor &x = x_of(call), &g = g_of(call);
  if (call.forward.attrs.get_bool(kApproximate)) {
    // With t = tanh(k (x + c x^3)): 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2).
    constexpr double k = 0.7978845608028654, c = 0.044715;
    Tensor x2 = square(x);
    Tensor t = tanh(k * (x + c * (x * x2)));
    return {g * (0.5 * (1 + t) + (0.5 * k) * x * (1 - square(t)) * (1 + (3 * c) * x2))};
  }
  // Phi(x) + x phi(x): the normal CDF plus x times the normal density.
  constexpr double kInvSqrt2Pi = 0.3989422804014327;  // 1 / sqrt(2 pi)
  Tensor cdf = 0.5 * (1 + erf(x * (1 / std::numbers::sqrt2)));
  return {g * (cdf + x * (kInvSqrt2Pi * exp(-0.5 * square(x))))};
}
// softplus' = sigmoid(x).
std::vector<Tensor> softplus_grad(const GradCall& call) { return {g_of(call) * sigmoid(x_of(call))}; }
// softsign' = 1 / (1 + |x|)^2.
std::vector<Tensor> softsign_grad(const GradCall& call) {
  return {g_of(call) / square(1 + abs(x_of(call)))};
}

// Every differentiable op here is elementwise, so its jvp rule comes from its gradient
// (detail::jvp_elementwise).
OpDef with_gradient(OpDef def, GradFn gradient, GradientUses uses = {}) {
  def = detail::with_gradient(std::move(def), gradient, uses);
  def.jvp = detail::jvp_elementwise;
  return def;
}

// Each says whether its gradient above reads x (input) or y (output); elu and selu read
// both (Note [gradient uses] in op_def.h).
const OpDef& kSigmoid =
    define_op(with_gradient(unary_op<SigmoidFn, kFloatTypes, false, kExpensive>("sigmoid"), sigmoid_grad,
                            kGradientReadsOutputs));
const OpDef& kRelu =
    define_op(with_gradient(unary_op<ReluFn, kFloatTypes>("relu"), relu_grad, kGradientReadsOutputs));
const OpDef& kRelu6 =
    define_op(with_gradient(unary_op<Relu6Fn, kFloatTypes>("relu6"), relu6_grad, kGradientReadsInputs));
const OpDef& kLeakyRelu =
    define_op(with_gradient(unary_op<LeakyReluFn, kFloatTypes>("leaky_relu", {"alpha"}), leaky_relu_grad,
                            kGradientReadsInputs));
const OpDef& kElu = define_op(with_gradient(unary_op<EluFn, kFloatTypes, false, kExpensive>("elu"), elu_grad));
const OpDef& kSelu = define_op(with_gradient(unary_op<SeluFn, kFloatTypes, false, kExpensive>("selu"), selu_grad));
const OpDef& kGelu =
    define_op(with_gradient(unary_op<GeluFn, kFloatTypes, false, kExpensive>("gelu", {"approximate"}), gelu_grad,
                            kGradientReadsInputs));
const OpDef& kSoftplus =
    define_op(with_gradient(unary_op<SoftplusFn, kFloatTypes, false, kExpensive>("softplus"), softplus_grad,
                            kGradientReadsInputs));
const OpDef& kSoftsign =
    define_op(with_gradient(unary_op<SoftsignFn, kFloatTypes>("softsign"), softsign_grad, kGradientReadsInputs));

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
