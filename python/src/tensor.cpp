// ef.Tensor and ef.DType: the Python face of the tensor handle (NumPy and DLPack
// exchange in dlpack.cpp, operators in operators.cpp).
#include <sstream>

#include "bindings.h"
#include "convert.h"
#include "fast_paths.h"

namespace efpy {

py::tuple shape_tuple(const ef::Shape& shape) {
  py::tuple out(shape.rank());
  for (int i = 0; i < shape.rank(); ++i)
    out[i] = shape[i] == ef::kUnknownDim ? py::object(py::none()) : py::object(py::int_(shape[i]));
  return out;
}

namespace {

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
        scalar_index = t.rank() == 0 && (t.dtype() == ef::DType::Int32 || t.dtype() == ef::DType::Int64);
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
  py::enum_<ef::DType> dtype(m, "DType");
  dtype.value("float32", ef::DType::Float32)
      .value("float64", ef::DType::Float64)
      .value("int32", ef::DType::Int32)
      .value("int64", ef::DType::Int64)
      .value("bool", ef::DType::Bool)
      .value("float16", ef::DType::Float16)
      .value("bfloat16", ef::DType::BFloat16)
      .def_property_readonly("name", [](ef::DType d) { return std::string(ef::name(d)); })
      .def_property_readonly("is_floating", [](ef::DType d) { return ef::is_floating(d); })
      .def_property_readonly("is_integer",
                             [](ef::DType d) { return d == ef::DType::Int32 || d == ef::DType::Int64; })
      .def_property_readonly("is_bool", [](ef::DType d) { return d == ef::DType::Bool; })
      .def_property_readonly("size", [](ef::DType d) { return ef::size_of(d); })
      .def_property_readonly("as_numpy_dtype", [](ef::DType d) { return numpy_dtype(d).attr("type"); })
      .def("__reduce__", [](ef::DType d) {
        return py::make_tuple(py::module_::import("eagerflow").attr("as_dtype"),
                              py::make_tuple(std::string(ef::name(d))));
      });
  // After enum_'s own definitions, which these replace (TensorFlow's spellings).
  dtype.attr("__repr__") = py::cpp_function([](ef::DType d) { return "ef." + std::string(ef::name(d)); }, py::is_method(dtype));
  dtype.attr("__str__") =
      py::cpp_function([](ef::DType d) { return "<dtype: '" + std::string(ef::name(d)) + "'>"; }, py::is_method(dtype));
  for (ef::DType d : ef::kAllDTypes) m.attr(std::string(ef::name(d)).c_str()) = py::cast(d);

  py::class_<ef::Tensor> tensor(m, "Tensor");
  tensor.def_property_readonly("_shape_tuple", [](const ef::Tensor& t) { return shape_tuple(t.shape()); })
      .def_property_readonly("dtype", &ef::Tensor::dtype)
      .def_property_readonly("ndim", &ef::Tensor::rank)
      .def_property_readonly("device", [](const ef::Tensor& t) { return ef::full_device_name(t.device()); })
      .def("gpu", &ef::Tensor::gpu, py::arg("index") = 0,
           "A copy of this tensor on GPU `index` (this tensor when it is already there).")
      .def("cpu", &ef::Tensor::cpu,
           "A copy of this tensor in host memory (this tensor when it is already there).")
      .def_property_readonly("is_symbolic", &ef::Tensor::is_symbolic)
      .def("numpy", &to_numpy, py::arg("dtype") = py::none(),
           "A read-only NumPy array sharing this tensor's memory; with dtype, a converted copy "
           "(bfloat16 tensors, which NumPy cannot hold, need one).")
      .def(
          "__array__", [](const ef::Tensor& t, py::object dtype) { return to_numpy(t, dtype); },
          py::arg("dtype") = py::none())
      .def("num_elements", &ef::Tensor::num_elements)
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
             if (t.dtype() != ef::DType::Int32 && t.dtype() != ef::DType::Int64)
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
      .def("__getitem__", &getitem)
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
