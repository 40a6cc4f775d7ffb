// ForwardAccumulator: forward-mode automatic differentiation (Jacobian-vector
// products), with TensorFlow's semantics (tf.autodiff.ForwardAccumulator).
//
//   ef::Tensor x = ef::constant({1.0, 2.0});
//   ef::ForwardAccumulator acc(x, ef::constant({1.0, 0.0}));   // active while in scope
//   ef::Tensor y = ef::reduce_sum(x * x);
//   acc.jvp(y);                                                  // 2.0: d y / d x · [1, 0]
//
// Note [forward mode]: an accumulator holds a tangent per watched tensor. When an op
// runs while it is active and one of its inputs has a tangent, the op's jvp rule
// (OpDef::jvp) computes the tangents of its float outputs from the input tangents,
// with public ops. Those ops run like any other: every active GradientTape records
// them (so a tape outside or inside an accumulator differentiates the tangents:
// reverse-over-forward), and accumulators created before this one see them (so
// outer.jvp(inner.jvp(y)) is a second derivative), while this accumulator and the ones
// created after it do not. Ops run by a tape's gradient() are seen by active
// accumulators too (forward-over-reverse). An op marked not differentiable gives no
// tangent, as it gives no gradient; a differentiable op without a jvp rule throws
// UnimplementedError naming it when a tangent reaches it, never a silent zero.
// custom_gradient calls and ef::function calls get their outputs' tangents from their
// gradient functions (the transpose of a vjp: d/du <vjp(u), t>), as TensorFlow does.
// A custom_gradient's function itself runs under the accumulators, so the values its
// gradient function reads carry tangents too (forward-over-reverse needs them).
//
// Tangents are kept, per tensor identity, until the accumulator is destroyed.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "eagerflow/autodiff/gradient_tape.h"
#include "eagerflow/core/tensor.h"
#include "eagerflow/runtime/variable.h"

namespace ef {

class ForwardAccumulator {
 public:
  // Active on this thread from construction until destruction (or stop()). Each
  // primal gets the tangent at the same position, of its dtype and shape; primals must
  // be float tensors. Throws InvalidArgumentError otherwise.
  ForwardAccumulator();
  ForwardAccumulator(std::span<const Tensor> primals, std::span<const Tensor> tangents);
  ForwardAccumulator(const Tensor& primal, const Tensor& tangent);
  ~ForwardAccumulator();
  ForwardAccumulator(const ForwardAccumulator&) = delete;
  ForwardAccumulator& operator=(const ForwardAccumulator&) = delete;

  // Gives `primal` the tangent `tangent` (added to the one it has, if watched already).
  void watch(const Tensor& primal, const Tensor& tangent);
  // Gives every value read from `variable` from now on the tangent `tangent`.
  void watch(const Variable& variable, const Tensor& tangent);

  // The tangent of `t`: undefined (or zeros with UnconnectedGradients::Zero, for a float
  // tensor) when `t` does not depend on the watched primals or is not a float tensor.
  Tensor jvp(const Tensor& t, UnconnectedGradients unconnected = UnconnectedGradients::None) const;
  std::vector<Tensor> jvp(std::span<const Tensor> ts,
                          UnconnectedGradients unconnected = UnconnectedGradients::None) const;

  // Leaves this thread's active accumulators, or re-enters them (Python's `with`):
  // tangents computed so far stay readable.
  void stop();
  void resume();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// (f(primals), the tangents of f's outputs along `tangents`), computed by one forward
// pass under a ForwardAccumulator. An output that does not depend on the primals gets
// zeros (undefined with UnconnectedGradients::None, and always for non-float outputs).
std::pair<std::vector<Tensor>, std::vector<Tensor>> jvp(
    const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& f,
    const std::vector<Tensor>& primals, const std::vector<Tensor>& tangents,
    UnconnectedGradients unconnected = UnconnectedGradients::Zero);

}  // namespace ef
