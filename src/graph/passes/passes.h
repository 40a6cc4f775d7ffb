// Graph optimization passes (internal to src/graph): one file per pass, run by
// optimize() in pipeline.cpp.
//
// Note [optimized copies]: nodes refer to each other by index, and a traced graph is
// both printed for users and extended later (a function's tape gradient appends its
// backward nodes to the trace's graph). So passes never touch the traced graph: the
// pipeline copies the nodes a function runs into a PassGraph, the passes rewrite that
// copy, and the result is a separate GraphState that only the executor and listings
// (ConcreteFunction::optimized_graph) see. Every pass keeps two invariants:
//   - index order stays a topological order that respects `order_after` (a value is
//     only ever replaced by one computed earlier, a node is only ever rewritten in place
//     or dropped), so the executor's in-order run still sees variable reads and
//     assignments in program order;
//   - values are bit for bit those of the traced graph run node by node (no rewrite
//     that changes rounding, -0.0, NaN or broadcasting; see algebraic_simplification.cpp).
// The outputs of a call stay tensors of their own where the trace computed them afresh
// (Note [fresh outputs] in pipeline.cpp). A pass that makes nodes unused does not delete them: dead-code elimination does, and
// with it switched off they stay in the copy, where the executor never runs them (it
// runs only what outputs and stateful nodes need).
#pragma once

#include <algorithm>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "eagerflow/graph/optimizer_options.h"
#include "graph/graph_internal.h"

namespace ef::detail {

// What passes rewrite: the nodes in topological (index) order, the placeholders fed at
// run time (kept even when unused, so feeds find them), the fetched values and the
// stateful nodes run for their effect.
struct PassGraph {
  std::vector<Node> nodes;
  std::vector<ValueRef> inputs;
  std::vector<ValueRef> outputs;
  std::vector<int> targets;

  Node& node(int i) { return nodes[static_cast<size_t>(i)]; }
  const Node& node(int i) const { return nodes[static_cast<size_t>(i)]; }
};

// Uses of values to be redirected to other (earlier) values. Chains resolve: if a is
// replaced by b and b by c, a resolves to c.
class Replacements {
 public:
  void replace(ValueRef from, ValueRef to) { map_[key(from)] = to; }
  ValueRef resolve(ValueRef r) const;
  bool empty() const { return map_.empty(); }
  // Rewrites every node input and every output of `g` to the resolved values.
  void apply(PassGraph& g) const;

 private:
  static int64_t key(ValueRef r) { return (static_cast<int64_t>(r.node) << 20) ^ r.index; }
  std::unordered_map<int64_t, ValueRef> map_;
};

// Which nodes run: those the outputs and targets need through inputs and control
// inputs, plus the fed placeholders.
std::vector<char> live_nodes(const PassGraph& g);

// Index of `r` among a fused node's `inputs`, appended if new.
inline int64_t input_index(std::vector<ValueRef>& inputs, ValueRef r) {
  auto it = std::find(inputs.begin(), inputs.end(), r);
  if (it != inputs.end()) return it - inputs.begin();
  inputs.push_back(r);
  return static_cast<int64_t>(inputs.size()) - 1;
}

// The passes. Each returns whether it changed `g`.
// Ops whose inputs are all constants (not random, not stateful, one output of at most
// options.max_folded_elements elements) become constants, computed once here.
bool constant_folding(PassGraph& g, const GraphOptimizerOptions& options);
// Identical ops on identical inputs, identical small constants, and reads of one
// variable between the same assignments are computed once.
bool common_subexpression_elimination(PassGraph& g);
// Drops nodes that do not run (live_nodes) and renumbers the rest in order.
bool dead_code_elimination(PassGraph& g);
// Removes ops whose result is bit for bit one of their inputs (x * 1, x + -0.0, ...).
bool algebraic_simplification(PassGraph& g);
// Replaces groups of fusible elementwise ops (one dtype, one element count or single
// elements, intermediates used only inside the group) by one fused_elementwise node.
bool elementwise_fusion(PassGraph& g);
// Replaces reduce_sum over all elements of a fused_elementwise node or a fusible
// elementwise op that nothing else reads by one fused_reduce_sum node.
bool reduction_fusion(PassGraph& g);
// Whether elementwise fusion can take node `n`: an op with a block function for its
// dtype, one output, fully known shapes, each input of the output's element count or a
// single element, not stateful or random, no control inputs.
bool fusible_elementwise(const PassGraph& g, const Node& n);

// The first `num_nodes` nodes of `graph` as a PassGraph.
PassGraph pass_graph_of(const GraphState& graph, int num_nodes, std::span<const ValueRef> inputs,
                        std::span<const ValueRef> outputs, std::span<const int> targets);

// An optimized copy, ready for execute(): the graph and where the caller's inputs,
// outputs and stateful nodes went.
struct OptimizedGraph {
  std::shared_ptr<GraphState> graph;
  std::vector<ValueRef> inputs;
  std::vector<ValueRef> outputs;
  std::vector<int> targets;
};

// Runs the passes `options` switch on over a copy of `g` (all of g's nodes). Folding
// and simplification can enable each other and CSE, so those three repeat until
// nothing changes (a few rounds at most); then dead code goes, then elementwise and
// reduction fusion.
OptimizedGraph optimize(PassGraph g, const GraphOptimizerOptions& options);

}  // namespace ef::detail
