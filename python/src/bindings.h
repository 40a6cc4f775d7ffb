// The binding functions of the extension module, one per area (module.cpp calls them).
#pragma once

#include <pybind11/pybind11.h>

#include <eagerflow/eagerflow.h>

namespace efpy {

namespace py = pybind11;

void bind_errors(py::module_& m);
// Sets the Python error for a C++ exception (for code outside pybind11's dispatcher).
void set_python_error(std::exception_ptr p);
void bind_tensor(py::module_& m);
void bind_operators(py::class_<ef::Tensor>& tensor);
void bind_dlpack(py::module_& m, py::class_<ef::Tensor>& tensor);
void bind_math_ops(py::module_& m);
void bind_unary_ops(py::module_& m);       // unary elementwise ops (unary_ops.cpp)
void bind_special_ops(py::module_& m);     // special functions (special_ops.cpp)
void bind_signal_ops(py::module_& m);      // complex numbers and ef.signal (signal_ops.cpp)
void bind_activation_ops(py::module_& m);  // activations (activation_ops.cpp)
void bind_array_ops(py::module_& m);
void bind_indexing_ops(py::module_& m);   // gather, scatter, where, one_hot, sorting (indexing_ops.cpp)
void bind_other_ops(py::module_& m);      // creation, linalg
void bind_linalg_ops(py::module_& m);     // ef.linalg's matrix functions (linalg_ops.cpp)
void bind_linalg_decompositions(
    py::module_& m);                      // qr, eigh, svd and what uses them (linalg_decompositions.cpp)
void bind_reduction_ops(py::module_& m);  // reductions and scans (reduction_ops.cpp)
void bind_nn_ops(py::module_& m);         // ef.nn ops (nn_ops.cpp)
void bind_random_ops(py::module_& m);     // ef.random ops (random_ops.cpp)
void bind_autodiff(py::module_& m);
void bind_optim(py::module_& m);  // optimizers, schedules, clipping
void bind_nn(py::module_& m);     // Module, Layer, layers, initializers, losses, metrics
void bind_losses(py::module_& keras);   // ef.keras.losses (losses.cpp)
void bind_metrics(py::module_& keras);  // ef.keras.metrics (metrics.cpp)
void bind_data(py::module_& m);   // the submodule _core.data: datasets, IDX files
void bind_io(py::module_& m);     // safetensors files, Checkpoint, CheckpointManager
void bind_image(py::module_& m);  // image files (read_file, decode_png, ...) and tf.image ops (image.cpp)
void bind_graph(py::module_& m);  // Graph, Session, placeholder, gradients, Function
void bind_devices(py::module_& m);  // device scopes, CUDA devices and their memory
void bind_summary(py::module_& m);  // the submodule _core.summary: TensorBoard event files
void bind_profiler(py::module_& m);  // the submodule _core.profiler: op timings, Chrome traces
void bind_saved_model(py::module_& m);  // saved models: exports and loading (saved_model.cpp)
void bind_distribute(py::module_& m);   // the submodule _core.distribute: collectives on MPI (distribute.cpp)

// A Python object that C++ keeps (a callback inside a std::function, say) and may
// release on a thread that does not hold the GIL: the destructor takes the GIL.
struct PyRef {
  py::object object;
  explicit PyRef(py::object o) : object(std::move(o)) {}
  ~PyRef() {
    py::gil_scoped_acquire gil;
    object = py::object();
  }
};

// A shape as a tuple of ints (None for an unknown dimension).
py::tuple shape_tuple(const ef::Shape& shape);

// Python's `/` and TensorFlow's divide: integer operands divide as float64 (7 / 2 is
// 3.5), where the C++ ef::divide keeps integers.
ef::Tensor true_divide(const ef::TensorOrScalar& x, const ef::TensorOrScalar& y, ef::CallSite where);

// Runs f without the GIL when the work is large enough to be worth the switch, so
// other Python threads run during long kernels.
template <class F>
auto maybe_without_gil(int64_t elements, F&& f) {
  if (elements < (int64_t{1} << 15)) return f();
  py::gil_scoped_release release;
  return f();
}

}  // namespace efpy
