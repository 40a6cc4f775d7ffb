// Elementwise fusion: groups of elementwise ops become one fused_elementwise node
// (include/eagerflow/ops/fused_elementwise.h), which runs the whole group in one pass
// over memory in cache-sized blocks, each op by its own functor, so values are bit for
// bit those of the ops run one by one.
//
// A node is fusible when its op has an elementwise block function (Note [elementwise
// blocks] in op_def.h) for its dtype, it has one output, every input has that dtype,
// and all shapes are known with each input having the output's element count or a
// single element (what fused_elementwise accepts; unknown dimensions could broadcast at
// run time, so they are left alone).
//
// Groups grow from a root (the last node of the group, in index order) towards its
// producers: a fusible producer joins when it has the root's dtype, the root's element
// count or a single element, and every use of it is inside the group (so no
// intermediate is needed outside, and nothing but the root's value leaves the group).
// Producers are considered in decreasing index order, so all consumers of a producer
// have been decided before it is. The fused node takes the root's place: its inputs
// all come from earlier nodes, keeping index order topological (Note [optimized copies]
// in passes.h). Groups of one op stay as they are.
#include <algorithm>
#include <queue>

#include "eagerflow/ops/fused_elementwise.h"
#include "graph/passes/passes.h"

namespace ef::detail {

bool fusible_elementwise(const PassGraph& g, const Node& n) {
  if (n.kind != NodeKind::kOp || !n.op->elementwise_block.fn || n.outputs.size() != 1 || n.stateful() ||
      n.op->traits.random || !n.control_inputs.empty())
    return false;
  if (static_cast<int>(n.inputs.size()) != n.op->elementwise_block.arity) return false;
  const TensorMeta& out = n.outputs[0];
  if (!((n.op->elementwise_block.dtypes >> static_cast<unsigned>(out.dtype)) & 1u)) return false;
  if (!out.shape.is_fully_defined()) return false;
  for (const ValueRef& in : n.inputs) {
    const TensorMeta& m = g.node(in.node).outputs[static_cast<size_t>(in.index)];
    if (m.dtype != out.dtype || !m.shape.is_fully_defined()) return false;
    const int64_t count = m.shape.num_elements();
    if (count != 1 && count != out.shape.num_elements()) return false;
  }
  return true;
}

namespace {

// The fused node for `members` (increasing index order, the root last).
Node fused_node(const PassGraph& g, const std::vector<int>& members, const std::vector<int>& group_of) {
  static const OpDef& fused = find_op("fused_elementwise");
  const int root = members.back();
  FusedProgram program;
  std::vector<ValueRef> externals;
  for (int m : members)
    for (const ValueRef& in : g.node(m).inputs)
      if (group_of[static_cast<size_t>(in.node)] != root) input_index(externals, in);
  program.num_inputs = static_cast<int64_t>(externals.size());
  std::unordered_map<int, int64_t> value_of;  // member -> value index
  for (int m : members) {
    std::vector<int64_t> operands;
    for (const ValueRef& in : g.node(m).inputs)
      operands.push_back(group_of[static_cast<size_t>(in.node)] == root ? value_of.at(in.node)
                                                                         : input_index(externals, in));
    value_of[m] = program.add(*g.node(m).op, std::move(operands));
  }
  program.outputs = {value_of.at(root)};

  Node n;
  n.kind = NodeKind::kOp;
  n.op = &fused;
  n.attrs = fused_program_to_attrs(program);
  n.inputs = std::move(externals);
  n.outputs = g.node(root).outputs;
  n.name = "fused_" + g.node(root).name;
  return n;
}

}  // namespace

bool elementwise_fusion(PassGraph& g) {
  const size_t count = g.nodes.size();
  const std::vector<char> live = live_nodes(g);
  // Who reads each node: live consumers, and whether an output or target reads it.
  std::vector<std::vector<int>> consumers(count);
  std::vector<char> escapes(count, 0);
  for (size_t i = 0; i < count; ++i)
    if (live[i])
      for (const ValueRef& in : g.nodes[i].inputs) consumers[static_cast<size_t>(in.node)].push_back(static_cast<int>(i));
  for (const ValueRef& r : g.outputs) escapes[static_cast<size_t>(r.node)] = 1;
  for (int t : g.targets) escapes[static_cast<size_t>(t)] = 1;

  std::vector<int> group_of(count, -1);
  bool changed = false;
  for (int root = static_cast<int>(count) - 1; root >= 0; --root) {
    const Node& r = g.node(root);
    if (!live[static_cast<size_t>(root)] || group_of[static_cast<size_t>(root)] >= 0 || !fusible_elementwise(g, r))
      continue;
    const DType dtype = r.outputs[0].dtype;
    const int64_t elements = r.outputs[0].shape.num_elements();
    group_of[static_cast<size_t>(root)] = root;
    std::vector<int> members = {root};
    std::priority_queue<int> candidates;
    for (const ValueRef& in : r.inputs) candidates.push(in.node);
    while (!candidates.empty()) {
      const int p = candidates.top();
      candidates.pop();
      if (group_of[static_cast<size_t>(p)] >= 0 || escapes[static_cast<size_t>(p)]) continue;
      const Node& pn = g.node(p);
      if (!fusible_elementwise(g, pn) || pn.outputs[0].dtype != dtype) continue;
      const int64_t c = pn.outputs[0].shape.num_elements();
      if (c != elements && c != 1) continue;
      bool inside = true;
      for (int user : consumers[static_cast<size_t>(p)]) inside = inside && group_of[static_cast<size_t>(user)] == root;
      if (!inside) continue;
      group_of[static_cast<size_t>(p)] = root;
      members.push_back(p);
      for (const ValueRef& in : pn.inputs) candidates.push(in.node);
    }
    if (members.size() < 2) continue;
    std::sort(members.begin(), members.end());
    g.node(root) = fused_node(g, members, group_of);
    changed = true;
  }
  return changed;
}

}  // namespace ef::detail
