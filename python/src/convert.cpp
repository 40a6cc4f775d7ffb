#include "convert.h"

#include "eagerflow/core/dtype_range.h"
#include "fast_paths.h"

#include <climits>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <utility>

namespace efpy {
namespace {

using namespace pybind11::literals;

// numpy's name for each dtype (null for bfloat16, which NumPy lacks), and back.
const char* numpy_name(ef::DType dtype) {
  switch (dtype) {
    case ef::DType::Float32: return "float32";
    case ef::DType::Float64: return "float64";
    case ef::DType::Int32: return "int32";
    case ef::DType::Int64: return "int64";
    case ef::DType::Bool: return "bool";
    case ef::DType::Float16:
      return "float16";
    case ef::DType::BFloat16:
      return nullptr;
    case ef::DType::Int8:
      return "int8";
    case ef::DType::UInt8:
      return "uint8";
    case ef::DType::Int16:
      return "int16";
    case ef::DType::UInt16:
      return "uint16";
    case ef::DType::UInt32:
      return "uint32";
    case ef::DType::Complex64:
      return "complex64";
    case ef::DType::Complex128:
      return "complex128";
  }
  return nullptr;
}

// "float32, float64, ..." for error messages.
std::string dtype_names() {
  std::string names;
  for (ef::DType d : ef::kAllDTypes) names += (names.empty() ? "" : ", ") + std::string(ef::name(d));
  return names;
}

std::optional<ef::DType> dtype_from_numpy(const py::dtype& dt) {
  const char kind = dt.kind();
  const size_t size = static_cast<size_t>(dt.itemsize());
  if (kind == 'f')
    return size == 8 ? ef::DType::Float64 : size == 2 ? ef::DType::Float16 : ef::DType::Float32;
  if (kind == 'b') return ef::DType::Bool;
  if (kind == 'c' && size <= 16) return size == 16 ? ef::DType::Complex128 : ef::DType::Complex64;
  if (kind == 'i')
    return size == 1   ? ef::DType::Int8
           : size == 2 ? ef::DType::Int16
           : size == 4 ? ef::DType::Int32
                       : ef::DType::Int64;
  // uint64 has no eagerflow dtype: to int64, whose values to_tensor checks.
  if (kind == 'u')
    return size == 1   ? ef::DType::UInt8
           : size == 2 ? ef::DType::UInt16
           : size == 4 ? ef::DType::UInt32
                       : ef::DType::Int64;
  return std::nullopt;
}

py::module_& numpy() {
  // Never destroyed: a static py::object would be released after the interpreter ends.
  static auto* np = new py::module_(py::module_::import("numpy"));
  return *np;
}

bool is_list_or_tuple(py::handle obj) { return PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr()); }

bool is_tensor_or_variable(py::handle obj) {
  if (PyFloat_Check(obj.ptr()) || PyLong_Check(obj.ptr())) return false;  // the common case, cheaply
  return tensor_ptr(obj) || py::isinstance<ef::Tensor>(obj) || py::isinstance<ef::Variable>(obj);
}

// The first leaf of a (nested) list or tuple, depth first, for which `pred` holds; or
// None.
template <typename Pred>
py::handle find_leaf(py::handle obj, const Pred& pred) {
  if (!is_list_or_tuple(obj)) return pred(obj) ? obj : py::handle();
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(obj.ptr());
  PyObject** items = PySequence_Fast_ITEMS(obj.ptr());
  for (Py_ssize_t i = 0; i < n; ++i)
    if (py::handle found = find_leaf(items[i], pred)) return found;
  return py::handle();
}

py::handle first_tensor(py::handle obj) { return find_leaf(obj, is_tensor_or_variable); }

bool only_ints(py::handle obj) {
  return !find_leaf(obj, [](py::handle h) { return !PyLong_Check(h.ptr()) || PyBool_Check(h.ptr()); });
}

// A list or tuple that holds tensors, as their stack (Note [Python conversions]): the
// result stays connected to the tapes that watch its items, and symbolic in a graph.
// Python numbers among the tensors take the dtype of the first tensor; tensors of
// different dtypes are stack's error, never a silent cast.
ef::Tensor stacked(py::handle seq, ef::DType number_dtype) {
  std::vector<ef::Tensor> items;
  for (py::handle item : owned_items(seq)) {
    if (is_tensor_or_variable(item))
      items.push_back(to_tensor(item));
    else if (is_list_or_tuple(item) && first_tensor(item))
      items.push_back(stacked(item, number_dtype));
    else
      items.push_back(to_tensor(item, number_dtype));
  }
  return ef::stack(items, 0);
}

// Python scalars and (nested) sequences, through NumPy, with TensorFlow's defaults.
// With an explicit integer `dtype`, values it cannot hold exactly are refused (as
// TensorFlow does): ef.cast is the way to truncate.
ef::Tensor from_python(py::handle obj, std::optional<ef::DType> dtype) {
  if (is_list_or_tuple(obj)) {
    if (py::handle tensor = first_tensor(obj))
      return stacked(obj, py::isinstance<ef::Variable>(tensor) ? tensor.cast<const ef::Variable&>().dtype()
                                                               : tensor.cast<const ef::Tensor&>().dtype());
  }
  py::array array = numpy().attr("asarray")(obj);
  const char kind = array.dtype().kind();
  auto describe = [&] {
    std::string text = py::repr(obj);
    return text.size() <= 60 ? text : text.substr(0, 56) + " ...";
  };
  if (kind == 'O' && (PyLong_Check(obj.ptr()) || is_list_or_tuple(obj)))  // ints beyond 64 bits
    throw py::value_error("convert_to_tensor: " + describe() +
                          " holds an integer that does not fit in 64 bits");
  // NumPy turns a list of Python ints into floats when one exceeds 64 bits: refuse that
  // (TensorFlow does) instead of rounding the ints.
  if (kind == 'f' && is_list_or_tuple(obj) && array.size() > 0 &&
      numpy().attr("max")(numpy().attr("abs")(array)).cast<double>() >= 0x1p63 && only_ints(obj))
    throw py::value_error("convert_to_tensor: " + describe() +
                          " holds an integer that does not fit in int64");
  const bool to_integer = dtype && ef::is_integer(*dtype);
  if (kind == 'f' && to_integer && array.size() > 0) {
    if (!numpy().attr("all")(numpy().attr("equal")(array, numpy().attr("trunc")(array))).cast<bool>())
      throw py::type_error("convert_to_tensor: cannot convert " + describe() + " to " +
                           std::string(ef::name(*dtype)) +
                           " without losing the fraction; use ef.cast to truncate");
    const double low = numpy().attr("min")(array).cast<double>(),
                 high = numpy().attr("max")(array).cast<double>();
    const auto [lo, hi] = ef::integer_range(*dtype);
    // hi + 1 is a power of two, exact as a double.
    if (!(low >= static_cast<double>(lo) && high < std::ldexp(static_cast<double>(hi / 2 + 1), 1)))
      throw py::value_error("convert_to_tensor: " + describe() + " holds a value outside the range of " +
                            std::string(ef::name(*dtype)) + " (" + std::to_string(lo) + " to " +
                            std::to_string(hi) + "); use ef.cast to saturate");
  }
  if (kind == 'f') {
    // One rounding, straight to the requested width (bfloat16 is float32's top half:
    // rounding to float32 first changes nothing).
    array = array.attr("astype")(dtype == ef::DType::Float64   ? "float64"
                                 : dtype == ef::DType::Float16 ? "float16"
                                                               : "float32");
  } else if (kind == 'i' || kind == 'u') {
    // int32 unless a value needs 64 bits (TensorFlow's rule for Python ints); a value
    // beyond int64 (NumPy makes such lists uint64) or the requested dtype is refused.
    auto limit = [&](const char* which) { return py::int_(numpy().attr(which)(array)); };
    const bool empty = array.size() == 0;
    const py::int_ low = empty ? py::int_(0) : limit("min"), high = empty ? py::int_(0) : limit("max");
    const ef::DType needed =
        low >= py::int_(INT32_MIN) && high <= py::int_(INT32_MAX) ? ef::DType::Int32 : ef::DType::Int64;
    if (high > py::int_(INT64_MAX))
      throw py::value_error("convert_to_tensor: " + describe() +
                            " holds an integer that does not fit in int64");
    if (to_integer) {
      const auto [lo, hi] = ef::integer_range(*dtype);
      if (low < py::int_(lo) || high > py::int_(hi))
        throw py::value_error("convert_to_tensor: " + describe() + " holds an integer that does not fit in " +
                              std::string(ef::name(*dtype)) + " (" + std::to_string(lo) + " to " +
                              std::to_string(hi) + ")");
    }
    array = array.attr("astype")(needed == ef::DType::Int32 ? "int32" : "int64");
  } else if (kind == 'c') {
    // Python's complex numbers are complex128, as in TensorFlow.
    array = array.attr("astype")(dtype == ef::DType::Complex64 ? "complex64" : "complex128");
  } else if (kind != 'b') {
    const std::string type = py::str(py::type::of(obj).attr("__name__"));
    if (type == "KerasTensor")
      throw py::type_error(
          "a KerasTensor is symbolic (the functional API) and holds no values: ops take it only through "
          "layers; wrap other functions in keras.layers.Lambda");
    const char array_kind = array.dtype().kind();
    if (array_kind == 'U' || array_kind == 'S')
      throw py::type_error(
          "cannot convert " + type + " of strings to an eagerflow tensor: eagerflow has no " +
          "string dtype yet; keep strings (file names, text) in Python, e.g. read the files " +
          "before building a Dataset");
    throw py::type_error("cannot convert " + type + " to an eagerflow tensor (dtype " +
                         std::string(py::str(array.dtype())) + ")");
  }
  return to_tensor(array);
}

}  // namespace

py::object named_tuple(const char* type_name, const char* fields, const py::tuple& values) {
  // Made once per name and never destroyed: a static py::object would outlive the interpreter.
  static auto* types = new std::map<std::string, py::object>();
  py::object& type = (*types)[type_name];
  if (!type) type = py::module_::import("collections").attr("namedtuple")(type_name, fields);
  return type(*values);
}

py::dtype numpy_dtype(ef::DType dtype) {
  if (const char* name = numpy_name(dtype)) return py::dtype(name);
  throw py::type_error(std::string(ef::name(dtype)) +
                       " has no NumPy dtype: use t.numpy(dtype=np.float32), or ef.cast(t, ef.float32) first");
}

ef::Tensor to_tensor(py::handle obj, std::optional<ef::DType> dtype) {
  if (const ef::Tensor* fast = tensor_ptr(obj)) {
    if (!dtype || fast->dtype() == *dtype) return *fast;
  }
  ef::Tensor t;
  if (py::isinstance<ef::Tensor>(obj)) {
    t = obj.cast<const ef::Tensor&>();
  } else if (py::isinstance<ef::Variable>(obj)) {
    t = obj.cast<const ef::Variable&>().value();
  } else if (py::isinstance<py::array>(obj)) {
    py::array array = py::reinterpret_borrow<py::array>(obj);
    std::optional<ef::DType> own = dtype_from_numpy(array.dtype());
    if (!own)
      throw py::type_error("cannot convert a NumPy array of dtype " + std::string(py::str(array.dtype())) +
                           " to an eagerflow tensor");
    if (array.dtype().kind() == 'u' && array.dtype().itemsize() == 8 && array.size() > 0 &&
        py::int_(numpy().attr("max")(array)) > py::int_(INT64_MAX))
      throw py::value_error(
          "convert_to_tensor: a uint64 NumPy array holds a value beyond int64, the widest "
          "eagerflow integer dtype");
    array = numpy().attr("asarray")(array, numpy_name(*own), "order"_a = "C");
    ef::Dims dims;
    for (py::ssize_t i = 0; i < array.ndim(); ++i) dims.push_back(array.shape(i));
    t = ef::detail::tensor_from_host(*own, ef::Shape(dims), array.data(), "convert_to_tensor");
  } else if (py::hasattr(obj, "__array__") && !PySequence_Check(obj.ptr())) {
    t = to_tensor(numpy().attr("asarray")(obj));  // NumPy scalars and array-likes
  } else {
    t = from_python(obj, dtype);
  }
  if (dtype && t.dtype() != *dtype) t = ef::cast(t, *dtype);
  return t;
}

ef::Tensor to_tensor_like(py::handle obj, ef::DType like) {
  PyObject* o = obj.ptr();
  const bool python_value =
      PyFloat_Check(o) || PyLong_Check(o) || PyBool_Check(o) || PyList_Check(o) || PyTuple_Check(o);
  ef::Tensor t = to_tensor(obj);
  if (!python_value || t.dtype() == like || t.dtype() == ef::DType::Bool || like == ef::DType::Bool) return t;
  // 1.5 for an integer: the op says no; a number next to a complex tensor takes its dtype.
  if (ef::is_floating(t.dtype()) && !ef::is_floating(like) && !ef::is_complex(like)) return t;
  if (ef::is_complex(t.dtype()) && !ef::is_complex(like)) return t;  // 1j next to a float: the op says no
  return to_tensor(obj, like);
}

ef::TensorOrScalar to_operand(py::handle obj, std::optional<ef::DType> like) {
  if (const ef::Tensor* fast = tensor_ptr(obj)) return ef::TensorOrScalar(*fast);
  if (PyFloat_Check(obj.ptr())) return ef::TensorOrScalar(PyFloat_AS_DOUBLE(obj.ptr()));
  if (PyBool_Check(obj.ptr())) return ef::TensorOrScalar(obj.ptr() == Py_True);
  if (PyLong_Check(obj.ptr())) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
    if (overflow) throw py::value_error("the Python int " + std::string(py::str(obj)) + " does not fit in 64 bits");
    if (v >= INT32_MIN && v <= INT32_MAX) return ef::TensorOrScalar(static_cast<int32_t>(v));
    return ef::TensorOrScalar(static_cast<int64_t>(v));
  }
  if (like && (PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr()))) return ef::TensorOrScalar(to_tensor(obj, like));
  if (like && ef::is_complex(*like) && PyComplex_Check(obj.ptr()))  // 1j next to a complex64 tensor
    return ef::TensorOrScalar(to_tensor(obj, like));
  return ef::TensorOrScalar(to_tensor(obj));
}

std::pair<ef::TensorOrScalar, ef::TensorOrScalar> to_operands(py::handle x, py::handle y) {
  auto is_list = [](py::handle h) { return PyList_Check(h.ptr()) || PyTuple_Check(h.ptr()); };
  if (is_list(x) && !is_list(y)) {
    ef::TensorOrScalar b = to_operand(y);
    return {to_operand(x, b.is_tensor() ? std::optional(b.tensor().dtype()) : std::nullopt), b};
  }
  ef::TensorOrScalar a = to_operand(x);
  ef::TensorOrScalar b = to_operand(y, a.is_tensor() ? std::optional(a.tensor().dtype()) : std::nullopt);
  if (!a.is_tensor() && !b.is_tensor()) a = ef::TensorOrScalar(to_tensor(x));  // ef.add(1., 2.) is float32
  return {a, b};
}

ef::DType to_dtype(py::handle obj) {
  if (py::isinstance<ef::DType>(obj)) return obj.cast<ef::DType>();
  if (obj.ptr() == reinterpret_cast<PyObject*>(&PyFloat_Type)) return ef::DType::Float32;
  if (obj.ptr() == reinterpret_cast<PyObject*>(&PyLong_Type)) return ef::DType::Int32;
  if (obj.ptr() == reinterpret_cast<PyObject*>(&PyBool_Type)) return ef::DType::Bool;
  if (py::isinstance<py::str>(obj)) {
    std::string name = obj.cast<std::string>();
    for (ef::DType d : ef::kAllDTypes)
      if (name == ef::name(d)) return d;
    if (name == "half") return ef::DType::Float16;
    throw py::type_error("unknown dtype '" + name + "' (eagerflow has " + dtype_names() + ")");
  }
  try {
    py::dtype dt = numpy().attr("dtype")(obj);
    std::optional<ef::DType> d = dtype_from_numpy(dt);
    if (d && !(dt.kind() == 'u' && dt.itemsize() == 8)) return *d;  // uint64: no eagerflow dtype
  } catch (py::error_already_set&) {
  }
  throw py::type_error("cannot interpret " + std::string(py::repr(obj)) + " as an eagerflow dtype (" +
                       dtype_names() + ")");
}

// A Python int (or anything with __index__) as int64, or a ValueError naming `what`.
std::optional<ef::Tensor> optional_tensor(py::handle obj) {
  if (obj.is_none()) return std::nullopt;
  return to_tensor(obj);
}

std::string name_or(py::handle name, const char* fallback) {
  return name.is_none() ? std::string(fallback) : name.cast<std::string>();
}

int64_t int64_of(py::handle obj, const char* what) {
  py::int_ value = py::int_(py::reinterpret_borrow<py::object>(obj));
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow)
    throw py::value_error(std::string(what) + ": " + std::string(py::str(value)) +
                          " does not fit in 64 bits");
  return v;
}

std::vector<int64_t> to_ints(py::handle obj, const char* what) {
  std::vector<int64_t> out;
  if (py::isinstance<ef::Tensor>(obj)) {
    const ef::Tensor& t = obj.cast<const ef::Tensor&>();
    if (!ef::is_integer(t.dtype()))
      throw py::type_error(std::string(what) + ": expected integers, got a tensor of dtype " +
                           std::string(py::str(py::cast(t.dtype()))));
    return t.rank() == 0 ? std::vector<int64_t>{t.item<int64_t>()} : t.to_vector<int64_t>();
  }
  if (PyLong_Check(obj.ptr())) return {int64_of(obj, what)};
  if (!PySequence_Check(obj.ptr()) && py::hasattr(obj, "__index__") && !PyFloat_Check(obj.ptr()))
    return {int64_of(obj, what)};  // NumPy integers
  if (!PySequence_Check(obj.ptr()) || py::isinstance<py::str>(obj))
    throw py::type_error(std::string(what) + ": expected an int or a sequence of ints, got " +
                         std::string(py::repr(obj)));
  for (py::handle item : owned_items(obj)) {
    if (py::isinstance<ef::Tensor>(item)) out.push_back(item.cast<const ef::Tensor&>().item<int64_t>());
    else if (py::hasattr(item, "__index__"))
      out.push_back(int64_of(item, what));
    else
      throw py::type_error(std::string(what) + ": expected ints, got " + std::string(py::repr(item)));
  }
  return out;
}

ef::Shape to_shape(py::handle obj, const char* what) {
  const bool tensor_or_array = py::isinstance<ef::Tensor>(obj) || py::isinstance<py::array>(obj);
  if (!tensor_or_array && PySequence_Check(obj.ptr()) && !py::isinstance<py::str>(obj)) {
    ef::Dims dims;
    for (py::handle item : owned_items(obj)) {
      if (item.is_none()) dims.push_back(ef::kUnknownDim);
      else dims.push_back(to_ints(item, what).at(0));
    }
    return ef::Shape(dims);
  }
  std::vector<int64_t> v = to_ints(obj, what);
  return ef::Shape(ef::Dims(v.begin(), v.end()));
}

ef::Axes to_axes(py::handle obj) {
  if (obj.is_none()) return ef::Axes();
  if (PyLong_Check(obj.ptr())) return ef::Axes(int64_of(obj, "axis"));
  return ef::Axes(to_ints(obj, "axis"));
}

std::string values_repr(const ef::Tensor& t) {
  if (t.dtype() != ef::DType::BFloat16) return "numpy=" + std::string(py::repr(to_numpy(t)));
  // NumPy has no bfloat16: show the values as the tensor prints them.
  const std::string text = t.to_string();  // "Tensor(<values>, shape=..., dtype=bfloat16)"
  const size_t begin = text.find('(') + 1, end = text.rfind(", shape=");
  return "values=" + text.substr(begin, end - begin);
}

py::array to_numpy(const ef::Tensor& t, py::handle dtype) {
  if (!dtype.is_none()) {
    // A copy in the requested dtype; bfloat16 goes through float32, which holds it exactly.
    ef::BuildScope eager(nullptr);
    const ef::Tensor source = t.dtype() == ef::DType::BFloat16 ? ef::cast(t, ef::DType::Float32) : t;
    return numpy().attr("asarray")(to_numpy(source), dtype);
  }
  if (t.is_symbolic())
    throw ef::FailedPreconditionError("numpy: the tensor is symbolic (graph mode) and has no value yet");
  if (t.device().type != ef::DeviceType::CPU) return to_numpy(t.cpu(), dtype);  // a copy in host memory
  const size_t item = ef::size_of(t.dtype());
  std::vector<py::ssize_t> shape, strides;
  for (int i = 0; i < t.rank(); ++i) {
    shape.push_back(t.shape()[i]);
    strides.push_back(t.strides()[i] * static_cast<py::ssize_t>(item));
  }
  // The capsule owns a reference to the tensor: the array keeps its memory alive.
  py::capsule owner(new ef::Tensor(t), [](void* p) { delete static_cast<ef::Tensor*>(p); });
  py::array view(numpy_dtype(t.dtype()), shape, strides, t.raw_data(), owner);
  // Read-only, as NumPy makes memory it does not own: tensors are immutable, and a
  // write here would change values that tapes, graphs and other tensors still hold.
  // np.array(t) gives a writable copy.
  py::detail::array_proxy(view.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return view;
}

std::optional<int64_t> seed_of(py::handle seed) {
  if (seed.is_none()) return std::nullopt;
  return int64_of(seed, "seed");
}

}  // namespace efpy
