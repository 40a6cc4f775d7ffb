// function tracing (Note [function tracing] in function.h): the signature cache, the
// trace itself, running a trace, and a trace's gradient for recording tapes.
#include "eagerflow/graph/function.h"

#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "autodiff/tape_internal.h"
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "graph/executor.h"
#include "graph/function_internal.h"
#include "graph/passes/passes.h"

namespace ef {
namespace detail {

namespace {

std::string spec_string(const TensorSpec& s) { return meta_string({s.dtype, s.shape}); }

}  // namespace

std::string signature_key(const std::vector<TensorSpec>& specs) {
  std::string key;
  for (const TensorSpec& s : specs) key.append(spec_string(s)).append(";");
  return key;
}

namespace {

std::vector<Feed> input_feeds(const std::vector<ValueRef>& inputs, const std::vector<Tensor>& args) {
  std::vector<Feed> feeds;
  feeds.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) feeds.push_back({inputs[i], args[i]});
  return feeds;
}

}  // namespace

const TraceGradient& ConcreteFunctionState::gradient_graph() {
  std::lock_guard<std::mutex> lock(gradient_mutex);
  if (gradient) return *gradient;
  if (gradient_error) std::rethrow_exception(gradient_error);
  try {
    build_gradient();
  } catch (...) {
    gradient_error = std::current_exception();
    throw;
  }
  return *gradient;
}

std::vector<Variable> ConcreteFunctionState::trainable_variables_read() const {
  // Reads inside control flow count: those of variables the node also assigns stay
  // there (Note [variable reads in control flow]), and a tape asking for such a
  // variable's gradient must reach this call's gradient, which refuses it.
  std::vector<Variable> variables;
  visit_nested_nodes(*graph, forward_nodes, [&](const Node& n) {
    if (n.kind != NodeKind::kReadVariable || !n.variable->trainable() ||
        !detail::is_differentiable(n.variable->dtype()))
      return;
    if (std::none_of(variables.begin(), variables.end(),
                     [&](const Variable& v) { return v.same_as(*n.variable); }))
      variables.push_back(*n.variable);
  });
  return variables;
}

void ConcreteFunctionState::build_gradient() {
  auto tg = std::make_unique<TraceGradient>();
  std::vector<Tensor> ys, sources, seeds;
  for (const ValueRef& r : outputs) {
    ys.push_back(graph->output(r));
    Node p;
    p.kind = NodeKind::kPlaceholder;
    p.outputs.push_back(graph->node(r.node).outputs[static_cast<size_t>(r.index)]);
    const int index = graph->add_node(std::move(p), "output_grad");
    tg->output_grads.push_back({index, 0});
    seeds.push_back(graph->output({index, 0}));
  }
  for (const ValueRef& r : input_refs) sources.push_back(graph->output(r));
  tg->variables = trainable_variables_read();
  // Only float outputs carry gradients.
  std::vector<Tensor> float_ys, float_seeds;
  for (size_t k = 0; k < ys.size(); ++k)
    if (detail::is_differentiable(ys[k].dtype())) {
      float_ys.push_back(ys[k]);
      float_seeds.push_back(seeds[k]);
    }
  std::vector<Tensor> grads(sources.size() + tg->variables.size());
  if (!float_ys.empty())
    grads = gradients_with_variables(graph, forward_nodes, float_ys, float_seeds, sources, tg->variables);
  auto ref_or_none = [&](const Tensor& t) { return t.defined() ? graph->value_of(t, name) : ValueRef{-1, 0}; };
  for (size_t i = 0; i < grads.size(); ++i)
    (i < input_refs.size() ? tg->input_grads : tg->variable_grads).push_back(ref_or_none(grads[i]));
  // Forward values that gradient nodes read (placeholders are fed anyway).
  std::vector<char> seen(static_cast<size_t>(forward_nodes), 0);
  for (size_t i = static_cast<size_t>(forward_nodes); i < graph->nodes.size(); ++i)
    for (const ValueRef& in : graph->nodes[i].inputs)
      if (in.node < forward_nodes && graph->node(in.node).kind != NodeKind::kPlaceholder &&
          graph->node(in.node).kind != NodeKind::kConstant) {
        if (!seen[static_cast<size_t>(in.node)]) {
          seen[static_cast<size_t>(in.node)] = 1;
          for (size_t k = 0; k < graph->node(in.node).outputs.size(); ++k)
            tg->kept.push_back({in.node, static_cast<int>(k)});
        }
      }
  find_pinned(*tg);
  gradient = std::move(tg);
}

// Note [recomputed forward values]: walks back from the gradient values to the forward
// nodes a recomputation runs, stopping at fed values (placeholders and pinned nodes).
void ConcreteFunctionState::find_pinned(TraceGradient& tg) const {
  // Whether a variable may have been assigned before each forward node.
  std::vector<char> read_after_assign(static_cast<size_t>(forward_nodes), 0);
  std::unordered_set<const void*> assigned;
  for (int i = 0; i < forward_nodes; ++i) {
    const Node& n = graph->node(i);
    if (n.kind == NodeKind::kReadVariable)
      read_after_assign[static_cast<size_t>(i)] = assigned.count(n.variable->key());
    auto note_assignment = [&](const Node& m) {
      if (m.kind == NodeKind::kAssignVariable) assigned.insert(m.variable->key());
    };
    note_assignment(n);
    if (n.control)
      for (const SubGraph* sub : {&n.control->first, &n.control->second})
        visit_nested_nodes(*sub->graph, static_cast<int>(sub->graph->nodes.size()), note_assignment);
  }
  std::vector<char> seen(graph->nodes.size(), 0);
  std::vector<int> stack;
  for (const std::vector<ValueRef>* grads : {&tg.input_grads, &tg.variable_grads})
    for (const ValueRef& r : *grads)
      if (r.node >= 0) stack.push_back(r.node);
  auto refuse = [&](const Node& n, std::string_view what) {
    if (tg.unrepeatable.empty()) tg.unrepeatable = "its " + std::string(what) + " '" + n.name + "'";
  };
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    if (seen[static_cast<size_t>(i)]) continue;
    seen[static_cast<size_t>(i)] = 1;
    const Node& n = graph->node(i);
    if (n.kind == NodeKind::kPlaceholder) continue;
    if (i < forward_nodes) {
      if (n.kind == NodeKind::kReadVariable) {
        if (read_after_assign[static_cast<size_t>(i)])
          refuse(n, "read of a variable it assigned before");
        else
          tg.pinned.push_back({i, 0});
        continue;
      }
      if (n.random_runs) {
        for (size_t k = 0; k < n.outputs.size(); ++k) tg.pinned.push_back({i, static_cast<int>(k)});
        continue;
      }
      if (n.stateful()) refuse(n, "stateful node (a variable assignment or stateful op)");
      if (n.control)
        for (const SubGraph* sub : {&n.control->first, &n.control->second})
          if (const Node* inner = unrepeatable_node(*sub))
            refuse(*inner,
                   "stateful node (a variable assignment, stateful op or random op) inside control flow");
    }
    for (const ValueRef& in : n.inputs) stack.push_back(in.node);
    stack.insert(stack.end(), n.control_inputs.begin(), n.control_inputs.end());
  }
}

const OptimizedGraph& ConcreteFunctionState::optimized_graph() {
  std::call_once(optimize_once, [&] {
    std::lock_guard<std::mutex> lock(gradient_mutex);  // gradient_graph() appends to `graph`
    GraphOptimizerOptions options = graph_optimizer_options();
    options.compile_fused_kernels = options.compile_fused_kernels || jit_compile;
    optimized = std::make_unique<const OptimizedGraph>(
        optimize(pass_graph_of(*graph, forward_nodes, input_refs, outputs, stateful), options));
  });
  return *optimized;
}

std::vector<Tensor> ConcreteFunctionState::call(const std::vector<Tensor>& args) {
  // Plain calls run the optimized copy; with a tape recording, the traced graph runs,
  // since the call's gradient reads its forward values by their node in that graph.
  if (!tapes_recording()) {
    const OptimizedGraph& o = optimized_graph();
    return execute(*o.graph, o.outputs, o.targets, input_feeds(o.inputs, args), name);
  }

  // A recording tape sees the call as one op (Note [function tracing]). When the trace
  // has no gradient (e.g. a while_loop whose body assigns a variable), the call still
  // runs; asking for the gradient reports why.
  const TraceGradient* tg = nullptr;
  try {
    tg = &gradient_graph();
  } catch (const Error&) {
  }
  std::vector<Tensor> recorded_inputs = args;
  std::vector<ValueRef> fetches = outputs;
  if (tg) {
    for (const Variable& v : tg->variables) recorded_inputs.push_back(v.value());  // tapes watch the reads
    fetches.insert(fetches.end(), tg->kept.begin(), tg->kept.end());
    fetches.insert(fetches.end(), tg->pinned.begin(), tg->pinned.end());
  }
  std::vector<Tensor> values;
  {
    RecordingPaused one_entry;
    values = execute(*graph, fetches, stateful, input_feeds(input_refs, args), name);
  }
  std::vector<Tensor> results(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(outputs.size()));
  for (Tensor& r : results) r = stop_gradient(r);  // fresh tensors: reached only through this entry
  if (!tg) {
    // The variables it reads are inputs too, so a tape asking for their gradients
    // reaches the error instead of an unconnected None.
    for (const Variable& v : trainable_variables_read()) recorded_inputs.push_back(v.value());
    record_custom_gradient(recorded_inputs, results,
                           std::make_shared<const CustomGradientFn>(
                               [error = gradient_error](std::span<const Tensor>) -> std::vector<Tensor> {
                                 std::rethrow_exception(error);
                               }));
    return results;
  }
  std::vector<Feed> kept, pinned;
  for (size_t i = 0; i < tg->kept.size(); ++i) kept.push_back({tg->kept[i], values[outputs.size() + i]});
  for (size_t i = 0; i < tg->pinned.size(); ++i)
    pinned.push_back({tg->pinned[i], values[outputs.size() + tg->kept.size() + i]});

  auto gradient = std::make_shared<const CustomGradientFn>(
      [self = shared_from_this(), args, results, kept = std::move(kept),
       pinned = std::move(pinned)](std::span<const Tensor> output_grads) {
        const TraceGradient& tg = *self->gradient;
        std::vector<Feed> feeds = input_feeds(self->input_refs, args);
        for (size_t k = 0; k < tg.output_grads.size(); ++k)
          feeds.push_back({tg.output_grads[k], output_grads[k].defined() ? output_grads[k] : zeros_like(results[k])});
        // With a tape recording the gradient (higher order), recompute the forward values
        // so that they are connected to the inputs on that tape; otherwise reuse them.
        if (!tapes_recording()) {
          feeds.insert(feeds.end(), kept.begin(), kept.end());
        } else {
          if (!tg.unrepeatable.empty())
            fail<UnimplementedError>(
                self->name, ": a gradient recorded by a tape (a higher-order gradient) computes ",
                "the function's forward values again, which would run ", tg.unrepeatable,
                " a second time; compute higher-order gradients of such a function eagerly, "
                "or with the tapes inside the function");
          feeds.insert(feeds.end(), pinned.begin(), pinned.end());
        }
        std::vector<ValueRef> wanted;
        for (const ValueRef& r : tg.input_grads)
          if (r.node >= 0) wanted.push_back(r);
        for (const ValueRef& r : tg.variable_grads)
          if (r.node >= 0) wanted.push_back(r);
        std::vector<Tensor> computed = execute(*self->graph, wanted, {}, feeds, self->name);
        std::vector<Tensor> grads;
        size_t next = 0;
        for (const ValueRef& r : tg.input_grads) grads.push_back(r.node >= 0 ? computed[next++] : Tensor());
        for (const ValueRef& r : tg.variable_grads)
          grads.push_back(r.node >= 0 ? computed[next++] : Tensor());
        return grads;
      });
  record_custom_gradient(recorded_inputs, results, std::move(gradient));
  return results;
}

}  // namespace detail

// ---- ConcreteFunction ----

std::vector<Tensor> ConcreteFunction::operator()(const std::vector<Tensor>& inputs, CallSite where) const {
  try {
    if (!state_) fail("ConcreteFunction: calling an empty concrete function");
    const auto& specs = state_->inputs;
    if (inputs.size() != specs.size())
      fail(state_->name, ": takes ", specs.size(), " tensor arguments, got ", inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i)
      detail::check_feed({specs[i].dtype, specs[i].shape}, inputs[i], state_->name,
                         "argument " + std::to_string(i) + (specs[i].name.empty() ? "" : " ('" + specs[i].name + "')"));
    return state_->call(inputs);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

Graph ConcreteFunction::graph() const { return Graph(state_->graph); }
Graph ConcreteFunction::optimized_graph() const { return Graph(state_->optimized_graph().graph); }
const std::vector<TensorSpec>& ConcreteFunction::input_signature() const { return state_->inputs; }
const std::string& ConcreteFunction::name() const { return state_->name; }
std::vector<TensorSpec> ConcreteFunction::output_signature() const {
  std::vector<TensorSpec> out;
  for (const detail::ValueRef& r : state_->outputs) {
    const TensorMeta& m = state_->graph->node(r.node).outputs[static_cast<size_t>(r.index)];
    out.push_back({m.dtype, m.shape, ""});
  }
  return out;
}

// ---- InitScope ----

InitScope::InitScope()
    : saved_builder_(Context::current().builder), saved_graph_(detail::current_graph_slot()) {
  if (const FunctionTrace* trace = Context::current().function_trace) {
    Context::current().builder = trace->outer_builder;
    detail::current_graph_slot() = detail::graph_of(trace->outer_builder);
  }
}

InitScope::~InitScope() {
  Context::current().builder = saved_builder_;
  detail::current_graph_slot() = saved_graph_;
}

// ---- Function ----

struct Function::Cache {
  std::string name;
  std::optional<std::vector<TensorSpec>> input_signature;
  std::mutex mutex;
  std::unordered_map<std::string, ConcreteFunction> traces;
  int trace_count = 0;
  bool jit_compile = false;
};

Function::Function(Body body, std::string name, std::optional<std::vector<TensorSpec>> input_signature,
                   bool jit_compile)
    : body_(std::move(body)), cache_(std::make_shared<Cache>()) {
  cache_->name = std::move(name);
  cache_->jit_compile = jit_compile;
  if (input_signature)
    for (const TensorSpec& s : *input_signature)
      validate_shape(s.shape, cache_->name, "input_signature", size_of(s.dtype), /*allow_unknown=*/true);
  cache_->input_signature = std::move(input_signature);
}

int Function::trace_count() const { return cache_->trace_count; }
const std::string& Function::name() const { return cache_->name; }

namespace {
thread_local FunctionObserver t_function_observer;
}  // namespace

ConcreteFunction Function::trace(const std::vector<TensorSpec>& specs, const std::string& static_key,
                                 const Body& body) const {
  const std::string key = static_key + "|" + detail::signature_key(specs);
  {
    std::lock_guard<std::mutex> lock(cache_->mutex);
    if (auto it = cache_->traces.find(key); it != cache_->traces.end()) {
      if (t_function_observer) t_function_observer(it->second);
      return it->second;
    }
  }
  if (!body)
    fail(cache_->name, ": this Function was made without a body of its own (a typed C++ function, or one from "
         "Python); trace it by calling it with its arguments");
  // Note [variables created by functions]: only the first trace may create variables,
  // and init scopes inside any trace return to where the outermost one began.
  Context& context = Context::current();
  const FunctionTrace* enclosing = context.function_trace;
  FunctionTrace this_trace;
  this_trace.function = cache_->name;
  {
    std::lock_guard<std::mutex> lock(cache_->mutex);
    this_trace.may_create_variables =
        cache_->trace_count == 0 && (!enclosing || enclosing->may_create_variables);
  }
  this_trace.outer_builder = enclosing ? enclosing->outer_builder : context.builder;
  const detail::FunctionTraceScope frame(this_trace);

  auto st = std::make_shared<detail::ConcreteFunctionState>();
  st->name = cache_->name;
  st->jit_compile = cache_->jit_compile;
  st->inputs = specs;
  st->graph = std::make_shared<detail::GraphState>();
  st->graph->is_function = true;
  detail::GraphState*& slot = detail::current_graph_slot();
  detail::GraphState* saved = slot;
  slot = st->graph.get();
  try {
    detail::building(st->graph, [&] {
      std::vector<Tensor> args;
      for (size_t i = 0; i < specs.size(); ++i) {
        detail::Node p;
        p.kind = detail::NodeKind::kPlaceholder;
        p.outputs.push_back({specs[i].dtype, specs[i].shape});
        const int index = st->graph->add_node(std::move(p), specs[i].name.empty() ? "arg" : specs[i].name);
        st->input_refs.push_back({index, 0});
        args.push_back(st->graph->output({index, 0}));
      }
      std::vector<Tensor> results = body(args);
      for (size_t k = 0; k < results.size(); ++k) {
        if (!results[k].defined()) fail(st->name, ": output ", k, " of the traced function is undefined");
        st->outputs.push_back(st->graph->value_of(results[k], st->name));
      }
      return 0;
    });
  } catch (...) {
    slot = saved;
    throw;
  }
  slot = saved;
  st->forward_nodes = static_cast<int>(st->graph->nodes.size());
  for (int i = 0; i < st->forward_nodes; ++i)
    if (st->graph->node(i).stateful()) st->stateful.push_back(i);
  ConcreteFunction traced(std::move(st));
  std::lock_guard<std::mutex> lock(cache_->mutex);
  ++cache_->trace_count;
  const ConcreteFunction& kept = cache_->traces.emplace(key, traced).first->second;
  if (t_function_observer) t_function_observer(kept);
  return kept;
}

void set_function_observer(FunctionObserver observer) { t_function_observer = std::move(observer); }

std::vector<Tensor> Function::call(const std::vector<Tensor>& tensors, const std::string& static_key,
                                   const Body& body, CallSite where) const {
  try {
    // Inside another trace or graph: the body becomes part of that graph.
    bool symbolic = Context::current().builder != nullptr;
    for (const Tensor& t : tensors) {
      if (!t.defined()) fail(cache_->name, ": a tensor argument is undefined");
      symbolic = symbolic || t.is_symbolic();
    }
    if (symbolic) return body(tensors);
    std::vector<TensorSpec> specs;
    if (cache_->input_signature) {
      specs = *cache_->input_signature;
      if (tensors.size() != specs.size())
        fail(cache_->name, ": the input signature has ", specs.size(), " tensors but the call passes ", tensors.size());
      for (size_t i = 0; i < tensors.size(); ++i)
        detail::check_feed({specs[i].dtype, specs[i].shape}, tensors[i], cache_->name,
                           "argument " + std::to_string(i) + " (input signature " + detail::spec_string(specs[i]) + ")");
    } else {
      for (const Tensor& t : tensors) specs.push_back({t.dtype(), t.shape(), ""});
    }
    return trace(specs, static_key, body)(tensors, where);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

ConcreteFunction Function::get_concrete_function(const std::vector<Tensor>& args) const {
  std::vector<TensorSpec> specs;
  if (cache_->input_signature) specs = *cache_->input_signature;
  else
    for (const Tensor& t : args) specs.push_back({t.dtype(), t.shape(), ""});
  return trace(specs, "", body_);
}

ConcreteFunction Function::get_concrete_function(const std::vector<TensorSpec>& signature) const {
  return trace(signature, "", body_);
}

}  // namespace ef
