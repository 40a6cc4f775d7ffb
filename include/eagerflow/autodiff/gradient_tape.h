// GradientTape: records the ops that run while it is alive and plays them back to
// compute gradients (reverse-mode automatic differentiation).
//
//   ef::Tensor x = ef::constant(3.0);
//   ef::GradientTape tape;        // records while in scope
//   tape.watch(x);
//   ef::Tensor y = x * x;
//   ef::Tensor dy_dx = tape.gradient(y, x);   // 6.0
//
// Note [tape recording]: a tape records an op when one of its inputs is watched (by
// watch(), or because an earlier recorded op produced it) and its outputs are floats;
// the outputs then become watched too. Ops marked not differentiable are never
// recorded, so gradients stop there. Gradient functions are written with public ops:
// while one tape computes gradients, every other active tape records that
// computation, which is how nested tapes give higher-order derivatives.
#pragma once

#include <memory>
#include <span>
#include <variant>
#include <vector>

#include "eagerflow/core/tensor.h"
#include "eagerflow/runtime/variable.h"

namespace ef {

// What gradient() returns for a source the target does not depend on.
enum class UnconnectedGradients { None, Zero };

class GradientTape {
 public:
  // A persistent tape allows several gradient() calls; a non-persistent one releases
  // its records during the first. With watch_accessed_variables, every trainable
  // Variable read while the tape records is watched automatically.
  explicit GradientTape(bool persistent = false, bool watch_accessed_variables = true);
  ~GradientTape();
  GradientTape(const GradientTape&) = delete;
  GradientTape& operator=(const GradientTape&) = delete;

  // Records ops that use `t` from now on.
  void watch(const Tensor& t);
  // Records ops that use the variable's value, read now or later.
  void watch(const Variable& v);
  // The variables this tape watches, in the order it first saw them.
  std::vector<Variable> watched_variables() const;

  // d(sum of target * output_gradient)/d(source) for each source. A non-scalar target
  // is summed unless `output_gradient` (target's shape) seeds the backward pass.
  // Throws FailedPreconditionError when a non-persistent tape was already used, and
  // InvalidArgumentError for a source that is not a float tensor.
  std::vector<Tensor> gradient(const Tensor& target, std::span<const Tensor> sources,
                               const Tensor& output_gradient = Tensor(),
                               UnconnectedGradients unconnected = UnconnectedGradients::None,
                               CallSite where = CallSite::current());
  Tensor gradient(const Tensor& target, const Tensor& source, const Tensor& output_gradient = Tensor(),
                  UnconnectedGradients unconnected = UnconnectedGradients::None,
                  CallSite where = CallSite::current());

  // Gradients with respect to variables: summed over every read of the variable
  // while the tape recorded.
  Tensor gradient(const Tensor& target, const Variable& source, const Tensor& output_gradient = Tensor(),
                  UnconnectedGradients unconnected = UnconnectedGradients::None,
                  CallSite where = CallSite::current());
  std::vector<Tensor> gradient(const Tensor& target, const std::vector<Variable>& sources,
                               const Tensor& output_gradient = Tensor(),
                               UnconnectedGradients unconnected = UnconnectedGradients::None,
                               CallSite where = CallSite::current());
  // Tensors and variables together, in one backward pass.
  using Source = std::variant<Tensor, Variable>;
  std::vector<Tensor> gradient(const Tensor& target, const std::vector<Source>& sources,
                               const Tensor& output_gradient = Tensor(),
                               UnconnectedGradients unconnected = UnconnectedGradients::None,
                               CallSite where = CallSite::current());

  // Several targets: the gradients of their sum, in one backward pass (TensorFlow's
  // rule for a list of targets). Each target is seeded by its entry of
  // `output_gradients` (empty: all ones); targets that are not floats contribute nothing.
  std::vector<Tensor> gradient(std::span<const Tensor> targets, const std::vector<Source>& sources,
                               std::span<const Tensor> output_gradients = {},
                               UnconnectedGradients unconnected = UnconnectedGradients::None,
                               CallSite where = CallSite::current());

  // d target[i...] / d source[j...] for every element pair, shaped target.shape +
  // source.shape: the backward pass once per target element. With
  // experimental_use_pfor (TensorFlow's default, and ours), those passes run as one
  // vectorized pass (ef::vectorized_map over the seeds); without, one after the other.
  // Counts as a gradient() call for a non-persistent tape.
  Tensor jacobian(const Tensor& target, const Tensor& source,
                  UnconnectedGradients unconnected = UnconnectedGradients::None,
                  bool experimental_use_pfor = true, CallSite where = CallSite::current());
  // For a target [b, y...] whose row i depends only on row i of a source [b, x...]:
  // d target[i, y...] / d source[i, x...], shaped [b, y..., x...]. One backward pass per
  // element of a row (vectorized as for jacobian), so it is much cheaper than jacobian
  // for large batches.
  Tensor batch_jacobian(const Tensor& target, const Tensor& source,
                        UnconnectedGradients unconnected = UnconnectedGradients::None,
                        bool experimental_use_pfor = true, CallSite where = CallSite::current());

  // Forgets every record and watched tensor; the tape keeps recording.
  void reset();

  // Leaves this thread's recording tapes for good, or until resume(): what leaving and
  // re-entering a `with` block does in Python. gradient() works either way.
  void stop();
  void resume();

  // While the returned scope lives, this tape records nothing.
  class StopRecording {
   public:
    ~StopRecording();
    StopRecording(StopRecording&&) noexcept;
    StopRecording(const StopRecording&) = delete;

   private:
    friend class GradientTape;
    explicit StopRecording(GradientTape* tape);
    GradientTape* tape_;
  };
  [[nodiscard]] StopRecording stop_recording();

  struct Impl;

 private:
  void check_usable(std::span<const Tensor> targets, std::span<const Tensor> sources, const char* what) const;
  // The gradients of the targets' sum with respect to tensors (a variable's reads
  // expanded by the caller); the one pass every gradient() overload ends in.
  std::vector<Tensor> tensor_gradients(std::span<const Tensor> targets, std::span<const Tensor> sources,
                                       std::span<const Tensor> output_gradients,
                                       UnconnectedGradients unconnected);
  // With `last_use`, a non-persistent tape frees what it recorded during the pass.
  std::vector<Tensor> backprop(std::span<const Tensor> targets, std::span<const Tensor> seeds,
                               std::span<const Tensor> sources, UnconnectedGradients unconnected,
                               bool last_use = false);
  void release_if_not_persistent();
  Tensor stacked_jacobian(const Tensor& target, const Tensor& source, const std::vector<Tensor>& seeds,
                          int64_t axis, const Shape& result_shape, UnconnectedGradients unconnected,
                          bool use_pfor);

  std::unique_ptr<Impl> impl_;
};

// x, through which no gradient flows (an identity that tapes do not record).
Tensor stop_gradient(const Tensor& x, CallSite where = CallSite::current());

}  // namespace ef
