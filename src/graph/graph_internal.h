// The graph IR (internal to src/graph): nodes in creation order, each an op call, a
// placeholder, a captured constant, or a variable read/assignment. See
// Note [graph values] in include/eagerflow/graph/graph.h.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "eagerflow/autodiff/gradient_tape.h"
#include "eagerflow/graph/graph.h"
#include "eagerflow/runtime/op_def.h"

namespace ef::detail {

// One output of one node.
struct ValueRef {
  int node = -1;
  int index = 0;
  friend bool operator==(const ValueRef& a, const ValueRef& b) { return a.node == b.node && a.index == b.index; }
};

enum class NodeKind {
  kOp,              // a primitive op call: op, attrs, inputs
  kPlaceholder,     // fed at run time
  kConstant,        // an eager tensor captured while building (value)
  kReadVariable,    // the variable's value when the node runs
  kAssignVariable,  // variable = inputs[0] (or += / -=); outputs the new value
  kGroup,           // no value: runs its control inputs (the initializer)
  kCond,            // inputs: pred, then the captures of both branches (control)
  kWhile,           // inputs: loop variables, then the captures of condition and body
};

struct GraphState;

// A branch or loop body traced into its own graph (Note [control flow sub-graphs]).
struct SubGraph {
  std::shared_ptr<GraphState> graph;
  std::vector<ValueRef> args;     // placeholders of the explicit arguments (loop variables)
  std::vector<ValueRef> outputs;
  std::vector<int> stateful;      // run whenever the sub-graph runs
};

// cond: first = true branch, second = false branch. while_loop: first = condition,
// second = body. An accumulating while node (Note [while_loop gradients]) outputs, after
// the final loop variables, each variable's values at the start of every body run
// stacked on a new first axis, then the number of iterations (int64 scalar).
struct ControlFlow {
  SubGraph first, second;
  int64_t maximum_iterations = -1;
  bool accumulate = false;
};

// How often a stateful random op's node has run, and where its Philox key attribute is.
struct RandomRuns {
  size_t key_attr = 0;
  std::atomic<uint64_t> count{0};
};

// The run counter of a random op node that must draw new numbers on each run (Note
// [random ops in graphs]): one whose op has a "key" and a "stream" attribute and is not
// stateless; null for every other node.
std::shared_ptr<RandomRuns> random_runs_of(const OpDef& op, const Attrs& attrs);

struct Node {
  NodeKind kind = NodeKind::kOp;
  std::string name;
  const OpDef* op = nullptr;  // kOp
  Attrs attrs;                // kOp
  std::vector<ValueRef> inputs;
  std::vector<int> control_inputs;  // nodes that run whenever this one runs, before it
  // Nodes that must run before this one when both run (the order of reads and
  // assignments of a variable), without making them needed.
  std::vector<int> order_after;
  std::vector<TensorMeta> outputs;
  std::vector<int64_t> output_ids;  // tape identities of the outputs (Note [graph values])
  Tensor value;                     // kConstant
  std::shared_ptr<Variable> variable;  // kReadVariable, kAssignVariable
  AssignKind assign_kind = AssignKind::kAssign;
  std::shared_ptr<const ControlFlow> control;  // kCond, kWhile
  // Stateful random ops (Note [random ops in graphs]): shared by copies of the node.
  std::shared_ptr<RandomRuns> random_runs;

  // Assignments, stateful ops, and control flow whose branches or body hold either: a
  // cond that assigns a variable runs on every call even when its outputs go unused.
  bool stateful() const {
    return kind == NodeKind::kAssignVariable || (op && op->traits.stateful) ||
           (control && (!control->first.stateful.empty() || !control->second.stateful.empty()));
  }
};

// What a symbolic tensor of a graph carries.
class GraphValue final : public SymbolicValue {
 public:
  GraphValue(std::shared_ptr<GraphState> graph, ValueRef ref) : graph(std::move(graph)), ref(ref) {}
  std::shared_ptr<GraphState> graph;
  ValueRef ref;
};

struct GraphState : std::enable_shared_from_this<GraphState> {
  std::vector<Node> nodes;
  // Variables created while this graph was the default, with their initializer nodes.
  std::vector<int> initializers;
  // Each captured eager tensor once (by TensorImpl).
  std::unordered_map<const TensorImpl*, int> captured;
  // The last node that touched each variable (by Variable::key()), and the reads since
  // its last assignment: later reads and assignments are ordered after them.
  std::unordered_map<const void*, int> last_assign;
  std::unordered_map<const void*, std::vector<int>> reads_since_assign;
  std::unordered_map<std::string, int> name_counts;
  // Set while tracing a function: variables must then be created with eager values.
  bool is_function = false;
  // A sub-graph's enclosing graph, while it is being built (not owned: the enclosing
  // graph owns its control-flow nodes' sub-graphs). A tensor of an enclosing graph used
  // here is captured: it becomes a placeholder here (capture_refs), fed with the outer
  // value, which the control-flow node takes as an input. `captures` holds the outer
  // tensors until that node is built, then is emptied, since holding them would keep
  // the enclosing graph alive through its own node (a reference cycle).
  GraphState* parent = nullptr;
  std::vector<Tensor> captures;
  std::vector<ValueRef> capture_refs;

  // Appends `node`, naming it uniquely after `base` ("add", "add_1", ...) and giving its
  // outputs tape identities. Returns its index.
  int add_node(Node node, const std::string& base);
  // A symbolic tensor for output `ref` (the same tape identity every time).
  Tensor output(ValueRef ref);
  // The node output a tensor of this graph stands for; an eager tensor becomes a
  // constant node. Throws InvalidArgumentError for a tensor of another graph.
  ValueRef value_of(const Tensor& t, std::string_view op);
  const Node& node(int index) const { return nodes[static_cast<size_t>(index)]; }
};

// The graph a symbolic tensor belongs to (null for eager tensors and other symbolic
// kinds), and which output it is.
const GraphValue* graph_value(const Tensor& t);

// The builder a graph scope installs (op calls, variable reads, assignments and
// creation become nodes of `graph`).
std::unique_ptr<OpBuilder> make_graph_builder(std::shared_ptr<GraphState> graph);
// The graph placeholders and the initializer go to on this thread (null: none).
GraphState*& current_graph_slot();
// The graph `builder` adds nodes to; null for a builder that is not a graph's.
GraphState* graph_of(OpBuilder* builder);

// Makes `graph` the one placeholders, control flow and the initializer go to on this
// thread, for the scope's lifetime.
class CurrentGraphScope {
 public:
  explicit CurrentGraphScope(GraphState* graph) : saved_(current_graph_slot()) { current_graph_slot() = graph; }
  ~CurrentGraphScope() { current_graph_slot() = saved_; }
  CurrentGraphScope(const CurrentGraphScope&) = delete;
  CurrentGraphScope& operator=(const CurrentGraphScope&) = delete;

 private:
  GraphState* saved_;
};

// Makes `trace` the function this thread is tracing (Context::function_trace) for the
// scope's lifetime.
class FunctionTraceScope {
 public:
  explicit FunctionTraceScope(const FunctionTrace& trace)
      : saved_(std::exchange(Context::current().function_trace, &trace)) {}
  ~FunctionTraceScope() { Context::current().function_trace = saved_; }
  FunctionTraceScope(const FunctionTraceScope&) = delete;
  FunctionTraceScope& operator=(const FunctionTraceScope&) = delete;

 private:
  const FunctionTrace* saved_;
};

// Runs `body` with `graph` as this thread's builder and tapes paused: what it calls
// adds nodes to the graph.
template <class F>
auto building(const std::shared_ptr<GraphState>& graph, F&& body) {
  std::unique_ptr<OpBuilder> builder = make_graph_builder(graph);
  BuildScope scope(builder.get());
  CurrentGraphScope current(graph.get());
  RecordingPaused no_tape;
  return body();
}

// Runs a sub-graph on eager values of its arguments and captures.
std::vector<Tensor> run_subgraph(const SubGraph& sub, std::span<const Tensor> args, std::span<const Tensor> captures,
                                 std::string_view who);
// Calls `visit` on the first `nodes` nodes of `graph` and, depth first, on every node of
// the sub-graphs of its control-flow nodes.
void visit_nested_nodes(const GraphState& graph, int nodes, const std::function<void(const Node&)>& visit);

// Traces `body` into a new sub-graph with placeholders of `args`' dtypes and shapes;
// tensors of `parent` (when not null) that body uses become captures (GraphState::parent).
SubGraph trace_subgraph(const std::shared_ptr<GraphState>& parent, const std::string& name,
                        const std::vector<TensorMeta>& args,
                        const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& body);

// Adds one node's computation to the graph being built (or runs it eagerly, recorded by
// tapes), on `inputs`: its op, or cond / while_loop again for control flow.
std::vector<Tensor> replay_node(const Node& node, std::span<const Tensor> inputs);

// While set on this thread, vectorized_map adds every op whose batching rule it runs
// (check_gradients learns from it which rules it verified).
std::unordered_set<const OpDef*>*& batch_rules_run();

// Adds a sub-graph's computation to the graph being built (or runs it eagerly), with
// `args` and `captures` standing for its placeholders; returns its outputs.
std::vector<Tensor> replay(const SubGraph& sub, std::span<const Tensor> args, std::span<const Tensor> captures);

// Adds to `graph` the nodes computing d(ys · grad_ys)/d(sources) (gradients() without
// its argument checks; grad_ys may be empty or hold undefined tensors for ones).
std::vector<Tensor> symbolic_gradients(const std::shared_ptr<GraphState>& graph, const std::vector<Tensor>& ys,
                                       const std::vector<Tensor>& sources, const std::vector<Tensor>& grad_ys,
                                       UnconnectedGradients unconnected);

// The gradient of a cond (a cond of its branches' gradients) or while_loop node of
// `graph`, for backprop: takes the outputs' gradients, returns one per input.
std::shared_ptr<const std::function<std::vector<Tensor>(std::span<const Tensor>)>> control_flow_gradient(
    const std::shared_ptr<GraphState>& graph, int node);

// The first node of `sub`, or of control flow nested in it (innermost first), that a
// second run would not repeat faithfully: a stateful node (an assignment would happen
// twice) or a random op that draws new numbers on every run (Note [random ops in
// graphs]). Null if none. Gradients that replay or rerun forward computations (cond and
// while_loop gradients, a function's higher-order gradient) refuse such nodes.
const Node* unrepeatable_node(const SubGraph& sub);

// The node computing while node `index`'s loop with stacks: the node itself if it
// accumulates, else an accumulating copy added to `graph` (Note [while_loop gradients]).
int accumulating_copy(const std::shared_ptr<GraphState>& graph, int index);
// The gradient of while node `node` of `graph` (Note [while_loop gradients]): adds the
// backward loop to the graph being built; one gradient per input of the node.
std::vector<Tensor> while_gradient(const std::shared_ptr<GraphState>& graph, int node,
                                   std::span<const Tensor> output_grads);

// symbolic_gradients with respect to `sources` and `variables` in one backward pass:
// the sources' gradients, then one per variable. Every read of a variable among the
// first `nodes` nodes of `graph` is a source, and a variable's gradient is the sum over
// its reads (undefined where there is none).
std::vector<Tensor> gradients_with_variables(const std::shared_ptr<GraphState>& graph, int nodes,
                                             const std::vector<Tensor>& ys, const std::vector<Tensor>& grad_ys,
                                             std::vector<Tensor> sources, const std::vector<Variable>& variables);

// Whether a value of `actual` dtype and shape can stand where `declared` is expected:
// the same dtype and rank, and equal sizes wherever `declared` knows them.
bool fits(const TensorMeta& declared, const TensorMeta& actual);

// The inputs of a cond node (pred, captures of each branch) or a while node (loop
// variables, captures of condition and body), split by role.
struct ControlFlowInputs {
  std::span<const Tensor> leading, first_captures, second_captures;
};
ControlFlowInputs split_control_inputs(const Node& node, std::span<const Tensor> inputs);

// "float32[?, 2]" for listings and errors.
std::string meta_string(const TensorMeta& meta);

}  // namespace ef::detail
