// cond and while_loop (Note [control flow sub-graphs] in control_flow.h): the eager
// forms, tracing branches and bodies into sub-graphs, and replaying a sub-graph into
// the graph being built (which their gradients use).
#include "eagerflow/graph/control_flow.h"

#include <unordered_set>

#include "autodiff/tape_internal.h"
#include "eagerflow/ops/creation.h"
#include "graph/executor.h"

namespace ef {
namespace detail {

SubGraph trace_subgraph(const std::shared_ptr<GraphState>& parent, const std::string& name,
                        const std::vector<TensorMeta>& args,
                        const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& body) {
  SubGraph sub;
  sub.graph = std::make_shared<GraphState>();
  sub.graph->parent = parent.get();
  sub.graph->is_function = true;
  building(sub.graph, [&] {
    std::vector<Tensor> placeholders;
    for (const TensorMeta& meta : args) {
      Node p;
      p.kind = NodeKind::kPlaceholder;
      p.outputs.push_back(meta);
      const int index = sub.graph->add_node(std::move(p), "arg");
      sub.args.push_back({index, 0});
      placeholders.push_back(sub.graph->output({index, 0}));
    }
    const std::vector<Tensor> results = body(placeholders);
    for (size_t k = 0; k < results.size(); ++k) {
      if (!results[k].defined()) fail(name, ": output ", k, " is undefined");
      sub.outputs.push_back(sub.graph->value_of(results[k], name));
    }
    return 0;
  });
  for (size_t i = 0; i < sub.graph->nodes.size(); ++i)
    if (sub.graph->nodes[i].stateful()) sub.stateful.push_back(static_cast<int>(i));
  return sub;
}

namespace {

const TensorMeta& output_meta(const SubGraph& sub, size_t k) {
  const ValueRef& r = sub.outputs[k];
  return sub.graph->node(r.node).outputs[static_cast<size_t>(r.index)];
}

void check_scalar_bool(const TensorMeta& meta, std::string_view op, std::string_view what) {
  if (meta.dtype != DType::Bool || meta.shape.rank() != 0)
    fail(op, ": ", what, " must be a scalar bool tensor, got ", meta_string(meta));
}

// The variables assigned anywhere in `sub`, control flow nested in it included.
void collect_assigned(const SubGraph& sub, std::unordered_set<const void*>& assigned) {
  for (const Node& n : sub.graph->nodes) {
    if (n.kind == NodeKind::kAssignVariable) assigned.insert(n.variable->key());
    if (n.control)
      for (const SubGraph* inner : {&n.control->first, &n.control->second}) collect_assigned(*inner, assigned);
  }
}

// Note [variable reads in control flow]: a branch or body that reads a variable it
// never assigns (nor does control flow nested in it) sees the value the variable has
// when the node starts, in every iteration. So such a read moves to the enclosing
// graph, just before the node (the same place among that graph's reads and
// assignments), and the sub-graph captures its value: the read node becomes a capture
// placeholder. Gradients with respect to variables then flow out of the node like those
// of any capture (function tapes and gradients() look for reads in the outer graph).
// Reads of variables the node assigns stay inside and get no gradient.
void hoist_variable_reads(const ControlFlow& control) {
  std::unordered_set<const void*> assigned;
  for (const SubGraph* sub : {&control.first, &control.second}) collect_assigned(*sub, assigned);
  for (const SubGraph* sub : {&control.first, &control.second}) {
    GraphState& g = *sub->graph;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      Node& n = g.nodes[i];
      if (n.kind != NodeKind::kReadVariable || assigned.count(n.variable->key())) continue;
      const Tensor outer = n.variable->value();  // a read node of the enclosing graph
      n.kind = NodeKind::kPlaceholder;
      n.variable.reset();
      n.order_after.clear();
      g.captures.push_back(outer);
      g.capture_refs.push_back({static_cast<int>(i), 0});
    }
  }
}

// Adds a control-flow node to the graph being built and returns its outputs.
std::vector<Tensor> add_control_node(NodeKind kind, std::shared_ptr<const ControlFlow> control,
                                     std::vector<Tensor> leading_inputs, std::vector<TensorMeta> outputs,
                                     const std::string& name) {
  GraphState* g = current_graph_slot();
  hoist_variable_reads(*control);
  Node n;
  n.kind = kind;
  std::vector<Tensor> inputs = std::move(leading_inputs);  // the node's, as tensors of this graph
  for (const Tensor& t : inputs) n.inputs.push_back(g->value_of(t, name));
  for (const SubGraph* sub : {&control->first, &control->second}) {
    for (const Tensor& c : sub->graph->captures) {
      n.inputs.push_back(g->value_of(c, name));
      inputs.push_back(c);
    }
    sub->graph->captures.clear();  // no reference cycle (see GraphState::parent)
    sub->graph->parent = nullptr;
  }
  n.outputs = std::move(outputs);
  n.control = std::move(control);
  const int index = g->add_node(std::move(n), name);
  std::vector<Tensor> result;
  for (size_t k = 0; k < g->node(index).outputs.size(); ++k) result.push_back(g->output({index, static_cast<int>(k)}));
  // Tapes and forward accumulators active while the graph is built (inside a traced
  // function) see the node as one entry whose gradient is the one gradients() uses.
  // Without it the node, built here rather than dispatched, reached neither: a tape gave
  // None through cond and while_loop, and a tangent came out zero. A cond's tangents
  // come from that gradient (Note [forward mode]); a loop's would need the backward loop
  // differentiated again, which gave wrong zeros for loops with an integer counter, so
  // it is refused until loops get a forward rule of their own.
  if (Context::current().recorder) {
    if (kind == NodeKind::kWhile && tangents_reach(inputs))
      fail<UnimplementedError>(
          "while_loop: forward-mode differentiation (ForwardAccumulator, jvp) of a loop "
          "built into a graph (ef.function, graph mode) is not implemented yet: a tangent "
          "reached its loop variables or captures. Run the loop eagerly to get tangents.");
    record_custom_gradient(inputs, result, control_flow_gradient(g->shared_from_this(), index));
  }
  return result;
}

std::shared_ptr<GraphState> building_graph(std::string_view op) {
  GraphState* g = current_graph_slot();
  if (!g) fail<InternalError>(op, ": a graph builder is active but no graph is being built");
  return g->shared_from_this();
}

std::vector<Tensor> graph_cond(const Tensor& pred, const Branch& true_fn, const Branch& false_fn) {
  const std::shared_ptr<GraphState> g = building_graph("cond");
  check_scalar_bool({pred.dtype(), pred.shape()}, "cond", "'pred'");
  auto control = std::make_shared<ControlFlow>();
  control->first = trace_subgraph(g, "cond (true branch)", {}, [&](const std::vector<Tensor>&) { return true_fn(); });
  control->second = trace_subgraph(g, "cond (false branch)", {}, [&](const std::vector<Tensor>&) { return false_fn(); });
  const size_t n = control->first.outputs.size();
  if (control->second.outputs.size() != n)
    fail("cond: the true branch returns ", n, " tensors but the false branch returns ", control->second.outputs.size());
  std::vector<TensorMeta> metas;
  for (size_t k = 0; k < n; ++k) {
    const TensorMeta &a = output_meta(control->first, k), &b = output_meta(control->second, k);
    if (a.dtype != b.dtype || a.shape.rank() != b.shape.rank())
      fail("cond: output ", k, " is ", meta_string(a), " in the true branch but ", meta_string(b),
           " in the false branch; both branches must return the same dtypes and ranks");
    Dims dims = a.shape.dims();
    for (int d = 0; d < a.shape.rank(); ++d)
      if (a.shape[d] != b.shape[d]) dims[static_cast<size_t>(d)] = kUnknownDim;
    metas.push_back({a.dtype, Shape(dims)});
  }
  return add_control_node(NodeKind::kCond, std::move(control), {pred}, std::move(metas), "cond");
}

std::vector<Tensor> graph_while(const LoopCondition& condition, const LoopBody& body,
                                const std::vector<Tensor>& loop_vars, int64_t maximum_iterations) {
  const std::shared_ptr<GraphState> g = building_graph("while_loop");
  std::vector<TensorMeta> metas;
  for (const Tensor& v : loop_vars) metas.push_back({v.dtype(), v.shape()});
  auto control = std::make_shared<ControlFlow>();
  control->maximum_iterations = maximum_iterations;
  control->first = trace_subgraph(g, "while_loop (condition)", metas,
                                  [&](const std::vector<Tensor>& vars) { return std::vector<Tensor>{condition(vars)}; });
  check_scalar_bool(output_meta(control->first, 0), "while_loop", "the condition's result");
  control->second = trace_subgraph(g, "while_loop (body)", metas, body);
  if (control->second.outputs.size() != metas.size())
    fail("while_loop: the body returns ", control->second.outputs.size(), " tensors for ", metas.size(),
         " loop variables");
  for (size_t k = 0; k < metas.size(); ++k)
    if (!fits(metas[k], output_meta(control->second, k)))
      fail("while_loop: loop variable ", k, " is ", meta_string(metas[k]), " but the body returns ",
           meta_string(output_meta(control->second, k)), " for it; a loop variable keeps its dtype and shape");
  return add_control_node(NodeKind::kWhile, std::move(control), loop_vars, std::move(metas), "while");
}

}  // namespace

std::vector<Tensor> run_subgraph(const SubGraph& sub, std::span<const Tensor> args, std::span<const Tensor> captures,
                                 std::string_view who) {
  std::vector<Feed> feeds;
  for (size_t i = 0; i < sub.args.size(); ++i) feeds.push_back({sub.args[i], args[i]});
  for (size_t i = 0; i < sub.graph->capture_refs.size(); ++i) feeds.push_back({sub.graph->capture_refs[i], captures[i]});
  return execute(*sub.graph, sub.outputs, sub.stateful, feeds, who);
}

// An accumulating while node replayed (a gradient's loop, differentiated again): the
// loop's outputs `plain`, rebuilt by while_loop, extended by the stacks and the
// iteration count. Built as the accumulating copy of the rebuilt node; eagerly, the
// node runs as it is.
std::vector<Tensor> with_stacks(const std::vector<Tensor>& plain, const Node& n, std::span<const Tensor> inputs) {
  const GraphValue* v = plain.empty() ? nullptr : graph_value(plain[0]);
  if (!v) return run_node(n, inputs, "replay");
  const int acc = accumulating_copy(v->graph, v->ref.node);
  std::vector<Tensor> out;
  for (size_t k = 0; k < v->graph->node(acc).outputs.size(); ++k)
    out.push_back(v->graph->output({acc, static_cast<int>(k)}));
  return out;
}

std::vector<Tensor> replay_node(const Node& n, std::span<const Tensor> in) {
  if (n.kind != NodeKind::kCond && n.kind != NodeKind::kWhile) return run_node(n, in, "replay");
  // Control flow is replayed through cond / while_loop, which build a node again (or
  // run eagerly without a builder).
  const ControlFlow& c = *n.control;
  const ControlFlowInputs split = split_control_inputs(n, in);
  if (n.kind == NodeKind::kCond)
    return cond(
        split.leading[0], [&] { return replay(c.first, {}, split.first_captures); },
        [&] { return replay(c.second, {}, split.second_captures); });
  std::vector<Tensor> values =
      while_loop([&](const std::vector<Tensor>& v) { return replay(c.first, v, split.first_captures)[0]; },
                 [&](const std::vector<Tensor>& v) { return replay(c.second, v, split.second_captures); },
                 std::vector<Tensor>(split.leading.begin(), split.leading.end()), c.maximum_iterations);
  if (c.accumulate) values = with_stacks(values, n, in);
  return values;
}

std::vector<Tensor> replay(const SubGraph& sub, std::span<const Tensor> args, std::span<const Tensor> captures) {
  const GraphState& g = *sub.graph;
  std::vector<std::vector<Tensor>> values(g.nodes.size());
  for (size_t i = 0; i < sub.args.size(); ++i) values[static_cast<size_t>(sub.args[i].node)] = {args[i]};
  for (size_t i = 0; i < g.capture_refs.size(); ++i) values[static_cast<size_t>(g.capture_refs[i].node)] = {captures[i]};
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.kind == NodeKind::kPlaceholder) continue;  // an argument or a capture, set above
    std::vector<Tensor> in;
    for (const ValueRef& r : n.inputs) in.push_back(values[static_cast<size_t>(r.node)][static_cast<size_t>(r.index)]);
    values[i] = replay_node(n, in);
  }
  std::vector<Tensor> out;
  for (const ValueRef& r : sub.outputs) out.push_back(values[static_cast<size_t>(r.node)][static_cast<size_t>(r.index)]);
  return out;
}

const Node* unrepeatable_node(const SubGraph& sub) {
  for (const Node& n : sub.graph->nodes) {
    if (n.control)  // the innermost one: control flow holding one is stateful too
      for (const SubGraph* inner : {&n.control->first, &n.control->second})
        if (const Node* found = unrepeatable_node(*inner)) return found;
    if (n.stateful() || n.random_runs) return &n;
  }
  return nullptr;
}

std::shared_ptr<const std::function<std::vector<Tensor>(std::span<const Tensor>)>> control_flow_gradient(
    const std::shared_ptr<GraphState>& graph, int index) {
  return std::make_shared<const std::function<std::vector<Tensor>(std::span<const Tensor>)>>(
      [graph, index](std::span<const Tensor> output_grads) -> std::vector<Tensor> {
        if (graph->node(index).kind == NodeKind::kWhile) return while_gradient(graph, index, output_grads);
        const Node& n = graph->node(index);
        const ControlFlow& c = *n.control;
        // The gradient replays the branch that ran: an assignment would happen again and a
        // random op would draw other numbers than the forward run used.
        for (const SubGraph* sub : {&c.first, &c.second})
          if (const Node* unrepeatable = unrepeatable_node(*sub))
            fail<UnimplementedError>(
                "cond: the gradient of '", n.name, "' would run its ", sub == &c.first ? "true" : "false",
                " branch's stateful node '", unrepeatable->name,
                "' (a variable assignment, stateful op or random op) a second time, giving other values than "
                "the forward run; draw random numbers before the cond and pass them in, and assign variables "
                "outside it");
        std::vector<Tensor> in;
        for (const ValueRef& r : n.inputs) in.push_back(graph->output(r));
        const ControlFlowInputs split = split_control_inputs(n, in);
        const std::vector<Tensor> caps1(split.first_captures.begin(), split.first_captures.end());
        const std::vector<Tensor> caps2(split.second_captures.begin(), split.second_captures.end());
        std::vector<Tensor> seeds;
        for (size_t k = 0; k < n.outputs.size(); ++k)
          seeds.push_back(output_grads[k].defined() ? output_grads[k]
                                                    : zeros_like(graph->output({index, static_cast<int>(k)})));
        // Each branch of the gradient cond replays its forward branch, then
        // differentiates it with respect to every capture of both branches.
        auto branch_gradient = [&](const SubGraph& sub, const std::vector<Tensor>& caps) {
          const std::vector<Tensor> outs = replay(sub, {}, caps);
          const std::shared_ptr<GraphState> here = current_graph_slot()->shared_from_this();
          std::vector<Tensor> ys, ys_seeds, sources;
          for (size_t k = 0; k < outs.size(); ++k)
            if (detail::is_differentiable(outs[k].dtype())) {
              ys.push_back(here->output(here->value_of(outs[k], "cond")));
              ys_seeds.push_back(seeds[k]);
            }
          // A tensor both branches capture is an input twice: its gradient goes to the
          // first of the two, zeros to the other.
          std::vector<char> repeated;
          for (const std::vector<Tensor>* all : {&caps1, &caps2})
            for (const Tensor& cap : *all) {
              const ValueRef ref = here->value_of(cap, "cond");
              bool seen = false;
              for (const Tensor& s : sources) seen = seen || graph_value(s)->ref == ref;
              repeated.push_back(seen);
              sources.push_back(here->output(ref));
            }
          std::vector<Tensor> grads(sources.size());
          if (!ys.empty()) grads = symbolic_gradients(here, ys, sources, ys_seeds, UnconnectedGradients::Zero);
          for (size_t i = 0; i < grads.size(); ++i)
            if (ys.empty() || repeated[i]) grads[i] = zeros_like(sources[i]);
          return grads;
        };
        std::vector<Tensor> grads = cond(in[0], [&] { return branch_gradient(c.first, caps1); },
                                         [&] { return branch_gradient(c.second, caps2); });
        grads.insert(grads.begin(), Tensor());  // pred
        return grads;
      });
}

}  // namespace detail

std::vector<Tensor> cond(const Tensor& pred, const Branch& true_fn, const Branch& false_fn, CallSite where) {
  try {
    if (!pred.defined()) fail("cond: 'pred' is an undefined tensor");
    if (Context::current().builder && pred.is_symbolic()) return detail::graph_cond(pred, true_fn, false_fn);
    if (pred.dtype() != DType::Bool || pred.rank() != 0)
      fail("cond: 'pred' must be a scalar bool tensor, got dtype ", pred.dtype(), " and shape ", pred.shape());
    return static_cast<bool>(pred) ? true_fn() : false_fn();
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

Tensor cond(const Tensor& pred, const std::function<Tensor()>& true_fn, const std::function<Tensor()>& false_fn,
            CallSite where) {
  return cond(pred, Branch([&] { return std::vector<Tensor>{true_fn()}; }),
              Branch([&] { return std::vector<Tensor>{false_fn()}; }), where)[0];
}

std::vector<Tensor> while_loop(const LoopCondition& condition, const LoopBody& body, std::vector<Tensor> loop_vars,
                               int64_t maximum_iterations, CallSite where) {
  try {
    for (size_t k = 0; k < loop_vars.size(); ++k)
      if (!loop_vars[k].defined()) fail("while_loop: loop variable ", k, " is undefined");
    if (Context::current().builder) return detail::graph_while(condition, body, loop_vars, maximum_iterations);
    for (int64_t i = 0; maximum_iterations < 0 || i < maximum_iterations; ++i) {
      const Tensor keep_going = condition(loop_vars);
      if (!keep_going.defined() || keep_going.dtype() != DType::Bool || keep_going.rank() != 0)
        fail("while_loop: the condition must return a scalar bool tensor");
      if (!static_cast<bool>(keep_going)) break;
      std::vector<Tensor> next = body(loop_vars);
      if (next.size() != loop_vars.size())
        fail("while_loop: the body returns ", next.size(), " tensors for ", loop_vars.size(), " loop variables");
      for (size_t k = 0; k < next.size(); ++k)
        if (!next[k].defined() || next[k].dtype() != loop_vars[k].dtype() || next[k].shape() != loop_vars[k].shape())
          fail("while_loop: loop variable ", k, " has dtype ", loop_vars[k].dtype(), " and shape ", loop_vars[k].shape(),
               " but the body returns ",
               next[k].defined() ? std::string(name(next[k].dtype())) + " " + next[k].shape().to_string()
                                 : std::string("an undefined tensor"),
               " for it");
      loop_vars = std::move(next);
    }
    return loop_vars;
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

}  // namespace ef
