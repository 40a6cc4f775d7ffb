// The pass pipeline (Note [optimized copies] in passes.h): copying a graph's nodes,
// redirecting uses, running the switched-on passes, and the process-wide options.
#include <mutex>

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

OptimizedGraph optimize(PassGraph g, const GraphOptimizerOptions& options) {
  for (int round = 0; round < 4; ++round) {
    bool changed = false;
    if (options.constant_folding) changed = constant_folding(g, options) || changed;
    if (options.algebraic_simplification) changed = algebraic_simplification(g) || changed;
    if (options.common_subexpression_elimination) changed = common_subexpression_elimination(g) || changed;
    if (!changed) break;
  }
  if (options.dead_code_elimination) dead_code_elimination(g);
  if (options.elementwise_fusion && elementwise_fusion(g) && options.dead_code_elimination) dead_code_elimination(g);

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
