// ef.Tensor and ef.DType: the Python face of the tensor handle (NumPy and DLPack
// exchange in dlpack.cpp, operators in operators.cpp).
#include <limits>
#include <sstream>
#include <type_traits>

#include "bindings.h"
#include "convert.h"
#include "eagerflow/core/dtype_range.h"
#include "fast_paths.h"

namespace efpy {

py::tuple shape_tuple(const ef::Shape& shape) {
  py::tuple out(shape.rank());
  for (int i = 0; i < shape.rank(); ++i)
    out[i] = shape[i] == ef::kUnknownDim ? py::object(py::none()) : py::object(py::int_(shape[i]));
  return out;
}

namespace {

// dtype.min and dtype.max, as TensorFlow's DType has them.
py::object dtype_limit(ef::DType d, bool upper) {
  if (d == ef::DType::Bool) return py::bool_(upper);
  if (ef::is_complex(d))  // TensorFlow: the limits of the parts
    return py::float_(upper ? ef::finite_range(ef::real_dtype(d)).second
                            : ef::finite_range(ef::real_dtype(d)).first);
  if (ef::is_floating(d)) return py::float_(upper ? ef::finite_range(d).second : ef::finite_range(d).first);
  return py::int_(upper ? ef::integer_range(d).second : ef::integer_range(d).first);
}

// x[key] for ints, slices with steps, negative indices, `...` and None, as NumPy and
// TensorFlow read them: one strided_slice (a view).
ef::Tensor getitem(const ef::Tensor& x, py::handle key) {
  if (PyLong_Check(key.ptr())) return x[int64_of(key, "index")];
  std::vector<py::handle> items;
  if (py::isinstance<py::tuple>(key)) {
    for (py::handle item : py::reinterpret_borrow<py::tuple>(key)) items.push_back(item);
  } else {
    items.push_back(key);
  }
  if (items.size() > 62) throw py::index_error("too many indices");
  std::vector<int64_t> begin, end, strides;
  ef::StridedSliceMasks masks;
  for (size_t i = 0; i < items.size(); ++i) {
    py::handle item = items[i];
    const int64_t bit = int64_t{1} << i;
    if (item.ptr() == Py_Ellipsis) {
      masks.ellipsis_mask |= bit;
      begin.push_back(0), end.push_back(0), strides.push_back(1);
    } else if (item.is_none()) {
      masks.new_axis_mask |= bit;
      begin.push_back(0), end.push_back(0), strides.push_back(1);
    } else if (PySlice_Check(item.ptr())) {
      py::slice s = py::reinterpret_borrow<py::slice>(item);
      py::object start = s.attr("start"), stop = s.attr("stop"), step = s.attr("step");
      int64_t stride = step.is_none() ? 1 : to_ints(step, "slice step").at(0);
      if (stride == 0) throw py::value_error("slice step cannot be zero");
      if (start.is_none()) masks.begin_mask |= bit;
      if (stop.is_none()) masks.end_mask |= bit;
      begin.push_back(start.is_none() ? 0 : to_ints(start, "slice start").at(0));
      end.push_back(stop.is_none() ? 0 : to_ints(stop, "slice stop").at(0));
      strides.push_back(stride);
    } else {
      bool scalar_index = PyLong_Check(item.ptr()) || (py::hasattr(item, "__index__") && !PyBool_Check(item.ptr()));
      if (py::isinstance<ef::Tensor>(item)) {
        const ef::Tensor& t = item.cast<const ef::Tensor&>();
        scalar_index = t.rank() == 0 && ef::is_integer(t.dtype());
      }
      if (!scalar_index)
        throw py::type_error("only integers, slices (`:`), ellipsis (`...`), None and scalar integer tensors are "
                             "valid indices (use ef.gather for a tensor of indices); got " +
                             std::string(py::repr(item)));
      const int64_t index = to_ints(item, "index").at(0);
      masks.shrink_axis_mask |= bit;
      begin.push_back(index), end.push_back(index), strides.push_back(1);
    }
  }
  return ef::strided_slice(x, begin, end, strides, masks);
}

template <class T>
T scalar_value(const ef::Tensor& t, const char* what) {
  if (t.num_elements() != 1)
    throw py::type_error(std::string("only tensors with one element can be converted to ") + what +
                         " (shape " + t.shape().to_string() + ")");
  return t.item<T>();
}

}  // namespace

void bind_tensor(py::module_& m) {
  py::enum_<ef::DType> dtype(
      m, "DType", R"doc(The element type of a tensor: ef.float32, ef.float64, ef.float16, ef.bfloat16,
ef.int32, ef.int64 or ef.bool.

float16 and bfloat16 tensors are stored in two bytes and computed in float32
(each op rounds its float32 result once). ef.as_dtype turns names, NumPy dtypes
and Python types into a DType.

>>> ef.float32.name, ef.float16.size, ef.int64.is_integer
('float32', 2, True)
)doc");
  dtype.value("float32", ef::DType::Float32)
      .value("float64", ef::DType::Float64)
      .value("int32", ef::DType::Int32)
      .value("int64", ef::DType::Int64)
      .value("bool", ef::DType::Bool)
      .value("float16", ef::DType::Float16)
      .value("bfloat16", ef::DType::BFloat16)
      .value("int8", ef::DType::Int8)
      .value("uint8", ef::DType::UInt8)
      .value("int16", ef::DType::Int16)
      .value("uint16", ef::DType::UInt16)
      .value("uint32", ef::DType::UInt32)
      .value("complex64", ef::DType::Complex64)
      .value("complex128", ef::DType::Complex128)
      .def_property_readonly(
          "is_complex", [](ef::DType d) { return ef::is_complex(d); }, "True for complex64 and complex128.")
      .def_property_readonly(
          "real_dtype", [](ef::DType d) { return ef::real_dtype(d); },
          "The dtype of a complex dtype's parts (float32 for complex64); a real dtype itself.")
      .def_property_readonly(
          "name", [](ef::DType d) { return std::string(ef::name(d)); }, "The dtype's name, e.g. \"float32\".")
      .def_property_readonly(
          "is_floating", [](ef::DType d) { return ef::is_floating(d); },
          "True for float16, bfloat16, float32 and float64.")
      .def_property_readonly(
          "is_integer", [](ef::DType d) { return ef::is_integer(d); },
          "True for int8, uint8, int16, uint16, int32, uint32 and int64.")
      .def_property_readonly(
          "is_unsigned", [](ef::DType d) { return ef::is_unsigned(d); }, "True for uint8, uint16 and uint32.")
      .def_property_readonly(
          "min", [](ef::DType d) { return dtype_limit(d, false); },
          "The smallest value of the dtype (for floats the most negative finite one).")
      .def_property_readonly(
          "max", [](ef::DType d) { return dtype_limit(d, true); }, "The largest finite value of the dtype.")
      .def_property_readonly(
          "is_bool", [](ef::DType d) { return d == ef::DType::Bool; }, "True for bool.")
      .def_property_readonly(
          "size", [](ef::DType d) { return ef::size_of(d); }, "Bytes per element (1 for bool).")
      .def_property_readonly(
          "as_numpy_dtype", [](ef::DType d) { return numpy_dtype(d).attr("type"); },
          "The NumPy scalar type (np.float32, ...); TypeError for bfloat16, which NumPy lacks.")
      .def("__reduce__", [](ef::DType d) {
        return py::make_tuple(py::module_::import("eagerflow").attr("as_dtype"),
                              py::make_tuple(std::string(ef::name(d))));
      });
  // After enum_'s own definitions, which these replace (TensorFlow's spellings).
  dtype.attr("__repr__") = py::cpp_function([](ef::DType d) { return "ef." + std::string(ef::name(d)); }, py::is_method(dtype));
  dtype.attr("__str__") =
      py::cpp_function([](ef::DType d) { return "<dtype: '" + std::string(ef::name(d)) + "'>"; }, py::is_method(dtype));
  for (ef::DType d : ef::kAllDTypes) m.attr(std::string(ef::name(d)).c_str()) = py::cast(d);

  py::class_<ef::Tensor> tensor(m, "Tensor",
                                R"doc(An immutable multidimensional array: a dtype, a shape and a device.

Tensors are made by ops (ef.constant, ef.zeros, ef.matmul, ...), not by calling
ef.Tensor. Eagerly a tensor holds its values; while a graph or an ef.function
is built it is symbolic (a node's output, values unknown until it runs).

Python operators work elementwise with NumPy broadcasting (+ - * / // % ** and
comparisons, & | ^ ~ on bool tensors, @ for matmul); a Python number takes the
tensor's dtype. Indexing (x[1, ::2, None, ...]) is a strided_slice view.
x.numpy() and np.asarray(x) share memory with the tensor.

>>> x = ef.constant([[1., 2.], [3., 4.]])
>>> x.shape, x.dtype
(TensorShape([2, 2]), ef.float32)
>>> (x * 2 + 1)[:, 1].numpy()
array([5., 9.], dtype=float32)
)doc");
  tensor.def_property_readonly("_shape_tuple", [](const ef::Tensor& t) { return shape_tuple(t.shape()); })
      .def_property_readonly("dtype", &ef::Tensor::dtype, "The element type, an ef.DType.")
      .def_property_readonly("ndim", &ef::Tensor::rank, "The number of axes (0 for a scalar).")
      .def_property_readonly(
          "device", [](const ef::Tensor& t) { return ef::full_device_name(t.device()); },
          "The device holding the values, as TensorFlow names it: "
          "\"/job:localhost/replica:0/task:0/device:CPU:0\" or \"...device:GPU:0\".")
      .def("gpu", &ef::Tensor::gpu, py::arg("index") = 0,
           R"doc(A copy of this tensor on GPU `index` (this tensor when it is already there).

Args:
  index: The CUDA device number (default 0).

Returns:
  A Tensor on that GPU.

Raises:
  UnimplementedError: no CUDA driver or device is available.
)doc")
      .def("cpu", &ef::Tensor::cpu,
           R"doc(A copy of this tensor in host memory (this tensor when it is already there).

Returns:
  A Tensor on the CPU.
)doc")
      .def_property_readonly("is_symbolic", &ef::Tensor::is_symbolic,
                             "True for a graph tensor (built in a graph or ef.function), which has no "
                             "values until the graph runs.")
      .def("numpy", &to_numpy, py::arg("dtype") = py::none(),
           R"doc(Returns the values as a NumPy array.

Without dtype the array shares this tensor's memory and is read-only (tensors
are immutable; np.array(t) gives a writable copy). A GPU tensor is copied to the
host first.

>>> ef.constant([1, 2]).numpy()
array([1, 2], dtype=int32)

Args:
  dtype: None, or a NumPy dtype to convert to (a copy). bfloat16 tensors need
    one (e.g. np.float32), since NumPy has no bfloat16.

Returns:
  A numpy.ndarray of the tensor's shape.

Raises:
  FailedPreconditionError: the tensor is symbolic (it has no values yet).
  TypeError: a bfloat16 tensor without dtype.
)doc")
      .def(
          "__array__", [](const ef::Tensor& t, py::object dtype) { return to_numpy(t, dtype); },
          py::arg("dtype") = py::none())
      .def("num_elements", &ef::Tensor::num_elements,
           R"doc(The number of elements, the product of the dimensions (1 for a scalar).

>>> ef.zeros([2, 3]).num_elements()
6
)doc")
      .def("__str__", &ef::Tensor::to_string)
      .def("__repr__",
           [](const ef::Tensor& t) {
             std::string meta = "shape=" + std::string(py::str(shape_tuple(t.shape()))) +
                                ", dtype=" + std::string(ef::name(t.dtype()));
             if (t.is_symbolic()) return "<ef.Tensor: " + meta + " (symbolic)>";
             return "<ef.Tensor: " + meta + ", " + values_repr(t) + ">";
           })
      .def("__bool__", [](const ef::Tensor& t) { return static_cast<bool>(t); })
      .def("__float__", [](const ef::Tensor& t) { return scalar_value<double>(t, "a Python float"); })
      .def("__int__", [](const ef::Tensor& t) { return scalar_value<int64_t>(t, "a Python int"); })
      .def("__index__",
           [](const ef::Tensor& t) {
             if (!ef::is_integer(t.dtype()))
               throw py::type_error("only integer tensors can be used as an index (dtype " +
                                    std::string(ef::name(t.dtype())) + ")");
             return scalar_value<int64_t>(t, "an index");
           })
      .def("__len__",
           [](const ef::Tensor& t) {
             if (t.rank() == 0) throw py::type_error("len() of a scalar tensor");
             return t.shape()[0];
           })
      .def("__iter__",
           [](const ef::Tensor& t) {
             if (t.rank() == 0) throw py::type_error("iteration over a scalar tensor");
             return py::iter(py::cast(ef::unstack(t, 0)));
           })
      .def("__getitem__", &getitem,
           R"doc(Indexes the tensor as NumPy does with basic indexing: a view (strided_slice).

Accepts ints (negative count from the end), slices with steps, `...`, None (a new
axis) and scalar integer tensors; use ef.gather for a tensor of indices.

>>> ef.reshape(ef.range(6), [2, 3])[1, ::-1].numpy()
array([5, 4, 3], dtype=int32)
)doc")
      .def("__hash__",
           [](py::handle self) { return py::hash(py::int_(reinterpret_cast<intptr_t>(self.ptr()))); })
      .def("__copy__", [](const ef::Tensor& t) { return t; })
      .def("__deepcopy__", [](const ef::Tensor& t, py::handle) { return t; });
  tensor.attr("__array_priority__") = 100;  // NumPy defers to our reflected operators

  init_fast_paths(tensor);
  bind_operators(tensor);
  bind_dlpack(m, tensor);
}

}  // namespace efpy
