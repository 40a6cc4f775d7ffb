// Session: runs a graph (TensorFlow 1's tf.Session).
//
//   ef::Session session(graph);
//   session.run(ef::global_variables_initializer(graph));
//   ef::Tensor y_value = session.run(y, {{x, ef::constant({1.f, 0.f})}});
//
// Each run computes only the nodes its fetches need; values are fed for placeholders
// (or any other tensor of the graph), checked against their dtype and known shape.
#pragma once

#include <utility>
#include <vector>

#include "eagerflow/graph/graph.h"

namespace ef {

// Values for symbolic tensors of the graph: {placeholder, eager value} pairs.
using FeedDict = std::vector<std::pair<Tensor, Tensor>>;

class Session {
 public:
  explicit Session(Graph graph) : graph_(std::move(graph)) {}

  // The values of `fetches` (symbolic tensors of this graph), after also running
  // `targets` (operations such as the initializer or assignments).
  std::vector<Tensor> run(const std::vector<Tensor>& fetches, const FeedDict& feeds = {},
                          const std::vector<Operation>& targets = {}, CallSite where = CallSite::current());
  Tensor run(const Tensor& fetch, const FeedDict& feeds = {}, CallSite where = CallSite::current());
  void run(const Operation& target, const FeedDict& feeds = {}, CallSite where = CallSite::current());

  const Graph& graph() const { return graph_; }

 private:
  Graph graph_;
};

}  // namespace ef
