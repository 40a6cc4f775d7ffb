// The gradient of a while_loop node of a graph: an accumulating copy of the forward
// loop and a backward while_loop over its stacked values.
//
// Note [while_loop gradients]: eagerly a while_loop is a plain loop the tape records,
// but a graph's while node runs an unknown number of times, so its gradient is itself
// a loop. Backprop needs the loop variables at the start of every body run, which the
// node does not keep; so the gradient adds an *accumulating* copy of the node (same
// sub-graphs and inputs, ControlFlow::accumulate set; maximum_iterations too), which
// also outputs, per loop variable, the stack of its values at the start of each body
// run (shape [iterations, ...]) and the iteration count. The executor collects the rows
// in a vector and stacks them once at the end, and fails naming while_loop's gradient
// when a variable changes shape between iterations (possible with unknown dimensions).
// Then a backward while_loop counts j from iterations - 1 down to 0; its body takes row
// j of each stack (gather with j as a tensor), replays the forward body on it, and
// differentiates that replay (symbolic_gradients) with respect to the row's float
// variables and the body's float captures, seeded with the loop variables' incoming
// gradients. The captures' gradients are summed in extra loop variables. An
// accumulating node differentiated again (its stacks read by a backward loop that is
// itself differentiated: higher order) is its own accumulating copy, and row j of each
// stack's incoming gradient is added to the variables' gradients of run j. Because the
// backward loop is an ordinary while node of differentiable ops, gradients of gradients
// follow from the same rule.
//
// The copy runs the loop a second time, so a condition or body with stateful nodes
// (variable assignments, random ops) would do its effects twice and the gradient would
// not match the forward run: that is refused with UnimplementedError. Integer loop
// variables and captures get no gradient, and the condition's captures get none either
// (the condition only decides how often the body runs).
#include "autodiff/tape_internal.h"
#include "eagerflow/graph/control_flow.h"
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "graph/graph_internal.h"

namespace ef::detail {

int accumulating_copy(const std::shared_ptr<GraphState>& g, int index) {
  const Node& n = g->node(index);
  if (n.control->accumulate) return index;
  for (const SubGraph* sub : {&n.control->first, &n.control->second})
    if (const Node* stateful = unrepeatable_node(*sub))
      fail<UnimplementedError>(
          "while_loop: the gradient of '", n.name, "' would run its ",
          sub == &n.control->first ? "condition" : "body", "'s stateful node '", stateful->name,
          "' (a variable assignment, stateful op or random op) a second time; differentiate a loop with "
          "stateful nodes eagerly, where the tape records every iteration");
  auto control = std::make_shared<ControlFlow>(*n.control);
  control->accumulate = true;
  Node copy;
  copy.kind = NodeKind::kWhile;
  copy.inputs = n.inputs;
  copy.outputs = n.outputs;
  for (const TensorMeta& meta : n.outputs) {
    Dims dims{kUnknownDim};
    for (int64_t d : meta.shape) dims.push_back(d);
    copy.outputs.push_back({meta.dtype, Shape(dims)});
  }
  copy.outputs.push_back({DType::Int64, Shape{}});
  copy.control = std::move(control);
  const std::string name = n.name + "_accumulate";
  return g->add_node(std::move(copy), name);  // invalidates `n`
}

std::vector<Tensor> while_gradient(const std::shared_ptr<GraphState>& g, int index,
                                   std::span<const Tensor> output_grads) {
  const std::shared_ptr<const ControlFlow> control = g->node(index).control;
  const size_t m = control->second.args.size();
  std::vector<Tensor> inputs;
  for (const ValueRef& r : g->node(index).inputs) inputs.push_back(g->output(r));
  const ControlFlowInputs split = split_control_inputs(g->node(index), inputs);
  const std::vector<Tensor> body_captures(split.second_captures.begin(), split.second_captures.end());
  const size_t first_body_capture = m + split.first_captures.size();

  std::vector<size_t> float_vars, float_captures;
  for (size_t k = 0; k < m; ++k)
    if (detail::is_differentiable(inputs[k].dtype())) float_vars.push_back(k);
  for (size_t c = 0; c < body_captures.size(); ++c)
    if (detail::is_differentiable(body_captures[c].dtype())) float_captures.push_back(c);
  std::vector<Tensor> result(inputs.size());
  if (float_vars.empty()) return result;  // no float outputs: nothing flows back

  const int acc = accumulating_copy(g, index);
  std::vector<Tensor> stacks;
  for (size_t k = 0; k < m; ++k) stacks.push_back(g->output({acc, static_cast<int>(m + k)}));
  const Tensor iterations = g->output({acc, static_cast<int>(2 * m)});

  // Loop variables of the backward loop: j, the float variables' gradients, the float
  // body captures' gradient sums.
  std::vector<Tensor> loop_vars{subtract(iterations, constant(int64_t{1}))};
  for (size_t k : float_vars) loop_vars.push_back(output_grads[k]);
  for (size_t c : float_captures) loop_vars.push_back(zeros_like(body_captures[c]));

  auto body = [&](const std::vector<Tensor>& v) {
    const Tensor& j = v[0];
    std::vector<Tensor> row;
    for (const Tensor& s : stacks) row.push_back(gather(s, j));
    const std::vector<Tensor> outs = replay(control->second, row, body_captures);
    const std::shared_ptr<GraphState> here = current_graph_slot()->shared_from_this();
    std::vector<Tensor> ys, seeds, sources;
    for (size_t i = 0; i < float_vars.size(); ++i) {
      ys.push_back(here->output(here->value_of(outs[float_vars[i]], "while_loop")));
      seeds.push_back(v[1 + i]);
      sources.push_back(row[float_vars[i]]);
    }
    for (size_t c : float_captures)
      sources.push_back(here->output(here->value_of(body_captures[c], "while_loop")));
    const std::vector<Tensor> grads =
        symbolic_gradients(here, ys, sources, seeds, UnconnectedGradients::Zero);
    std::vector<Tensor> next{subtract(j, constant(int64_t{1}))};
    for (size_t i = 0; i < float_vars.size(); ++i) {
      Tensor grad = grads[i];
      // Higher order: the stacks of an accumulating node received gradients too.
      if (control->accumulate) grad = add(grad, gather(output_grads[m + float_vars[i]], j));
      next.push_back(grad);
    }
    for (size_t i = 0; i < float_captures.size(); ++i)
      next.push_back(add(v[1 + float_vars.size() + i], grads[float_vars.size() + i]));
    return next;
  };
  const std::vector<Tensor> backward =
      while_loop([](const std::vector<Tensor>& v) { return greater_equal(v[0], constant(int64_t{0})); }, body,
                 loop_vars);
  for (size_t i = 0; i < float_vars.size(); ++i) result[float_vars[i]] = backward[1 + i];
  for (size_t i = 0; i < float_captures.size(); ++i)
    result[first_body_capture + float_captures[i]] = backward[1 + float_vars.size() + i];
  return result;
}

}  // namespace ef::detail
