// Graphs to and from the messages of saved_model.proto (internal to src/saved_model).
// The writer stores nodes as traced; the reader rebuilds a GraphState node by node,
// checking each against the op registry (Note [loading validates everything] in
// eagerflow/saved_model/saved_model.h).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/function_internal.h"
#include "saved_model.pb.h"

namespace ef::saved_model::detail {

namespace pb = ::eagerflow::saved_model;
using ef::detail::GraphState;

// ---- writing ----

// Gives each variable a graph uses its index in SavedModel.variables, adding new ones.
class VariableTable {
 public:
  int index_of(const Variable& variable);
  const std::vector<Variable>& variables() const { return variables_; }

 private:
  std::vector<Variable> variables_;
  std::unordered_map<const void*, int> index_;
};

// The first `nodes` nodes of `graph` (all of a sub-graph's), with their sub-graphs.
void write_graph(const GraphState& graph, int nodes, VariableTable& variables, pb::GraphDef& out);
void write_spec(const TensorSpec& spec, pb::TensorSpecDef& out);
void write_ref(const ef::detail::ValueRef& ref, pb::ValueRef& out);

// ---- reading ----

// Where a message sits in the file, for errors: "functions[2] ('predict') node 7 ('add_1')".
struct Place {
  const std::string& file;
  std::string path;
  [[noreturn]] void fail(const std::string& field, const std::string& why) const;
};

TensorSpec read_spec(const pb::TensorSpecDef& spec, const Place& at, const std::string& field,
                     bool allow_unknown);
// Rebuilds a graph; `variables` are the loaded ones (by index).
std::shared_ptr<GraphState> read_graph(const pb::GraphDef& def, const std::vector<Variable>& variables,
                                       const Place& at, int depth);
// A reference to a node output of `graph` (an earlier node when `before` >= 0).
ef::detail::ValueRef read_ref(const pb::ValueRef& ref, const GraphState& graph, const Place& at,
                              const std::string& field);

}  // namespace ef::saved_model::detail
