// GradientTape: the recording side (see Note [tape recording] in gradient_tape.h).
// Active tapes of a thread form a stack; one recorder per thread, installed in the
// thread's Context while any tape is alive, offers each op call to every tape.
#include "eagerflow/autodiff/gradient_tape.h"

#include <algorithm>
#include <atomic>
#include <unordered_map>

#include "autodiff/tape_internal.h"
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/runtime/context.h"
#include "eagerflow/runtime/dispatch.h"

namespace ef {

struct GradientTape::Impl {
  bool persistent = false;
  bool watch_accessed_variables = true;
  bool paused = false;  // while computing its own gradient, or in stop_recording()
  bool used = false;    // a non-persistent tape after gradient()
  // A used non-persistent tape can never compute another gradient, so it records
  // nothing more: in the usual training step the tape is still in scope while the
  // optimizer updates the variables, and those updates would otherwise pile up here.
  bool records() const { return !paused && !used; }
  std::unordered_set<int64_t> watched;
  std::vector<detail::TapeEntry> entries;
  std::vector<Variable> variables;                     // watched, in first-seen order
  std::unordered_set<const void*> explicitly_watched;  // by watch(Variable)
  std::unordered_map<const void*, std::vector<Tensor>> reads;  // values read, per variable

  void on_read(const Variable& v, const Tensor& value) {
    if (!detail::is_differentiable(value.dtype())) return;
    bool wanted = explicitly_watched.count(v.key()) || (watch_accessed_variables && v.trainable());
    if (!wanted) return;
    auto& seen = reads[v.key()];
    if (seen.empty()) variables.push_back(v);
    int64_t id = detail::tensor_id(value);
    watched.insert(id);
    for (const Tensor& t : seen)
      if (t.impl()->id == id) return;
    seen.push_back(value);
  }

  bool is_watched(const Tensor& t) const { return t.impl()->id != 0 && watched.count(t.impl()->id) != 0; }
};

namespace {

class TapeStack : public OpRecorder {
 public:
  std::vector<GradientTape::Impl*> tapes;
  std::vector<detail::VariableReadLog*> read_logs;  // open custom_gradient calls

  void variable_read(const Variable& variable, const Tensor& value) override {
    for (detail::VariableReadLog* log : read_logs) log->add(variable, value);
    for (GradientTape::Impl* tape : tapes)
      if (tape->records()) tape->on_read(variable, value);
    detail::accumulate_variable_read(variable, value);
  }

  // Tapes first, then forward accumulators, whose jvp rules the tapes then record
  // (Note [forward mode] in forward_accumulator.h).
  void record(const OpCall& call, std::span<const Tensor> outputs) override {
    if (!tapes.empty()) record_on_tapes(call, outputs);
    if (detail::accumulators_active()) detail::accumulate_op(call, outputs);
  }

  void record_on_tapes(const OpCall& call, std::span<const Tensor> outputs) {
    if (!call.op.not_differentiable.empty()) return;  // gradients stop at such ops
    record_entry(call.inputs, outputs, [&] {
      auto attrs = call.attrs.size() ? std::make_shared<const Attrs>(call.attrs) : nullptr;
      const GradientUses& uses = call.op.gradient_uses;
      if (uses.reads_all())
        return detail::TapeEntry{&call.op, std::move(attrs), {call.inputs.begin(), call.inputs.end()},
                                 {outputs.begin(), outputs.end()}};
      // Keep only what the gradient reads (Note [gradient uses] in op_def.h).
      detail::TapeEntry entry{&call.op, std::move(attrs), {}, {}};
      entry.inputs.reserve(call.inputs.size());
      for (size_t i = 0; i < call.inputs.size(); ++i)
        entry.inputs.push_back(uses.reads_input(i) ? call.inputs[i] : detail::released_stand_in(call.inputs[i]));
      entry.outputs.reserve(outputs.size());
      for (size_t k = 0; k < outputs.size(); ++k)
        entry.outputs.push_back(uses.reads_output(k) ? outputs[k] : detail::released_stand_in(outputs[k]));
      return entry;
    });
  }

  // Appends make_entry() to every recording tape that watches one of `inputs`, and
  // watches the float outputs there.
  template <class MakeEntry>
  void record_entry(std::span<const Tensor> inputs, std::span<const Tensor> outputs, MakeEntry make_entry) {
    for (GradientTape::Impl* tape : tapes) {
      if (!tape->records()) continue;
      bool any_watched =
          std::any_of(inputs.begin(), inputs.end(), [&](const Tensor& t) { return tape->is_watched(t); });
      if (!any_watched) continue;
      bool any_float = false;
      for (const Tensor& out : outputs) {
        if (!detail::is_differentiable(out.dtype())) continue;
        tape->watched.insert(detail::tensor_id(out));
        any_float = true;
      }
      if (any_float) tape->entries.push_back(make_entry());
    }
  }
};

TapeStack& tape_stack() {
  thread_local TapeStack stack;
  return stack;
}

void check_source(const Tensor& source, size_t index, const char* what) {
  if (!source.defined()) fail(what, ": source ", index, " is an undefined tensor");
  if (!detail::is_differentiable(source.dtype()))
    fail(what, ": source ", index, " has dtype ", source.dtype(),
         "; gradients flow only through float32 and float64 tensors (cast it first)");
}

}  // namespace

// Whether the backward pass about to run is itself recorded, by another tape or a
// forward accumulator (GradientHook::begin's `recorded`).
static bool gradient_is_recorded(const GradientTape::Impl* self) {
  for (const GradientTape::Impl* tape : tape_stack().tapes)
    if (tape != self && tape->records()) return true;
  return detail::accumulators_active();
}

bool detail::tapes_recording() { return !tape_stack().tapes.empty() || accumulators_active(); }

void detail::install_recorder() { Context::current().recorder = &tape_stack(); }

void detail::remove_recorder_if_idle() {
  if (tape_stack().tapes.empty() && !accumulators_active()) Context::current().recorder = nullptr;
}

void detail::record_custom_gradient(std::span<const Tensor> inputs, std::span<const Tensor> outputs,
                                    std::shared_ptr<const CustomGradientFn> gradient,
                                    const CustomJvpFn* jvp) {
  tape_stack().record_entry(inputs, outputs, [&] {
    return TapeEntry{nullptr, {}, {inputs.begin(), inputs.end()}, {outputs.begin(), outputs.end()}, gradient};
  });
  if (accumulators_active()) accumulate_custom(inputs, outputs, *gradient, jvp);
}

detail::VariableReadLog::VariableReadLog() { tape_stack().read_logs.push_back(this); }
detail::VariableReadLog::~VariableReadLog() {
  auto& logs = tape_stack().read_logs;
  logs.erase(std::remove(logs.begin(), logs.end(), this), logs.end());
}

void detail::VariableReadLog::add(const Variable& variable, const Tensor& value) {
  if (!variable.trainable() || !detail::is_differentiable(value.dtype())) return;
  for (const Variable& seen : variables)
    if (seen.same_as(variable)) return;
  variables.push_back(variable);
  values.push_back(value);
}

int64_t detail::tensor_id(const Tensor& t) {
  static std::atomic<int64_t> next_id{1};
  TensorImpl* impl = t.impl();
  if (impl->id == 0) impl->id = next_id.fetch_add(1, std::memory_order_relaxed);
  return impl->id;
}

namespace {
class ReleasedValue final : public SymbolicValue {
 public:
  bool released_by_tape() const override { return true; }
};
}  // namespace

Tensor detail::released_stand_in(const Tensor& t) {
  if (t.is_symbolic()) return t;  // graph mode: nothing to free
  static const Ref<SymbolicValue> released = make_ref<ReleasedValue>();
  auto impl = make_ref<TensorImpl>();
  impl->dtype = t.dtype();
  impl->shape = t.shape();
  impl->strides = contiguous_strides(t.shape());
  impl->device = t.device();
  impl->symbolic = released;
  impl->id = tensor_id(t);  // the same tensor to backprop, even if it is watched only later
  return Tensor(std::move(impl));
}

bool detail::is_released(const Tensor& t) { return t.is_symbolic() && t.impl()->symbolic->released_by_tape(); }

GradientTape::GradientTape(bool persistent, bool watch_accessed_variables) : impl_(std::make_unique<Impl>()) {
  impl_->persistent = persistent;
  impl_->watch_accessed_variables = watch_accessed_variables;
  tape_stack().tapes.push_back(impl_.get());
  detail::install_recorder();
}

GradientTape::~GradientTape() { stop(); }

void GradientTape::stop() {
  auto& tapes = tape_stack().tapes;
  tapes.erase(std::remove(tapes.begin(), tapes.end(), impl_.get()), tapes.end());
  detail::remove_recorder_if_idle();
}

void GradientTape::resume() {
  auto& tapes = tape_stack().tapes;
  if (std::find(tapes.begin(), tapes.end(), impl_.get()) != tapes.end()) return;
  tapes.push_back(impl_.get());
  detail::install_recorder();
}

void GradientTape::watch(const Tensor& t) {
  if (!t.defined()) fail("watch: the tensor is undefined");
  if (!detail::is_differentiable(t.dtype()))
    fail("watch: only float and complex tensors can be watched; got dtype ", t.dtype(), " (shape ", t.shape(),
         ")");
  impl_->watched.insert(detail::tensor_id(t));
}

void GradientTape::watch(const Variable& v) {
  if (!detail::is_differentiable(v.dtype()))
    fail("watch: only float and complex variables can be watched; variable '", v.name(), "' has dtype ",
         v.dtype());
  impl_->explicitly_watched.insert(v.key());
  impl_->on_read(v, v.value());
}

std::vector<Variable> GradientTape::watched_variables() const { return impl_->variables; }

void GradientTape::reset() {
  impl_->watched.clear();
  impl_->entries.clear();
  impl_->variables.clear();
  impl_->explicitly_watched.clear();
  impl_->reads.clear();
  impl_->used = false;
}

void GradientTape::check_usable(std::span<const Tensor> targets, std::span<const Tensor> sources,
                                const char* what) const {
  if (impl_->used)
    fail<FailedPreconditionError>(
        what, ": this GradientTape was already used to compute a gradient and has released what it "
        "recorded; create it with GradientTape(/*persistent=*/true) to call gradient() more than once");
  for (const Tensor& target : targets)
    if (!target.defined()) fail(what, ": the target is an undefined tensor");
  for (size_t i = 0; i < sources.size(); ++i) check_source(sources[i], i, what);
}

std::vector<Tensor> GradientTape::backprop(std::span<const Tensor> targets, std::span<const Tensor> seeds,
                                           std::span<const Tensor> sources, UnconnectedGradients unconnected,
                                           bool last_use) {
  if (targets.empty()) {
    std::vector<detail::TapeEntry> none;
    return detail::backprop(none, {}, {}, sources, unconnected);
  }
  const bool release = last_use && !impl_->persistent;
  // This tape must not record its own gradient computation; outer tapes do. It may be
  // paused already (a vectorized Jacobian traces this pass): that stays so.
  const bool was_paused = std::exchange(impl_->paused, true);
  try {
    std::vector<Tensor> grads =
        detail::backprop(impl_->entries, targets, seeds, sources, unconnected, release);
    impl_->paused = was_paused;
    return grads;
  } catch (...) {
    impl_->paused = was_paused;
    if (release) release_if_not_persistent();  // part of it is gone already
    throw;
  }
}

void GradientTape::release_if_not_persistent() {
  if (impl_->persistent) return;
  impl_->entries.clear();
  impl_->entries.shrink_to_fit();
  impl_->watched.clear();
  impl_->reads.clear();
  impl_->used = true;
}

std::vector<Tensor> GradientTape::tensor_gradients(std::span<const Tensor> targets,
                                                   std::span<const Tensor> sources,
                                                   std::span<const Tensor> output_gradients,
                                                   UnconnectedGradients unconnected) {
  check_usable(targets, sources, "gradient");
  if (!output_gradients.empty() && output_gradients.size() != targets.size())
    fail("gradient: ", output_gradients.size(), " output gradients for ", targets.size(), " targets");
  std::vector<Tensor> float_targets, seeds;
  for (size_t i = 0; i < targets.size(); ++i) {
    Tensor seed = output_gradients.empty() ? Tensor() : output_gradients[i];
    if (seed.defined() && seed.shape() != targets[i].shape())
      fail("gradient: output_gradient has shape ", seed.shape(), " but the target has shape ",
           targets[i].shape());
    if (!detail::is_differentiable(targets[i].dtype())) continue;  // no gradient flows from integers
    float_targets.push_back(targets[i]);
    seeds.push_back(seed.defined() ? seed : ones_like(targets[i]));
  }
  std::vector<Tensor> grads = backprop(float_targets, seeds, sources, unconnected, /*last_use=*/true);
  release_if_not_persistent();
  return grads;
}

std::vector<Tensor> GradientTape::gradient(const Tensor& target, std::span<const Tensor> sources,
                                           const Tensor& output_gradient, UnconnectedGradients unconnected,
                                           CallSite where) {
  try {
    return tensor_gradients(
        std::span<const Tensor>(&target, 1), sources,
        output_gradient.defined() ? std::span<const Tensor>(&output_gradient, 1) : std::span<const Tensor>(),
        unconnected);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

namespace {

Shape concat_shapes(const Shape& a, int64_t a_from, const Shape& b, int64_t b_from) {
  Dims dims;
  for (int i = static_cast<int>(a_from); i < a.rank(); ++i) dims.push_back(a[i]);
  for (int i = static_cast<int>(b_from); i < b.rank(); ++i) dims.push_back(b[i]);
  return Shape(dims);
}

}  // namespace

// One backward pass per seed; the gradients, stacked on `axis` (zeros for a seed that
// does not reach the source), shaped `result_shape`. Without any connected pass: zeros
// when asked for, or when there were no passes to make (a target with no elements),
// else undefined.
Tensor GradientTape::stacked_jacobian(const Tensor& target, const Tensor& source,
                                      const std::vector<Tensor>& seeds, int64_t axis,
                                      const Shape& result_shape, UnconnectedGradients unconnected,
                                      bool use_pfor) {
  std::vector<Tensor> rows;
  bool any_connected = false;
  const detail::VectorizeFn vectorize = detail::vectorize_hook();
  if (use_pfor && vectorize && !seeds.empty()) {
    // Every pass at once: the backward pass traced on one seed, then run on all of them.
    bool connected = true;
    // As backprop does: this tape does not record its own gradient computation.
    struct Pause {
      bool& paused;
      ~Pause() { paused = false; }
    } pause{impl_->paused};
    impl_->paused = true;
    const Tensor all = vectorize(
        [&](const std::vector<Tensor>& seed) {
          Tensor g = backprop(std::span<const Tensor>(&target, 1), std::span<const Tensor>(&seed[0], 1),
                              std::span<const Tensor>(&source, 1), UnconnectedGradients::None)[0];
          if (!g.defined()) {
            connected = false;
            g = zeros_like(source);
          }
          return std::vector<Tensor>{g};
        },
        {stack(seeds, 0)})[0];
    release_if_not_persistent();
    if (connected) {
      if (axis == 0) return reshape(all, result_shape);
      std::vector<int64_t> perm;
      for (int i = 1; i < all.rank(); ++i) perm.push_back(i);
      perm.insert(perm.begin() + axis, 0);
      return reshape(transpose(all, perm), result_shape);
    }
  } else {
    for (const Tensor& seed : seeds) {
      rows.push_back(backprop(std::span<const Tensor>(&target, 1), std::span<const Tensor>(&seed, 1),
                              std::span<const Tensor>(&source, 1), UnconnectedGradients::None)[0]);
      any_connected = any_connected || rows.back().defined();
    }
    release_if_not_persistent();
  }
  if (any_connected) {
    for (Tensor& row : rows)
      if (!row.defined()) row = zeros_like(source);
    return reshape(stack(rows, axis), result_shape);
  }
  const bool no_passes = seeds.empty() && is_floating(target.dtype());
  if (unconnected == UnconnectedGradients::Zero || no_passes) {
    const DeviceScope on_source(source.device());
    return zeros(result_shape, source.dtype());
  }
  return Tensor();
}

Tensor GradientTape::jacobian(const Tensor& target, const Tensor& source, UnconnectedGradients unconnected,
                              bool experimental_use_pfor, CallSite where) {
  try {
    check_usable(std::span<const Tensor>(&target, 1), std::span<const Tensor>(&source, 1), "jacobian");
    const int64_t n = target.shape().num_elements();
    // Row i of the flattened target: seed a one-hot at i.
    std::vector<Tensor> seeds;
    if (is_floating(target.dtype()))
      for (int64_t i = 0; i < n; ++i)
        seeds.push_back(
            reshape(one_hot(constant(i).to(target.device()), n, 1, 0, -1, target.dtype()), target.shape()));
    return stacked_jacobian(target, source, seeds, 0, concat_shapes(target.shape(), 0, source.shape(), 0),
                            unconnected, experimental_use_pfor);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

Tensor GradientTape::batch_jacobian(const Tensor& target, const Tensor& source,
                                    UnconnectedGradients unconnected, bool experimental_use_pfor,
                                    CallSite where) {
  try {
    check_usable(std::span<const Tensor>(&target, 1), std::span<const Tensor>(&source, 1), "batch_jacobian");
    if (target.rank() < 1 || source.rank() < 1 || target.shape()[0] != source.shape()[0])
      fail("batch_jacobian: the target (shape ", target.shape(), ") and the source (shape ", source.shape(),
           ") need the same first (batch) dimension");
    const int64_t batch = target.shape()[0];
    const int64_t per_row = concat_shapes(target.shape(), 1, Shape{}, 0).num_elements();
    // Column j of every row at once: rows are independent, so summing over the batch
    // leaves each row's own derivative.
    std::vector<Tensor> seeds;
    if (is_floating(target.dtype()))
      for (int64_t j = 0; j < per_row; ++j) {
        Tensor column = one_hot(constant(j).to(target.device()), per_row, 1, 0, -1, target.dtype());
        seeds.push_back(reshape(broadcast_to(column, Shape{batch, per_row}), target.shape()));
      }
    return stacked_jacobian(target, source, seeds, 1, concat_shapes(target.shape(), 0, source.shape(), 1),
                            unconnected, experimental_use_pfor);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

Tensor GradientTape::gradient(const Tensor& target, const Tensor& source, const Tensor& output_gradient,
                              UnconnectedGradients unconnected, CallSite where) {
  return gradient(target, std::span<const Tensor>(&source, 1), output_gradient, unconnected, where)[0];
}

std::vector<Tensor> GradientTape::gradient(const Tensor& target, const std::vector<Variable>& sources,
                                           const Tensor& output_gradient, UnconnectedGradients unconnected,
                                           CallSite where) {
  return gradient(target, std::vector<Source>(sources.begin(), sources.end()), output_gradient, unconnected, where);
}

std::vector<Tensor> GradientTape::gradient(const Tensor& target, const std::vector<Source>& sources,
                                           const Tensor& output_gradient, UnconnectedGradients unconnected,
                                           CallSite where) {
  return gradient(
      std::span<const Tensor>(&target, 1), sources,
      output_gradient.defined() ? std::span<const Tensor>(&output_gradient, 1) : std::span<const Tensor>(),
      unconnected, where);
}

std::vector<Tensor> GradientTape::gradient(std::span<const Tensor> targets,
                                           const std::vector<Source>& sources,
                                           std::span<const Tensor> output_gradients,
                                           UnconnectedGradients unconnected, CallSite where) {
  try {
    // A variable's gradient is the sum over every tensor read from it: differentiate
    // with respect to all of them, then add up.
    std::vector<Tensor> flat;
    std::vector<size_t> first(sources.size() + 1, 0);
    for (size_t i = 0; i < sources.size(); ++i) {
      if (const Tensor* t = std::get_if<Tensor>(&sources[i])) {
        flat.push_back(*t);
      } else {
        auto it = impl_->reads.find(std::get<Variable>(sources[i]).key());
        if (it != impl_->reads.end()) flat.insert(flat.end(), it->second.begin(), it->second.end());
      }
      first[i + 1] = flat.size();
    }
    detail::HookedGradients hooked(sources, first, gradient_is_recorded(impl_.get()));
    detail::FinalGradientFn on_final = [&](size_t k, const Tensor& g) { hooked.source_final(k, g); };
    std::vector<Tensor> flat_grads;
    {
      const detail::FinalGradientListenerScope listening(hooked.active() ? &on_final : nullptr);
      flat_grads = tensor_gradients(targets, flat, output_gradients, UnconnectedGradients::None);
    }
    std::vector<Tensor> result(sources.size());
    for (size_t i = 0; i < sources.size(); ++i) {
      if (hooked.hooks(i)) continue;  // the hook summed its reads and gives its gradient
      Tensor& sum = result[i];
      for (size_t k = first[i]; k < first[i + 1]; ++k)
        if (flat_grads[k].defined()) sum = sum.defined() ? add(sum, flat_grads[k]) : flat_grads[k];
    }
    if (hooked.active()) hooked.finish(result);
    for (size_t i = 0; i < sources.size(); ++i) {
      Tensor& sum = result[i];
      if (!sum.defined() && unconnected == UnconnectedGradients::Zero) {
        if (const Tensor* t = std::get_if<Tensor>(&sources[i])) {
          sum = zeros_like(*t);
        } else {
          const Variable& v = std::get<Variable>(sources[i]);
          const RecordingPaused unrecorded;  // reading for the device is no use of it
          const DeviceScope on_variable(v.value().device());
          sum = zeros(v.shape(), v.dtype());  // the stored dtype, whatever autocast is on
        }
      }
    }
    return result;
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

Tensor GradientTape::gradient(const Tensor& target, const Variable& source, const Tensor& output_gradient,
                              UnconnectedGradients unconnected, CallSite where) {
  return gradient(target, std::vector<Variable>{source}, output_gradient, unconnected, where)[0];
}

GradientTape::StopRecording::StopRecording(GradientTape* tape) : tape_(tape) { tape_->impl_->paused = true; }
GradientTape::StopRecording::StopRecording(StopRecording&& other) noexcept
    : tape_(std::exchange(other.tape_, nullptr)) {}
GradientTape::StopRecording::~StopRecording() {
  if (tape_) tape_->impl_->paused = false;
}
GradientTape::StopRecording GradientTape::stop_recording() { return StopRecording(this); }

}  // namespace ef
