// Graph optimization switches: which passes run when a traced function is optimized
// (once per trace, on its first call without a recording tape). See Note [optimized
// copies] in src/graph/passes/passes.h.
//
//   ef::GraphOptimizerOptions opts;            // every pass on
//   opts.elementwise_fusion = false;
//   ef::set_graph_optimizer_options(opts);     // traces optimized from now on use it
//   ef::ConcreteFunction f = ...;
//   std::cout << f.optimized_graph().to_string();
#pragma once

#include <cstdint>

namespace ef {

struct GraphOptimizerOptions {
  // Ops whose inputs are all constants run once, at optimization time.
  bool constant_folding = true;
  // Identical ops on identical inputs (and identical small constants) run once.
  bool common_subexpression_elimination = true;
  // Nodes that neither an output nor a stateful node needs are dropped.
  bool dead_code_elimination = true;
  // x * 1, x / 1, x + (-0.0), x - 0, negative(negative(x)), reshapes to the same shape...
  // where the result is bit for bit x.
  bool algebraic_simplification = true;
  // Chains of elementwise ops become one fused_elementwise node (one pass over memory).
  bool elementwise_fusion = true;
  // A sum of all elements of an elementwise op or fused chain, reduce_sum(a * b), becomes
  // one fused_reduce_sum node: the chain's values are summed block by block, never
  // written out. Results are bit for bit the same.
  bool reduction_fusion = true;
  // Fused nodes run as kernels compiled for their programs (Note [compiled fused kernels]
  // in src/ops/math/fused_compile.cpp): FusedProgram::compiled. Off by default; what
  // function(..., jit_compile = true) turns on for its traces.
  bool compile_fused_kernels = false;
  // Constant folding skips ops whose result has more elements than this, so that folding
  // never makes a graph hold large tensors.
  int64_t max_folded_elements = 100000;

  // How graphs run (functions and Session::run alike); these two take effect from the
  // next run on, for every graph. See Note [graph execution] in src/graph/executor.cpp.
  // An elementwise op writes its result into the buffer of an input that nothing else
  // can see any more, instead of allocating one. Results are bit for bit the same.
  bool in_place_reuse = true;
  // Independent nodes too small to use every thread on their own run at the same time
  // on the thread pool. Results are bit for bit the same.
  bool parallel_execution = true;

  // Every pass off and plain execution: the optimized copy runs exactly the traced
  // nodes, one by one, each into a new buffer.
  static GraphOptimizerOptions none() {
    GraphOptimizerOptions o;
    o.constant_folding = o.common_subexpression_elimination = o.dead_code_elimination = false;
    o.algebraic_simplification = o.elementwise_fusion = o.reduction_fusion = false;
    o.in_place_reuse = o.parallel_execution = false;
    return o;
  }
};

// The options traces are optimized with (process-wide; every pass on by default).
GraphOptimizerOptions graph_optimizer_options();
// Sets them for traces optimized after this call; traces already optimized keep theirs.
// Throws InvalidArgumentError for a negative max_folded_elements.
void set_graph_optimizer_options(const GraphOptimizerOptions& options);

}  // namespace ef
