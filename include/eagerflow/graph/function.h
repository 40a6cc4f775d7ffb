// function: compile an eager function into a graph, traced once per input signature.
//
//   auto f = ef::function([](ef::Tensor x, ef::Tensor y) { return ef::tanh(x * y + 1.f); });
//   ef::Tensor z = f(a, b);      // first call with these dtypes and shapes: traces f
//   z = f(a2, b2);               // same signature: runs the traced graph
//   f.trace_count();             // 1
//
// Note [function tracing]: the first call with a new signature runs the body once with
// symbolic tensors (placeholders) while a graph is being built, so every op call, read
// and assignment becomes a node; later calls with the same signature only run that
// graph. The signature is each tensor argument's dtype and shape plus the values of
// the other arguments (numbers, strings, bools: a different value retraces) and the
// identity of Variable arguments. With an input signature (TensorSpecs with unknown
// dimensions), every compatible call reuses one trace.
//
// Semantics that follow from tracing:
// - Variables read or assigned inside are held by reference: a call sees their current
//   values, and assignments happen on every call, in program order.
// - Eager tensors used inside (captured from the enclosing scope) are held by value.
// - Side effects of C++ itself (printing, counters) happen once per trace, not per call.
// - Converting a symbolic tensor to bool throws: use ef::cond / ef::while_loop.
// - A call while another graph is being built (a function calling a function) runs the
//   body inline into that graph.
// - A recording GradientTape sees a call as one op: its gradient is the traced graph's
//   gradient, built once per trace (higher orders too).
//
// Note [variables created by functions]: as in TensorFlow 2, a function may create
// variables on its first trace only: Keras layers built on their first call, an
// optimizer's slots and counters, anything created once and reused. Their initial values
// are computed under an InitScope, outside the trace, so the variables hold values when
// the trace ends and every later call reads and updates them. A later trace (a new
// signature) that would create a variable throws FailedPreconditionError: it would make
// a second set, and the calls of the two traces would train different weights. A
// variable whose initial value is computed from the function's own tensors cannot be
// lifted out and is refused too.
#pragma once

#include <bit>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "eagerflow/graph/graph.h"
#include "eagerflow/graph/optimizer_options.h"

namespace ef {

// The dtype and (possibly partial) shape a function argument must have.
struct TensorSpec {
  DType dtype = DType::Float32;
  Shape shape;
  std::string name;
};

namespace detail {
struct ConcreteFunctionState;
}

// One trace: its graph, inputs (placeholders) and outputs, runnable on eager tensors.
class ConcreteFunction {
 public:
  ConcreteFunction() = default;
  explicit ConcreteFunction(std::shared_ptr<detail::ConcreteFunctionState> state) : state_(std::move(state)) {}

  // Runs the graph on `inputs`, which must match input_signature(). Throws
  // InvalidArgumentError naming the function and the argument otherwise.
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs, CallSite where = CallSite::current()) const;

  Graph graph() const;
  // The graph plain calls run: graph() optimized with graph_optimizer_options() when
  // first needed (optimizer_options.h), without its gradient nodes.
  Graph optimized_graph() const;
  const std::vector<TensorSpec>& input_signature() const;
  // The outputs' dtypes and (possibly partial) shapes.
  std::vector<TensorSpec> output_signature() const;
  const std::string& name() const;

  // The trace itself, for the library's own tools (saved models write and build them).
  const std::shared_ptr<detail::ConcreteFunctionState>& state() const { return state_; }

 private:
  std::shared_ptr<detail::ConcreteFunctionState> state_;
};

// Tools that want the graphs a thread runs (summary::trace_on) set an observer: it sees
// the concrete function each call of a Function picks, newly traced or cached.
using FunctionObserver = std::function<void(const ConcreteFunction&)>;
// Sets this thread's observer; an empty one stops observing.
void set_function_observer(FunctionObserver observer);

// Code in the scope runs as it would outside every function being traced on this thread
// (TensorFlow's tf.init_scope): eagerly when the trace began eagerly, in the enclosing
// graph otherwise; tapes do not record it. For creating state inside a function on its
// first trace (Note [variables created by functions]):
//
//   ef::Variable step = [&] { ef::InitScope init; return ef::Variable(ef::zeros({})); }();
//
// Outside a trace it only pauses the tapes.
class InitScope {
 public:
  InitScope();
  ~InitScope();
  InitScope(const InitScope&) = delete;
  InitScope& operator=(const InitScope&) = delete;

 private:
  OpBuilder* saved_builder_;
  detail::GraphState* saved_graph_;
  RecordingPaused not_recorded_;
};

// A function of tensors, traced per signature (Note [function tracing]). The body takes
// the tensor arguments in order; `static_key` stands for the non-tensor arguments.
class Function {
 public:
  using Body = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

  // `body` may be empty when every call passes its own (call, trace). With `jit_compile`
  // (TensorFlow's tf.function(jit_compile=True)), the fused nodes of its optimized traces
  // run as kernels compiled for them (GraphOptimizerOptions::compile_fused_kernels).
  explicit Function(Body body, std::string name = "function",
                    std::optional<std::vector<TensorSpec>> input_signature = std::nullopt, bool jit_compile = false);

  // Calls the function: traces on a new signature, then runs the trace.
  std::vector<Tensor> operator()(const std::vector<Tensor>& args, CallSite where = CallSite::current()) const {
    return call(args, "", body_, where);
  }
  // The trace for `args` (tracing it if new) without running it.
  ConcreteFunction get_concrete_function(const std::vector<Tensor>& args) const;
  // The trace for this signature (which may have unknown dimensions).
  ConcreteFunction get_concrete_function(const std::vector<TensorSpec>& signature) const;

  // How many times the body has been traced.
  int trace_count() const;
  const std::string& name() const;

  // The general form: `body` traces with the symbolic tensors, `static_key` names the
  // other arguments' values (part of the signature).
  std::vector<Tensor> call(const std::vector<Tensor>& tensors, const std::string& static_key, const Body& body,
                           CallSite where = CallSite::current()) const;
  ConcreteFunction trace(const std::vector<TensorSpec>& specs, const std::string& static_key, const Body& body) const;

 private:
  struct Cache;
  Body body_;
  std::shared_ptr<Cache> cache_;
};

namespace detail {

// The part of a trace's cache key that the tensor arguments make: each one's dtype and
// shape ("float32[2, ?];"). Python's ef.function files output structures under it too.
std::string signature_key(const std::vector<TensorSpec>& specs);

// Argument handling of the typed front end (TypedFunction): tensors are traced,
// Variables are captured by identity, numbers, bools and strings are part of the key.
inline void add_argument(const Tensor& t, std::vector<Tensor>& tensors, std::string&) { tensors.push_back(t); }
inline void add_argument(const Variable& v, std::vector<Tensor>&, std::string& key) {
  key.append("v").append(std::to_string(reinterpret_cast<uintptr_t>(v.key()))).append(";");
}
inline void add_argument(const std::string& s, std::vector<Tensor>&, std::string& key) {
  key.append("s").append(std::to_string(s.size())).append(":").append(s).append(";");
}
inline void add_argument(const char* s, std::vector<Tensor>& tensors, std::string& key) {
  add_argument(std::string(s), tensors, key);
}
template <class T>
  requires std::is_arithmetic_v<T>
void add_argument(T value, std::vector<Tensor>&, std::string& key) {
  if constexpr (std::is_same_v<T, bool>) key += value ? "b1;" : "b0;";
  else if constexpr (std::is_integral_v<T>) key.append("i").append(std::to_string(value)).append(";");
  else key.append("f").append(std::to_string(std::bit_cast<uint64_t>(static_cast<double>(value)))).append(";");
}

// While tracing, a tensor argument is replaced by the next symbolic input.
template <class A>
decltype(auto) substitute(A&& arg, const std::vector<Tensor>& symbolic, size_t& next) {
  if constexpr (std::is_same_v<std::decay_t<A>, Tensor>) return Tensor(symbolic[next++]);
  else return std::forward<A>(arg);
}

template <class R>
std::vector<Tensor> flatten_result(R&& r) {
  using D = std::decay_t<R>;
  if constexpr (std::is_same_v<D, Tensor>) {
    return {r};
  } else if constexpr (std::is_same_v<D, std::vector<Tensor>>) {
    return r;
  } else {
    return std::apply([](auto&&... t) { return std::vector<Tensor>{Tensor(t)...}; }, r);
  }
}

template <class R>
R unflatten_result(std::vector<Tensor> v) {
  if constexpr (std::is_same_v<R, Tensor>) {
    return v[0];
  } else if constexpr (std::is_same_v<R, std::vector<Tensor>>) {
    return v;
  } else {
    return [&]<size_t... I>(std::index_sequence<I...>) { return R{v[I]...}; }(std::make_index_sequence<std::tuple_size_v<R>>());
  }
}

}  // namespace detail

// A Function over a callable taking Tensors (and Variables, numbers, bools, strings)
// and returning a Tensor, a std::vector<Tensor> or a std::tuple/pair of Tensors.
template <class F>
class TypedFunction {
 public:
  TypedFunction(F f, std::string name, std::optional<std::vector<TensorSpec>> signature, bool jit_compile = false)
      : f_(std::make_shared<F>(std::move(f))),
        function_(Function::Body{}, std::move(name), std::move(signature), jit_compile) {}

  template <class... Args>
  auto operator()(Args&&... args) const {
    using R = std::decay_t<std::invoke_result_t<F&, Args...>>;
    std::vector<Tensor> tensors;
    std::string key;
    (detail::add_argument(args, tensors, key), ...);
    const Function::Body body = [&](const std::vector<Tensor>& symbolic) {
      size_t next = 0;
      // Braced initialization evaluates left to right: arguments keep their order.
      std::tuple<decltype(detail::substitute(args, symbolic, next))...> call_args{
          detail::substitute(args, symbolic, next)...};
      return detail::flatten_result(std::apply(*f_, call_args));
    };
    return detail::unflatten_result<R>(function_.call(tensors, key, body));
  }

  int trace_count() const { return function_.trace_count(); }
  const Function& untyped() const { return function_; }

 private:
  std::shared_ptr<F> f_;
  Function function_;
};

// Wraps `f` so that it runs as a traced graph (Note [function tracing]); `jit_compile`
// as for Function.
template <class F>
TypedFunction<std::decay_t<F>> function(F&& f, std::string name = "function",
                                        std::optional<std::vector<TensorSpec>> input_signature = std::nullopt,
                                        bool jit_compile = false) {
  return TypedFunction<std::decay_t<F>>(std::forward<F>(f), std::move(name), std::move(input_signature),
                                        jit_compile);
}

}  // namespace ef
