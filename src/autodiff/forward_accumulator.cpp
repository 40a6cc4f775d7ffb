// ForwardAccumulator and jvp (Note [forward mode] in forward_accumulator.h). The active
// accumulators of a thread form a list in creation order; the thread's recorder
// (gradient_tape.cpp) offers them every op call after the tapes.
#include "eagerflow/autodiff/forward_accumulator.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "autodiff/tape_internal.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/reduction.h"
#include "eagerflow/runtime/context.h"

namespace ef {

struct ForwardAccumulator::Impl {
  std::unordered_map<int64_t, Tensor> tangents;               // by tensor identity (detail::tensor_id)
  std::unordered_map<const void*, Tensor> variable_tangents;  // by Variable::key()

  const Tensor* find(const Tensor& t) const {
    const int64_t id = t.defined() ? t.impl()->id : 0;
    if (id == 0) return nullptr;  // never seen by a tape or an accumulator
    auto it = tangents.find(id);
    return it == tangents.end() ? nullptr : &it->second;
  }
  void set(const Tensor& t, Tensor tangent) { tangents[detail::tensor_id(t)] = std::move(tangent); }
};

namespace {

struct Accumulators {
  std::vector<ForwardAccumulator::Impl*> active;  // in creation order
  // Only active[0, visible) see op calls: while accumulator k runs a jvp rule, k and
  // the ones created after it must not differentiate that rule's ops.
  size_t visible = std::numeric_limits<size_t>::max();
};

Accumulators& accumulators() {
  thread_local Accumulators list;
  return list;
}

// Limits the accumulators that see op calls to the first `count` for its lifetime.
class VisibleAccumulators {
 public:
  explicit VisibleAccumulators(size_t count) : saved_(accumulators().visible) {
    accumulators().visible = std::min(saved_, count);
  }
  ~VisibleAccumulators() { accumulators().visible = saved_; }
  VisibleAccumulators(const VisibleAccumulators&) = delete;
  VisibleAccumulators& operator=(const VisibleAccumulators&) = delete;

 private:
  size_t saved_;
};

void check_tangent(const Tensor& primal, const Tensor& tangent, const char* what) {
  if (!primal.defined()) fail(what, ": the primal is an undefined tensor");
  if (!tangent.defined()) fail(what, ": the tangent is an undefined tensor");
  if (!detail::is_differentiable(primal.dtype()))
    fail(what, ": only float tensors have tangents; the primal has dtype ", primal.dtype(), " (shape ",
         primal.shape(), ")");
  if (tangent.dtype() != primal.dtype() || tangent.shape() != primal.shape())
    fail(what, ": the tangent (dtype ", tangent.dtype(), ", shape ", tangent.shape(),
         ") must have the primal's dtype and shape (", primal.dtype(), ", ", primal.shape(), ")");
}

// The tangents a jvp rule returned, checked against the outputs: one per output, of
// its dtype and shape, and none for outputs that are not floats.
void store_output_tangents(ForwardAccumulator::Impl& acc, std::string_view who,
                           std::span<const Tensor> outputs, std::vector<Tensor>& tangents) {
  if (tangents.size() != outputs.size())
    fail<InternalError>(who, ": the jvp rule returned ", tangents.size(), " tangents for ", outputs.size(),
                        " outputs");
  for (size_t k = 0; k < outputs.size(); ++k) {
    Tensor& t = tangents[k];
    if (!t.defined() || !detail::is_differentiable(outputs[k].dtype())) continue;
    const bool shapes_known = outputs[k].shape().is_fully_defined() && t.shape().is_fully_defined();
    if (t.dtype() != outputs[k].dtype() || (shapes_known && t.shape() != outputs[k].shape()))
      fail<InternalError>(who, ": the jvp rule returned a tangent of dtype ", t.dtype(), " and shape ",
                          t.shape(), " for output ", k, " of dtype ", outputs[k].dtype(), " and shape ",
                          outputs[k].shape());
    acc.set(outputs[k], std::move(t));
  }
}

bool any_float(std::span<const Tensor> outputs) {
  return std::any_of(outputs.begin(), outputs.end(),
                     [](const Tensor& t) { return detail::is_differentiable(t.dtype()); });
}

}  // namespace

std::unordered_set<const OpDef*>*& detail::jvp_rules_run() {
  thread_local std::unordered_set<const OpDef*>* ops = nullptr;
  return ops;
}

bool detail::accumulators_active() {
  const Accumulators& list = accumulators();
  return !list.active.empty() && list.visible > 0;
}

void detail::accumulate_op(const OpCall& call, std::span<const Tensor> outputs) {
  Accumulators& list = accumulators();
  for (size_t k = 0; k < std::min(list.active.size(), list.visible); ++k) {
    ForwardAccumulator::Impl& acc = *list.active[k];
    std::vector<Tensor> tangents(call.inputs.size());
    size_t reached = call.inputs.size();  // the first input with a tangent
    for (size_t i = 0; i < call.inputs.size(); ++i)
      if (const Tensor* t = acc.find(call.inputs[i])) {
        tangents[i] = *t;
        reached = std::min(reached, i);
      }
    if (reached == call.inputs.size()) continue;
    if (!call.op.not_differentiable.empty() || !any_float(outputs)) continue;  // no tangent, as no gradient
    if (!call.op.jvp)
      fail<UnimplementedError>(call.op.name,
                               ": forward-mode differentiation (ForwardAccumulator, jvp) is not "
                               "implemented for this op: a tangent reached its input ",
                               reached, " (dtype ", call.inputs[reached].dtype(), ", shape ",
                               call.inputs[reached].shape(), "); reverse mode (GradientTape) supports it");
    std::vector<Tensor> out;
    {
      VisibleAccumulators outer_only(k);
      out = call.op.jvp(JvpCall{call, outputs, tangents});
    }
    if (auto* seen = jvp_rules_run()) seen->insert(&call.op);
    store_output_tangents(acc, call.op.name, outputs, out);
  }
}

// Every active accumulator, also while one runs a jvp rule (a read is not an op).
void detail::accumulate_variable_read(const Variable& variable, const Tensor& value) {
  for (ForwardAccumulator::Impl* acc : accumulators().active) {
    auto it = acc->variable_tangents.find(variable.key());
    if (it != acc->variable_tangents.end()) acc->set(value, it->second);
  }
}

bool detail::tangents_reach(std::span<const Tensor> inputs) {
  const Accumulators& list = accumulators();
  for (size_t k = 0; k < std::min(list.active.size(), list.visible); ++k)
    for (const Tensor& t : inputs)
      if (list.active[k]->find(t)) return true;
  return false;
}

namespace {

// The outputs' tangents from a custom gradient G(u) = Jᵀu, which is linear in u, so
// J t = d/du <G(u), t>: one backward pass of G, differentiated by a tape (the transpose
// of a vjp, as TensorFlow does for ops without forward functions). Undefined where
// nothing connects.
std::vector<Tensor> transposed_gradient(
    const std::function<std::vector<Tensor>(std::span<const Tensor>)>& gradient,
    std::span<const Tensor> inputs, std::span<const Tensor> outputs, const std::vector<Tensor>& tangents) {
  std::vector<Tensor> out(outputs.size());
  GradientTape tape;
  std::vector<Tensor> seeds(outputs.size()), watched;
  for (size_t j = 0; j < outputs.size(); ++j) {
    if (!detail::is_differentiable(outputs[j].dtype())) continue;
    seeds[j] = zeros_like(outputs[j]);
    tape.watch(seeds[j]);
    watched.push_back(seeds[j]);
  }
  std::vector<Tensor> grads = gradient(seeds);
  Tensor pairing;
  for (size_t i = 0; i < inputs.size() && i < grads.size(); ++i) {
    if (!tangents[i].defined() || !grads[i].defined()) continue;
    Tensor term = reduce_sum(multiply(grads[i], tangents[i]));
    pairing = pairing.defined() ? add(pairing, term) : term;
  }
  if (!pairing.defined()) return out;
  std::vector<Tensor> by_seed = tape.gradient(pairing, watched);
  for (size_t j = 0, w = 0; j < outputs.size(); ++j)
    if (seeds[j].defined()) out[j] = by_seed[w++];
  return out;
}

}  // namespace

// A custom_gradient call's output tangents: from its own jvp where it gave one, else
// from its gradient, transposed.
void detail::accumulate_custom(std::span<const Tensor> inputs, std::span<const Tensor> outputs,
                               const std::function<std::vector<Tensor>(std::span<const Tensor>)>& gradient,
                               const CustomJvpFn* jvp) {
  Accumulators& list = accumulators();
  for (size_t k = 0; k < std::min(list.active.size(), list.visible); ++k) {
    ForwardAccumulator::Impl& acc = *list.active[k];
    std::vector<Tensor> tangents(inputs.size());
    bool reached = false;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (const Tensor* t = acc.find(inputs[i])) tangents[i] = *t, reached = true;
    if (!reached || !any_float(outputs)) continue;
    std::vector<Tensor> out;
    {
      VisibleAccumulators outer_only(k);  // outer accumulators differentiate what follows
      out = jvp ? (*jvp)(tangents) : transposed_gradient(gradient, inputs, outputs, tangents);
    }
    store_output_tangents(acc, "custom_gradient", outputs, out);
  }
}

ForwardAccumulator::ForwardAccumulator() : impl_(std::make_unique<Impl>()) { resume(); }

ForwardAccumulator::ForwardAccumulator(std::span<const Tensor> primals, std::span<const Tensor> tangents)
    : ForwardAccumulator() {
  if (primals.size() != tangents.size())
    fail("ForwardAccumulator: ", primals.size(), " primals but ", tangents.size(), " tangents");
  for (size_t i = 0; i < primals.size(); ++i) watch(primals[i], tangents[i]);
}

ForwardAccumulator::ForwardAccumulator(const Tensor& primal, const Tensor& tangent) : ForwardAccumulator() {
  watch(primal, tangent);
}

ForwardAccumulator::~ForwardAccumulator() { stop(); }

void ForwardAccumulator::watch(const Tensor& primal, const Tensor& tangent) {
  check_tangent(primal, tangent, "ForwardAccumulator.watch");
  if (const Tensor* existing = impl_->find(primal)) {
    impl_->set(primal, add(*existing, tangent));
    return;
  }
  impl_->set(primal, tangent);
}

void ForwardAccumulator::watch(const Variable& variable, const Tensor& tangent) {
  if (!detail::is_differentiable(variable.dtype()))
    fail("ForwardAccumulator.watch: only float variables have tangents; variable '", variable.name(),
         "' has dtype ", variable.dtype());
  if (!tangent.defined() || tangent.dtype() != variable.dtype() || tangent.shape() != variable.shape())
    fail("ForwardAccumulator.watch: the tangent of variable '", variable.name(),
         "' must have its dtype and shape (", variable.dtype(), ", ", variable.shape(), ")",
         tangent.defined() ? "" : "; it is an undefined tensor");
  impl_->variable_tangents[variable.key()] = tangent;
}

Tensor ForwardAccumulator::jvp(const Tensor& t, UnconnectedGradients unconnected) const {
  if (!t.defined()) fail("ForwardAccumulator.jvp: the tensor is undefined");
  if (const Tensor* tangent = impl_->find(t)) return *tangent;
  if (unconnected == UnconnectedGradients::Zero && detail::is_differentiable(t.dtype())) return zeros_like(t);
  return Tensor();
}

std::vector<Tensor> ForwardAccumulator::jvp(std::span<const Tensor> ts,
                                            UnconnectedGradients unconnected) const {
  std::vector<Tensor> out;
  out.reserve(ts.size());
  for (const Tensor& t : ts) out.push_back(jvp(t, unconnected));
  return out;
}

void ForwardAccumulator::stop() {
  auto& active = accumulators().active;
  active.erase(std::remove(active.begin(), active.end(), impl_.get()), active.end());
  detail::remove_recorder_if_idle();
}

void ForwardAccumulator::resume() {
  auto& active = accumulators().active;
  if (std::find(active.begin(), active.end(), impl_.get()) != active.end()) return;
  active.push_back(impl_.get());
  detail::install_recorder();
}

std::pair<std::vector<Tensor>, std::vector<Tensor>> jvp(
    const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& f,
    const std::vector<Tensor>& primals, const std::vector<Tensor>& tangents,
    UnconnectedGradients unconnected) {
  ForwardAccumulator acc(primals, tangents);
  std::vector<Tensor> outputs = f(primals);
  std::vector<Tensor> out_tangents;
  for (const Tensor& y : outputs) out_tangents.push_back(y.defined() ? acc.jvp(y, unconnected) : Tensor());
  return {std::move(outputs), std::move(out_tangents)};
}

}  // namespace ef
