// gradients(): the graph's op nodes become tape entries and the tape's backprop runs
// with the graph as the builder, so every gradient op becomes a node.
#include "eagerflow/graph/gradients.h"

#include "autodiff/tape_internal.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "graph/graph_internal.h"

namespace ef {
namespace {

std::shared_ptr<detail::GraphState> graph_of(const std::vector<Tensor>& ys) {
  if (ys.empty()) fail("gradients: 'ys' is empty");
  std::shared_ptr<detail::GraphState> g;
  for (size_t i = 0; i < ys.size(); ++i) {
    const detail::GraphValue* v = detail::graph_value(ys[i]);
    if (!v) fail("gradients: ys[", i, "] is not a symbolic tensor of a graph; eagerly, use GradientTape");
    if (g && v->graph != g) fail("gradients: ys[", i, "] belongs to another graph than ys[0]");
    g = v->graph;
  }
  return g;
}

// Whether `sub` (or control flow nested in it) reads the variable with `key`.
bool reads_inside(const detail::SubGraph& sub, const void* key) {
  bool found = false;
  detail::visit_nested_nodes(
      *sub.graph, static_cast<int>(sub.graph->nodes.size()), [&](const detail::Node& n) {
        found = found || (n.kind == detail::NodeKind::kReadVariable && n.variable->key() == key);
      });
  return found;
}

// A cond or while node that reads a variable it also assigns keeps that read inside
// (Note [variable reads in control flow]), where no gradient reaches it. When ys depend
// on such a node and the variable's gradient is asked for, the answer would silently
// miss that read's share: refuse instead.
void check_no_reads_inside_control_flow(const detail::GraphState& g, int nodes, const std::vector<Tensor>& ys,
                                        const std::vector<Variable>& variables) {
  std::vector<char> needed(static_cast<size_t>(nodes), 0);
  for (const Tensor& y : ys)
    if (const detail::GraphValue* v = detail::graph_value(y); v && v->ref.node < nodes)
      needed[v->ref.node] = 1;
  for (int i = nodes - 1; i >= 0; --i) {
    if (!needed[i]) continue;
    const detail::Node& n = g.node(i);
    for (const detail::ValueRef& in : n.inputs) needed[in.node] = 1;
    if (!n.control) continue;
    for (const Variable& variable : variables)
      if (reads_inside(n.control->first, variable.key()) || reads_inside(n.control->second, variable.key()))
        fail<UnimplementedError>(
            "gradients: variable '", variable.name(), "' is both read and assigned inside ",
            n.kind == detail::NodeKind::kCond ? "cond" : "while_loop", " node '", n.name,
            "', and gradients through a read inside control flow that also assigns the variable are not "
            "supported; read the variable before the ",
            n.kind == detail::NodeKind::kCond ? "cond" : "loop",
            " and pass the value in, or assign it after");
  }
}

}  // namespace

std::vector<Tensor> detail::symbolic_gradients(const std::shared_ptr<GraphState>& g, const std::vector<Tensor>& ys,
                                               const std::vector<Tensor>& sources, const std::vector<Tensor>& grad_ys,
                                               UnconnectedGradients unconnected) {
  if (!grad_ys.empty() && grad_ys.size() != ys.size())
    fail("gradients: 'grad_ys' has ", grad_ys.size(), " tensors but 'ys' has ", ys.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    const GraphValue* v = graph_value(sources[i]);
    if (!v || v->graph != g) fail("gradients: xs[", i, "] is not a symbolic tensor of the graph of ys");
  }
  return detail::building(g, [&] {
    std::vector<detail::TapeEntry> entries;
    for (size_t i = 0; i < g->nodes.size(); ++i) {
      const detail::Node& n = g->nodes[i];
      const bool differentiable_op = n.kind == detail::NodeKind::kOp && n.op->not_differentiable.empty();
      const bool control = n.kind == detail::NodeKind::kCond || n.kind == detail::NodeKind::kWhile;
      // An assignment outputs the value it assigns, which eagerly is that very tensor:
      // gradients pass through it as through identity.
      const bool assignment = n.kind == detail::NodeKind::kAssignVariable;
      if (!differentiable_op && !control && !assignment) continue;
      detail::TapeEntry e;
      if (control) {
        e.custom_gradient = detail::control_flow_gradient(g, static_cast<int>(i));
      } else if (assignment) {
        static const OpDef& identity = find_op("identity");
        e.op = &identity;
      } else {
        e.op = n.op;
        if (n.attrs.size()) e.attrs = std::make_shared<const Attrs>(n.attrs);
      }
      for (const detail::ValueRef& in : n.inputs) e.inputs.push_back(g->output(in));
      for (size_t k = 0; k < n.outputs.size(); ++k) e.outputs.push_back(g->output({static_cast<int>(i), static_cast<int>(k)}));
      entries.push_back(std::move(e));
    }
    // Integer and bool targets carry no gradient, as on a tape (which never watches
    // them): seeding one would send ones back through the cast that made it.
    std::vector<Tensor> targets, seeds;
    for (size_t i = 0; i < ys.size(); ++i) {
      if (!grad_ys.empty() && grad_ys[i].defined() && grad_ys[i].dtype() != ys[i].dtype())
        fail("gradients: grad_ys[", i, "] has dtype ", grad_ys[i].dtype(), " but ys[", i, "] has ",
             ys[i].dtype());
      if (!detail::is_differentiable(ys[i].dtype())) continue;
      targets.push_back(ys[i]);
      seeds.push_back(!grad_ys.empty() && grad_ys[i].defined() ? grad_ys[i] : ones_like(ys[i]));
    }
    return detail::backprop(entries, targets, seeds, sources, unconnected);
  });
}

std::vector<Tensor> gradients(const std::vector<Tensor>& ys, const std::vector<Tensor>& xs,
                              const std::vector<Tensor>& grad_ys, UnconnectedGradients unconnected, CallSite where) {
  try {
    return detail::symbolic_gradients(graph_of(ys), ys, xs, grad_ys, unconnected);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

std::vector<Tensor> detail::gradients_with_variables(const std::shared_ptr<GraphState>& g, int nodes,
                                                     const std::vector<Tensor>& ys, const std::vector<Tensor>& grad_ys,
                                                     std::vector<Tensor> sources,
                                                     const std::vector<Variable>& variables) {
  check_no_reads_inside_control_flow(*g, nodes, ys, variables);
  const size_t plain = sources.size();
  std::vector<size_t> owner;
  for (int i = 0; i < nodes; ++i) {
    const Node& n = g->node(i);
    if (n.kind != NodeKind::kReadVariable) continue;
    for (size_t v = 0; v < variables.size(); ++v)
      if (n.variable->same_as(variables[v])) {
        sources.push_back(g->output({i, 0}));
        owner.push_back(v);
      }
  }
  std::vector<Tensor> grads = symbolic_gradients(g, ys, sources, grad_ys, UnconnectedGradients::None);
  return building(g, [&] {
    std::vector<Tensor> result(grads.begin(), grads.begin() + static_cast<std::ptrdiff_t>(plain));
    result.resize(plain + variables.size());
    for (size_t s = plain; s < grads.size(); ++s) {
      if (!grads[s].defined()) continue;
      Tensor& sum = result[plain + owner[s - plain]];
      sum = sum.defined() ? add(sum, grads[s]) : grads[s];
    }
    return result;
  });
}

std::vector<Tensor> gradients(const std::vector<Tensor>& ys, const std::vector<Variable>& xs,
                              const std::vector<Tensor>& grad_ys, UnconnectedGradients unconnected, CallSite where) {
  try {
    const std::shared_ptr<detail::GraphState> g = graph_of(ys);
    std::vector<Tensor> result =
        detail::gradients_with_variables(g, static_cast<int>(g->nodes.size()), ys, grad_ys, {}, xs);
    if (unconnected == UnconnectedGradients::Zero)
      detail::building(g, [&] {
        for (size_t v = 0; v < xs.size(); ++v)
          if (!result[v].defined()) result[v] = zeros(xs[v].shape(), xs[v].dtype());
        return 0;
      });
    return result;
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

}  // namespace ef
