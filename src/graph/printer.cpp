// Readable listings of a graph: text (one node per line) and Graphviz DOT.
#include <sstream>

#include "graph/graph_internal.h"

namespace ef {
namespace {

std::string ref_string(const detail::GraphState& g, const detail::ValueRef& r) {
  const detail::Node& n = g.node(r.node);
  return "%" + n.name + (n.outputs.size() > 1 ? ":" + std::to_string(r.index) : "");
}

// What a node does, without its inputs: "matmul[transpose_a=false, ...]", "placeholder".
std::string describe(const detail::Node& n) {
  switch (n.kind) {
    case detail::NodeKind::kOp: {
      std::string s(n.op->name);
      if (n.attrs.size()) {
        s += "[";
        for (size_t i = 0; i < n.attrs.size(); ++i) {
          if (i) s += ", ";
          if (i < n.op->attr_names.size()) s += std::string(n.op->attr_names[i]) + "=";
          s += to_string(n.attrs[i]);
        }
        s += "]";
      }
      return s;
    }
    case detail::NodeKind::kPlaceholder: return "placeholder";
    case detail::NodeKind::kConstant:
      return n.value.num_elements() <= 4 ? "const " + n.value.to_string() : "const";
    case detail::NodeKind::kReadVariable: return "read_variable '" + n.variable->name() + "'";
    case detail::NodeKind::kAssignVariable: return "assign_variable '" + n.variable->name() + "'";
    case detail::NodeKind::kGroup: return "group";
    case detail::NodeKind::kCond: return "cond";
    case detail::NodeKind::kWhile: return n.control->accumulate ? "while accumulating" : "while";
  }
  return "?";
}

}  // namespace

namespace {

void print(const detail::GraphState& g, std::ostringstream& os, const std::string& indent);

void print_sub(const char* title, const detail::SubGraph& sub, std::ostringstream& os, const std::string& indent) {
  const detail::GraphState& g = *sub.graph;
  os << indent << "  " << title << " (";
  for (size_t i = 0; i < sub.args.size(); ++i) os << (i ? ", " : "") << ref_string(g, sub.args[i]);
  os << ") -> (";
  for (size_t i = 0; i < sub.outputs.size(); ++i) os << (i ? ", " : "") << ref_string(g, sub.outputs[i]);
  os << ") {\n";
  print(g, os, indent + "    ");
  os << indent << "  }\n";
}

void print(const detail::GraphState& g, std::ostringstream& os, const std::string& indent) {
  for (const detail::Node& n : g.nodes) {
    os << indent << "%" << n.name;
    for (size_t k = 0; k < n.outputs.size(); ++k) os << (k ? ", " : " : ") << detail::meta_string(n.outputs[k]);
    os << " = " << describe(n) << "(";
    for (size_t i = 0; i < n.inputs.size(); ++i) os << (i ? ", " : "") << ref_string(g, n.inputs[i]);
    os << ")";
    if (!n.control_inputs.empty()) {
      os << " after ";
      for (size_t i = 0; i < n.control_inputs.size(); ++i) os << (i ? ", " : "") << "%" << g.node(n.control_inputs[i]).name;
    }
    os << "\n";
    if (n.kind == detail::NodeKind::kCond) {
      print_sub("true branch", n.control->first, os, indent);
      print_sub("false branch", n.control->second, os, indent);
    } else if (n.kind == detail::NodeKind::kWhile) {
      print_sub("condition", n.control->first, os, indent);
      print_sub("body", n.control->second, os, indent);
    }
  }
}

}  // namespace

std::string Graph::to_string() const {
  std::ostringstream os;
  print(*state_, os, "");
  return os.str();
}

namespace {

std::string kind_name(const detail::Node& n) {
  switch (n.kind) {
    case detail::NodeKind::kOp:
      return std::string(n.op->name);
    case detail::NodeKind::kPlaceholder:
      return "placeholder";
    case detail::NodeKind::kConstant:
      return "constant";
    case detail::NodeKind::kReadVariable:
      return "read_variable";
    case detail::NodeKind::kAssignVariable:
      return "assign_variable";
    case detail::NodeKind::kGroup:
      return "group";
    case detail::NodeKind::kCond:
      return "cond";
    case detail::NodeKind::kWhile:
      return "while";
  }
  return "?";
}

void list_nodes(const detail::GraphState& g, const std::string& prefix, std::vector<NodeInfo>& out) {
  auto input_name = [&](const detail::ValueRef& r) {
    return prefix + g.node(r.node).name + (r.index ? ":" + std::to_string(r.index) : "");
  };
  for (const detail::Node& n : g.nodes) {
    NodeInfo info{prefix + n.name, kind_name(n), {}, {}, n.outputs};
    for (const detail::ValueRef& in : n.inputs) info.inputs.push_back(input_name(in));
    for (int c : n.control_inputs) info.inputs.push_back("^" + prefix + g.node(c).name);
    if (n.kind == detail::NodeKind::kOp)
      for (size_t i = 0; i < n.attrs.size() && i < n.op->attr_names.size(); ++i)
        info.attrs.emplace_back(n.op->attr_names[i], to_string(n.attrs[i]));
    if (n.variable) info.attrs.emplace_back("variable", n.variable->name());
    if (n.kind == detail::NodeKind::kConstant && n.value.num_elements() <= 4)
      info.attrs.emplace_back("value", n.value.to_string());
    out.push_back(std::move(info));
    if (n.control) {
      const bool is_cond = n.kind == detail::NodeKind::kCond;
      list_nodes(*n.control->first.graph, prefix + n.name + (is_cond ? "/true_branch/" : "/condition/"), out);
      list_nodes(*n.control->second.graph, prefix + n.name + (is_cond ? "/false_branch/" : "/body/"), out);
    }
  }
}

}  // namespace

std::vector<NodeInfo> Graph::nodes() const {
  std::vector<NodeInfo> out;
  list_nodes(*state_, "", out);
  return out;
}

std::string Graph::to_dot() const {
  const detail::GraphState& g = *state_;
  auto quoted = [](std::string s) {
    std::string out = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') out += '\\';
      out += c == '\n' ? ' ' : c;
    }
    return out + "\"";
  };
  std::ostringstream os;
  os << "digraph G {\n  node [shape=box, fontname=\"monospace\"];\n";
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const detail::Node& n = g.nodes[i];
    std::string label = n.name + "\n" + describe(n);
    for (const TensorMeta& m : n.outputs) label += "\n" + detail::meta_string(m);
    os << "  n" << i << " [label=" << quoted(label) << "];\n";
    for (const detail::ValueRef& in : n.inputs) os << "  n" << in.node << " -> n" << i << ";\n";
    for (int c : n.control_inputs) os << "  n" << c << " -> n" << i << " [style=dashed];\n";
  }
  os << "}\n";
  return os.str();
}

}  // namespace ef
