// The state behind a ConcreteFunction (internal to src/graph and src/saved_model, which
// builds traces from files): one traced graph, its inputs and outputs, its gradient and
// its optimized copy, both made on first use.
#pragma once

#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "eagerflow/graph/function.h"
#include "graph/graph_internal.h"
#include "graph/passes/passes.h"

namespace ef::detail {

// A trace's gradient, built on first use into the trace's graph: placeholders for the
// output gradients, and gradient nodes for each input and each trainable variable read.
struct TraceGradient {
  std::vector<ValueRef> output_grads;  // placeholders
  std::vector<ValueRef> input_grads;   // node -1 where the input gets none
  std::vector<Variable> variables;     // trainable float variables read by the trace
  std::vector<ValueRef> variable_grads;
  // Forward values the gradient nodes read, kept from the forward run.
  std::vector<ValueRef> kept;
  // Note [recomputed forward values]: a gradient recorded by a tape (higher order)
  // computes the forward values again, connected on that tape. Values a second run would
  // not repeat are fed from the forward run instead (`pinned`: reads of variables the
  // trace has not assigned yet, which are the values the tapes watched, and random ops);
  // `unrepeatable` says why the recomputation would need one that cannot be fed (an
  // assignment, a read after one, a stateful op), empty if none.
  std::vector<ValueRef> pinned;
  std::string unrepeatable;
};

struct ConcreteFunctionState : std::enable_shared_from_this<ConcreteFunctionState> {
  std::string name;
  std::shared_ptr<GraphState> graph;
  std::vector<TensorSpec> inputs;
  std::vector<ValueRef> input_refs;
  std::vector<ValueRef> outputs;
  std::vector<int> stateful;  // run on every call
  int forward_nodes = 0;
  bool jit_compile = false;  // Function's: fused nodes of the optimized copy run compiled

  std::mutex gradient_mutex;
  std::unique_ptr<TraceGradient> gradient;
  std::exception_ptr gradient_error;  // why the gradient could not be built, if so
  // The forward part optimized for plain calls (Note [optimized copies]), made once.
  std::once_flag optimize_once;
  std::unique_ptr<const OptimizedGraph> optimized;

  const TraceGradient& gradient_graph();
  void build_gradient();
  // Fills tg.pinned and tg.unrepeatable (Note [recomputed forward values]).
  void find_pinned(TraceGradient& tg) const;
  // The trainable float variables the trace reads, each once, in first-read order.
  std::vector<Variable> trainable_variables_read() const;
  const OptimizedGraph& optimized_graph();
  std::vector<Tensor> call(const std::vector<Tensor>& args);
};

}  // namespace ef::detail
