// Variable, GradientTape, the function transforms and custom_gradient. The Python
// package wraps these thinly (python/eagerflow/autodiff.py) for `with` blocks and
// nested structures.
#include <pybind11/functional.h>

#include "bindings.h"
#include "convert.h"

namespace efpy {
namespace {

using namespace pybind11::literals;
constexpr ef::CallSite kPython{};

// A Python object that may be released from C++ code running without the GIL (tape
// entries hold gradient closures that hold Python functions).
ef::UnconnectedGradients unconnected_of(const std::string& name) {
  if (name == "none" || name == "NONE") return ef::UnconnectedGradients::None;
  if (name == "zero" || name == "ZERO") return ef::UnconnectedGradients::Zero;
  throw ef::InvalidArgumentError("unconnected_gradients must be 'none' or 'zero', got '" + name + "'");
}

std::vector<ef::GradientTape::Source> sources_of(const py::list& sources) {
  std::vector<ef::GradientTape::Source> out;
  for (py::handle s : sources) {
    if (py::isinstance<ef::Variable>(s)) out.emplace_back(s.cast<ef::Variable>());
    else if (py::isinstance<ef::Tensor>(s)) out.emplace_back(s.cast<ef::Tensor>());
    else throw py::type_error("gradient: sources must be tensors or variables, got " + std::string(py::repr(s)));
  }
  return out;
}

// A tensor, None, or a sequence of them, as a list (None: an undefined tensor); `what`
// names the producer in the error when the count is not `expected` (0: any count).
std::vector<ef::Tensor> tensors_of(py::handle result, size_t expected, const char* what) {
  std::vector<ef::Tensor> out;
  if (py::isinstance<py::list>(result) || py::isinstance<py::tuple>(result)) {
    for (py::handle item : owned_items(result))
      out.push_back(item.is_none() ? ef::Tensor() : to_tensor(item));
  } else {
    out.push_back(result.is_none() ? ef::Tensor() : to_tensor(result));
  }
  if (expected && out.size() != expected)
    throw ef::InvalidArgumentError(std::string(what) + " gave " + std::to_string(out.size()) +
                                   " tensors; expected " + std::to_string(expected));
  return out;
}

// Calls f(*args) whose gradient is the grad_fn f returns (Note [custom gradients]).
py::object call_with_custom_gradient(py::function f, py::tuple args, py::function takes_variables) {
  std::vector<ef::Tensor> inputs;
  for (py::handle a : args) inputs.push_back(to_tensor(a));
  bool single_output = true;
  auto shared_f = std::make_shared<PyRef>(f);
  ef::TensorsFunction with_gradient = ef::custom_gradient([&](const std::vector<ef::Tensor>& in) {
    py::tuple py_inputs(in.size());
    for (size_t i = 0; i < in.size(); ++i) py_inputs[i] = py::cast(in[i]);
    py::object result = shared_f->object(*py_inputs);
    if (!py::isinstance<py::tuple>(result) || (py::len(result) != 2 && py::len(result) != 3))
      throw ef::InvalidArgumentError(
          "custom_gradient: the function must return (output, grad_fn) or (output, grad_fn, jvp_fn)");
    py::object outputs = result[py::int_(0)];
    auto grad_fn = std::make_shared<PyRef>(result[py::int_(1)]);
    const bool grad_fn_takes_variables = takes_variables(grad_fn->object).cast<bool>();
    single_output = !(py::isinstance<py::list>(outputs) || py::isinstance<py::tuple>(outputs));
    std::vector<ef::Tensor> outs = tensors_of(outputs, 0, "custom_gradient: the function");
    const size_t n_inputs = in.size();
    ef::WithGradients r(outs, [grad_fn, grad_fn_takes_variables, n_inputs](const std::vector<ef::Tensor>& dys,
                                                                          const std::vector<ef::Variable>& variables) {
      py::gil_scoped_acquire gil;
      py::tuple py_dys(dys.size());
      for (size_t i = 0; i < dys.size(); ++i) py_dys[i] = py::cast(dys[i]);
      if (!grad_fn_takes_variables)
        return tensors_of(grad_fn->object(*py_dys), 0, "custom_gradient: grad_fn");
      py::object result = grad_fn->object(*py_dys, "variables"_a = py::cast(variables));
      if (!py::isinstance<py::tuple>(result) || py::len(result) != 2)
        throw ef::InvalidArgumentError("custom_gradient: a grad_fn taking `variables` must return "
                                       "(input gradients, variable gradients)");
      std::vector<ef::Tensor> grads =
          tensors_of(result[py::int_(0)], n_inputs, "custom_gradient: grad_fn (input gradients)");
      std::vector<ef::Tensor> var_grads =
          tensors_of(result[py::int_(1)], variables.size(), "custom_gradient: grad_fn (variable gradients)");
      grads.insert(grads.end(), var_grads.begin(), var_grads.end());
      return grads;
    });
    r.takes_variables = grad_fn_takes_variables;
    if (py::len(result) == 3 && !result[py::int_(2)].is_none()) {
      auto jvp_fn = std::make_shared<PyRef>(result[py::int_(2)]);
      const size_t n_outputs = outs.size();
      r.jvp = [jvp_fn, n_outputs](const std::vector<ef::Tensor>& tangents) {
        py::gil_scoped_acquire gil;
        py::tuple py_tangents(tangents.size());
        for (size_t i = 0; i < tangents.size(); ++i)
          py_tangents[i] = tangents[i].defined() ? py::cast(tangents[i]) : py::none();
        return tensors_of(jvp_fn->object(*py_tangents), n_outputs, "custom_gradient: jvp_fn");
      };
    }
    return r;
  });
  std::vector<ef::Tensor> outputs = with_gradient(inputs);
  if (single_output) return py::cast(outputs.at(0));
  return py::cast(outputs);
}

// A Python callable of tensors that returns the list of its outputs' leaves (the
// package flattens nested results, python/eagerflow/autodiff.py) as an ef::TensorsFunction.
ef::TensorsFunction tensors_function(py::function f) {
  auto shared = std::make_shared<PyRef>(std::move(f));
  return [shared](const std::vector<ef::Tensor>& args) {
    py::gil_scoped_acquire gil;
    py::tuple py_args(args.size());
    for (size_t i = 0; i < args.size(); ++i) py_args[i] = py::cast(args[i]);
    std::vector<ef::Tensor> outputs;
    for (py::handle leaf : owned_items(shared->object(*py_args))) outputs.push_back(to_tensor(leaf));
    return outputs;
  };
}

py::list tensors_or_none(const std::vector<ef::Tensor>& tensors) {
  py::list out;
  for (const ef::Tensor& t : tensors) out.append(t.defined() ? py::cast(t) : py::none());
  return out;
}

std::vector<ef::Tensor> tensor_args(const py::args& args) {
  std::vector<ef::Tensor> out;
  for (py::handle a : args) out.push_back(to_tensor(a));
  return out;
}

// An assignment returns the variable, as in TensorFlow 2; while a graph is built, the
// symbolic new value, which runs the assignment when fetched (TensorFlow 1's assign op).
py::object assigned(const ef::Variable& v, const ef::Tensor& value) {
  return value.is_symbolic() ? py::cast(value) : py::cast(v);
}

py::list pairs_of(const ef::VariableGradients& grads) {
  py::list out;
  for (const auto& [g, v] : grads) out.append(py::make_tuple(g.defined() ? py::cast(g) : py::none(), v));
  return out;
}

}  // namespace

void bind_autodiff(py::module_& m) {
  py::class_<ef::Variable>(m, "Variable", R"doc(Mutable state with a fixed dtype and shape: model weights.

A Variable is usable wherever a tensor is (ops and operators read its value);
assign, assign_add and assign_sub change it. GradientTapes watch the trainable
variables read inside them. Created in graph mode it starts uninitialized until
the graph's ef.global_variables_initializer() runs.

>>> v = ef.Variable([1., 2.], name="v")
>>> _ = v.assign_add([10., 10.])
>>> v.numpy()
array([11., 12.], dtype=float32)

Args:
  initial_value: A tensor-like, or a callable returning one (called once, outside
    any function being traced, as under ef.init_scope).
  trainable: Whether tapes watch it automatically and optimizers see it among
    trainable_variables (default True).
  name: The variable's name (default "Variable").
  dtype: None, or the dtype to convert initial_value to.
)doc")
      .def(py::init([](py::handle initial_value, bool trainable, py::handle name, DTypeArg dtype) {
             const std::string variable_name =
                 name.is_none() ? std::string("Variable") : name.cast<std::string>();
             if (PyCallable_Check(initial_value.ptr())) {
               // TensorFlow's callable initial value: computed outside any function being
               // traced (Note [variables created by functions]).
               ef::InitScope init;
               return ef::Variable(to_tensor(initial_value(), dtype.value), variable_name, trainable);
             }
             return ef::Variable(to_tensor(initial_value, dtype.value), variable_name, trainable);
           }),
           "initial_value"_a, "trainable"_a = true, "name"_a = py::none(), "dtype"_a = py::none())
      .def("value", &ef::Variable::value,
           R"doc(Returns the current value as a Tensor; active tapes see the read.

Inside a graph or ef.function, a symbolic tensor read when the graph runs.
)doc")
      .def("read_value", &ef::Variable::value,
           R"doc(Returns the current value as a Tensor (the same as value()).
)doc")
      .def(
          "assign",
          [](ef::Variable& v, py::handle x, py::handle) {
            return assigned(v, v.assign(to_tensor_like(x, v.dtype()), kPython));
          },
          R"doc(Replaces the variable's value with `value`.

Args:
  value: A tensor-like of the variable's dtype and shape.
  read_value: Ignored (TensorFlow compatibility).

Returns:
  The variable eagerly; while a graph is built, a symbolic tensor whose
  evaluation performs the assignment.

Raises:
  InvalidArgumentError: value has another dtype or shape.
)doc",
          "value"_a, "read_value"_a = true)
      .def(
          "assign_add",
          [](ef::Variable& v, py::handle x, py::handle) {
            return assigned(v, v.assign_add(to_tensor_like(x, v.dtype()), kPython));
          },
          R"doc(Adds `delta` to the variable's value.

Args:
  delta: A tensor-like of the variable's dtype and shape.
  read_value: Ignored (TensorFlow compatibility).

Returns:
  The variable eagerly; while a graph is built, a symbolic tensor whose
  evaluation performs the update.

Raises:
  InvalidArgumentError: delta has another dtype or shape.
)doc",
          "delta"_a, "read_value"_a = true)
      .def(
          "assign_sub",
          [](ef::Variable& v, py::handle x, py::handle) {
            return assigned(v, v.assign_sub(to_tensor_like(x, v.dtype()), kPython));
          },
          R"doc(Subtracts `delta` from the variable's value.

Args:
  delta: A tensor-like of the variable's dtype and shape.
  read_value: Ignored (TensorFlow compatibility).

Returns:
  The variable eagerly; while a graph is built, a symbolic tensor whose
  evaluation performs the update.

Raises:
  InvalidArgumentError: delta has another dtype or shape.
)doc",
          "delta"_a, "read_value"_a = true)
      .def_property_readonly("name", &ef::Variable::name, "The name given at construction.")
      .def_property_readonly(
          "_key", [](const ef::Variable& v) { return reinterpret_cast<uintptr_t>(v.key()); },
          "The same number for every Python object of one variable (while it lives).")
      .def_property_readonly("trainable", &ef::Variable::trainable,
                             "Whether tapes watch it automatically and optimizers train it.")
      .def_property_readonly("dtype", &ef::Variable::dtype, "The element type, an ef.DType.")
      .def(
          "numpy",
          [](const ef::Variable& v, py::handle dtype) {
            ef::BuildScope eager(nullptr);  // the value now, also inside a graph block
            return to_numpy(v.value(), dtype);
          },
          R"doc(Returns the current value as a NumPy array (also inside a graph block).

Args:
  dtype: None, or a NumPy dtype to convert to (needed for bfloat16).

Returns:
  A read-only numpy.ndarray.

Raises:
  FailedPreconditionError: a graph-mode variable whose initializer has not run.
)doc",
          "dtype"_a = py::none())
      .def("__repr__", [](const ef::Variable& v) {
        const std::string head =
            "<ef.Variable '" + v.name() + "' shape=" + v.shape().to_string() + " dtype=" + std::string(ef::name(v.dtype()));
        if (!v.initialized() || ef::Context::current().builder) return head + ">";
        return head + ", " + values_repr(v.value()) + ">";
      });

  py::class_<ef::GradientTape>(m, "_GradientTape")
      .def(py::init<bool, bool>(), "persistent"_a = false, "watch_accessed_variables"_a = true)
      .def("stop", &ef::GradientTape::stop)
      .def("resume", &ef::GradientTape::resume)
      .def("watch",
           [](ef::GradientTape& tape, py::handle x) {
             if (py::isinstance<ef::Variable>(x))
               tape.watch(x.cast<const ef::Variable&>());
             else
               tape.watch(x.cast<const ef::Tensor&>());
           })
      .def("watched_variables", &ef::GradientTape::watched_variables)
      .def("reset", &ef::GradientTape::reset)
      .def(
          "gradient",
          // targets: the leaves of the target structure; output_gradients: None or one
          // per target (None for ones).
          [](ef::GradientTape& tape, py::list targets, py::list sources, py::handle output_gradients,
             const std::string& unconnected) {
            std::vector<ef::Tensor> flat_targets, seeds;
            for (py::handle t : targets) flat_targets.push_back(to_tensor(t));
            if (!output_gradients.is_none())
              seeds = tensors_of(output_gradients, flat_targets.size(), "gradient: output_gradients");
            std::vector<ef::GradientTape::Source> flat = sources_of(sources);
            std::vector<ef::Tensor> grads;
            {
              // Python gradient functions (custom_gradient) take the GIL back themselves.
              py::gil_scoped_release release;
              grads = tape.gradient(flat_targets, flat, seeds, unconnected_of(unconnected), kPython);
            }
            return tensors_or_none(grads);
          },
          "targets"_a, "sources"_a, "output_gradients"_a = py::none(), "unconnected_gradients"_a = "none")
      .def(
          "jacobian",
          [](ef::GradientTape& tape, TensorArg target, TensorArg source, const std::string& unconnected,
             bool use_pfor) -> py::object {
            ef::Tensor j = tape.jacobian(target, source, unconnected_of(unconnected), use_pfor, kPython);
            return j.defined() ? py::cast(j) : py::none();
          },
          "target"_a, "source"_a, "unconnected_gradients"_a = "none", "experimental_use_pfor"_a = true)
      .def(
          "batch_jacobian",
          [](ef::GradientTape& tape, TensorArg target, TensorArg source, const std::string& unconnected,
             bool use_pfor) -> py::object {
            ef::Tensor j =
                tape.batch_jacobian(target, source, unconnected_of(unconnected), use_pfor, kPython);
            return j.defined() ? py::cast(j) : py::none();
          },
          "target"_a, "source"_a, "unconnected_gradients"_a = "none", "experimental_use_pfor"_a = true)
      .def(
          "_pause",
          [](ef::GradientTape& tape) { return new ef::GradientTape::StopRecording(tape.stop_recording()); },
          py::return_value_policy::take_ownership);
  py::class_<ef::GradientTape::StopRecording>(m, "_StopRecording");

  // Forward mode (Note [forward mode] in forward_accumulator.h); ef.autodiff.ForwardAccumulator
  // enters and leaves it with `with`.
  py::class_<ef::ForwardAccumulator>(m, "_ForwardAccumulator")
      .def(py::init<>())
      .def("stop", &ef::ForwardAccumulator::stop)
      .def("resume", &ef::ForwardAccumulator::resume)
      .def("watch",
           [](ef::ForwardAccumulator& acc, py::handle primal, TensorArg tangent) {
             if (py::isinstance<ef::Variable>(primal))
               acc.watch(primal.cast<const ef::Variable&>(), tangent);
             else
               acc.watch(to_tensor(primal), tangent);
           })
      .def(
          "jvp",
          [](const ef::ForwardAccumulator& acc, py::list primals, const std::string& unconnected) {
            std::vector<ef::Tensor> flat;
            for (py::handle t : primals) flat.push_back(to_tensor(t));
            return tensors_or_none(acc.jvp(flat, unconnected_of(unconnected)));
          },
          "primals"_a, "unconnected_gradients"_a = "none");

  m.def(
      "stop_gradient", [](TensorArg x, py::handle) { return ef::stop_gradient(x, kPython); },
      "The identity, with no gradient flowing through it (see ef.stop_gradient).", "input"_a,
      "name"_a = py::none());
  m.def("_linearize", [](py::function f, py::args primals) {
    ef::Linearized l = ef::linearize(tensors_function(std::move(f)), tensor_args(primals));
    auto jvp = l.jvp;
    return py::make_tuple(tensors_or_none(l.outputs), py::cpp_function([jvp](py::args tangents) {
                            return tensors_or_none(jvp(tensor_args(tangents)));
                          }));
  });
  m.def(
      "_vectorized_map",
      [](py::function f, py::list elems, bool fallback_to_loop) {
        return tensors_or_none(ef::vectorized_map(tensors_function(std::move(f)),
                                                  tensor_args(py::args(elems)), fallback_to_loop, kPython));
      },
      "f"_a, "elems"_a, "fallback_to_loop"_a = true);
  m.def("_vectorized_map_loop_ops", &ef::detail::vectorized_map_loop_ops);
  m.def("_call_with_custom_gradient", &call_with_custom_gradient);
  m.def("_call_recomputing", [](py::function f, py::args args) {
    return tensors_or_none(ef::recompute_grad(tensors_function(std::move(f)))(tensor_args(args)));
  });
  m.def("_function_gradients",
        [](py::function f, std::vector<int> params, const std::string& unconnected, py::args args) {
          return tensors_or_none(ef::gradients_function(tensors_function(std::move(f)), std::move(params),
                                                        unconnected_of(unconnected))(tensor_args(args)));
        });
  m.def("_implicit_value_and_gradients", [](py::function f) {
    ef::TensorsFunction as_tensors = tensors_function(std::move(f));
    auto [values, grads] = ef::implicit_value_and_gradients(
        std::function<std::vector<ef::Tensor>()>([&as_tensors] { return as_tensors({}); }))();
    return py::make_tuple(values, pairs_of(grads));
  });
}

}  // namespace efpy
