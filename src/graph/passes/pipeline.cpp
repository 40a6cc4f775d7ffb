// The pass pipeline (Note [optimized copies] in passes.h): copying a graph's nodes,
// redirecting uses, running the switched-on passes, and the process-wide options.
#include <mutex>

#include "eagerflow/ops/fused_elementwise.h"
#include "graph/passes/passes.h"

namespace ef {
namespace {

std::mutex options_mutex;
GraphOptimizerOptions current_options;

}  // namespace

GraphOptimizerOptions graph_optimizer_options() {
  std::lock_guard<std::mutex> lock(options_mutex);
  return current_options;
}

void set_graph_optimizer_options(const GraphOptimizerOptions& options) {
  if (options.max_folded_elements < 0)
    fail("set_graph_optimizer_options: max_folded_elements must be >= 0, got ", options.max_folded_elements);
  std::lock_guard<std::mutex> lock(options_mutex);
  current_options = options;
}

namespace detail {

ValueRef Replacements::resolve(ValueRef r) const {
  // Replacements point to earlier nodes, so chains end.
  for (auto it = map_.find(key(r)); it != map_.end(); it = map_.find(key(r))) r = it->second;
  return r;
}

void Replacements::apply(PassGraph& g) const {
  if (map_.empty()) return;
  for (Node& n : g.nodes)
    for (ValueRef& in : n.inputs) in = resolve(in);
  for (ValueRef& out : g.outputs) out = resolve(out);
}

std::vector<char> live_nodes(const PassGraph& g) {
  std::vector<char> live(g.nodes.size(), 0);
  std::vector<int> stack;
  for (const ValueRef& r : g.outputs) stack.push_back(r.node);
  for (const ValueRef& r : g.inputs) stack.push_back(r.node);
  stack.insert(stack.end(), g.targets.begin(), g.targets.end());
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    if (live[static_cast<size_t>(i)]) continue;
    live[static_cast<size_t>(i)] = 1;
    const Node& n = g.node(i);
    // Fed placeholders have no inputs; every other node needs its inputs.
    for (const ValueRef& in : n.inputs) stack.push_back(in.node);
    stack.insert(stack.end(), n.control_inputs.begin(), n.control_inputs.end());
  }
  return live;
}

PassGraph pass_graph_of(const GraphState& graph, int num_nodes, std::span<const ValueRef> inputs,
                        std::span<const ValueRef> outputs, std::span<const int> targets) {
  PassGraph g;
  g.nodes.assign(graph.nodes.begin(), graph.nodes.begin() + num_nodes);
  g.inputs.assign(inputs.begin(), inputs.end());
  g.outputs.assign(outputs.begin(), outputs.end());
  g.targets.assign(targets.begin(), targets.end());
  return g;
}

namespace {

// Whether a value is a tensor the run allocates afresh (not a constant, a fed input, a
// variable's value or a view of one of them).
bool fresh(const PassGraph& g, ValueRef r) {
  const Node& n = g.node(r.node);
  return n.kind == NodeKind::kOp && !n.op->traits.view;
}

// Note [fresh outputs]: callers own the tensors a call returns, and may write to them
// (NumPy arrays share their memory). An output the trace computes afresh on each call
// must stay so: if the passes turned it into a constant, an input, a variable's value
// or a view of one (x * 1 -> x), or into the same value as an earlier output (CSE),
// it is copied at the end of the run.
void keep_outputs_fresh(PassGraph& g, const std::vector<char>& was_fresh, const std::vector<ValueRef>& original) {
  static const OpDef& copy = find_op("contiguous");  // always allocates and copies
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    if (!was_fresh[k]) continue;
    bool shared = !fresh(g, g.outputs[k]);
    for (size_t j = 0; j < k && !shared; ++j) shared = g.outputs[j] == g.outputs[k] && !(original[j] == original[k]);
    if (!shared) continue;
    Node n;
    n.kind = NodeKind::kOp;
    n.op = &copy;
    n.inputs = {g.outputs[k]};
    n.outputs = {g.node(g.outputs[k].node).outputs[static_cast<size_t>(g.outputs[k].index)]};
    n.name = "copy_" + g.node(g.outputs[k].node).name;
    g.nodes.push_back(std::move(n));
    g.outputs[k] = {static_cast<int>(g.nodes.size()) - 1, 0};
  }
}

// Fused nodes marked to run as compiled kernels (GraphOptimizerOptions::compile_fused_kernels).
void mark_compiled(PassGraph& g) {
  for (Node& n : g.nodes) {
    if (n.kind != NodeKind::kOp || !n.op ||
        (n.op->name != "fused_elementwise" && n.op->name != "fused_reduce_sum"))
      continue;
    FusedProgram program = fused_program_from_attrs(n.attrs);
    program.compiled = true;
    n.attrs = fused_program_to_attrs(program);
  }
}

}  // namespace

OptimizedGraph optimize(PassGraph g, const GraphOptimizerOptions& options) {
  const std::vector<ValueRef> original = g.outputs;
  std::vector<char> was_fresh;
  for (const ValueRef& r : g.outputs) was_fresh.push_back(fresh(g, r));
  for (int round = 0; round < 4; ++round) {
    bool changed = false;
    if (options.constant_folding) changed = constant_folding(g, options) || changed;
    if (options.algebraic_simplification) changed = algebraic_simplification(g) || changed;
    if (options.common_subexpression_elimination) changed = common_subexpression_elimination(g) || changed;
    if (!changed) break;
  }
  if (options.dead_code_elimination) dead_code_elimination(g);
  if (options.elementwise_fusion && elementwise_fusion(g) && options.dead_code_elimination) dead_code_elimination(g);
  if (options.reduction_fusion && reduction_fusion(g) && options.dead_code_elimination) dead_code_elimination(g);
  if (options.compile_fused_kernels) mark_compiled(g);
  keep_outputs_fresh(g, was_fresh, original);

  OptimizedGraph out;
  out.graph = std::make_shared<GraphState>();
  out.graph->is_function = true;
  out.graph->nodes = std::move(g.nodes);
  // Listings and later additions name nodes uniquely: count the names in use.
  for (const Node& n : out.graph->nodes) ++out.graph->name_counts[n.name];
  out.inputs = std::move(g.inputs);
  out.outputs = std::move(g.outputs);
  out.targets = std::move(g.targets);
  return out;
}

}  // namespace detail
}  // namespace ef
