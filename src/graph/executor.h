// Running a graph: the nodes the fetches need, in creation order, each op through the
// same dispatch as eager code. Internal to src/graph.
#pragma once

#include <span>
#include <vector>

#include "graph/graph_internal.h"

namespace ef::detail {

// A value given for a node output instead of computing it (placeholders, or any node).
struct Feed {
  ValueRef ref;
  Tensor value;
};

// What one run computes: `fetches` (returned in order) and `targets`, nodes run for
// their effect (assignments, the initializer). Runs every node they depend on, through
// inputs and control inputs, that is not fed; frees each value after its last use,
// reuses dead inputs' buffers in place and runs small independent nodes in parallel
// (Note [graph execution] in executor.cpp). `who` names the caller in errors
// ("Session::run", a function's name).
std::vector<Tensor> execute(const GraphState& graph, std::span<const ValueRef> fetches, std::span<const int> targets,
                            std::span<const Feed> feeds, std::string_view who);

// Runs one node on eager `inputs`. Control-flow nodes run their sub-graphs; a
// placeholder without a value is an error naming it.
std::vector<Tensor> run_node(const Node& node, std::span<const Tensor> inputs, std::string_view who);

// The attributes of a stateful random node's next run: its own on the first, then a
// new Philox key each time (Note [random ops in graphs] in executor.cpp).
Attrs attrs_for_run(const Node& node);

// How many node runs so far went to the thread pool in batches (Note [parallel nodes]
// in executor.cpp), process-wide: for tests.
uint64_t batched_node_runs();

// Checks that `value` can stand for `meta` (same dtype, same rank, equal known
// dimensions); throws InvalidArgumentError naming `who` and `what`.
void check_feed(const TensorMeta& meta, const Tensor& value, std::string_view who, std::string_view what);

}  // namespace ef::detail
