// Reading graphs from saved_model.proto messages (Note [loading validates everything]
// in eagerflow/saved_model/saved_model.h): each node is checked as it is added, against
// the nodes before it and the op registry, so a graph that loads is one that tracing
// could have built.
#include <cstring>
#include <tuple>

#include "saved_model/graph_serialization.h"

namespace ef::saved_model::detail {

using ef::detail::ControlFlow;
using ef::detail::fits;
using ef::detail::meta_string;
using ef::detail::Node;
using ef::detail::NodeKind;
using ef::detail::SubGraph;
using ef::detail::ValueRef;

namespace {

// Control flow nested deeper than this is refused (protobuf's own limit is 100 messages).
constexpr int kMaxNesting = 24;

std::string str(const TensorMeta& meta) { return meta_string(meta); }

}  // namespace

void Place::fail(const std::string& field, const std::string& why) const {
  ef::fail<DataLossError>(file, ": ", path, path.empty() ? "" : " ", field, ": ", why);
}

TensorSpec read_spec(const pb::TensorSpecDef& spec, const Place& at, const std::string& field,
                     bool allow_unknown) {
  if (!pb::DataType_IsValid(spec.dtype())) at.fail(field, "unknown dtype " + std::to_string(spec.dtype()));
  if (spec.shape_size() > kMaxRank)
    at.fail(field, "rank " + std::to_string(spec.shape_size()) + " exceeds " + std::to_string(kMaxRank));
  TensorSpec out{static_cast<DType>(spec.dtype()),
                 Shape(std::vector<int64_t>(spec.shape().begin(), spec.shape().end())), spec.name()};
  try {
    validate_shape(out.shape, "saved model", field, size_of(out.dtype), allow_unknown);
  } catch (const Error& e) {
    at.fail(field, e.message());
  }
  return out;
}

ValueRef read_ref(const pb::ValueRef& ref, const GraphState& graph, const Place& at,
                  const std::string& field) {
  const int nodes = static_cast<int>(graph.nodes.size());
  if (ref.node() < 0 || ref.node() >= nodes)
    at.fail(field, "refers to node " + std::to_string(ref.node()) + ", but only nodes 0.." +
                       std::to_string(nodes - 1) + " come before it");
  const int outputs = static_cast<int>(graph.node(ref.node()).outputs.size());
  if (ref.index() < 0 || ref.index() >= outputs)
    at.fail(field, "refers to output " + std::to_string(ref.index()) + " of node " +
                       std::to_string(ref.node()) + ", which has " + std::to_string(outputs));
  return {ref.node(), ref.index()};
}

namespace {

const TensorMeta& meta_of(const GraphState& g, const ValueRef& r) {
  return g.node(r.node).outputs[static_cast<size_t>(r.index)];
}

AttrValue read_attr(const pb::AttrValue& a, const Place& at, const std::string& field) {
  switch (a.value_case()) {
    case pb::AttrValue::kNone:
      return std::monostate{};
    case pb::AttrValue::kB:
      return a.b();
    case pb::AttrValue::kI:
      return a.i();
    case pb::AttrValue::kF:
      return a.f();
    case pb::AttrValue::kType:
      if (!pb::DataType_IsValid(a.type())) at.fail(field, "unknown dtype " + std::to_string(a.type()));
      return static_cast<DType>(a.type());
    case pb::AttrValue::kInts: {
      if (a.ints().values_size() > 1024)
        at.fail(field, "a list of " + std::to_string(a.ints().values_size()) + " ints");
      Dims d;
      for (int64_t v : a.ints().values()) d.push_back(v);
      return d;
    }
    case pb::AttrValue::kS:
      return a.s();
    case pb::AttrValue::VALUE_NOT_SET:
      break;
  }
  at.fail(field, "holds no value");
}

Tensor read_constant(const pb::TensorValue& v, const Place& at) {
  const TensorSpec spec = read_spec(v.spec(), at, "value.spec", /*allow_unknown=*/false);
  const size_t bytes = static_cast<size_t>(spec.shape.num_elements()) * size_of(spec.dtype);
  if (v.data().size() != bytes)
    at.fail("value.data", "holds " + std::to_string(v.data().size()) + " bytes, but " +
                              str({spec.dtype, spec.shape}) + " needs " + std::to_string(bytes));
  if (spec.dtype == DType::Bool)
    for (char c : v.data())
      if (c != 0 && c != 1)
        at.fail("value.data", "a bool byte is " + std::to_string(static_cast<unsigned char>(c)));
  Tensor t = ef::detail::empty_tensor(spec.dtype, spec.shape, kCPU, "saved model");
  if (bytes) std::memcpy(const_cast<void*>(t.raw_data()), v.data().data(), bytes);
  return t;
}

// Checks the inferred outputs of an op node against those the file declares.
void check_outputs(const OutputMetas& inferred, const Node& n, const Place& at) {
  if (inferred.size() != n.outputs.size())
    at.fail("outputs", "declares " + std::to_string(n.outputs.size()) + " outputs, but op '" +
                           std::string(n.op->name) + "' gives " + std::to_string(inferred.size()));
  for (size_t k = 0; k < inferred.size(); ++k)
    if (inferred[k].dtype != n.outputs[k].dtype || inferred[k].shape != n.outputs[k].shape)
      at.fail("outputs[" + std::to_string(k) + "]",
              "declares " + str(n.outputs[k]) + ", but op '" + std::string(n.op->name) + "' gives " +
                  str(inferred[k]) + " for these inputs and attributes");
}

const OpDef& find_registered(const std::string& name, const Place& at) {
  try {
    return find_op(name);
  } catch (const NotFoundError&) {
    ef::fail<UnimplementedError>(
        at.file, ": ", at.path, " op: '", name,
        "' is not an op of this build of eagerflow (a newer or extended version wrote it?)");
  }
}

// An op node: the op's own inference, on the inputs the file names and its attributes,
// must accept them and give the outputs the file declares.
void read_op(const pb::NodeDef& def, Node& n, const GraphState& g, const Place& at) {
  const OpDef& op = find_registered(def.op(), at);
  n.op = &op;
  if (static_cast<size_t>(def.attrs_size()) != op.attr_names.size())
    at.fail("attrs", "op '" + def.op() + "' takes " + std::to_string(op.attr_names.size()) +
                         " attributes, the node has " + std::to_string(def.attrs_size()));
  std::vector<AttrValue> attrs;
  for (int i = 0; i < def.attrs_size(); ++i)
    attrs.push_back(read_attr(
        def.attrs(i), at,
        "attrs[" + std::to_string(i) + "] ('" + std::string(op.attr_names[static_cast<size_t>(i)]) + "')"));
  n.attrs = Attrs(std::span<const AttrValue>(attrs));
  // Inference sees what it saw while tracing: constants as their values, the rest
  // symbolic.
  std::vector<Tensor> inputs;
  auto& graph = const_cast<GraphState&>(g);
  for (const ValueRef& r : n.inputs)
    inputs.push_back(g.node(r.node).kind == NodeKind::kConstant ? g.node(r.node).value : graph.output(r));
  OutputMetas inferred;
  try {
    op.infer(OpCall{op, inputs, n.attrs}, inferred);
    n.random_runs = ef::detail::random_runs_of(op, n.attrs);
  } catch (const Error& e) {
    at.fail("inputs and attrs", "op '" + def.op() + "' refuses them: " + e.message());
  }
  check_outputs(inferred, n, at);
}

void read_subgraph(const pb::SubGraphDef& def, SubGraph& sub, const std::vector<Variable>& variables,
                   const Place& at, const std::string& field, int depth) {
  const Place inner{at.file, at.path + " " + field};
  sub.graph = read_graph(def.graph(), variables, inner, depth + 1);
  for (int i = 0; i < def.args_size(); ++i) {
    const ValueRef r = read_ref(def.args(i), *sub.graph, inner, "args[" + std::to_string(i) + "]");
    if (sub.graph->node(r.node).kind != NodeKind::kPlaceholder)
      inner.fail("args[" + std::to_string(i) + "]", "is not a placeholder");
    sub.args.push_back(r);
  }
  for (int i = 0; i < def.outputs_size(); ++i)
    sub.outputs.push_back(read_ref(def.outputs(i), *sub.graph, inner, "outputs[" + std::to_string(i) + "]"));
  for (size_t i = 0; i < sub.graph->nodes.size(); ++i)
    if (sub.graph->nodes[i].stateful()) sub.stateful.push_back(static_cast<int>(i));
}

void expect(bool ok, const Place& at, const std::string& field, const std::string& why) {
  if (!ok) at.fail(field, why);
}

// A cond or while node: its sub-graphs, and inputs and outputs that agree with them as
// cond and while_loop make them.
void read_control(const pb::NodeDef& def, Node& n, const GraphState& g,
                  const std::vector<Variable>& variables, const Place& at, int depth) {
  if (!def.has_control())
    at.fail("control", "a " + std::string(n.kind == NodeKind::kCond ? "cond" : "while") +
                           " node without its sub-graphs");
  auto control = std::make_shared<ControlFlow>();
  read_subgraph(def.control().first(), control->first, variables, at, "control.first", depth);
  read_subgraph(def.control().second(), control->second, variables, at, "control.second", depth);
  control->maximum_iterations = def.control().maximum_iterations();
  control->accumulate = def.control().accumulate();
  const SubGraph &first = control->first, &second = control->second;
  const bool is_cond = n.kind == NodeKind::kCond;
  const size_t leading = is_cond ? 1 : second.args.size();
  const size_t captures = first.graph->capture_refs.size() + second.graph->capture_refs.size();
  expect(n.inputs.size() == leading + captures, at, "inputs",
         "has " + std::to_string(n.inputs.size()) + " inputs, the sub-graphs need " +
             std::to_string(leading + captures));
  std::vector<TensorMeta> in;
  for (const ValueRef& r : n.inputs) in.push_back(meta_of(g, r));
  // Each capture placeholder takes the matching input.
  size_t next = leading;
  for (const SubGraph* sub : {&first, &second})
    for (const ValueRef& c : sub->graph->capture_refs) {
      expect(fits(meta_of(*sub->graph, c), in[next]), at, "inputs[" + std::to_string(next) + "]",
             "is " + str(in[next]) + " but the sub-graph's capture is " + str(meta_of(*sub->graph, c)));
      ++next;
    }
  const auto out = [&](const SubGraph& sub, size_t k) { return meta_of(*sub.graph, sub.outputs[k]); };
  const auto scalar_bool = [](const TensorMeta& m) { return m.dtype == DType::Bool && m.shape.rank() == 0; };
  if (is_cond) {
    expect(scalar_bool(in[0]), at, "inputs[0]", "the predicate is " + str(in[0]) + ", not a scalar bool");
    expect(first.args.empty() && second.args.empty(), at, "control", "a cond branch takes no arguments");
    expect(first.outputs.size() == n.outputs.size() && second.outputs.size() == n.outputs.size(), at,
           "control",
           "the branches give " + std::to_string(first.outputs.size()) + " and " +
               std::to_string(second.outputs.size()) + " outputs for the node's " +
               std::to_string(n.outputs.size()));
    for (size_t k = 0; k < n.outputs.size(); ++k)
      for (const SubGraph* sub : {&first, &second})
        expect(fits(n.outputs[k], out(*sub, k)), at, "outputs[" + std::to_string(k) + "]",
               "is " + str(n.outputs[k]) + " but a branch gives " + str(out(*sub, k)));
  } else {
    expect(first.args.size() == leading, at, "control.first",
           "the condition takes " + std::to_string(first.args.size()) + " loop variables, the body " +
               std::to_string(leading));
    expect(first.outputs.size() == 1 && scalar_bool(out(first, 0)), at, "control.first",
           "the condition must give one scalar bool");
    expect(second.outputs.size() == leading, at, "control.second",
           "the body gives " + std::to_string(second.outputs.size()) + " values for " +
               std::to_string(leading) + " loop variables");
    for (size_t k = 0; k < leading; ++k) {
      for (const SubGraph* sub : {&first, &second})
        expect(fits(meta_of(*sub->graph, sub->args[k]), in[k]), at, "inputs[" + std::to_string(k) + "]",
               "loop variable " + std::to_string(k) + " is " + str(in[k]) + " but a sub-graph takes " +
                   str(meta_of(*sub->graph, sub->args[k])));
      expect(fits(in[k], out(second, k)), at, "control.second",
             "the body gives " + str(out(second, k)) + " for loop variable " + std::to_string(k) + " (" +
                 str(in[k]) + ")");
    }
    const size_t outputs = control->accumulate ? 2 * leading + 1 : leading;
    expect(n.outputs.size() == outputs, at, "outputs",
           "a while node with " + std::to_string(leading) + " loop variables has " + std::to_string(outputs) +
               " outputs, not " + std::to_string(n.outputs.size()));
    for (size_t k = 0; k < leading; ++k)
      expect(fits(n.outputs[k], in[k]), at, "outputs[" + std::to_string(k) + "]",
             "is " + str(n.outputs[k]) + " for a loop variable of " + str(in[k]));
  }
  n.control = std::move(control);
}

void read_node(const pb::NodeDef& def, GraphState& g, const std::vector<Variable>& variables,
               const Place& graph_at, int depth) {
  const int index = static_cast<int>(g.nodes.size());
  const Place at{graph_at.file, graph_at.path + (graph_at.path.empty() ? "" : " ") + "node " +
                                    std::to_string(index) + " ('" + def.name() + "')"};
  if (!pb::NodeKind_IsValid(def.kind())) at.fail("kind", "unknown node kind " + std::to_string(def.kind()));
  Node n;
  n.kind = static_cast<NodeKind>(def.kind());
  for (int k = 0; k < def.outputs_size(); ++k)
    n.outputs.push_back([&] {
      const TensorSpec s = read_spec(def.outputs(k), at, "outputs[" + std::to_string(k) + "]", true);
      return TensorMeta{s.dtype, s.shape};
    }());
  for (int i = 0; i < def.inputs_size(); ++i)
    n.inputs.push_back(read_ref(def.inputs(i), g, at, "inputs[" + std::to_string(i) + "]"));
  for (const auto& [field, list, out] :
       {std::tuple{"control_inputs", &def.control_inputs(), &n.control_inputs},
        std::tuple{"order_after", &def.order_after(), &n.order_after}})
    for (int c : *list) {
      if (c < 0 || c >= index)
        at.fail(field, "refers to node " + std::to_string(c) + ", which does not come before node " +
                           std::to_string(index));
      out->push_back(c);
    }
  const bool has_op = !def.op().empty() || def.attrs_size() > 0;
  expect(has_op == (n.kind == NodeKind::kOp), at, "op", "only an op node names an op and attributes");
  const bool is_variable = n.kind == NodeKind::kReadVariable || n.kind == NodeKind::kAssignVariable;
  expect(def.has_value() == (n.kind == NodeKind::kConstant), at, "value",
         "only a constant node holds a value");
  expect(def.has_control() == (n.kind == NodeKind::kCond || n.kind == NodeKind::kWhile), at, "control",
         "only a cond or while node holds sub-graphs");
  expect(is_variable || def.variable() == 0, at, "variable", "only a variable node refers to a variable");
  const auto one_output = [&](const TensorMeta& m, const std::string& what) {
    expect(n.outputs.size() == 1 && n.outputs[0].dtype == m.dtype && n.outputs[0].shape == m.shape, at,
           "outputs", "must be the one output " + str(m) + " of " + what);
  };
  switch (n.kind) {
    case NodeKind::kOp:
      read_op(def, n, g, at);
      break;
    case NodeKind::kPlaceholder:
      expect(n.inputs.empty() && n.outputs.size() == 1, at, "outputs",
             "a placeholder has no inputs and one output");
      break;
    case NodeKind::kConstant:
      expect(n.inputs.empty(), at, "inputs", "a constant has no inputs");
      n.value = read_constant(def.value(), at);
      one_output({n.value.dtype(), n.value.shape()}, "its value");
      break;
    case NodeKind::kReadVariable:
    case NodeKind::kAssignVariable: {
      if (def.variable() < 0 || def.variable() >= static_cast<int>(variables.size()))
        at.fail("variable", "refers to variable " + std::to_string(def.variable()) + " of " +
                                std::to_string(variables.size()));
      const Variable& v = variables[static_cast<size_t>(def.variable())];
      n.variable = std::make_shared<Variable>(v);
      const TensorMeta var{v.dtype(), v.shape()};
      one_output(var, "variable '" + v.name() + "'");
      if (n.kind == NodeKind::kReadVariable) {
        expect(n.inputs.empty(), at, "inputs", "a variable read has no inputs");
      } else {
        if (!pb::AssignKind_IsValid(def.assign_kind()))
          at.fail("assign_kind", "unknown kind " + std::to_string(def.assign_kind()));
        n.assign_kind = static_cast<AssignKind>(def.assign_kind());
        expect(n.inputs.size() == 1, at, "inputs", "an assignment has one input");
        const TensorMeta& value = meta_of(g, n.inputs[0]);
        expect(fits(value, var), at, "inputs[0]",
               "assigns " + str(value) + " to variable '" + v.name() + "' of " + str(var));
      }
      break;
    }
    case NodeKind::kGroup:
      expect(n.inputs.empty() && n.outputs.empty(), at, "inputs", "a group has no inputs or outputs");
      break;
    case NodeKind::kCond:
    case NodeKind::kWhile:
      if (depth >= kMaxNesting)
        at.fail("control", "control flow nested deeper than " + std::to_string(kMaxNesting));
      read_control(def, n, g, variables, at, depth);
      break;
  }
  g.add_node(std::move(n), def.name().empty() ? "node" : def.name());
}

// Later nodes (a loaded function's gradient) get names after the loaded ones: "add_3"
// counts as the fourth "add".
void continue_names(GraphState& g) {
  for (const Node& n : g.nodes) {
    const size_t sep = n.name.find_last_of('_');
    if (sep == std::string::npos || sep + 1 == n.name.size() || n.name.size() - sep > 10) continue;
    const std::string digits = n.name.substr(sep + 1);
    if (digits.find_first_not_of("0123456789") != std::string::npos) continue;
    int& count = g.name_counts[n.name.substr(0, sep)];
    count = std::max(count, std::stoi(digits) + 1);
  }
}

}  // namespace

std::shared_ptr<GraphState> read_graph(const pb::GraphDef& def, const std::vector<Variable>& variables,
                                       const Place& at, int depth) {
  auto g = std::make_shared<GraphState>();
  g->is_function = true;
  for (const pb::NodeDef& node : def.nodes()) read_node(node, *g, variables, at, depth);
  for (int i = 0; i < def.captures_size(); ++i) {
    const int c = def.captures(i);
    if (c < 0 || c >= static_cast<int>(g->nodes.size()) || g->node(c).kind != NodeKind::kPlaceholder)
      at.fail("captures[" + std::to_string(i) + "]", "is not a placeholder node of the graph");
    for (const ValueRef& r : g->capture_refs)
      if (r.node == c) at.fail("captures[" + std::to_string(i) + "]", "repeats node " + std::to_string(c));
    g->capture_refs.push_back({c, 0});
  }
  continue_names(*g);
  return g;
}

}  // namespace ef::saved_model::detail
