// The backward pass: play recorded ops back in reverse, asking each op's gradient
// function for its inputs' gradients, summing broadcast gradients down to the input
// shapes, and accumulating the gradients of tensors used more than once.
#include <unordered_map>
#include <unordered_set>

#include "autodiff/tape_internal.h"
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/operators.h"
#include "eagerflow/ops/reduction.h"
#include "eagerflow/runtime/context.h"

namespace ef::detail {

std::unordered_set<const OpDef*>*& gradient_functions_run() {
  thread_local std::unordered_set<const OpDef*>* observed = nullptr;
  return observed;
}

Tensor sum_to_shape(const Tensor& grad, const Tensor& input) {
  const Shape& shape = input.shape();
  if (grad.shape() == shape && shape.is_fully_defined()) return grad;
  // A partial shape (graph mode) cannot say which axes were broadcast: an unknown size
  // may turn out to be 1 against the gradient's larger one. The sum then picks its axes
  // from the shapes the graph runs with.
  if (!shape.is_fully_defined() || !grad.shape().is_fully_defined()) return sum_to_shape_of(grad, input);
  // Broadcasting aligns shapes on the right: leading extra dimensions, and dimensions
  // where the input had size 1, were stretched.
  const int extra = grad.rank() - shape.rank();
  std::vector<int64_t> axes;
  for (int i = 0; i < grad.rank(); ++i) {
    if (i < extra || (shape[i - extra] == 1 && grad.shape()[i] != 1)) axes.push_back(i);
  }
  Tensor summed = axes.empty() ? grad : reduce_sum(grad, axes, /*keepdims=*/true);
  return summed.shape() == shape ? summed : reshape(summed, shape);
}

std::vector<Tensor> backprop(std::vector<TapeEntry>& entries, std::span<const Tensor> targets,
                             std::span<const Tensor> seeds, std::span<const Tensor> sources,
                             UnconnectedGradients unconnected, bool release_entries) {
  // This pass takes the listener: nested passes (run by gradient functions) do not see it.
  const FinalGradientListenerScope taken(nullptr);
  FinalGradientFn* on_final = taken.previous();
  std::unordered_map<int64_t, Tensor> grads;
  auto accumulate = [&](const Tensor& t, Tensor g) {
    Tensor& slot = grads[tensor_id(t)];
    slot = slot.defined() ? add(slot, g) : std::move(g);
  };
  for (size_t i = 0; i < targets.size(); ++i) accumulate(targets[i], seeds[i]);

  // Only ops downstream of a source can carry gradient to it: find them first.
  std::unordered_set<int64_t> source_ids;
  for (const Tensor& s : sources)
    if (s.impl()->id) source_ids.insert(s.impl()->id);
  std::unordered_set<int64_t> reaches_source = source_ids;
  std::vector<bool> relevant(entries.size(), false);
  // How many relevant entries produce each tensor: once the last of them has run, no
  // entry left reads that tensor's gradient, so it can be freed (unless it is a result).
  std::unordered_map<int64_t, int> producers;
  for (size_t e = 0; e < entries.size(); ++e) {
    for (const Tensor& in : entries[e].inputs)
      if (in.impl()->id && reaches_source.count(in.impl()->id)) relevant[e] = true;
    if (relevant[e])
      for (const Tensor& out : entries[e].outputs) {
        reaches_source.insert(tensor_id(out));
        ++producers[out.impl()->id];
      }
  }

  // Note [gradient hooks]: a source's gradient is final once the earliest entry that
  // reads it has run (walking backwards, nothing after it adds to the source).
  std::unordered_map<size_t, std::vector<size_t>> sources_final_after;  // by entry
  auto announce = [&](size_t k) {
    auto found = sources[k].impl()->id ? grads.find(sources[k].impl()->id) : grads.end();
    (*on_final)(k, found != grads.end() ? found->second : Tensor());
  };
  if (on_final) {
    std::unordered_map<int64_t, size_t> earliest_reader;
    for (size_t e = 0; e < entries.size(); ++e)
      if (relevant[e])
        for (const Tensor& in : entries[e].inputs)
          if (in.impl()->id && source_ids.count(in.impl()->id)) earliest_reader.try_emplace(in.impl()->id, e);
    for (size_t k = 0; k < sources.size(); ++k) {
      auto found = earliest_reader.find(sources[k].impl()->id);
      if (found == earliest_reader.end())
        announce(k);  // nothing recorded reads it
      else
        sources_final_after[found->second].push_back(k);
    }
  }

  // Entries were recorded in execution order, so walking them backwards visits every
  // op after all the ops that consumed its outputs.
  std::vector<Tensor> output_grads;
  std::vector<Tensor> input_grads;
  std::vector<char> needs;  // per input of the current entry (vector<bool> has no data())
  auto run_entry = [&](const TapeEntry& entry) {
    output_grads.assign(entry.outputs.size(), Tensor());
    bool any = false;
    for (size_t k = 0; k < entry.outputs.size(); ++k) {
      auto found = grads.find(entry.outputs[k].impl()->id);
      if (found != grads.end()) {
        output_grads[k] = found->second;
        any = true;
      }
    }
    if (!any) return;
    if (!entry.custom_gradient && !entry.op->gradient)
      fail<UnimplementedError>("gradient: op '", entry.name(), "' has no gradient function yet");
    for (size_t k = 0; k < entry.outputs.size(); ++k) {
      const Tensor& out = entry.outputs[k];
      if (output_grads[k].defined()) continue;
      if (!is_released(out)) {
        output_grads[k] = zeros_like(out);
      } else {
        const DeviceScope on_output(out.device());  // a released output keeps its device
        output_grads[k] = zeros(out.shape(), out.dtype());
      }
    }

    // Only float inputs downstream of a source need a gradient.
    needs.assign(entry.inputs.size(), false);
    for (size_t i = 0; i < entry.inputs.size(); ++i) {
      const Tensor& in = entry.inputs[i];
      needs[i] =
          detail::is_differentiable(in.dtype()) && in.impl()->id && reaches_source.count(in.impl()->id);
    }
    if (entry.custom_gradient) {
      input_grads = (*entry.custom_gradient)(output_grads);
    } else {
      if (auto* observed = gradient_functions_run()) observed->insert(entry.op);
      const bool* needs_data = reinterpret_cast<const bool*>(needs.data());
      static const Attrs kNoAttrs;
      OpCall forward{*entry.op, entry.inputs, entry.attrs ? *entry.attrs : kNoAttrs};
      input_grads = entry.op->gradient(
          GradCall{forward, entry.outputs, output_grads, std::span<const bool>(needs_data, needs.size())});
    }
    if (input_grads.size() != entry.inputs.size())
      fail<InternalError>("gradient of '", entry.name(), "' returned ", input_grads.size(),
                          " gradients for ", entry.inputs.size(), " inputs");
    output_grads.clear();
    for (size_t k = 0; k < entry.outputs.size(); ++k) {
      const int64_t id = entry.outputs[k].impl()->id;
      if (--producers[id] == 0 && !source_ids.count(id)) grads.erase(id);
    }
    for (size_t i = 0; i < entry.inputs.size(); ++i) {
      const Tensor& input = entry.inputs[i];
      if (!needs[i] || !input_grads[i].defined()) continue;
      Tensor g = sum_to_shape(input_grads[i], input);
      accumulate(input, g.dtype() == input.dtype() ? g : cast(g, input.dtype()));
    }
    input_grads.clear();
  };
  for (size_t e = entries.size(); e-- > 0;) {
    if (relevant[e]) run_entry(entries[e]);
    if (on_final)
      if (auto found = sources_final_after.find(e); found != sources_final_after.end())
        for (size_t k : found->second) announce(k);
    // A non-persistent tape frees each op's saved values once its gradient ran, so
    // memory falls during the backward pass.
    if (release_entries) entries[e] = TapeEntry{};
  }

  std::vector<Tensor> result;
  result.reserve(sources.size());
  for (const Tensor& source : sources) {
    auto found = source.impl()->id ? grads.find(source.impl()->id) : grads.end();
    if (found != grads.end()) result.push_back(found->second);
    else result.push_back(unconnected == UnconnectedGradients::Zero ? zeros_like(source) : Tensor());
  }
  return result;
}

}  // namespace ef::detail
