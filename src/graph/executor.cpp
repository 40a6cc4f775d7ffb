#include "graph/executor.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <queue>

#include "core/parallel_tasks.h"
#include "eagerflow/core/threading.h"
#include "eagerflow/graph/optimizer_options.h"
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/runtime/dispatch.h"
#include "ops/random/random_stream.h"
#include "runtime/dispatch_internal.h"

// Note [graph execution]: execute() runs the nodes its fetches and targets need.
//
// Last use. Each output is dropped as soon as the last node reading it has taken it as
// an input (fetched values are kept to the end), so a value's buffer goes back to the
// caching allocator, and to the next op that allocates, while the run goes on. Outputs
// of one node go separately: fused_reduce_sum's kept output can be overwritten in place
// by the next update while its sum is still to be fetched.
//
// Note [in-place reuse]: an elementwise op whose op allows it (OpTraits::in_place: the
// unary_op/binary_op builders, whose row loops have no __restrict pointers, and
// fused_elementwise, which stages an output in scratch while a later step still reads
// the input it overwrites) writes output 0 into the buffer of an input at its last use
// instead of allocating, when that input is contiguous, of the output's dtype and
// shape, and nobody else can observe it: the executor holds the only reference to its
// TensorImpl and that TensorImpl the only one to its Storage (no views, no copies), and
// the memory is not foreign (Storage::wrap). Feeds (held by the caller), captured
// constants (by their node), variable values (by the variable) and fetched values (kept
// in `values` to the end) fail the reference count check by themselves, so they are
// never overwritten. A recording tape would keep the inputs it records, so nothing is
// reused while one records. Results are bit for bit those of fresh buffers.
//
// Note [parallel nodes]: when several independent nodes are ready and each is too small
// for its own kernel to spread over the pool (estimated_ns: below the fork/join
// break-even, so its parallel_for stays on one thread), they run at once, one batch
// per parallel_tasks call, whose threads take the nodes one at a time. Only pure ops batch
// (kOp, not stateful; random ops are pure given their attrs, and each node's run count
// is its own, Note [random ops in graphs]); variable reads and assignments, control
// flow and stateful ops run on the calling thread, in creation order among themselves.
// Dependencies are inputs, control inputs and order_after. Which nodes batch together
// depends only on the graph and the input shapes, never on timing, and every node
// computes what it computes alone, so results are the same bit for bit. A worker runs
// with the caller's Context (no builder, the same device; nothing batches while a tape
// records). A batch's errors are rethrown after it, the first node's in creation
// order. With nothing to overlap (a chain, one thread, already inside a parallel
// region) the nodes run one by one in creation order.

namespace ef::detail {

void check_feed(const TensorMeta& meta, const Tensor& value, std::string_view who, std::string_view what) {
  if (!value.defined()) fail(who, ": the value fed for ", what, " is an undefined tensor");
  if (value.is_symbolic()) fail(who, ": the value fed for ", what, " is symbolic; feed eager tensors");
  if (!fits(meta, {value.dtype(), value.shape()}))
    fail(who, ": ", what, " expects ", meta_string(meta), " but was fed a tensor of dtype ", value.dtype(),
         " and shape ", value.shape());
}

namespace {

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
      vars.push_back(zeros(Shape(dims), first.dtype()).to(first.device()));
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

// Note [random ops in graphs]: a random op's attributes hold the Philox key and stream
// it claimed when the node was built (Note [random seeds]), so running the node again
// with them would repeat its numbers; TensorFlow's graphs draw new numbers on every
// run. So the k-th run (k > 0) of a stateful random node uses key_for_run(key, k): a
// deterministic sequence given the seeds, distinct from other streams. Stateless ops
// have no RandomRuns and always repeat, as they should.
Attrs attrs_for_run(const Node& node) {
  refuse_while_streams_logged(node.op->name);
  RandomRuns& runs = *node.random_runs;
  const uint64_t k = runs.count.fetch_add(1, std::memory_order_relaxed);
  if (k == 0) return node.attrs;
  Attrs attrs = node.attrs;
  attrs.set(runs.key_attr,
            static_cast<int64_t>(key_for_run(static_cast<uint64_t>(node.attrs.get_int(runs.key_attr)), k)));
  return attrs;
}

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

namespace {

// Rough single-thread nanoseconds a node takes on `inputs` (Note [parallel nodes]).
// Matmuls as matmul.cpp estimates them (0.04 ns per multiply-add); anything else by the
// elements it reads and writes.
double estimated_ns(const Node& node, std::span<const Tensor> inputs) {
  const bool matmul = node.op->name == "matmul" && inputs.size() == 2 && inputs[0].rank() >= 2 && inputs[1].rank() >= 2;
  double in = 0, largest = 0, out = 0;
  for (const Tensor& t : inputs) {
    in += static_cast<double>(t.num_elements());
    largest = std::max(largest, static_cast<double>(t.num_elements()));
  }
  for (const TensorMeta& m : node.outputs) {
    const int64_t e = m.shape.num_elements();
    if (e >= 0) {
      out += static_cast<double>(e);
    } else if (matmul) {  // unknown until it runs: m n, from the inputs (untransposed)
      out += static_cast<double>(inputs[0].num_elements()) / static_cast<double>(std::max<int64_t>(1, inputs[0].dim(-1))) *
             static_cast<double>(inputs[1].dim(-1));
    } else {
      out += largest;
    }
  }
  if (matmul)  // (m k)(k n)(m n) = (m n k)^2
    return 0.04 * std::sqrt(static_cast<double>(inputs[0].num_elements()) *
                            static_cast<double>(inputs[1].num_elements()) * out);
  return 0.5 * (in + out);
}

std::atomic<uint64_t> batched_runs{0};

// A node below this runs its kernel on one thread (threading.cpp's break-even point).
constexpr double kSmallNodeNs = 20000;
// A batch below this is not worth a fork/join (~1.5 us), waking a worker and imbalance.
constexpr double kMinBatchNs = 8000;
// How many ready nodes one scheduling step looks at.
constexpr size_t kMaxBatch = 64;

// Nodes that may run in a batch on another thread.
bool batchable(const Node& node) { return node.kind == NodeKind::kOp && !node.op->traits.stateful; }
// Nodes that touch state: run on the calling thread, in creation order among themselves.
bool ordered(const Node& node) { return !batchable(node) && node.kind != NodeKind::kConstant; }

// Makes this thread's Context the caller's for a batch's nodes, then restores it.
class ContextFor {
 public:
  explicit ContextFor(const Context& caller) : saved_(Context::current()) {
    Context::current() = caller;
    Context::current().builder = nullptr;
  }
  ~ContextFor() { Context::current() = saved_; }
  ContextFor(const ContextFor&) = delete;
  ContextFor& operator=(const ContextFor&) = delete;

 private:
  Context saved_;
};

// One run of execute(): the values, how many readers each node has left, and the steps
// every schedule shares (take inputs, run, store outputs).
class Execution {
 public:
  Execution(const GraphState& graph, std::string_view who) : graph_(graph), who_(who), n_(graph.nodes.size()) {
    values_.resize(n_);
    fed_.assign(n_, 0);
    needed_.assign(n_, 0);
    first_output_.resize(n_ + 1, 0);
    for (size_t i = 0; i < n_; ++i) first_output_[i + 1] = first_output_[i] + graph.nodes[i].outputs.size();
    uses_.assign(first_output_[n_], 0);
    const GraphOptimizerOptions options = graph_optimizer_options();
    const Context& ctx = Context::current();
    reuse_ = options.in_place_reuse && !ctx.recorder;
    parallel_ = options.parallel_execution && !ctx.recorder && !in_parallel_region() && num_threads() > 1;
  }

  std::vector<Tensor> run(std::span<const ValueRef> fetches, std::span<const int> targets, std::span<const Feed> feeds) {
    plan(fetches, targets, feeds);
    BuildScope eager(nullptr);  // the nodes execute, even inside a graph scope
    if (parallel_ && worth_scheduling()) run_scheduled();
    else run_in_order();
    std::vector<Tensor> result;
    result.reserve(fetches.size());
    for (const ValueRef& r : fetches) result.push_back(value(r));
    return result;
  }

 private:
  const Tensor& value(const ValueRef& r) const {
    return values_[static_cast<size_t>(r.node)][static_cast<size_t>(r.index)];
  }
  bool runs(size_t i) const { return needed_[i] && !fed_[i]; }
  // Each output's place in uses_: outputs of one node are released one by one, so a
  // multi-output node's output can be reused in place while another is still needed.
  size_t slot(const ValueRef& r) const { return first_output_[static_cast<size_t>(r.node)] + static_cast<size_t>(r.index); }

  // Feeds, the nodes to run and their readers.
  void plan(std::span<const ValueRef> fetches, std::span<const int> targets, std::span<const Feed> feeds) {
    for (const Feed& f : feeds) {
      const Node& node = graph_.node(f.ref.node);
      check_feed(node.outputs[static_cast<size_t>(f.ref.index)], f.value, who_, "'" + node.name + "'");
      auto& v = values_[static_cast<size_t>(f.ref.node)];
      v.resize(node.outputs.size());
      v[static_cast<size_t>(f.ref.index)] = f.value;
      fed_[static_cast<size_t>(f.ref.node)] = 1;
    }
    for (size_t i = 0; i < n_; ++i)
      if (fed_[i])
        for (const Tensor& t : values_[i])
          if (!t.defined()) fed_[i] = 0;  // partly fed: the node runs and the feeds override
    std::vector<int> stack;
    for (const ValueRef& r : fetches) stack.push_back(r.node);
    stack.insert(stack.end(), targets.begin(), targets.end());
    while (!stack.empty()) {
      const int i = stack.back();
      stack.pop_back();
      if (needed_[static_cast<size_t>(i)]) continue;
      needed_[static_cast<size_t>(i)] = 1;
      if (fed_[static_cast<size_t>(i)]) continue;
      const Node& node = graph_.node(i);
      for (const ValueRef& in : node.inputs) stack.push_back(in.node);
      for (int c : node.control_inputs) stack.push_back(c);
    }
    for (size_t i = 0; i < n_; ++i)
      if (runs(i))
        for (const ValueRef& in : graph_.nodes[i].inputs) ++uses_[slot(in)];
    for (const ValueRef& r : fetches) ++uses_[slot(r)];  // kept to the end
  }

  // Node i's inputs, into `inputs`; values at their last use leave `values_` (Note
  // [graph execution]). Returns the input whose buffer output 0 may take, or -1.
  int take_inputs(size_t i, std::vector<Tensor>& inputs) {
    const Node& node = graph_.nodes[i];
    inputs.clear();
    for (const ValueRef& in : node.inputs) inputs.push_back(value(in));
    for (const ValueRef& in : node.inputs)
      if (--uses_[slot(in)] == 0) values_[static_cast<size_t>(in.node)][static_cast<size_t>(in.index)] = Tensor();
    if (!reuse_ || node.kind != NodeKind::kOp || !node.op->traits.in_place || node.outputs.empty()) return -1;
    for (size_t k = 0; k < inputs.size(); ++k) {
      const TensorImpl* impl = inputs[k].impl();
      if (impl->use_count() == 1 && impl->storage && impl->storage->use_count() == 1 &&
          fits(node.outputs[0], {impl->dtype, impl->shape}) &&
          can_reuse_buffer(*node.op, inputs[k], node.outputs[0].dtype, impl->shape))
        return static_cast<int>(k);
    }
    return -1;
  }

  std::vector<Tensor> run_one(size_t i, std::span<const Tensor> inputs, int donor) const {
    const Node& node = graph_.nodes[i];
    if (donor < 0) return run_node(node, inputs, who_);
    return run_op_reusing(*node.op, inputs, node.random_runs ? attrs_for_run(node) : node.attrs,
                          static_cast<size_t>(donor), CallSite::current());
  }

  void store(size_t i, std::vector<Tensor> out) {
    // Partly fed nodes: the fed outputs win.
    if (!values_[i].empty())
      for (size_t k = 0; k < out.size(); ++k)
        if (values_[i][k].defined()) out[k] = values_[i][k];
    values_[i] = std::move(out);
  }

  void run_in_order() {
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < n_; ++i) {
      if (!runs(i)) continue;
      const int donor = take_inputs(i, inputs);
      store(i, run_one(i, inputs, donor));
    }
  }

  // The nodes each node waits for among those that run: inputs, control inputs,
  // order_after, and the previous ordered node. False if two batchable nodes could
  // never run at once (no two at the same depth), or for a graph out of order.
  bool worth_scheduling() {
    waits_for_.assign(n_, {});
    std::vector<int> depth(n_, 0), batchable_at_depth(n_ + 1, 0);
    bool overlap = false;
    int last_ordered = -1;
    for (size_t i = 0; i < n_; ++i) {
      if (!runs(i)) continue;
      const Node& node = graph_.nodes[i];
      std::vector<int>& w = waits_for_[i];
      auto wait = [&](int d) {
        if (runs(static_cast<size_t>(d)) && std::find(w.begin(), w.end(), d) == w.end()) w.push_back(d);
      };
      for (const ValueRef& in : node.inputs) wait(in.node);
      for (int c : node.control_inputs) wait(c);
      for (int a : node.order_after) wait(a);
      if (ordered(node)) {
        if (last_ordered >= 0) wait(last_ordered);
        last_ordered = static_cast<int>(i);
      }
      for (int d : w) {
        if (d >= static_cast<int>(i)) return false;
        depth[i] = std::max(depth[i], depth[static_cast<size_t>(d)] + 1);
      }
      if (batchable(node) && ++batchable_at_depth[static_cast<size_t>(depth[i])] == 2) overlap = true;
    }
    return overlap;
  }

  // List scheduling: the ready node created first runs next, alone or, when it is small,
  // in a batch with the other small ready nodes (Note [parallel nodes]).
  void run_scheduled() {
    std::vector<int> waiting(n_, 0);
    std::vector<std::vector<int>> waited_by(n_);
    std::priority_queue<int, std::vector<int>, std::greater<>> ready;
    std::vector<int> constants;
    for (size_t i = 0; i < n_; ++i) {
      if (!runs(i)) continue;
      waiting[i] = static_cast<int>(waits_for_[i].size());
      for (int d : waits_for_[i]) waited_by[static_cast<size_t>(d)].push_back(static_cast<int>(i));
      if (waiting[i] == 0 && graph_.nodes[i].kind == NodeKind::kConstant) constants.push_back(static_cast<int>(i));
      else if (waiting[i] == 0) ready.push(static_cast<int>(i));
    }
    auto done = [&](int i) {
      for (int j : waited_by[static_cast<size_t>(i)])
        if (--waiting[static_cast<size_t>(j)] == 0) ready.push(j);
    };
    // Captured constants cost nothing: they are there from the start, so that they
    // never hold a branch back.
    for (int i : constants) {
      store(static_cast<size_t>(i), run_node(graph_.node(i), {}, who_));
      done(i);
    }
    auto small_ns = [&](int i) {  // estimated time, or infinity for nodes that never batch
      const Node& node = graph_.node(i);
      if (!batchable(node)) return std::numeric_limits<double>::infinity();
      std::vector<Tensor> inputs;
      for (const ValueRef& in : node.inputs) inputs.push_back(value(in));
      const double ns = estimated_ns(node, inputs);
      return ns < kSmallNodeNs ? ns : std::numeric_limits<double>::infinity();
    };
    std::vector<Tensor> inputs;
    std::vector<int> batch, others;
    std::vector<double> batch_ns;
    while (!ready.empty()) {
      const int first = ready.top();
      ready.pop();
      const double first_ns = small_ns(first);
      batch.assign(1, first);
      batch_ns.assign(1, first_ns);
      others.clear();
      double total = first_ns;
      if (std::isfinite(first_ns))
        while (!ready.empty() && batch.size() + others.size() < kMaxBatch) {
          const int j = ready.top();
          ready.pop();
          const double ns = small_ns(j);
          if (std::isfinite(ns)) {
            batch.push_back(j);
            batch_ns.push_back(ns);
            total += ns;
          } else {
            others.push_back(j);
          }
        }
      if (batch.size() < 2 || total < kMinBatchNs) {
        for (size_t k = 1; k < batch.size(); ++k) ready.push(batch[k]);
        for (int j : others) ready.push(j);
        const int donor = take_inputs(static_cast<size_t>(first), inputs);
        store(static_cast<size_t>(first), run_one(static_cast<size_t>(first), inputs, donor));
        done(first);
        continue;
      }
      for (int j : others) ready.push(j);
      run_batch(batch, batch_ns);
      for (int i : batch) done(i);
    }
  }

  // Runs `batch` (ascending node indices) at once: inputs taken here in creation order,
  // the nodes handed to the threads one at a time, longest estimated first, outputs
  // stored here in creation order.
  void run_batch(const std::vector<int>& batch, const std::vector<double>& ns) {
    const size_t m = batch.size();
    std::vector<std::vector<Tensor>> inputs(m);
    std::vector<int> donors(m);
    for (size_t t = 0; t < m; ++t) donors[t] = take_inputs(static_cast<size_t>(batch[t]), inputs[t]);
    std::vector<size_t> by_time(m);
    for (size_t t = 0; t < m; ++t) by_time[t] = t;
    std::stable_sort(by_time.begin(), by_time.end(), [&](size_t a, size_t b) { return ns[a] > ns[b]; });
    std::vector<std::vector<Tensor>> outputs(m);
    std::vector<std::exception_ptr> errors(m);
    const Context caller = Context::current();
    batched_runs.fetch_add(m, std::memory_order_relaxed);
    parallel_tasks(static_cast<int64_t>(m), [&](int64_t k) {
      const size_t t = by_time[static_cast<size_t>(k)];
      ContextFor context(caller);
      try {
        outputs[t] = run_one(static_cast<size_t>(batch[t]), inputs[t], donors[t]);
      } catch (...) {
        errors[t] = std::current_exception();
      }
    });
    for (size_t t = 0; t < m; ++t)
      if (errors[t]) std::rethrow_exception(errors[t]);
    for (size_t t = 0; t < m; ++t) store(static_cast<size_t>(batch[t]), std::move(outputs[t]));
  }

  const GraphState& graph_;
  std::string_view who_;
  size_t n_;
  bool reuse_ = false, parallel_ = false;
  std::vector<std::vector<Tensor>> values_;  // by node; fed outputs first
  std::vector<char> fed_, needed_;
  std::vector<size_t> first_output_;         // slot of each node's output 0 (slot())
  std::vector<int> uses_;                    // readers left, per node output
  std::vector<std::vector<int>> waits_for_;  // run_scheduled's dependencies
};

}  // namespace

uint64_t batched_node_runs() { return batched_runs.load(std::memory_order_relaxed); }

std::vector<Tensor> execute(const GraphState& graph, std::span<const ValueRef> fetches, std::span<const int> targets,
                            std::span<const Feed> feeds, std::string_view who) {
  return Execution(graph, who).run(fetches, targets, feeds);
}

}  // namespace ef::detail
