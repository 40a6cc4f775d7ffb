// Reduction fusion: reduce_sum over every element of an elementwise result, when
// nothing else reads that result, becomes one fused_reduce_sum node
// (include/eagerflow/ops/fused_elementwise.h), which sums the values block by block
// instead of writing them out and reading them back. The producer is either a
// fused_elementwise node with one output (what elementwise fusion made of a chain) or
// a single fusible elementwise op, such as the multiply of a dot product sum(a * b).
//
// Only sums to a scalar are taken (keepdims would need a reshape node after it), of
// float32 or float64. The fused node takes the reduce_sum's place and reads the
// producer's inputs, which come before the producer, so index order stays topological;
// the producer is left for dead-code elimination. fused_reduce_sum sums in
// reduce_sum's own order (Note [fused sums are reduce_sum's bits]), so the result is
// bit for bit the same.
#include <algorithm>

#include "eagerflow/ops/fused_elementwise.h"
#include "graph/passes/passes.h"

namespace ef::detail {
namespace {

bool is_full_float_sum(const Node& n) {
  static const OpDef& reduce_sum = find_op("reduce_sum");
  return n.kind == NodeKind::kOp && n.op == &reduce_sum && n.control_inputs.empty() && n.outputs.size() == 1 &&
         n.outputs[0].shape.rank() == 0 && is_floating(n.outputs[0].dtype);
}

// The program and inputs fused_reduce_sum runs for `producer`.
void program_of(const Node& producer, Attrs& attrs, std::vector<ValueRef>& inputs) {
  static const OpDef& fused = find_op("fused_elementwise");
  if (producer.op == &fused) {
    attrs = producer.attrs;
    inputs = producer.inputs;
    return;
  }
  FusedProgram program;
  std::vector<int64_t> operands;
  for (const ValueRef& in : producer.inputs) {
    auto it = std::find(inputs.begin(), inputs.end(), in);
    operands.push_back(it - inputs.begin());
    if (it == inputs.end()) inputs.push_back(in);
  }
  program.num_inputs = static_cast<int64_t>(inputs.size());
  program.outputs = {program.add(*producer.op, std::move(operands))};
  attrs = fused_program_to_attrs(program);
}

}  // namespace

bool reduction_fusion(PassGraph& g) {
  static const OpDef& fused = find_op("fused_elementwise");
  static const OpDef& fused_sum = find_op("fused_reduce_sum");
  const size_t count = g.nodes.size();
  const std::vector<char> live = live_nodes(g);
  // How many live nodes read each node, and whether an output or target reads it.
  std::vector<int> readers(count, 0);
  std::vector<char> escapes(count, 0);
  for (size_t i = 0; i < count; ++i)
    if (live[i]) {
      for (const ValueRef& in : g.nodes[i].inputs) ++readers[static_cast<size_t>(in.node)];
      for (int c : g.nodes[i].control_inputs) ++readers[static_cast<size_t>(c)];
    }
  for (const ValueRef& r : g.outputs) escapes[static_cast<size_t>(r.node)] = 1;
  for (int t : g.targets) escapes[static_cast<size_t>(t)] = 1;

  bool changed = false;
  for (size_t i = 0; i < count; ++i) {
    Node& sum = g.nodes[i];
    if (!live[i] || !is_full_float_sum(sum)) continue;
    const int p = sum.inputs[0].node;
    const Node& producer = g.node(p);
    if (readers[static_cast<size_t>(p)] != 1 || escapes[static_cast<size_t>(p)]) continue;
    const bool fused_chain = producer.kind == NodeKind::kOp && producer.op == &fused && producer.outputs.size() == 1;
    if (!fused_chain && !fusible_elementwise(g, producer)) continue;
    if (producer.outputs[0].dtype != sum.outputs[0].dtype) continue;
    Node n;
    n.kind = NodeKind::kOp;
    n.op = &fused_sum;
    program_of(producer, n.attrs, n.inputs);
    n.outputs = sum.outputs;
    n.output_ids = sum.output_ids;
    n.name = "fused_" + sum.name;
    sum = std::move(n);
    changed = true;
  }
  return changed;
}

}  // namespace ef::detail
