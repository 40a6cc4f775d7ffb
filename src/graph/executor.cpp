#include "graph/executor.h"

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/runtime/dispatch.h"
#include "ops/random/random_stream.h"

namespace ef::detail {

void check_feed(const TensorMeta& meta, const Tensor& value, std::string_view who, std::string_view what) {
  if (!value.defined()) fail(who, ": the value fed for ", what, " is an undefined tensor");
  if (value.is_symbolic()) fail(who, ": the value fed for ", what, " is symbolic; feed eager tensors");
  if (!fits(meta, {value.dtype(), value.shape()}))
    fail(who, ": ", what, " expects ", meta_string(meta), " but was fed a tensor of dtype ", value.dtype(),
         " and shape ", value.shape());
}

namespace {

// Note [random ops in graphs]: a random op's attributes hold the Philox key and stream
// it claimed when the node was built (Note [random seeds]), so running the node again
// with them would repeat its numbers; TensorFlow's graphs draw new numbers on every
// run. So the k-th run (k > 0) of a stateful random node uses key_for_run(key, k): a
// deterministic sequence given the seeds, distinct from other streams. Stateless ops
// have no RandomRuns and always repeat, as they should.
Attrs attrs_for_run(const Node& node) {
  RandomRuns& runs = *node.random_runs;
  const uint64_t k = runs.count.fetch_add(1, std::memory_order_relaxed);
  if (k == 0) return node.attrs;
  Attrs attrs = node.attrs;
  attrs.set(runs.key_attr,
            static_cast<int64_t>(key_for_run(static_cast<uint64_t>(node.attrs.get_int(runs.key_attr)), k)));
  return attrs;
}

// An accumulating while node's extra outputs (Note [while_loop gradients]): each loop
// variable's values stacked once at the end (O(iterations), not a concat per run), then
// the iteration count. `vars` holds the final values.
void append_stacks(std::vector<Tensor>& vars, const std::vector<std::vector<Tensor>>& history, std::string_view who) {
  const size_t n = vars.size();
  for (size_t k = 0; k < n; ++k) {
    const Tensor& first = history.empty() ? vars[k] : history[0][k];
    if (history.empty()) {
      Dims dims{0};
      for (int64_t d : first.shape()) dims.push_back(d);
      vars.push_back(zeros(Shape(dims), first.dtype()));
      continue;
    }
    std::vector<Tensor> rows;
    rows.reserve(history.size());
    for (size_t i = 0; i < history.size(); ++i) {
      if (history[i][k].shape() != first.shape())
        fail(who, ": while_loop's gradient needs each loop variable to keep its shape, but loop variable ", k,
             " has shape ", first.shape(), " in iteration 0 and ", history[i][k].shape(), " in iteration ", i);
      rows.push_back(history[i][k]);
    }
    vars.push_back(stack(rows, 0));
  }
  vars.push_back(constant(static_cast<int64_t>(history.size())));
}

}  // namespace

std::vector<Tensor> run_node(const Node& node, std::span<const Tensor> inputs, std::string_view who) {
  switch (node.kind) {
    case NodeKind::kOp:
      if (node.random_runs) return run_op_multi(*node.op, inputs, attrs_for_run(node), CallSite::current());
      return run_op_multi(*node.op, inputs, node.attrs, CallSite::current());
    case NodeKind::kConstant:
      return {node.value};
    case NodeKind::kReadVariable:
      return {node.variable->value()};
    case NodeKind::kAssignVariable:
      return {node.variable->assign(inputs[0])};
    case NodeKind::kGroup:
      return {};
    case NodeKind::kCond: {
      const ControlFlow& c = *node.control;
      const ControlFlowInputs in = split_control_inputs(node, inputs);
      return static_cast<bool>(in.leading[0]) ? run_subgraph(c.first, {}, in.first_captures, who)
                                              : run_subgraph(c.second, {}, in.second_captures, who);
    }
    case NodeKind::kWhile: {
      const ControlFlow& c = *node.control;
      const ControlFlowInputs in = split_control_inputs(node, inputs);
      std::vector<Tensor> vars(in.leading.begin(), in.leading.end());
      std::vector<std::vector<Tensor>> history;  // accumulating: the variables of each run
      for (int64_t i = 0; c.maximum_iterations < 0 || i < c.maximum_iterations; ++i) {
        if (!static_cast<bool>(run_subgraph(c.first, vars, in.first_captures, who)[0])) break;
        if (c.accumulate) history.push_back(vars);
        vars = run_subgraph(c.second, vars, in.second_captures, who);
      }
      if (c.accumulate) append_stacks(vars, history, who);
      return vars;
    }
    case NodeKind::kPlaceholder:
      fail(who, ": placeholder '", node.name, "' (", meta_string(node.outputs[0]),
           ") needs a value: feed one for it");
  }
  fail<InternalError>(who, ": unknown node kind");
}

std::vector<Tensor> execute(const GraphState& graph, std::span<const ValueRef> fetches, std::span<const int> targets,
                            std::span<const Feed> feeds, std::string_view who) {
  const size_t n = graph.nodes.size();
  // Values by node; fed outputs first.
  std::vector<std::vector<Tensor>> values(n);
  std::vector<char> fed(n, 0);
  for (const Feed& f : feeds) {
    const Node& node = graph.node(f.ref.node);
    check_feed(node.outputs[static_cast<size_t>(f.ref.index)], f.value, who, "'" + node.name + "'");
    auto& v = values[static_cast<size_t>(f.ref.node)];
    v.resize(node.outputs.size());
    v[static_cast<size_t>(f.ref.index)] = f.value;
    fed[static_cast<size_t>(f.ref.node)] = 1;
  }
  for (size_t i = 0; i < n; ++i)
    if (fed[i])
      for (const Tensor& t : values[i])
        if (!t.defined()) fed[i] = 0;  // partly fed: the node runs and the feeds override

  // The nodes to run, and how many of them read each node's outputs.
  std::vector<char> needed(n, 0);
  std::vector<int> uses(n, 0);
  std::vector<int> stack;
  for (const ValueRef& r : fetches) stack.push_back(r.node);
  stack.insert(stack.end(), targets.begin(), targets.end());
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    if (needed[static_cast<size_t>(i)]) continue;
    needed[static_cast<size_t>(i)] = 1;
    if (fed[static_cast<size_t>(i)]) continue;
    const Node& node = graph.node(i);
    for (const ValueRef& in : node.inputs) stack.push_back(in.node);
    for (int c : node.control_inputs) stack.push_back(c);
  }
  for (size_t i = 0; i < n; ++i)
    if (needed[i] && !fed[i])
      for (const ValueRef& in : graph.nodes[i].inputs) ++uses[static_cast<size_t>(in.node)];
  for (const ValueRef& r : fetches) ++uses[static_cast<size_t>(r.node)];  // kept to the end

  BuildScope eager(nullptr);  // the nodes execute, even inside a graph scope
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < n; ++i) {
    if (!needed[i] || fed[i]) continue;
    const Node& node = graph.nodes[i];
    inputs.clear();
    for (const ValueRef& in : node.inputs) inputs.push_back(values[static_cast<size_t>(in.node)][static_cast<size_t>(in.index)]);
    std::vector<Tensor> out = run_node(node, inputs, who);
    // Partly fed nodes: the fed outputs win.
    if (!values[i].empty())
      for (size_t k = 0; k < out.size(); ++k)
        if (values[i][k].defined()) out[k] = values[i][k];
    values[i] = std::move(out);
    for (const ValueRef& in : node.inputs)
      if (--uses[static_cast<size_t>(in.node)] == 0) values[static_cast<size_t>(in.node)].clear();
  }
  std::vector<Tensor> result;
  result.reserve(fetches.size());
  for (const ValueRef& r : fetches) result.push_back(values[static_cast<size_t>(r.node)][static_cast<size_t>(r.index)]);
  return result;
}

}  // namespace ef::detail
