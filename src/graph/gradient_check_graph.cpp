// The graph side of check_gradients (Note [graph-mode gradient checks] in
// src/autodiff/gradient_check_internal.h): sum(f) and its gradients of first and second
// order, built as graph nodes by gradients() and computed by one Session run.
#include "autodiff/gradient_check_internal.h"
#include "autodiff/tape_internal.h"
#include "eagerflow/autodiff/forward_accumulator.h"
#include "eagerflow/graph/gradients.h"
#include "eagerflow/graph/session.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/reduction.h"

namespace ef::testing::detail {
namespace {

using ef::detail::ObservedGradientFunctions;

GraphGradients graph_gradients_of(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                                  const std::vector<Tensor>& inputs, const std::vector<Tensor>& directions,
                                  int order) {
  GraphGradients out;
  Graph graph;
  std::vector<Tensor> placeholders, fetches;
  {
    Graph::Scope scope(graph);
    for (const Tensor& x : inputs) placeholders.push_back(placeholder(x.dtype(), x.shape()));
    Tensor total = reduce_sum(cast(f(placeholders), DType::Float64));
    std::vector<Tensor> first;
    {
      ObservedGradientFunctions observe(out.first_order_ops);
      first = gradients({total}, placeholders, {}, UnconnectedGradients::Zero);
    }
    fetches.push_back(total);
    fetches.insert(fetches.end(), first.begin(), first.end());
    if (order >= 2) {
      Tensor directional = constant(0.0);
      for (size_t i = 0; i < first.size(); ++i)
        directional = add(directional, reduce_sum(multiply(first[i], directions[i])));
      ObservedGradientFunctions observe(out.second_order_ops);
      std::vector<Tensor> second = gradients({directional}, placeholders, {}, UnconnectedGradients::Zero);
      fetches.insert(fetches.end(), second.begin(), second.end());
    }
  }
  FeedDict feeds;
  for (size_t i = 0; i < inputs.size(); ++i) feeds.emplace_back(placeholders[i], inputs[i]);
  Session session(graph);
  session.run(global_variables_initializer(graph));  // f may create variables (a layer built inside it)
  std::vector<Tensor> values = session.run(fetches, feeds);
  out.total = values[0];
  out.first.assign(values.begin() + 1, values.begin() + 1 + static_cast<std::ptrdiff_t>(inputs.size()));
  if (order >= 2) out.second.assign(values.begin() + 1 + static_cast<std::ptrdiff_t>(inputs.size()), values.end());
  return out;
}

GraphJvp graph_jvp_of(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                      const std::vector<Tensor>& inputs, const std::vector<Tensor>& directions) {
  GraphJvp out;
  Graph graph;
  std::vector<Tensor> placeholders, tangents;
  Tensor tangent;
  {
    Graph::Scope scope(graph);
    for (const Tensor& x : inputs) placeholders.push_back(placeholder(x.dtype(), x.shape()));
    for (const Tensor& v : directions) tangents.push_back(placeholder(v.dtype(), v.shape()));
    std::unordered_set<const OpDef*>* saved = std::exchange(ef::detail::jvp_rules_run(), &out.rules);
    try {
      ForwardAccumulator acc(placeholders, tangents);
      tangent = acc.jvp(cast(f(placeholders), DType::Float64), UnconnectedGradients::Zero);
    } catch (...) {
      ef::detail::jvp_rules_run() = saved;
      throw;
    }
    ef::detail::jvp_rules_run() = saved;
  }
  FeedDict feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    feeds.emplace_back(placeholders[i], inputs[i]);
    feeds.emplace_back(tangents[i], directions[i]);
  }
  Session session(graph);
  session.run(global_variables_initializer(graph));
  out.tangent = session.run(std::vector<Tensor>{tangent}, feeds)[0];
  return out;
}

[[maybe_unused]] const bool kRegistered = (graph_gradients() = graph_gradients_of, true);
[[maybe_unused]] const bool kJvpRegistered = (graph_jvp() = graph_jvp_of, true);

}  // namespace
}  // namespace ef::testing::detail
