// linearize: the JVP traced once with the primals as constants (see linearize.h).
//
// Note [linearize at one point]: the traced JVP graph runs f's forward computation
// again on each call, where everything that depends on the primals alone is folded
// into constants by the optimizer. What no folding fixes would move the point: a read
// of a variable sees its value at each call (so an assignment after linearize changed
// the JVP), and a random op draws new numbers on each run (each call linearized another
// function), and f's assignments ran again on every call. So the variables the JVP
// reads become constants holding the values f read when linearize ran it, the JVP runs
// none of f's state changes, and a JVP that needs a random op or a state-changing node
// (an assignment, a stateful op) is refused with UnimplementedError.
#include "eagerflow/graph/linearize.h"

#include <memory>
#include <unordered_set>

#include "autodiff/tape_internal.h"
#include "eagerflow/autodiff/forward_accumulator.h"
#include "eagerflow/graph/function.h"
#include "graph/executor.h"
#include "graph/function_internal.h"

namespace ef {
namespace {

using detail::Node;
using detail::NodeKind;

// The reads of variables the JVP outputs need; throws UnimplementedError for what no
// constant can stand for.
std::vector<int> variable_reads_needed(const detail::ConcreteFunctionState& st) {
  const detail::GraphState& g = *st.graph;
  std::vector<char> seen(g.nodes.size(), 0);
  std::vector<int> stack, reads;
  for (const detail::ValueRef& r : st.outputs) stack.push_back(r.node);
  auto refuse = [](const Node& n, std::string_view what) {
    fail<UnimplementedError>(
        "linearize: f's JVP needs its ", what, " '", n.name,
        "', which would run again on every call of the JVP and linearize f at another point "
        "each time; pass such values in as primals or constants");
  };
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    if (seen[static_cast<size_t>(i)]) continue;
    seen[static_cast<size_t>(i)] = 1;
    const Node& n = g.node(i);
    if (n.kind == NodeKind::kReadVariable) {
      reads.push_back(i);
      continue;
    }
    if (n.random_runs) refuse(n, "random op");
    if (n.stateful()) refuse(n, "stateful node (a variable assignment or stateful op)");
    if (n.control)
      for (const detail::SubGraph* sub : {&n.control->first, &n.control->second})
        if (const Node* inner = detail::unrepeatable_node(*sub))
          refuse(*inner,
                 "stateful node (a variable assignment, stateful op or random op) inside control flow");
    for (const detail::ValueRef& in : n.inputs) stack.push_back(in.node);
    stack.insert(stack.end(), n.control_inputs.begin(), n.control_inputs.end());
  }
  // A variable f assigns no longer holds what f read when linearize ran it.
  std::unordered_set<const void*> assigned;
  detail::visit_nested_nodes(g, st.forward_nodes, [&](const Node& m) {
    if (m.kind == NodeKind::kAssignVariable) assigned.insert(m.variable->key());
  });
  for (int i : reads)
    if (assigned.count(g.node(i).variable->key()))
      fail<UnimplementedError>("linearize: f's JVP needs its read '", g.node(i).name, "' of variable '",
                               g.node(i).variable->name(),
                               "', which f also assigns, so the variable no longer holds the value f read");
  return reads;
}

}  // namespace

Linearized linearize(const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& f,
                     const std::vector<Tensor>& primals) {
  for (size_t i = 0; i < primals.size(); ++i)
    if (!primals[i].defined() || !detail::is_differentiable(primals[i].dtype()))
      fail("linearize: primal ", i, " must be a float tensor, got ",
           primals[i].defined() ? std::string(name(primals[i].dtype())) : std::string("an undefined tensor"));
  Linearized result;
  result.outputs = f(primals);
  for (size_t k = 0; k < result.outputs.size(); ++k)
    if (!result.outputs[k].defined() || !detail::is_differentiable(result.outputs[k].dtype()))
      fail("linearize: output ", k, " of f is not a float tensor, so it has no tangent");
  auto traced = std::make_shared<Function>(
      [f, primals](const std::vector<Tensor>& tangents) {
        ForwardAccumulator acc(primals, tangents);
        return acc.jvp(f(primals), UnconnectedGradients::Zero);
      },
      "linearize");
  std::vector<TensorSpec> specs;
  for (const Tensor& p : primals) specs.push_back({p.dtype(), p.shape(), ""});
  const ConcreteFunction concrete = traced->get_concrete_function(specs);
  const detail::ConcreteFunctionState& st = *concrete.state();
  const std::vector<int> reads = variable_reads_needed(st);
  // Note [linearize at one point]: the reads become constants, then the passes run.
  // f's state changes happened when linearize ran it: the JVP runs none (no targets).
  detail::PassGraph pg = detail::pass_graph_of(*st.graph, st.forward_nodes, st.input_refs, st.outputs, {});
  {
    BuildScope eager(nullptr);
    RecordingPaused unrecorded;
    AutoCastScope as_stored(std::nullopt);  // a read node holds the stored dtype
    for (int i : reads) {
      Node& node = pg.node(i);
      node.value = node.variable->value();
      node.kind = NodeKind::kConstant;
      node.variable.reset();
      node.order_after.clear();
    }
  }
  auto graph = std::make_shared<const detail::OptimizedGraph>(
      detail::optimize(std::move(pg), graph_optimizer_options()));
  result.jvp = [graph, specs](const std::vector<Tensor>& tangents) {
    if (tangents.size() != specs.size())
      fail("linearize: ", tangents.size(), " tangents for ", specs.size(), " primals");
    std::vector<detail::Feed> feeds;
    for (size_t i = 0; i < tangents.size(); ++i) {
      detail::check_feed({specs[i].dtype, specs[i].shape}, tangents[i], "linearize",
                         "tangent " + std::to_string(i));
      feeds.push_back({graph->inputs[i], tangents[i]});
    }
    return detail::execute(*graph->graph, graph->outputs, graph->targets, feeds, "linearize");
  };
  return result;
}

}  // namespace ef
