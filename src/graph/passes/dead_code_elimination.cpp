// Dead-code elimination: keeps the nodes that run (live_nodes: what outputs and
// stateful nodes need, and the fed placeholders) and renumbers them in their order, so
// index order stays topological (Note [optimized copies] in passes.h).
#include "graph/passes/passes.h"

namespace ef::detail {

bool dead_code_elimination(PassGraph& g) {
  const std::vector<char> live = live_nodes(g);
  std::vector<int> index(g.nodes.size(), -1);
  int next = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (live[i]) index[i] = next++;
  if (next == static_cast<int>(g.nodes.size())) return false;

  auto renumber = [&](std::vector<int>& nodes) {
    // Ordering constraints on dropped nodes no longer matter: those nodes never run.
    std::vector<int> kept;
    for (int n : nodes)
      if (index[static_cast<size_t>(n)] >= 0) kept.push_back(index[static_cast<size_t>(n)]);
    nodes = std::move(kept);
  };
  std::vector<Node> nodes;
  nodes.reserve(static_cast<size_t>(next));
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!live[i]) continue;
    Node& n = g.nodes[i];
    for (ValueRef& in : n.inputs) in.node = index[static_cast<size_t>(in.node)];
    renumber(n.control_inputs);
    renumber(n.order_after);
    nodes.push_back(std::move(n));
  }
  g.nodes = std::move(nodes);
  for (ValueRef& r : g.inputs) r.node = index[static_cast<size_t>(r.node)];
  for (ValueRef& r : g.outputs) r.node = index[static_cast<size_t>(r.node)];
  renumber(g.targets);
  return true;
}

}  // namespace ef::detail
