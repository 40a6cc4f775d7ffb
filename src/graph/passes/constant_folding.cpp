// Constant folding: an op whose inputs are all constants runs once, now, through the
// same dispatch as eager code, and its node becomes a constant holding the result.
//
// Not folded: random ops (each call must draw new numbers) and stateful ones; ops with
// several outputs (a constant node holds one value); results with unknown or large
// shapes (more than max_folded_elements elements: folding must not make a graph hold
// big tensors that the run would compute and free); and calls that fail, which stay in
// the graph so that the error surfaces when the function runs, as it would unoptimized.
#include "eagerflow/runtime/dispatch.h"
#include "graph/passes/passes.h"

namespace ef::detail {

namespace {

bool foldable(const PassGraph& g, const Node& n, int64_t max_elements) {
  if (n.kind != NodeKind::kOp || n.op->traits.random || n.stateful() || n.outputs.size() != 1) return false;
  if (!n.control_inputs.empty()) return false;
  const Shape& shape = n.outputs[0].shape;
  if (!shape.is_fully_defined() || shape.num_elements() > max_elements) return false;
  for (const ValueRef& in : n.inputs)
    if (g.node(in.node).kind != NodeKind::kConstant) return false;
  return true;
}

}  // namespace

bool constant_folding(PassGraph& g, const GraphOptimizerOptions& options) {
  BuildScope eager(nullptr);  // run the ops now, even while a graph is being built
  RecordingPaused no_tape;
  bool changed = false;
  std::vector<Tensor> inputs;
  for (Node& n : g.nodes) {
    if (!foldable(g, n, options.max_folded_elements)) continue;
    inputs.clear();
    for (const ValueRef& in : n.inputs) inputs.push_back(g.node(in.node).value);
    Tensor value;
    try {
      value = run_op_multi(*n.op, inputs, n.attrs, CallSite::current())[0];
    } catch (const Error&) {
      continue;  // left for the run to report
    }
    if (value.dtype() != n.outputs[0].dtype || value.shape() != n.outputs[0].shape) continue;
    n.kind = NodeKind::kConstant;
    n.op = nullptr;
    n.attrs = Attrs();
    n.inputs.clear();
    n.value = std::move(value);
    n.name = "folded_" + n.name;  // listings show where the constant came from
    changed = true;
  }
  return changed;
}

}  // namespace ef::detail
