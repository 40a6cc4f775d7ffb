#include "eagerflow/graph/session.h"

#include "graph/executor.h"

namespace ef {
namespace {

detail::ValueRef ref_in(const detail::GraphState& graph, const Tensor& t, std::string_view what) {
  const detail::GraphValue* v = detail::graph_value(t);
  if (!t.defined()) fail("Session::run: ", what, " is an undefined tensor");
  if (!v)
    fail("Session::run: ", what, " (dtype ", t.dtype(), ", shape ", t.shape(),
         ") is not a symbolic tensor of a graph; eager tensors already have their value");
  if (v->graph.get() != &graph) fail("Session::run: ", what, " belongs to another graph than the session's");
  return v->ref;
}

}  // namespace

std::vector<Tensor> Session::run(const std::vector<Tensor>& fetches, const FeedDict& feeds,
                                 const std::vector<Operation>& targets, CallSite where) {
  try {
    const detail::GraphState& g = *graph_.state();
    std::vector<detail::ValueRef> refs;
    for (size_t i = 0; i < fetches.size(); ++i) refs.push_back(ref_in(g, fetches[i], "fetch " + std::to_string(i)));
    std::vector<int> nodes;
    for (const Operation& op : targets) {
      if (!op.defined() || op.graph_state().get() != &g)
        fail("Session::run: operation ", op.defined() ? "'" + op.name() + "' belongs to another graph" : "is undefined");
      nodes.push_back(op.node());
    }
    std::vector<detail::Feed> fed;
    for (const auto& [key, value] : feeds) fed.push_back({ref_in(g, key, "a feed key"), value});
    return detail::execute(g, refs, nodes, fed, "Session::run");
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

Tensor Session::run(const Tensor& fetch, const FeedDict& feeds, CallSite where) {
  return run(std::vector<Tensor>{fetch}, feeds, {}, where)[0];
}

void Session::run(const Operation& target, const FeedDict& feeds, CallSite where) {
  run(std::vector<Tensor>{}, feeds, {target}, where);
}

}  // namespace ef
