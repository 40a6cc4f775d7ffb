// Graph mode (TensorFlow 1 style): the same op calls that execute eagerly add nodes to
// a Graph while it is the default graph of the thread.
//
//   ef::Graph g;
//   ef::Tensor x, y;
//   {
//     ef::Graph::Scope scope(g);                       // op calls now build nodes
//     x = ef::placeholder(ef::DType::Float32, {kUnknownDim, 2});
//     ef::Variable w(ef::ones({2, 2}), "w");          // initialized by the initializer op
//     y = ef::matmul(x, w);
//   }
//   ef::Session session(g);
//   session.run(ef::global_variables_initializer(g));
//   ef::Tensor value = session.run(y, {{x, ef::constant({{1.f, 0.f}})}});
//
// Note [graph values]: a symbolic tensor built in a graph names one output of one node
// (its SymbolicValue); the graph owns its nodes, and symbolic tensors keep the graph
// alive, so a tensor can outlive the scope that built it. Eager tensors used as inputs
// while building are captured as constants. Shapes may be partial (kUnknownDim): every
// op's inference runs on symbolic inputs, so a definite mismatch fails while building,
// naming the op; a fed value that contradicts its placeholder fails in Session::run.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "eagerflow/core/tensor.h"
#include "eagerflow/runtime/context.h"
#include "eagerflow/runtime/op_def.h"
#include "eagerflow/runtime/variable.h"

namespace ef {

namespace detail {
struct GraphState;
}

class Graph;

// A node of a graph, for what is run for its effect rather than a value (an
// initializer, an assignment).
class Operation {
 public:
  Operation() = default;
  Operation(std::shared_ptr<detail::GraphState> graph, int node) : graph_(std::move(graph)), node_(node) {}
  bool defined() const { return graph_ != nullptr; }
  int node() const { return node_; }
  const std::shared_ptr<detail::GraphState>& graph_state() const { return graph_; }
  // The node's name, e.g. "init" or "assign_3".
  const std::string& name() const;

 private:
  std::shared_ptr<detail::GraphState> graph_;
  int node_ = -1;
};

// One node of Graph::nodes().
struct NodeInfo {
  // Unique in the graph; a node of a cond branch or loop body is prefixed by its
  // control-flow node ("cond/true_branch/add_1"), as TensorFlow's name scopes are.
  std::string name;
  // The op's registered name for primitive ops, else what the node is: "placeholder",
  // "constant", "read_variable", "assign_variable", "group", "cond", "while".
  std::string op;
  // "name" for a node's first output, "name:k" for output k, "^name" for a node that
  // must run before this one (control input).
  std::vector<std::string> inputs;
  std::vector<std::pair<std::string, std::string>> attrs;  // name, value as text
  std::vector<TensorMeta> outputs;
};

class Graph {
 public:
  Graph();

  // Makes `graph` the default graph of this thread for the scope's lifetime: op calls,
  // variable reads and assignments add nodes to it. Scopes nest.
  class Scope {
   public:
    explicit Scope(Graph& graph);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    std::unique_ptr<OpBuilder> builder_;
    BuildScope scope_;
    detail::GraphState* saved_;
  };

  // Number of nodes, in creation order (which is a topological order).
  int num_nodes() const;
  // A readable listing, one node per line: "%3 = add(%1, %2) : float32[?, 2]".
  std::string to_string() const;
  // The graph in Graphviz DOT.
  std::string to_dot() const;
  // Every node, sub-graph nodes included, as tools outside src/graph see them
  // (TensorBoard's graph tab): in creation order, branches and loop bodies after their
  // control-flow node.
  std::vector<NodeInfo> nodes() const;

  // The graph a symbolic tensor belongs to; throws InvalidArgumentError for an eager one.
  static Graph of(const Tensor& t);

  // The internal representation (src/graph), shared by every handle to this graph.
  explicit Graph(std::shared_ptr<detail::GraphState> state) : state_(std::move(state)) {}
  const std::shared_ptr<detail::GraphState>& state() const { return state_; }

 private:
  std::shared_ptr<detail::GraphState> state_;
};

// A value fed when the graph runs (Session::run's feeds). `shape` may have unknown
// dimensions; in eager mode this is an InvalidArgumentError.
Tensor placeholder(DType dtype, const Shape& shape, const std::string& name = "",
                   CallSite where = CallSite::current());

// An operation that initializes every variable created in `graph` (in creation order).
Operation global_variables_initializer(const Graph& graph);
// The same for the default graph of this thread; throws outside a graph scope.
Operation global_variables_initializer();

// An operation that runs what produces `values` (TensorFlow's tf.group), e.g. a training
// step's assignments, for Session::run. Eagerly there is nothing left to run: an
// undefined Operation.
Operation group(const std::vector<Tensor>& values, const std::string& name = "group",
                CallSite where = CallSite::current());

// What a step adds to the graph being built that changes state (variable assignments,
// control flow holding them), bundled into one operation for Session::run: in graph mode
// a read placed after an assignment runs after it only when both run, so running a
// training step's last assignment alone would leave the others (an optimizer's slots)
// undone. Construct before building the step, call operation() after.
class StateUpdates {
 public:
  StateUpdates();
  // The operation running every state-changing node added since construction; undefined
  // when no graph is being built (eagerly everything has already run).
  Operation operation(const std::string& name) const;

 private:
  std::shared_ptr<detail::GraphState> graph_;
  int first_node_ = 0;
};

// The variables created in `graph` (graph mode), in creation order: what a TF1-style
// Saver saves by default.
std::vector<Variable> global_variables(const Graph& graph);

// The graph being built on this thread, or null in eager mode.
detail::GraphState* current_graph();

}  // namespace ef
