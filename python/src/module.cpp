// The extension module eagerflow._core. The Python package (python/eagerflow) lays
// its contents out as TensorFlow's modules are.
#include "bindings.h"

namespace efpy {

// ef::Error subclasses become the classes of eagerflow.errors (defined in Python),
// with the message the C++ error carries minus its C++ call site.
void raise_ef_error(std::exception_ptr p) {
  auto raise = [](const char* name, const ef::Error& e) {
    py::object cls = py::module_::import("eagerflow.errors").attr(name);
    PyErr_SetString(cls.ptr(), e.message().c_str());
  };
  try {
    std::rethrow_exception(p);
  } catch (const ef::InvalidArgumentError& e) {
      raise("InvalidArgumentError", e);
    } catch (const ef::FailedPreconditionError& e) {
      raise("FailedPreconditionError", e);
    } catch (const ef::OutOfRangeError& e) {
      raise("OutOfRangeError", e);
    } catch (const ef::UnimplementedError& e) {
      raise("UnimplementedError", e);
    } catch (const ef::ResourceExhaustedError& e) {
      raise("ResourceExhaustedError", e);
    } catch (const ef::NotFoundError& e) {
      raise("NotFoundError", e);
    } catch (const ef::DataLossError& e) {
      raise("DataLossError", e);
    } catch (const ef::InternalError& e) {
      raise("InternalError", e);
  } catch (const ef::Error& e) {
    raise("OpError", e);
  }
}

void set_python_error(std::exception_ptr p) {
  try {
    std::rethrow_exception(p);
  } catch (const ef::Error&) {
    raise_ef_error(p);
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const py::builtin_exception& e) {
    e.set_error();
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
}

void bind_errors(py::module_& m) {
  (void)m;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      std::rethrow_exception(p);
    } catch (const ef::Error&) {
      raise_ef_error(p);
    }
  });
}

}  // namespace efpy

PYBIND11_MODULE(_core, m) {
  m.doc() = "eagerflow's C++ runtime (use the `eagerflow` package)";
  m.attr("__version__") = EF_VERSION;
  efpy::bind_errors(m);
  efpy::bind_tensor(m);
  efpy::bind_math_ops(m);
  efpy::bind_unary_ops(m);
  efpy::bind_special_ops(m);
  efpy::bind_signal_ops(m);
  efpy::bind_activation_ops(m);
  efpy::bind_array_ops(m);
  efpy::bind_indexing_ops(m);
  efpy::bind_other_ops(m);
  efpy::bind_linalg_ops(m);
  efpy::bind_linalg_decompositions(m);
  efpy::bind_reduction_ops(m);
  efpy::bind_nn_ops(m);
  efpy::bind_random_ops(m);
  efpy::bind_autodiff(m);
  efpy::bind_optim(m);
  efpy::bind_nn(m);
  efpy::bind_data(m);
  efpy::bind_io(m);
  efpy::bind_image(m);
  efpy::bind_graph(m);
  efpy::bind_devices(m);
  efpy::bind_summary(m);
  efpy::bind_profiler(m);
  efpy::bind_saved_model(m);
  efpy::bind_distribute(m);
}
