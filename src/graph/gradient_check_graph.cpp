// The graph side of check_gradients (Note [graph-mode gradient checks] in
// src/autodiff/gradient_check_internal.h): sum(f) and its gradients of first and second
// order, built as graph nodes by gradients() and computed by one Session run.
#include "autodiff/gradient_check_internal.h"
#include "autodiff/tape_internal.h"
#include "eagerflow/autodiff/forward_accumulator.h"
#include "eagerflow/graph/gradients.h"
#include "eagerflow/graph/session.h"
#include "eagerflow/graph/vectorized_map.h"
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/random.h"
#include "eagerflow/ops/reduction.h"
#include "graph/graph_internal.h"

#include <cmath>
#include <optional>
#include <sstream>

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

// `count` points near x: x itself, then x moved along fixed random directions.
std::vector<Tensor> points_near(const Tensor& x, int64_t count, int64_t seed) {
  std::vector<Tensor> points{x};
  for (int64_t b = 1; b < count; ++b)
    points.push_back(add(x, multiply(random::uniform(x.shape(), -0.5, 0.5, x.dtype(), seed + b), 0.5)));
  return points;
}

// f once per element of the batched inputs (batch on axis 0), the outputs stacked;
// undefined when the elements' outputs differ in shape.
std::vector<Tensor> looped(const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& f,
                           const std::vector<Tensor>& batched, int64_t count) {
  std::vector<std::vector<Tensor>> elements;
  for (const Tensor& x : batched) elements.push_back(unstack(x, 0));
  std::vector<std::vector<Tensor>> per_output;
  for (int64_t b = 0; b < count; ++b) {
    std::vector<Tensor> element;
    for (const std::vector<Tensor>& e : elements) element.push_back(e[static_cast<size_t>(b)]);
    std::vector<Tensor> outs = f(element);
    per_output.resize(outs.size());
    for (size_t k = 0; k < outs.size(); ++k) {
      if (b > 0 && outs[k].shape() != per_output[k][0].shape()) return {};
      per_output[k].push_back(outs[k]);
    }
  }
  std::vector<Tensor> out;
  for (const std::vector<Tensor>& values : per_output) out.push_back(stack(values, 0));
  return out;
}

std::string disagreement(const std::vector<Tensor>& got, const std::vector<Tensor>& want,
                         const std::string& what) {
  if (got.size() != want.size())
    return what + ": " + std::to_string(got.size()) + " outputs, expected " + std::to_string(want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    if (got[k].shape() != want[k].shape()) {
      std::ostringstream os;
      os << what << ": output " << k << " has shape " << got[k].shape() << ", the loop gives "
         << want[k].shape();
      return os.str();
    }
    const std::vector<double> g = cast(got[k], DType::Float64).to_vector<double>();
    const std::vector<double> w = cast(want[k], DType::Float64).to_vector<double>();
    for (size_t j = 0; j < g.size(); ++j) {
      if (g[j] == w[j] || (std::isnan(g[j]) && std::isnan(w[j])) ||
          std::fabs(g[j] - w[j]) <= 1e-9 * (1 + std::fabs(w[j])))
        continue;
      std::ostringstream os;
      os << what << ": output " << k << " element " << j << " is " << g[j] << ", the loop gives " << w[j];
      return os.str();
    }
  }
  return {};
}

// Note [vectorization checks] (gradient_check.cpp): f over a batch of five points near
// the inputs (batch on axis 0; five, a size the tests' shapes rarely have, so that an
// axis mix-up shows), f again with its first input the same for every element (shared
// and batched operands mixed), then the tape's gradients of sum(f) with the batch on
// each input's last axis through vmap, each against its loop.
VectorizedCheck vectorize_check_of(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                                   const std::vector<Tensor>& inputs) {
  VectorizedCheck out;
  constexpr int64_t kCount = 5;
  std::vector<Tensor> batched, last_axis;
  std::vector<std::optional<int64_t>> in_axes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::vector<Tensor> points = points_near(inputs[i], kCount, 500 + 10 * static_cast<int64_t>(i));
    batched.push_back(stack(points, 0));
    last_axis.push_back(stack(points, inputs[i].rank()));
    in_axes.push_back(-1);
  }
  auto value = [&](const std::vector<Tensor>& x) { return std::vector<Tensor>{cast(f(x), DType::Float64)}; };
  auto gradient = [&](const std::vector<Tensor>& x) {
    GradientTape tape;
    for (const Tensor& t : x) tape.watch(t);
    const Tensor y = reduce_sum(cast(f(x), DType::Float64));
    return tape.gradient(y, std::vector<GradientTape::Source>(x.begin(), x.end()), Tensor(),
                         UnconnectedGradients::Zero);
  };
  const std::vector<Tensor> want = looped(value, batched, kCount);
  if (want.empty()) return out;  // the elements' outputs differ in shape: no batch to compare with
  // Input 0 shared: the loop runs on copies of it, vmap passes it whole.
  std::vector<Tensor> shared_first = batched, want_shared;
  std::vector<std::optional<int64_t>> shared_axes(inputs.size(), 0);
  if (inputs.size() > 1) {
    shared_first[0] = stack(std::vector<Tensor>(kCount, inputs[0]), 0);
    want_shared = looped(value, shared_first, kCount);
    shared_first[0] = inputs[0];
    shared_axes[0] = std::nullopt;
  }
  std::unordered_set<const OpDef*> rules;
  std::vector<Tensor> got, got_shared, got_gradients, want_gradients;
  {
    std::unordered_set<const OpDef*>* saved = std::exchange(ef::detail::batch_rules_run(), &rules);
    try {
      got = vectorized_map(value, batched);
      if (!want_shared.empty()) got_shared = vmap(value, shared_axes)(shared_first);
      got_gradients = vmap(gradient, in_axes, std::vector<int64_t>(inputs.size(), -1))(last_axis);
    } catch (const UnimplementedError&) {
      ef::detail::batch_rules_run() = saved;
      return out;  // what vectorized_map refuses by design (f assigns a variable per element)
    } catch (const Error& e) {
      ef::detail::batch_rules_run() = saved;
      out.checked = true;
      out.error = std::string("vectorized_map failed: ") + e.what();
      return out;
    }
    ef::detail::batch_rules_run() = saved;
  }
  for (const OpDef* op : rules)
    if (op->traits.random) return out;  // each element draws numbers of its own: no loop gives the same
  want_gradients = looped(gradient, batched, kCount);
  for (Tensor& g : got_gradients) {  // the batch from the last axis to the first
    std::vector<int64_t> perm{g.rank() - 1};
    for (int i = 0; i + 1 < g.rank(); ++i) perm.push_back(i);
    g = transpose(g, perm);
  }
  out.checked = true;
  out.error = disagreement(got, want, "vectorized_map(f)");
  if (out.error.empty() && !want_shared.empty())
    out.error = disagreement(got_shared, want_shared, "vmap(f) with input 0 shared");
  if (out.error.empty()) out.error = disagreement(got_gradients, want_gradients, "vmap of the gradient");
  out.rules = std::move(rules);
  return out;
}

[[maybe_unused]] const bool kRegistered = (graph_gradients() = graph_gradients_of, true);
[[maybe_unused]] const bool kJvpRegistered = (graph_jvp() = graph_jvp_of, true);
[[maybe_unused]] const bool kVectorizeRegistered = (graph_vectorize_check() = vectorize_check_of, true);

}  // namespace
}  // namespace ef::testing::detail
