// Graph mode and function tracing: Graph (with scopes the package's context managers
// enter and leave), Operation, placeholder, Session, gradients, Function and
// ConcreteFunction. The Python package (eagerflow/graph.py, function.py) adds the
// TensorFlow-style conveniences: feed dicts, nested fetches, argument structures.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <vector>

#include "bindings.h"
#include "convert.h"

namespace efpy {
namespace {

using namespace pybind11::literals;
constexpr ef::CallSite kPython{};

// Scopes entered from Python `with` blocks, innermost last (per thread, like the
// context they change).
std::vector<std::unique_ptr<ef::Graph::Scope>>& scopes() {
  thread_local std::vector<std::unique_ptr<ef::Graph::Scope>> stack;
  return stack;
}

std::vector<ef::TensorSpec> to_specs(py::handle specs) {
  std::vector<ef::TensorSpec> out;
  for (py::handle s : specs)
    out.push_back({to_dtype(s.attr("dtype")), to_shape(s.attr("shape")),
                   s.attr("name").is_none() ? std::string() : s.attr("name").cast<std::string>()});
  return out;
}

// A Python callable taking and returning flat lists of tensors as a Function body. It
// may be kept in a trace's closures and released without the GIL (PyRef).
ef::Function::Body python_body(py::function body) {
  auto ref = std::make_shared<PyRef>(std::move(body));
  return [ref](const std::vector<ef::Tensor>& xs) {
    py::gil_scoped_acquire gil;
    return ref->object(xs).cast<std::vector<ef::Tensor>>();
  };
}

py::list from_specs(const std::vector<ef::TensorSpec>& specs) {
  py::list out;
  for (const ef::TensorSpec& s : specs) out.append(py::make_tuple(s.dtype, shape_tuple(s.shape), s.name));
  return out;
}

}  // namespace

void bind_graph(py::module_& m) {
  py::class_<ef::Operation>(
      m, "Operation",
      R"doc(A graph node run for its effects (assignments, initializers, ef.group), not its values.

Operations come from ef.global_variables_initializer(), ef.group(...) and an
optimizer's apply_gradients in graph mode; Session.run runs them and returns
None for them.
)doc")
      .def_property_readonly("name", &ef::Operation::name, "The node's name, unique in its graph.")
      .def("__repr__", [](const ef::Operation& op) { return "<ef.Operation '" + op.name() + "'>"; });

  py::class_<ef::Graph>(m, "Graph", "The C++ graph behind ef.Graph (use ef.Graph, which adds as_default).")
      .def(py::init<>())
      .def("_push_scope", [](ef::Graph& g) { scopes().push_back(std::make_unique<ef::Graph::Scope>(g)); })
      .def_static("_pop_scope",
                  [] {
                    if (!scopes().empty()) scopes().pop_back();
                  })
      .def_property_readonly("num_nodes", &ef::Graph::num_nodes, "The number of nodes in the graph.")
      .def("to_string", &ef::Graph::to_string,
           "The graph as text, one node per line: \"%name : dtype[shape] = op(inputs)\".")
      .def("as_dot", &ef::Graph::to_dot, "The graph in Graphviz's dot language (render it with `dot -Tsvg`).")
      .def("__str__", &ef::Graph::to_string)
      .def("__repr__",
           [](const ef::Graph& g) { return "<ef.Graph with " + std::to_string(g.num_nodes()) + " nodes>"; })
      .def("__eq__", [](const ef::Graph& a, const ef::Graph& b) { return a.state() == b.state(); })
      .def("__hash__", [](const ef::Graph& g) { return reinterpret_cast<uintptr_t>(g.state().get()); })
      .def_static("_of", &ef::Graph::of);

  m.def(
      "placeholder",
      [](DTypeArg dtype, py::handle shape, py::handle name) {
        return ef::placeholder(dtype.value.value_or(ef::DType::Float32), shape.is_none() ? ef::Shape{} : to_shape(shape),
                               name.is_none() ? std::string() : name.cast<std::string>(), kPython);
      },
      R"doc(Creates a graph input whose value is fed when Session.run runs (TensorFlow 1).

>>> g = ef.Graph()
>>> with g.as_default():
...     x = ef.placeholder(ef.float32, shape=(None, 2))
...     y = x * 2.
>>> ef.Session(g).run(y, feed_dict={x: [[1., 2.]]})
array([[2., 4.]], dtype=float32)

Args:
  dtype: The dtype of the fed values (None means float32).
  shape: A list or tuple of ints, None for an unknown dimension; None (the
    default) means a scalar.
  name: None, or the node's name.

Returns:
  A symbolic Tensor of dtype and shape.

Raises:
  InvalidArgumentError: called outside a graph (eager mode: pass values directly).
)doc",
      "dtype"_a, "shape"_a = py::none(), "name"_a = py::none());

  m.def("_global_variables_initializer", [](py::handle graph) {
    return graph.is_none() ? ef::global_variables_initializer() : ef::global_variables_initializer(graph.cast<ef::Graph>());
  });

  m.def(
      "_group",
      [](const std::vector<ef::Tensor>& values, const std::string& name) -> py::object {
        ef::Operation op = ef::group(values, name, kPython);
        return op.defined() ? py::cast(op) : py::none();
      },
      "values"_a, "name"_a = "group");
  m.def("_global_variables", [](const ef::Graph& graph) { return ef::global_variables(graph); });

  // Feeds arrive as (placeholder, value) pairs; values convert to the key's dtype.
  m.def("_session_run", [](const ef::Graph& graph, const std::vector<ef::Tensor>& fetches,
                           const std::vector<ef::Operation>& targets, py::list feeds) {
    ef::FeedDict feed_dict;
    ef::BuildScope eager(nullptr);  // fed values are eager, also inside a Session block
    for (py::handle pair : feeds) {
      ef::Tensor key = pair[py::int_(0)].cast<ef::Tensor>();
      feed_dict.emplace_back(key, to_tensor(pair[py::int_(1)], key.dtype()));
    }
    ef::Session session(graph);
    return session.run(fetches, feed_dict, targets, kPython);
  });

  m.def("_gradients", [](const std::vector<ef::Tensor>& ys, py::list xs, py::list grad_ys, bool zero_unconnected) {
    const auto unconnected = zero_unconnected ? ef::UnconnectedGradients::Zero : ef::UnconnectedGradients::None;
    std::vector<ef::Tensor> gys;
    for (py::handle g : grad_ys) gys.push_back(g.is_none() ? ef::Tensor() : to_tensor(g));
    std::vector<ef::Tensor> tensors;
    std::vector<ef::Variable> variables;
    for (py::handle x : xs) {
      if (py::isinstance<ef::Variable>(x)) variables.push_back(x.cast<ef::Variable>());
      else tensors.push_back(to_tensor(x));
    }
    if (!variables.empty() && !tensors.empty())
      throw ef::InvalidArgumentError("gradients: 'xs' mixes variables and tensors; call gradients once for each");
    std::vector<ef::Tensor> grads = variables.empty() ? ef::gradients(ys, tensors, gys, unconnected, kPython)
                                                      : ef::gradients(ys, variables, gys, unconnected, kPython);
    py::list out;
    for (const ef::Tensor& g : grads) out.append(g.defined() ? py::cast(g) : py::none());
    return out;
  });

  // cond and while_loop over flat lists of tensors (the package handles structures).
  m.def("_cond", [](TensorArg pred, py::function true_fn, py::function false_fn) {
    auto branch = [](const py::function& fn) {
      return ef::Branch([&fn] { return fn().cast<std::vector<ef::Tensor>>(); });
    };
    return ef::cond(pred, branch(true_fn), branch(false_fn), kPython);
  });
  m.def("_while_loop", [](py::function condition, py::function body, const std::vector<ef::Tensor>& loop_vars,
                          int64_t maximum_iterations) {
    return ef::while_loop([&](const std::vector<ef::Tensor>& v) { return to_tensor(condition(v)); },
                          [&](const std::vector<ef::Tensor>& v) { return body(v).cast<std::vector<ef::Tensor>>(); },
                          loop_vars, maximum_iterations, kPython);
  });

  py::class_<ef::ConcreteFunction>(m, "ConcreteFunction")
      .def("__call__", [](const ef::ConcreteFunction& f, const std::vector<ef::Tensor>& inputs) {
        return f(inputs, kPython);
      })
      .def_property_readonly("graph", &ef::ConcreteFunction::graph)
      .def_property_readonly("optimized_graph", &ef::ConcreteFunction::optimized_graph)
      .def_property_readonly("name", &ef::ConcreteFunction::name)
      .def_property_readonly("_input_signature", [](const ef::ConcreteFunction& f) { return from_specs(f.input_signature()); })
      .def_property_readonly("_output_signature",
                             [](const ef::ConcreteFunction& f) { return from_specs(f.output_signature()); });

  // Which optimization passes traces get (include/eagerflow/graph/optimizer_options.h).
  py::class_<ef::GraphOptimizerOptions>(
      m, "GraphOptimizerOptions", R"doc(Which optimization passes traced functions get, and how graphs run.

Traces are optimized once, on their first call without a recording tape, with
the options set then (ef.set_graph_optimizer_options). Results are bit for bit
the same with every pass on or off. GraphOptimizerOptions.none() turns every
pass off.

>>> options = ef.GraphOptimizerOptions(elementwise_fusion=False)
>>> options.elementwise_fusion, options.constant_folding
(False, True)

Args:
  constant_folding: Run ops whose inputs are all constants once, at optimization.
  common_subexpression_elimination: Run identical ops on identical inputs once.
  dead_code_elimination: Drop nodes that no output or stateful node needs.
  algebraic_simplification: Remove exact no-ops (x * 1, x - 0, ...).
  elementwise_fusion: Fuse chains of elementwise ops into one pass over memory.
  reduction_fusion: Fuse a full reduce_sum of an elementwise chain.
  compile_fused_kernels: Run fused nodes as compiled kernels (default False).
  max_folded_elements: Constant folding skips results with more elements.
  in_place_reuse: Let elementwise ops write into dead input buffers.
  parallel_execution: Run independent small nodes at the same time.
)doc")
      .def(py::init([](bool constant_folding, bool common_subexpression_elimination,
                       bool dead_code_elimination, bool algebraic_simplification, bool elementwise_fusion,
                       bool reduction_fusion, bool compile_fused_kernels, int64_t max_folded_elements,
                       bool in_place_reuse, bool parallel_execution) {
             ef::GraphOptimizerOptions o;
             o.constant_folding = constant_folding;
             o.common_subexpression_elimination = common_subexpression_elimination;
             o.dead_code_elimination = dead_code_elimination;
             o.algebraic_simplification = algebraic_simplification;
             o.elementwise_fusion = elementwise_fusion;
             o.reduction_fusion = reduction_fusion;
             o.compile_fused_kernels = compile_fused_kernels;
             o.max_folded_elements = max_folded_elements;
             o.in_place_reuse = in_place_reuse;
             o.parallel_execution = parallel_execution;
             return o;
           }),
           "constant_folding"_a = true, "common_subexpression_elimination"_a = true,
           "dead_code_elimination"_a = true, "algebraic_simplification"_a = true,
           "elementwise_fusion"_a = true, "reduction_fusion"_a = true, "compile_fused_kernels"_a = false,
           "max_folded_elements"_a = 100000, "in_place_reuse"_a = true, "parallel_execution"_a = true)
      .def_static(
          "none", &ef::GraphOptimizerOptions::none,
          "Options with every pass off and plain execution: traces run exactly their nodes, one by one.")
      .def_readwrite("constant_folding", &ef::GraphOptimizerOptions::constant_folding,
                     "Run ops whose inputs are all constants once, at optimization time.")
      .def_readwrite("common_subexpression_elimination",
                     &ef::GraphOptimizerOptions::common_subexpression_elimination,
                     "Run identical ops on identical inputs once.")
      .def_readwrite("dead_code_elimination", &ef::GraphOptimizerOptions::dead_code_elimination,
                     "Drop nodes that neither an output nor a stateful node needs.")
      .def_readwrite("algebraic_simplification", &ef::GraphOptimizerOptions::algebraic_simplification,
                     "Remove ops whose result is bit for bit their input (x * 1, x - 0, ...).")
      .def_readwrite("elementwise_fusion", &ef::GraphOptimizerOptions::elementwise_fusion,
                     "Fuse chains of elementwise ops into one fused_elementwise node.")
      .def_readwrite("reduction_fusion", &ef::GraphOptimizerOptions::reduction_fusion,
                     "Fuse a reduce_sum of all elements of an elementwise chain into one node.")
      .def_readwrite("compile_fused_kernels", &ef::GraphOptimizerOptions::compile_fused_kernels,
                     "Run fused nodes as kernels compiled for them (what jit_compile=True turns on).")
      .def_readwrite("max_folded_elements", &ef::GraphOptimizerOptions::max_folded_elements,
                     "Constant folding skips ops whose result has more elements than this.")
      .def_readwrite("in_place_reuse", &ef::GraphOptimizerOptions::in_place_reuse,
                     "Let an elementwise op write into an input buffer nothing else can see any more.")
      .def_readwrite("parallel_execution", &ef::GraphOptimizerOptions::parallel_execution,
                     "Run independent nodes too small to use every thread at the same time.");
  m.def("graph_optimizer_options", &ef::graph_optimizer_options,
        R"doc(Returns the GraphOptimizerOptions traces are optimized with (process-wide).

Every pass is on by default.

>>> ef.graph_optimizer_options().constant_folding
True

Returns:
  A GraphOptimizerOptions (a copy: change it and pass it to
  ef.set_graph_optimizer_options).
)doc");
  m.def("set_graph_optimizer_options", &ef::set_graph_optimizer_options,
        R"doc(Sets the optimization options for traces optimized after this call.

Traces already optimized keep theirs; in_place_reuse and parallel_execution
apply to every graph from its next run.

    options = ef.graph_optimizer_options()
    options.elementwise_fusion = False
    ef.set_graph_optimizer_options(options)

Args:
  options: A GraphOptimizerOptions.

Raises:
  InvalidArgumentError: a negative max_folded_elements.
)doc",
        "options"_a);
  m.def("set_compile_fused_kernels", &ef::set_compile_fused_kernels,
        R"doc(Turns compiled fused kernels on or off, process-wide.

When on, fused elementwise chains (from graph optimization) run as one loop
generated for each chain and compiled with the C++ compiler that built eagerflow
at its first run (about a second; cached on disk in $EF_KERNEL_CACHE_DIR, else
~/.cache/eagerflow/kernels). Results are bit for bit the same. Off by default;
EF_COMPILE_FUSED_KERNELS=1 turns it on at startup. Without a working compiler,
fused ops keep running interpreted.

Args:
  enabled: A bool.
)doc",
        "enabled"_a);
  m.def(
      "compile_fused_kernels", &ef::compile_fused_kernels,
      R"doc(Returns whether fused elementwise chains run as compiled kernels (see set_compile_fused_kernels).

Returns:
  A bool (False by default).
)doc");

  // ef.init_scope(): a context manager over ef::InitScope.
  struct InitScopeHolder {
    std::optional<ef::InitScope> scope;
  };
  py::class_<InitScopeHolder>(m, "_InitScope")
      .def(py::init<>())
      .def("__enter__", [](InitScopeHolder& h) { h.scope.emplace(); })
      .def("__exit__", [](InitScopeHolder& h, py::args) { h.scope.reset(); });

  // The body takes and returns flat lists of tensors; the package handles structure.
  py::class_<ef::Function>(m, "_Function")
      .def(py::init([](std::string name, py::handle input_signature, bool jit_compile) {
             std::optional<std::vector<ef::TensorSpec>> sig;
             if (!input_signature.is_none()) sig = to_specs(input_signature);
             return ef::Function(ef::Function::Body{}, std::move(name), std::move(sig), jit_compile);
           }),
           "name"_a, "input_signature"_a = py::none(), "jit_compile"_a = false)
      .def("call", [](const ef::Function& f, const std::vector<ef::Tensor>& tensors, const std::string& key,
                      py::function body) { return f.call(tensors, key, python_body(std::move(body)), kPython); })
      .def("trace", [](const ef::Function& f, py::handle specs, const std::string& key, py::function body) {
        return f.trace(to_specs(specs), key, python_body(std::move(body)));
      })
      .def_property_readonly("trace_count", &ef::Function::trace_count)
      .def_property_readonly("name", &ef::Function::name);
  // ef.function's trace keys (python/eagerflow/function.py), built here because
  // formatting hundreds of shapes in Python costs microseconds each, on every call.
  m.def("_signature_key", [](const std::vector<ef::Tensor>& tensors) {
    std::vector<ef::TensorSpec> specs;
    specs.reserve(tensors.size());
    for (const ef::Tensor& t : tensors) specs.push_back({t.dtype(), t.shape(), ""});
    return ef::detail::signature_key(specs);
  });
  m.def("_spec_signature_key", [](py::handle specs) { return ef::detail::signature_key(to_specs(specs)); });
}

}  // namespace efpy
