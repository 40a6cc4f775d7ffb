// Building graphs: the GraphState's node list, the OpBuilder that graph scopes install
// (op calls, variable reads, assignments and creation become nodes), placeholders and
// the variables' initializer.
#include "eagerflow/graph/graph.h"

#include <algorithm>

#include "autodiff/tape_internal.h"
#include "eagerflow/ops/math.h"
#include "graph/graph_internal.h"
#include "ops/random/random_stream.h"

namespace ef {
namespace detail {

int GraphState::add_node(Node node, const std::string& base) {
  const int index = static_cast<int>(nodes.size());
  int& count = name_counts[base];
  node.name = count == 0 ? base : base + "_" + std::to_string(count);
  ++count;
  node.output_ids.clear();
  nodes.push_back(std::move(node));
  for (size_t k = 0; k < nodes.back().outputs.size(); ++k)
    nodes.back().output_ids.push_back(tensor_id(output({index, static_cast<int>(k)})));
  return index;
}

Tensor GraphState::output(ValueRef ref) {
  const Node& n = node(ref.node);
  const TensorMeta& meta = n.outputs[static_cast<size_t>(ref.index)];
  auto impl = make_ref<TensorImpl>();
  impl->dtype = meta.dtype;
  impl->shape = meta.shape;
  impl->strides = contiguous_strides(meta.shape);
  impl->symbolic = make_ref<GraphValue>(shared_from_this(), ref);
  if (static_cast<size_t>(ref.index) < n.output_ids.size()) impl->id = n.output_ids[static_cast<size_t>(ref.index)];
  return Tensor(std::move(impl));
}

const GraphValue* graph_value(const Tensor& t) {
  if (!t.is_symbolic()) return nullptr;
  return dynamic_cast<const GraphValue*>(t.impl()->symbolic.get());
}

ValueRef GraphState::value_of(const Tensor& t, std::string_view op) {
  if (!t.is_symbolic()) {
    // An eager tensor used while building: captured by value, once.
    auto [it, inserted] = captured.try_emplace(t.impl(), -1);
    if (inserted) {
      Node n;
      n.kind = NodeKind::kConstant;
      n.value = t;
      n.outputs.push_back({t.dtype(), t.shape()});
      it->second = add_node(std::move(n), "const");
    }
    return {it->second, 0};
  }
  const GraphValue* v = graph_value(t);
  if (v && v->graph.get() == this) return v->ref;
  bool enclosing = false;
  for (const GraphState* p = parent; v && p && !enclosing; p = p->parent) enclosing = v->graph.get() == p;
  if (!enclosing)
    fail(op, ": input (dtype ", t.dtype(), ", shape ", t.shape(), ") is a symbolic tensor of ",
         v ? "another graph" : "no graph", "; tensors of one graph cannot be used while building another");
  // A tensor of an enclosing graph (Note [control flow sub-graphs]): captured once.
  for (size_t i = 0; i < captures.size(); ++i)
    if (graph_value(captures[i])->graph == v->graph && graph_value(captures[i])->ref == v->ref) return capture_refs[i];
  Node p;
  p.kind = NodeKind::kPlaceholder;
  p.outputs.push_back({t.dtype(), t.shape()});
  const int index = add_node(std::move(p), "capture");
  captures.push_back(t);
  capture_refs.push_back({index, 0});
  return capture_refs.back();
}

bool fits(const TensorMeta& declared, const TensorMeta& actual) {
  if (declared.dtype != actual.dtype || declared.shape.rank() != actual.shape.rank()) return false;
  for (int d = 0; d < declared.shape.rank(); ++d)
    if (declared.shape[d] != kUnknownDim && declared.shape[d] != actual.shape[d]) return false;
  return true;
}

ControlFlowInputs split_control_inputs(const Node& node, std::span<const Tensor> inputs) {
  const size_t leading = node.kind == NodeKind::kCond ? 1 : node.control->second.args.size();
  const size_t first = node.control->first.graph->capture_refs.size();
  return {inputs.first(leading), inputs.subspan(leading, first), inputs.subspan(leading + first)};
}

std::string meta_string(const TensorMeta& meta) { return std::string(name(meta.dtype)) + meta.shape.to_string(); }

std::shared_ptr<RandomRuns> random_runs_of(const OpDef& op, const Attrs& attrs) {
  if (!op.traits.random) return nullptr;
  const auto& names = op.attr_names;
  const auto key = std::find(names.begin(), names.end(), "key");
  const auto stream = std::find(names.begin(), names.end(), "stream");
  if (key == names.end() || stream == names.end() ||
      is_stateless_stream(static_cast<uint64_t>(attrs.get_int(static_cast<size_t>(stream - names.begin())))))
    return nullptr;
  auto runs = std::make_shared<RandomRuns>();
  runs->key_attr = static_cast<size_t>(key - names.begin());
  return runs;
}

namespace {

thread_local GraphState* current = nullptr;

// Orders state: a read after the variable's last assignment, an assignment after that
// assignment and every read since (Note [graph values]).
void order_after_state(GraphState& g, Node& node, const void* key, bool is_assign) {
  if (auto it = g.last_assign.find(key); it != g.last_assign.end()) node.order_after.push_back(it->second);
  if (is_assign) {
    auto& reads = g.reads_since_assign[key];
    node.order_after.insert(node.order_after.end(), reads.begin(), reads.end());
  }
}

class GraphBuilder final : public OpBuilder {
 public:
  explicit GraphBuilder(std::shared_ptr<GraphState> graph) : graph_(std::move(graph)) {}

  std::vector<Tensor> build(const OpCall& call, const OutputMetas& metas) override {
    Node n;
    n.op = &call.op;
    n.attrs = call.attrs;
    n.random_runs = random_runs_of(call.op, call.attrs);
    n.inputs.reserve(call.inputs.size());
    for (const Tensor& t : call.inputs) n.inputs.push_back(graph_->value_of(t, call.op.name));
    for (size_t i = 0; i < metas.size(); ++i) n.outputs.push_back(metas[i]);
    const int index = graph_->add_node(std::move(n), std::string(call.op.name));
    std::vector<Tensor> out;
    out.reserve(metas.size());
    for (size_t i = 0; i < metas.size(); ++i) out.push_back(graph_->output({index, static_cast<int>(i)}));
    return out;
  }

  Tensor read_variable(const Variable& variable) override {
    Node n;
    n.kind = NodeKind::kReadVariable;
    n.variable = std::make_shared<Variable>(variable);
    n.outputs.push_back({variable.dtype(), variable.shape()});
    order_after_state(*graph_, n, variable.key(), /*is_assign=*/false);
    const int index = graph_->add_node(std::move(n), "read_" + base_name(variable));
    graph_->reads_since_assign[variable.key()].push_back(index);
    return graph_->output({index, 0});
  }

  Tensor assign_variable(const Variable& variable, const Tensor& value, AssignKind kind) override {
    Tensor next = value;
    if (kind != AssignKind::kAssign) {
      // += and -= read the variable in the graph: the same ops as eagerly.
      const Tensor current = read_variable(variable);
      next = kind == AssignKind::kAdd ? add(current, value) : subtract(current, value);
    }
    // A partially known value may fit: checked again when the assignment runs.
    if (!fits({next.dtype(), next.shape()}, {variable.dtype(), variable.shape()}))
      fail("assign: variable '", variable.name(), "' has shape ", variable.shape(), " but the new value has shape ",
           next.shape());
    Node n;
    n.kind = NodeKind::kAssignVariable;
    n.variable = std::make_shared<Variable>(variable);
    n.inputs.push_back(graph_->value_of(next, "assign"));
    n.outputs.push_back({variable.dtype(), variable.shape()});
    order_after_state(*graph_, n, variable.key(), /*is_assign=*/true);
    const int index = graph_->add_node(std::move(n), "assign_" + base_name(variable));
    graph_->last_assign[variable.key()] = index;
    graph_->reads_since_assign[variable.key()].clear();
    const Tensor out = graph_->output({index, 0});
    // Eagerly an assignment returns the tensor it assigned, with its history: a tape
    // recording the trace sees the output as identity of that value (and gradients()
    // differentiates the node so too).
    if (OpRecorder* recorder = Context::current().recorder) {
      static const OpDef& identity = find_op("identity");
      const Attrs none;
      const Tensor in[] = {next};
      const Tensor result[] = {out};
      recorder->record(OpCall{identity, std::span<const Tensor>(in), none}, result);
    }
    return out;
  }

  bool variable_created(const Variable& variable, const Tensor& initial) override {
    if (graph_->is_function) {
      // Note [variables created by functions]: the initial value must exist now.
      if (initial.is_symbolic())
        fail<FailedPreconditionError>(
            "Variable: '", variable.name(),
            "' is created inside a function from a value computed in the function; "
            "compute its initial value under an init scope (C++ ef::InitScope, Python `with "
            "ef.init_scope():`, or "
            "pass a callable initial value), or create the variable outside the function");
      return true;
    }
    // Graph mode: the variable starts uninitialized; the initializer assigns `initial`.
    const Tensor assigned = assign_variable(variable, initial, AssignKind::kAssign);
    graph_->initializers.push_back(graph_value(assigned)->ref.node);
    return false;
  }

  GraphState* graph() const { return graph_.get(); }

 private:
  static std::string base_name(const Variable& v) { return v.name().empty() ? "variable" : v.name(); }
  std::shared_ptr<GraphState> graph_;
};

}  // namespace

void visit_nested_nodes(const GraphState& graph, int nodes, const std::function<void(const Node&)>& visit) {
  for (int i = 0; i < nodes; ++i) {
    const Node& n = graph.node(i);
    visit(n);
    if (n.control)
      for (const SubGraph* sub : {&n.control->first, &n.control->second})
        visit_nested_nodes(*sub->graph, static_cast<int>(sub->graph->nodes.size()), visit);
  }
}

std::unique_ptr<OpBuilder> make_graph_builder(std::shared_ptr<GraphState> graph) {
  return std::make_unique<GraphBuilder>(std::move(graph));
}

GraphState*& current_graph_slot() { return current; }

GraphState* graph_of(OpBuilder* builder) {
  auto* graph_builder = dynamic_cast<GraphBuilder*>(builder);
  return graph_builder ? graph_builder->graph() : nullptr;
}

}  // namespace detail

const std::string& Operation::name() const {
  if (!graph_) fail("Operation: undefined operation");
  return graph_->node(node_).name;
}

Graph::Graph() : state_(std::make_shared<detail::GraphState>()) {}

Graph::Scope::Scope(Graph& graph)
    : builder_(detail::make_graph_builder(graph.state())), scope_(builder_.get()), saved_(detail::current_graph_slot()) {
  detail::current_graph_slot() = graph.state().get();
}

Graph::Scope::~Scope() { detail::current_graph_slot() = saved_; }

int Graph::num_nodes() const { return static_cast<int>(state_->nodes.size()); }

Graph Graph::of(const Tensor& t) {
  const detail::GraphValue* v = detail::graph_value(t);
  if (!v) fail("Graph::of: the tensor (dtype ", t.dtype(), ", shape ", t.shape(), ") does not belong to a graph");
  return Graph(v->graph);
}

detail::GraphState* current_graph() { return detail::current_graph_slot(); }

Tensor placeholder(DType dtype, const Shape& shape, const std::string& name, CallSite where) {
  try {
    detail::GraphState* g = current_graph();
    if (!g)
      fail("placeholder: placeholders exist only in graph mode (inside a Graph::Scope); in eager mode pass values "
           "directly");
    validate_shape(shape, "placeholder", "shape", size_of(dtype), /*allow_unknown=*/true);
    detail::Node n;
    n.kind = detail::NodeKind::kPlaceholder;
    n.outputs.push_back({dtype, shape});
    const int index = g->add_node(std::move(n), name.empty() ? "placeholder" : name);
    return g->output({index, 0});
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

namespace {
// A group node of `graph` running `nodes` (its control inputs).
Operation group_node(const std::shared_ptr<detail::GraphState>& graph, std::vector<int> nodes,
                     const std::string& name) {
  detail::Node n;
  n.kind = detail::NodeKind::kGroup;
  n.control_inputs = std::move(nodes);
  return Operation(graph, graph->add_node(std::move(n), name));
}
}  // namespace

Operation global_variables_initializer(const Graph& graph) {
  return group_node(graph.state(), graph.state()->initializers, "init");
}

Operation group(const std::vector<Tensor>& values, const std::string& name, CallSite where) {
  try {
    detail::GraphState* g = current_graph();
    if (!Context::current().builder || !g) return Operation();
    std::vector<int> nodes;
    for (const Tensor& value : values) {
      if (!value.defined()) fail("group: a value is an undefined tensor");
      nodes.push_back(g->value_of(value, "group").node);
    }
    return group_node(g->shared_from_this(), std::move(nodes), name);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

StateUpdates::StateUpdates() {
  detail::GraphState* g = current_graph();
  if (!Context::current().builder || !g) return;
  graph_ = g->shared_from_this();
  first_node_ = static_cast<int>(g->nodes.size());
}

Operation StateUpdates::operation(const std::string& name) const {
  if (!graph_) return Operation();
  const std::vector<int>& initializers = graph_->initializers;  // those run once, by the initializer
  std::vector<int> nodes;
  for (int i = first_node_; i < static_cast<int>(graph_->nodes.size()); ++i)
    if ((graph_->node(i).stateful() || graph_->node(i).control) &&
        std::find(initializers.begin(), initializers.end(), i) == initializers.end())
      nodes.push_back(i);
  return group_node(graph_, std::move(nodes), name);
}

std::vector<Variable> global_variables(const Graph& graph) {
  const detail::GraphState& g = *graph.state();
  std::vector<Variable> out;
  for (int index : g.initializers) out.push_back(*g.nodes[index].variable);  // each initializer assigns one
  return out;
}

Operation global_variables_initializer() {
  detail::GraphState* g = current_graph();
  if (!g)
    fail("global_variables_initializer: no graph is being built on this thread; pass the graph: "
         "global_variables_initializer(graph)");
  return global_variables_initializer(Graph(g->shared_from_this()));
}

}  // namespace ef
