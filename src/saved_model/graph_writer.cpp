// Writing graphs as saved_model.proto messages: every node as traced, constants by
// value, variables by their index in the model's variable list, control flow with its
// sub-graphs.
#include <cstring>

#include "saved_model/graph_serialization.h"

namespace ef::saved_model::detail {

using ef::detail::Node;
using ef::detail::NodeKind;
using ef::detail::SubGraph;
using ef::detail::ValueRef;

int VariableTable::index_of(const Variable& variable) {
  auto [it, inserted] = index_.try_emplace(variable.key(), static_cast<int>(variables_.size()));
  if (inserted) variables_.push_back(variable);
  return it->second;
}

void write_spec(const TensorSpec& spec, pb::TensorSpecDef& out) {
  out.set_name(spec.name);
  out.set_dtype(static_cast<pb::DataType>(spec.dtype));
  for (int64_t d : spec.shape) out.add_shape(d);
}

void write_ref(const ValueRef& ref, pb::ValueRef& out) {
  out.set_node(ref.node);
  out.set_index(ref.index);
}

namespace {

void write_attr(const AttrValue& value, pb::AttrValue& out) {
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>)
          out.set_none(true);
        else if constexpr (std::is_same_v<T, bool>)
          out.set_b(v);
        else if constexpr (std::is_same_v<T, int64_t>)
          out.set_i(v);
        else if constexpr (std::is_same_v<T, double>)
          out.set_f(v);
        else if constexpr (std::is_same_v<T, DType>)
          out.set_type(static_cast<pb::DataType>(v));
        else if constexpr (std::is_same_v<T, Dims>)
          for (int64_t d : v) out.mutable_ints()->add_values(d);
        else
          out.set_s(v);
      },
      value);
}

void write_constant(const Tensor& value, pb::TensorValue& out) {
  const Tensor host = value.cpu().contiguous();
  write_spec({host.dtype(), host.shape(), ""}, *out.mutable_spec());
  const size_t bytes = static_cast<size_t>(host.num_elements()) * size_of(host.dtype());
  out.set_data(static_cast<const char*>(host.raw_data()), bytes);
}

void write_subgraph(const SubGraph& sub, VariableTable& variables, pb::SubGraphDef& out) {
  write_graph(*sub.graph, static_cast<int>(sub.graph->nodes.size()), variables, *out.mutable_graph());
  for (const ValueRef& r : sub.args) write_ref(r, *out.add_args());
  for (const ValueRef& r : sub.outputs) write_ref(r, *out.add_outputs());
}

void write_node(const Node& n, VariableTable& variables, pb::NodeDef& out) {
  out.set_kind(static_cast<pb::NodeKind>(n.kind));
  out.set_name(n.name);
  if (n.op) {
    out.set_op(std::string(n.op->name));
    for (size_t i = 0; i < n.attrs.size(); ++i) write_attr(n.attrs[i], *out.add_attrs());
  }
  for (const ValueRef& r : n.inputs) write_ref(r, *out.add_inputs());
  for (int c : n.control_inputs) out.add_control_inputs(c);
  for (int c : n.order_after) out.add_order_after(c);
  for (const TensorMeta& m : n.outputs) write_spec({m.dtype, m.shape, ""}, *out.add_outputs());
  if (n.kind == NodeKind::kConstant) write_constant(n.value, *out.mutable_value());
  if (n.variable) out.set_variable(variables.index_of(*n.variable));
  out.set_assign_kind(static_cast<pb::AssignKind>(n.assign_kind));
  if (n.control) {
    pb::ControlFlowDef& c = *out.mutable_control();
    write_subgraph(n.control->first, variables, *c.mutable_first());
    write_subgraph(n.control->second, variables, *c.mutable_second());
    c.set_maximum_iterations(n.control->maximum_iterations);
    c.set_accumulate(n.control->accumulate);
  }
}

}  // namespace

void write_graph(const GraphState& graph, int nodes, VariableTable& variables, pb::GraphDef& out) {
  for (int i = 0; i < nodes; ++i) write_node(graph.node(i), variables, *out.add_nodes());
  for (const ValueRef& r : graph.capture_refs) out.add_captures(r.node);
}

}  // namespace ef::saved_model::detail
