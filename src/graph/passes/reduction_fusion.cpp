// Reduction fusion: reduce_sum over every element of an elementwise result that nothing
// else reads becomes part of one fused_reduce_sum node
// (include/eagerflow/ops/fused_elementwise.h), which sums the values block by block
// instead of writing them out and reading them back. The summed result M is a
// fused_elementwise node with one output (what elementwise fusion made of a chain) or a
// single fusible elementwise op, such as the multiply of a dot product sum(a * b).
//
// Two forms:
//   - alone: the fused node takes the reduce_sum's place and reads M's inputs;
//   - with its producer: when one input of M is computed by another elementwise node F
//     whose result is also read elsewhere (q' = q - a * y, then sum(s * q') and the next
//     update of q'), F's and M's programs become one node in F's place, which writes F's
//     result (output 0, so F's readers are unchanged) and the sum (output 1, which the
//     reduce_sum's readers then read). This needs M's other inputs to be computed before
//     F, so that index order stays topological, and M to have F's shape, so that the
//     kept output keeps it.
//
// Only sums to a scalar are taken (keepdims would need a reshape node after it), of
// float32 or float64. Nodes left unused go with dead-code elimination. fused_reduce_sum
// sums in reduce_sum's own order (Note [fused sums are reduce_sum's bits]), so results
// are bit for bit the same.
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

// A node as a one-output FusedProgram over its inputs, if it can be fused.
struct Piece {
  FusedProgram program;
  std::vector<ValueRef> inputs;
};

bool as_piece(const PassGraph& g, const Node& n, Piece& piece) {
  static const OpDef& fused = find_op("fused_elementwise");
  if (n.kind == NodeKind::kOp && n.op == &fused && n.outputs.size() == 1 && n.control_inputs.empty()) {
    piece = {fused_program_from_attrs(n.attrs), n.inputs};
    return true;
  }
  if (!fusible_elementwise(g, n)) return false;
  piece = {};
  std::vector<int64_t> operands;
  for (const ValueRef& in : n.inputs) operands.push_back(input_index(piece.inputs, in));
  piece.program.num_inputs = static_cast<int64_t>(piece.inputs.size());
  piece.program.outputs = {piece.program.add(*n.op, std::move(operands))};
  return true;
}

// Appends `piece`'s instructions to `out` (whose inputs are final) and returns the value
// its output became; `input_value(i)` is the value piece input i stands for.
template <class InputValue>
int64_t append(FusedProgram& out, const Piece& piece, InputValue input_value) {
  std::vector<int64_t> value(static_cast<size_t>(piece.program.num_inputs));
  for (int64_t i = 0; i < piece.program.num_inputs; ++i) value[static_cast<size_t>(i)] = input_value(i);
  for (const FusedInstruction& ins : piece.program.instructions) {
    std::vector<int64_t> operands;
    for (int64_t v : ins.operands) operands.push_back(value[static_cast<size_t>(v)]);
    value.push_back(out.add(*ins.op, std::move(operands)));
  }
  return value[static_cast<size_t>(piece.program.outputs[0])];
}

Node fused_sum_node(const FusedProgram& program, std::vector<ValueRef> inputs, std::vector<TensorMeta> outputs,
                    std::string name) {
  static const OpDef& fused_sum = find_op("fused_reduce_sum");
  Node n;
  n.kind = NodeKind::kOp;
  n.op = &fused_sum;
  n.attrs = fused_program_to_attrs(program);
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  n.name = std::move(name);
  return n;
}

// F's program followed by M's, M reading F's output where it read `f`: outputs F's
// value, then M's.
Node merged_node(const Piece& f_piece, const Piece& m_piece, ValueRef f, const Node& f_node, const Node& sum) {
  std::vector<ValueRef> inputs = f_piece.inputs;
  for (const ValueRef& in : m_piece.inputs)
    if (in != f) input_index(inputs, in);
  FusedProgram program;
  program.num_inputs = static_cast<int64_t>(inputs.size());
  const int64_t f_value = append(program, f_piece, [&](int64_t i) { return input_index(inputs, f_piece.inputs[i]); });
  const int64_t m_value = append(program, m_piece, [&](int64_t i) {
    return m_piece.inputs[i] == f ? f_value : input_index(inputs, m_piece.inputs[i]);
  });
  program.outputs = {f_value, m_value};
  return fused_sum_node(program, std::move(inputs), {f_node.outputs[0], sum.outputs[0]}, "fused_" + sum.name);
}

}  // namespace

bool reduction_fusion(PassGraph& g) {
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

  Replacements replaced;
  bool changed = false;
  for (size_t i = 0; i < count; ++i) {
    const Node& sum = g.nodes[i];
    if (!live[i] || !is_full_float_sum(sum)) continue;
    const int m = sum.inputs[0].node;
    const Node& m_node = g.node(m);
    Piece m_piece;
    if (readers[static_cast<size_t>(m)] != 1 || escapes[static_cast<size_t>(m)] || !as_piece(g, m_node, m_piece) ||
        m_node.outputs[0].dtype != sum.outputs[0].dtype)
      continue;
    // With its producer: the latest node M reads, when others read it too.
    ValueRef f{-1, 0};
    for (const ValueRef& in : m_node.inputs)
      if (in.node > f.node) f = in;
    Node& f_node = g.node(f.node);
    Piece f_piece;
    if (readers[static_cast<size_t>(f.node)] > 1 && f_node.outputs.size() == 1 &&
        f_node.outputs[0].shape == m_node.outputs[0].shape && as_piece(g, f_node, f_piece)) {
      f_node = merged_node(f_piece, m_piece, f, f_node, sum);
      replaced.replace({static_cast<int>(i), 0}, {f.node, 1});
      changed = true;
      continue;
    }
    g.nodes[i] = fused_sum_node(m_piece.program, m_piece.inputs, sum.outputs, "fused_" + sum.name);
    changed = true;
  }
  if (!replaced.empty()) replaced.apply(g);
  return changed;
}

}  // namespace ef::detail
