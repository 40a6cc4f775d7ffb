// vectorized_map, vmap and hessians (Note [vectorization] in vectorized_map.h): f traced
// on one element, then its graph run on batched values, each node through its op's
// batching rule or, failing that, once per element.
#include "eagerflow/graph/vectorized_map.h"

#include <iostream>
#include <mutex>
#include <optional>
#include <set>

#include "autodiff/tape_internal.h"
#include "eagerflow/graph/control_flow.h"
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/reduction.h"
#include "graph/executor.h"
#include "graph/graph_internal.h"
#include "ops/batch_helpers.h"

namespace ef {
namespace detail {
namespace {

// One value of the vectorized program: the same for every element, batched (the
// batch on axis 0), or ragged: one tensor per element, of shapes that differ (a loop's
// stacked iterations, where each element iterates a different number of times), which
// the nodes reading it run once per element on.
struct Value {
  Tensor tensor;
  bool batched = false;
  std::vector<Tensor> elements;  // ragged: per element, tensor undefined

  bool ragged() const { return !elements.empty(); }
};

struct LoopOps {
  std::mutex mutex;
  std::set<std::string, std::less<>> names;
};
LoopOps& loop_ops() {
  static LoopOps ops;
  return ops;
}

// Says once per process and op that the op runs once per element.
void report_loop(std::string_view op, std::string_view why) {
  LoopOps& ops = loop_ops();
  std::lock_guard lock(ops.mutex);
  if (!ops.names.emplace(op).second) return;
  std::cerr << "eagerflow: vectorized_map: op '" << op << "' " << why
            << ", so it runs once per element (a loop) and the results are stacked\n";
}

// `t` with axis `from` moved to position `to`, the others in order.
Tensor move_axis(const Tensor& t, int from, int to) {
  std::vector<int64_t> perm;
  for (int i = 0; i < t.rank(); ++i)
    if (i != from) perm.push_back(i);
  perm.insert(perm.begin() + to, from);
  return transpose(t, perm);
}

Tensor as_batched(const Value& v, int64_t batch, std::string_view what) {
  if (v.ragged()) {
    try {
      return stack(v.elements, 0);
    } catch (const InvalidArgumentError& e) {
      fail("vectorized_map: ", what,
           " has different shapes for different elements, which cannot be stacked: ", e.what());
    }
  }
  return v.batched ? v.tensor : repeated_along_batch(v.tensor, batch, what);
}

// Whether running `n` draws new random numbers: a stateful random op, or control flow
// holding one (each element must draw its own, even when nothing it reads differs).
bool draws_random_numbers(const Node& n) {
  if (n.kind == NodeKind::kOp) return n.random_runs != nullptr;
  if (!n.control) return false;
  bool random = false;
  for (const SubGraph* sub : {&n.control->first, &n.control->second})
    visit_nested_nodes(*sub->graph, static_cast<int>(sub->graph->nodes.size()),
                       [&](const Node& inner) { random = random || inner.random_runs != nullptr; });
  return random;
}

class Vectorizer {
 public:
  Vectorizer(int64_t batch, bool fallback_to_loop) : batch_(batch), fallback_to_loop_(fallback_to_loop) {}

  // Runs sub-graph `sub` on batched or shared `args` and `captures`.
  std::vector<Value> run(const SubGraph& sub, std::span<const Value> args, std::span<const Value> captures) {
    const GraphState& g = *sub.graph;
    std::vector<std::vector<Value>> values(g.nodes.size());
    for (size_t i = 0; i < sub.args.size(); ++i) values[static_cast<size_t>(sub.args[i].node)] = {args[i]};
    for (size_t i = 0; i < g.capture_refs.size(); ++i)
      values[static_cast<size_t>(g.capture_refs[i].node)] = {captures[i]};
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      if (n.kind == NodeKind::kPlaceholder) continue;  // an argument or a capture, set above
      std::vector<Value> in;
      for (const ValueRef& r : n.inputs)
        in.push_back(values[static_cast<size_t>(r.node)][static_cast<size_t>(r.index)]);
      values[i] = run_node(n, in);
    }
    std::vector<Value> out;
    for (const ValueRef& r : sub.outputs)
      out.push_back(values[static_cast<size_t>(r.node)][static_cast<size_t>(r.index)]);
    return out;
  }

 private:
  std::vector<Value> run_node(const Node& n, const std::vector<Value>& in) {
    bool any_batched = false, any_ragged = false;
    std::vector<Tensor> tensors;
    for (const Value& v : in) {
      any_batched = any_batched || v.batched;
      any_ragged = any_ragged || v.ragged();
      tensors.push_back(v.tensor);
    }
    if (any_ragged) return per_element(n, in, "reads values whose shapes differ by element");
    if (n.kind == NodeKind::kAssignVariable)
      fail<UnimplementedError>(
          "vectorized_map: the function assigns variable '", n.variable->name(),
          "'; a loop would assign it once per element, in order, which one vectorized call "
          "cannot do (compute the new value with vectorized_map, assign it outside)");
    // A random op that draws new numbers on each run draws for every element; a
    // stateless one gives every element the same numbers, as its loop would.
    const bool random = draws_random_numbers(n);
    if (!any_batched && !random) return shared(replay_node(n, tensors));
    switch (n.kind) {
      case NodeKind::kOp:
        return run_op(n, in);
      case NodeKind::kCond:
        if (!in[0].batched) return run_cond(n, in);
        return run_cond_by_element(n, in);
      case NodeKind::kWhile:
        if (std::optional<std::vector<Value>> out = run_while(n, in)) return *out;
        return per_element(n, in,
                           "is a while_loop whose loop variables change shape or that keeps its iterations "
                           "for a gradient, and whose loop variables or captures differ by element");
      default:
        fail<InternalError>("vectorized_map: node '", n.name, "' has batched inputs but takes none");
    }
  }

  static std::vector<Value> shared(std::vector<Tensor> outputs) {
    std::vector<Value> out;
    for (Tensor& t : outputs) out.push_back({std::move(t), false});
    return out;
  }
  static std::vector<Value> batched(std::vector<Tensor> outputs) {
    std::vector<Value> out;
    for (Tensor& t : outputs) out.push_back({std::move(t), true});
    return out;
  }

  std::vector<Value> run_op(const Node& n, const std::vector<Value>& in) {
    if (n.op->batch) {
      std::vector<Tensor> inputs;
      std::vector<char> flags;
      for (const Value& v : in) {
        inputs.push_back(v.tensor);
        flags.push_back(v.batched);
      }
      const std::span<const bool> batched_flags(reinterpret_cast<const bool*>(flags.data()), flags.size());
      const Attrs attrs = n.random_runs ? attrs_for_run(n) : n.attrs;
      const OpCall call{*n.op, inputs, attrs};
      std::vector<Tensor> outputs = n.op->batch(BatchCall{call, batched_flags, batch_});
      if (!outputs.empty()) {
        check_rule_outputs(n, outputs);
        if (std::unordered_set<const OpDef*>* seen = batch_rules_run()) seen->insert(n.op);
        return batched(std::move(outputs));
      }
      return per_element(n, in, "has a batching rule that declines these inputs");
    }
    return per_element(n, in, "has no batching rule");
  }

  // A rule's outputs must be the element's (as traced) behind the batch: a wrong shape
  // here would be read as another batch layout further on.
  void check_rule_outputs(const Node& n, const std::vector<Tensor>& outputs) const {
    if (outputs.size() != n.outputs.size())
      fail<InternalError>("vectorized_map: the batching rule of op '", n.op->name, "' gave ", outputs.size(),
                          " outputs for ", n.outputs.size());
    for (size_t k = 0; k < outputs.size(); ++k) {
      const Shape& got = outputs[k].shape();
      const TensorMeta& meta = n.outputs[k];
      bool ok = got.rank() == meta.shape.rank() + 1 && outputs[k].dtype() == meta.dtype &&
                (got[0] == batch_ || got[0] == kUnknownDim || batch_ == kUnknownDim);
      for (int d = 0; ok && d < meta.shape.rank(); ++d)
        ok = got[d + 1] == meta.shape[d] || got[d + 1] == kUnknownDim || meta.shape[d] == kUnknownDim;
      if (!ok)
        fail<InternalError>("vectorized_map: the batching rule of op '", n.op->name, "' gave output ", k,
                            " of shape ", got, " and dtype ", outputs[k].dtype(), " for elements of ",
                            meta_string(meta), " and a batch of ", batch_);
    }
  }

  static std::vector<Tensor> tensors_of(const std::vector<Value>& values) {
    std::vector<Tensor> out;
    for (const Value& v : values) out.push_back(v.tensor);
    return out;
  }

  // A cond whose predicate is the same for every element: each branch vectorized, its
  // outputs batched where the other branch's may be.
  std::vector<Value> run_cond(const Node& n, const std::vector<Value>& in) {
    const ControlFlow& c = *n.control;
    const std::vector<Tensor> tensors = tensors_of(in);
    const ControlFlowInputs split = split_control_inputs(n, tensors);
    const size_t first = 1, second = first + split.first_captures.size();
    auto branch = [&](const SubGraph& sub, size_t offset, size_t count) {
      std::vector<Value> outs = run(sub, {}, std::span<const Value>(in).subspan(offset, count));
      std::vector<Tensor> result;
      for (const Value& v : outs) result.push_back(as_batched(v, batch_, "a cond branch's output"));
      return result;
    };
    return batched(cond(
        in[0].tensor, [&] { return branch(c.first, first, split.first_captures.size()); },
        [&] { return branch(c.second, second, split.second_captures.size()); }));
  }

  // Note [vectorized control flow]: a cond whose predicate differs by element, and a
  // while_loop whose variables or captures do, run vectorized on the elements that take
  // each path, as TensorFlow's pfor does. The cond gathers the elements whose predicate
  // is true and runs the first branch, vectorized, on them only, the others through
  // the second branch, and stitches the results back in element order. The loop keeps
  // every variable batched and a flag per element that is still looping: each iteration
  // gathers the active elements, runs the vectorized body on them, scatters their new
  // values back, and re-evaluates their condition; the loop ends when no element is
  // active (or after maximum_iterations, which bounds each element as before). So a body
  // never runs on an element whose loop has ended (an index past the end stays unread),
  // and each element ends with the values its own loop gives. Both are built with
  // ef::cond-free public ops and ef::while_loop, so they run eagerly, trace into
  // functions, and differentiate like any other ops. A loop that keeps its iterations
  // (a graph gradient's forward loop) or whose variables change shape across
  // iterations still runs once per element.

  // v with one row per entry of `rows` (an int64 vector of element positions): v's rows
  // when it is batched, its value repeated otherwise (the count of rows may be unknown
  // while tracing, so the repetition is a gather).
  static Tensor batched_as(const Value& v, const Tensor& rows) {
    if (v.ragged()) return stack(v.elements, 0);
    if (v.batched) return v.tensor;
    return gather(expand_dims(v.tensor, 0), zeros_like(rows), 0);
  }

  // The values of the elements at `rows` (batched values gathered, shared ones as they are).
  static std::vector<Value> rows_of(std::span<const Value> values, const Tensor& rows) {
    std::vector<Value> out;
    for (const Value& v : values) out.push_back(v.batched ? Value{gather(v.tensor, rows, 0), true} : v);
    return out;
  }

  // The element positions where the bool vector `mask` is true, and how many (known
  // when eager).
  static Tensor positions(const Tensor& mask) { return reshape(where(mask), Shape{-1}); }
  static int64_t count_of(const Tensor& rows) { return rows.is_symbolic() ? kUnknownDim : rows.shape()[0]; }

  std::vector<Value> run_cond_by_element(const Node& n, const std::vector<Value>& in) {
    const ControlFlow& c = *n.control;
    const std::vector<Tensor> tensors = tensors_of(in);
    const ControlFlowInputs split = split_control_inputs(n, tensors);
    const std::span<const Value> captures(in.begin() + 1, in.end());
    const size_t first_count = split.first_captures.size();
    auto branch = [&](const SubGraph& sub, std::span<const Value> branch_captures, const Tensor& rows) {
      Vectorizer taking(count_of(rows), fallback_to_loop_);
      std::vector<Tensor> outs;
      for (const Value& v : taking.run(sub, {}, rows_of(branch_captures, rows)))
        outs.push_back(batched_as(v, rows));
      return outs;
    };
    const Tensor taken = positions(in[0].tensor), other = positions(logical_not(in[0].tensor));
    const std::vector<Tensor> first = branch(c.first, captures.subspan(0, first_count), taken);
    const std::vector<Tensor> second = branch(c.second, captures.subspan(first_count), other);
    std::vector<Tensor> out;
    for (size_t k = 0; k < first.size(); ++k)
      out.push_back(dynamic_stitch({taken, other}, {first[k], second[k]}));
    return batched(std::move(out));
  }

  std::optional<std::vector<Value>> run_while(const Node& n, const std::vector<Value>& in) {
    const ControlFlow& c = *n.control;
    if (c.accumulate) return std::nullopt;
    const std::vector<Tensor> tensors = tensors_of(in);
    const ControlFlowInputs split = split_control_inputs(n, tensors);
    const size_t count = split.leading.size();
    // Every element's positions, for repeating shared values along a batch that may be
    // unknown while tracing: read off a batched input's first axis.
    Tensor every_row;
    for (const Value& v : in)
      if (v.batched) {
        const Tensor same = equal(zeros_like(v.tensor), zeros_like(v.tensor));
        Dims element_axes;
        for (int d = 1; d < same.rank(); ++d) element_axes.push_back(d);
        every_row = positions(element_axes.empty() ? same : reduce_all(same, Axes(element_axes)));
        break;
      }
    if (!every_row.defined()) return std::nullopt;
    std::vector<Tensor> state;
    for (size_t k = 0; k < count; ++k) {
      const Shape& s = in[k].tensor.shape();
      const Shape element = in[k].batched ? Shape(Dims(s.dims().begin() + 1, s.dims().end())) : s;
      if (!(element == n.outputs[k].shape)) return std::nullopt;  // changes shape across iterations
      state.push_back(batched_as(in[k], every_row));
    }
    const std::span<const Value> cond_captures(in.begin() + static_cast<std::ptrdiff_t>(count),
                                               split.first_captures.size());
    const std::span<const Value> body_captures(
        in.begin() + static_cast<std::ptrdiff_t>(count + cond_captures.size()), in.end());
    // The condition of the elements at `rows`, whose variables are `vars`.
    auto condition = [&](const std::vector<Value>& vars, const Tensor& rows) {
      Vectorizer some(count_of(rows), fallback_to_loop_);
      return batched_as(some.run(c.first, vars, rows_of(cond_captures, rows))[0], rows);
    };
    std::vector<Value> vars;
    for (const Tensor& t : state) vars.push_back({t, true});
    state.push_back(batched_as(run(c.first, vars, cond_captures)[0], every_row));  // which elements loop
    auto body = [&](const std::vector<Tensor>& s) {
      const Tensor& active = s.back();
      const Tensor rows = positions(active), at = expand_dims(rows, 1);
      std::vector<Value> active_vars;
      for (size_t k = 0; k < count; ++k) active_vars.push_back({gather(s[k], rows, 0), true});
      Vectorizer some(count_of(rows), fallback_to_loop_);
      std::vector<Value> next_vars;
      std::vector<Tensor> next;
      for (const Value& v : some.run(c.second, active_vars, rows_of(body_captures, rows))) {
        next_vars.push_back({batched_as(v, rows), true});
        next.push_back(tensor_scatter_nd_update(s[next.size()], at, next_vars.back().tensor));
      }
      next.push_back(tensor_scatter_nd_update(active, at, condition(next_vars, rows)));
      return next;
    };
    std::vector<Tensor> out = while_loop([](const std::vector<Tensor>& s) { return reduce_any(s.back()); },
                                         body, std::move(state), c.maximum_iterations);
    out.pop_back();
    return batched(std::move(out));
  }

  // The node once per element, its outputs stacked.
  std::vector<Value> per_element(const Node& n, const std::vector<Value>& in, std::string_view why) {
    const std::string what = n.kind == NodeKind::kOp ? std::string(n.op->name) : n.name;
    if (!fallback_to_loop_)
      fail<UnimplementedError>("vectorized_map: op '", what, "' ", why,
                               ", and fallback_to_loop is off (a loop would run it once per element)");
    if (batch_ == kUnknownDim)
      fail<UnimplementedError>(
          "vectorized_map: op '", what, "' ", why,
          "; running it once per element needs the batch size, which is unknown while tracing");
    report_loop(what, why);
    if (batch_ == 0) {
      std::vector<Value> out;
      for (const TensorMeta& meta : n.outputs) {
        Dims dims{0};
        for (int64_t d : meta.shape.dims()) dims.push_back(d == kUnknownDim ? 0 : d);
        out.push_back({zeros(Shape(dims), meta.dtype), true});
      }
      return out;
    }
    std::vector<std::vector<Tensor>> elements(in.size());
    for (size_t i = 0; i < in.size(); ++i)
      if (in[i].ragged())
        elements[i] = in[i].elements;
      else if (in[i].batched)
        elements[i] = unstack(in[i].tensor, 0);
    for (size_t i = 0; i < in.size(); ++i)
      if (!elements[i].empty() && static_cast<int64_t>(elements[i].size()) != batch_)
        fail<InternalError>("vectorized_map: input ", i, " of op '", what, "' holds ", elements[i].size(),
                            " elements for a batch of ", batch_);
    std::vector<std::vector<Tensor>> results(n.outputs.size());
    for (int64_t b = 0; b < batch_; ++b) {
      std::vector<Tensor> inputs;
      for (size_t i = 0; i < in.size(); ++i)
        inputs.push_back(elements[i].empty() ? in[i].tensor : elements[i][static_cast<size_t>(b)]);
      std::vector<Tensor> outs = replay_node(n, inputs);
      for (size_t k = 0; k < outs.size(); ++k) results[k].push_back(std::move(outs[k]));
    }
    // Outputs whose shapes differ by element stay ragged: only nodes reading them
    // run per element, and an output of f that stays ragged is an error.
    std::vector<Value> out;
    for (std::vector<Tensor>& values : results) {
      bool same = true;
      for (const Tensor& t : values) same = same && t.shape() == values[0].shape();
      if (same)
        out.push_back({stack(values, 0), true, {}});
      else
        out.push_back({Tensor(), false, std::move(values)});
    }
    return out;
  }

  int64_t batch_;
  bool fallback_to_loop_;
};

// The batch size the elements share (their first dimension).
int64_t batch_size_of(const std::vector<Tensor>& elems) {
  int64_t batch = kUnknownDim;
  for (size_t i = 0; i < elems.size(); ++i) {
    if (!elems[i].defined()) fail("vectorized_map: elems ", i, " is an undefined tensor");
    if (elems[i].rank() == 0)
      fail("vectorized_map: elems ", i, " is a scalar, which has no first axis to map over");
    const int64_t b = elems[i].shape()[0];
    if (b == kUnknownDim) continue;
    if (batch != kUnknownDim && b != batch)
      fail("vectorized_map: the elements disagree on the batch size: elems ", i, " has ", b,
           " along its first axis, an earlier one ", batch, " (shapes must agree on the first dimension)");
    batch = b;
  }
  return batch;
}

}  // namespace

std::unordered_set<const OpDef*>*& batch_rules_run() {
  static thread_local std::unordered_set<const OpDef*>* ops = nullptr;
  return ops;
}

VectorizeFn& vectorize_hook() {
  static VectorizeFn fn = nullptr;
  return fn;
}

namespace {
std::vector<Tensor> vectorize_for_tapes(const VectorizableFunction& f, const std::vector<Tensor>& elems) {
  return vectorized_map(f, elems);
}
[[maybe_unused]] const bool kRegistered = (vectorize_hook() = vectorize_for_tapes, true);
}  // namespace

std::vector<std::string> vectorized_map_loop_ops() {
  LoopOps& ops = loop_ops();
  std::lock_guard lock(ops.mutex);
  return {ops.names.begin(), ops.names.end()};
}

}  // namespace detail

std::vector<Tensor> vectorized_map(const VectorizableFunction& f, const std::vector<Tensor>& elems,
                                   bool fallback_to_loop, CallSite where) {
  try {
    if (elems.empty()) fail("vectorized_map: elems is empty; at least one tensor to map over is needed");
    const int64_t batch = detail::batch_size_of(elems);
    std::vector<TensorMeta> element_metas;
    for (const Tensor& e : elems) {
      Dims dims;
      for (int d = 1; d < e.rank(); ++d) dims.push_back(e.shape()[d]);
      element_metas.push_back({e.dtype(), Shape(dims)});
    }
    // As a function's first trace (Note [variables created by functions]): layers that
    // f builds create their variables with eager initial values.
    Context& context = Context::current();
    const FunctionTrace* enclosing = context.function_trace;
    FunctionTrace this_trace{"vectorized_map", !enclosing || enclosing->may_create_variables,
                             enclosing ? enclosing->outer_builder : context.builder};
    const detail::FunctionTraceScope frame(this_trace);
    // Tensors of a graph being built that f uses are captured, as by cond's branches.
    detail::GraphState* outer = detail::current_graph_slot();
    detail::SubGraph sub = detail::trace_subgraph(outer ? outer->shared_from_this() : nullptr,
                                                  "vectorized_map", element_metas, f);
    std::vector<detail::Value> args, captures;
    for (const Tensor& e : elems) args.push_back({e, true});
    for (const Tensor& c : sub.graph->captures) captures.push_back({c, false});
    sub.graph->captures
        .clear();  // the outer graph does not own this sub-graph: no cycle, but no need to keep them
    sub.graph->parent = nullptr;
    detail::Vectorizer vectorizer(batch, fallback_to_loop);
    std::vector<Tensor> out;
    const std::vector<detail::Value> results = vectorizer.run(sub, args, captures);
    for (size_t k = 0; k < results.size(); ++k)
      out.push_back(
          detail::as_batched(results[k], batch, "output " + std::to_string(k) + " of the function"));
    return out;
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

Tensor vectorized_map(const std::function<Tensor(const Tensor&)>& f, const Tensor& elems,
                      bool fallback_to_loop, CallSite where) {
  return vectorized_map([&](const std::vector<Tensor>& a) { return std::vector<Tensor>{f(a[0])}; },
                        std::vector<Tensor>{elems}, fallback_to_loop, where)[0];
}

VectorizableFunction vmap(VectorizableFunction f, std::vector<std::optional<int64_t>> in_axes,
                          std::vector<int64_t> out_axes) {
  return [f = std::move(f), in_axes = std::move(in_axes),
          out_axes = std::move(out_axes)](const std::vector<Tensor>& args) -> std::vector<Tensor> {
    if (!in_axes.empty() && in_axes.size() != args.size())
      fail("vmap: in_axes has ", in_axes.size(), " entries for ", args.size(), " arguments");
    std::vector<Tensor> elems;
    std::vector<int> batched_position(args.size(), -1);
    for (size_t i = 0; i < args.size(); ++i) {
      const std::optional<int64_t> axis = in_axes.empty() ? std::optional<int64_t>(0) : in_axes[i];
      if (!axis) continue;
      if (!args[i].defined() || args[i].rank() == 0)
        fail("vmap: argument ", i, " has no axis ", *axis, " to map over (it is ",
             args[i].defined() ? "a scalar" : "undefined", ")");
      const int a = normalize_axis(*axis, args[i].rank(), "vmap", "in_axes");
      batched_position[i] = static_cast<int>(elems.size());
      elems.push_back(a == 0 ? args[i] : detail::move_axis(args[i], a, 0));
    }
    if (elems.empty()) fail("vmap: in_axes maps over none of the ", args.size(), " arguments");
    std::vector<Tensor> out = vectorized_map(
        [&](const std::vector<Tensor>& element) {
          std::vector<Tensor> call_args = args;
          for (size_t i = 0; i < args.size(); ++i)
            if (batched_position[i] >= 0) call_args[i] = element[static_cast<size_t>(batched_position[i])];
          return f(call_args);
        },
        elems);
    if (!out_axes.empty() && out_axes.size() != out.size())
      fail("vmap: out_axes has ", out_axes.size(), " entries for ", out.size(), " outputs");
    for (size_t k = 0; k < out.size() && !out_axes.empty(); ++k) {
      const int a = normalize_axis(out_axes[k], out[k].rank(), "vmap", "out_axes");
      if (a != 0) out[k] = detail::move_axis(out[k], 0, a);
    }
    return out;
  };
}

std::vector<Tensor> hessians(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                             const std::vector<Tensor>& xs) {
  GradientTape outer(/*persistent=*/true);
  for (const Tensor& x : xs) outer.watch(x);
  std::vector<Tensor> grads;
  {
    GradientTape inner;
    for (const Tensor& x : xs) inner.watch(x);
    const Tensor y = reduce_sum(f(xs));
    grads = inner.gradient(y, std::vector<GradientTape::Source>(xs.begin(), xs.end()), Tensor(),
                           UnconnectedGradients::Zero);
  }
  std::vector<Tensor> result;
  for (size_t i = 0; i < xs.size(); ++i)
    result.push_back(outer.jacobian(grads[i], xs[i], UnconnectedGradients::Zero));
  return result;
}

}  // namespace ef
