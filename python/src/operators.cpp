// Tensor's Python operators: arithmetic, comparison and logical ones, reflected forms
// and `@`. A Python number on either side keeps the tensor's dtype (Note [Python
// conversions]).
#include "bindings.h"
#include "convert.h"
#include "fast_paths.h"

namespace efpy {
namespace {

using BinaryOp = ef::Tensor (*)(const ef::TensorOrScalar&, const ef::TensorOrScalar&, ef::CallSite);
constexpr ef::CallSite kPython{};  // errors name no C++ location for Python callers

// x op y where x or y is an ef.Tensor (`2 * x` has it on the right), read without
// pybind11's look-ups (Note [Python op overhead]); NotImplemented when neither is.
template <BinaryOp op>
py::object apply_binary(py::handle x, py::handle y) {
  const ef::Tensor* a = tensor_ptr(x);
  const ef::Tensor* b = tensor_ptr(y);
  if (!a && !b) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  const ef::Tensor& t = a ? *a : *b;
  ef::TensorOrScalar lhs = a ? ef::TensorOrScalar(*a) : to_operand(x, t.dtype());
  ef::TensorOrScalar rhs = b ? ef::TensorOrScalar(*b) : to_operand(y, t.dtype());
  return wrap(maybe_without_gil(t.num_elements(), [&] { return op(lhs, rhs, kPython); }));
}

// Defines __name__ and, when given, its reflected __rname__.
template <BinaryOp op>
void binary(py::class_<ef::Tensor>& cls, const char* name, const char* reflected) {
  cls.def(name, [](py::handle self, py::handle other) { return apply_binary<op>(self, other); });
  if (reflected)
    cls.def(reflected, [](py::handle self, py::handle other) { return apply_binary<op>(other, self); });
}

// Tensors are unequal to None and to what cannot become a tensor, as in TensorFlow.
template <BinaryOp op>
void equality(py::class_<ef::Tensor>& cls, const char* name, bool if_unrelated) {
  cls.def(name, [if_unrelated](const ef::Tensor& a, py::handle b) -> py::object {
    if (b.is_none()) return py::bool_(if_unrelated);
    ef::TensorOrScalar rhs = 0;
    try {
      rhs = to_operand(b, a.dtype());
    } catch (py::type_error&) {
      return py::bool_(if_unrelated);
    }
    return py::cast(op(a, rhs, kPython));
  });
}

ef::Tensor logical_or_bitwise(BinaryOp logical, const ef::TensorOrScalar& a, const ef::TensorOrScalar& b,
                              const char* name) {
  const ef::Tensor& t = a.is_tensor() ? a.tensor() : b.tensor();
  if (t.dtype() != ef::DType::Bool)
    throw py::type_error(std::string("operator ") + name + " needs bool tensors (dtype " +
                         std::string(ef::name(t.dtype())) + "); eagerflow has no bitwise ops yet");
  return logical(a, b, kPython);
}

// The number slots of the type itself, for +, -, * and /: Python calls them directly,
// skipping the method look-up and pybind11's dispatcher (Note [Python op overhead]).
// Either operand may be the tensor (`2 * x` arrives as (2, x)).
template <BinaryOp op>
PyObject* number_slot(PyObject* x, PyObject* y) {
  try {
    return apply_binary<op>(x, y).release().ptr();
  } catch (...) {
    set_python_error(std::current_exception());
    return nullptr;
  }
}

}  // namespace

ef::Tensor true_divide(const ef::TensorOrScalar& x, const ef::TensorOrScalar& y, ef::CallSite where) {
  auto [a, b] = ef::resolve_operands(x, y, "divide");
  if (ef::is_integer(a.dtype())) {
    // TensorFlow's truediv: 8- and 16-bit integers divide in float32, wider ones in float64.
    const ef::DType to = ef::size_of(a.dtype()) <= 2 ? ef::DType::Float32 : ef::DType::Float64;
    a = ef::cast(a, to, where);
    b = ef::cast(b, to, where);
  }
  return ef::divide(a, b, where);
}

void bind_operators(py::class_<ef::Tensor>& t) {
  auto* type = reinterpret_cast<PyTypeObject*>(t.ptr());
  binary<ef::add>(t, "__add__", "__radd__");
  binary<ef::subtract>(t, "__sub__", "__rsub__");
  binary<ef::multiply>(t, "__mul__", "__rmul__");
  binary<true_divide>(t, "__truediv__", "__rtruediv__");
  binary<ef::floordiv>(t, "__floordiv__", "__rfloordiv__");
  binary<ef::floormod>(t, "__mod__", "__rmod__");
  binary<ef::pow>(t, "__pow__", "__rpow__");
  binary<ef::less>(t, "__lt__", nullptr);
  binary<ef::less_equal>(t, "__le__", nullptr);
  binary<ef::greater>(t, "__gt__", nullptr);
  binary<ef::greater_equal>(t, "__ge__", nullptr);
  equality<ef::equal>(t, "__eq__", false);
  equality<ef::not_equal>(t, "__ne__", true);
  t.def("__matmul__", [](const ef::Tensor& a, py::handle b) {
    ef::Tensor rhs = to_tensor(b);
    return maybe_without_gil(a.num_elements() * 64, [&] { return ef::matmul(a, rhs); });
  });
  t.def("__rmatmul__", [](const ef::Tensor& a, py::handle b) { return ef::matmul(to_tensor(b), a); });
  t.def("__neg__", [](const ef::Tensor& a) { return ef::negative(a); });
  t.def("__pos__", [](const ef::Tensor& a) { return a; });
  t.def("__abs__", [](const ef::Tensor& a) { return ef::abs(a); });
  t.def("__invert__", [](const ef::Tensor& a) {
    if (a.dtype() != ef::DType::Bool)
      throw py::type_error("operator ~ needs a bool tensor (dtype " + std::string(ef::name(a.dtype())) + ")");
    return ef::logical_not(a);
  });
  struct Logical {
    const char* name;
    const char* reflected;
    BinaryOp op;
  };
  for (Logical l : {Logical{"__and__", "__rand__", ef::logical_and}, Logical{"__or__", "__ror__", ef::logical_or},
                    Logical{"__xor__", "__rxor__", ef::logical_xor}}) {
    const char* name = l.name;
    BinaryOp op = l.op;
    t.def(l.name, [op, name](const ef::Tensor& a, py::handle b) {
      return logical_or_bitwise(op, a, to_operand(b), name);
    });
    t.def(l.reflected, [op, name](const ef::Tensor& a, py::handle b) {
      return logical_or_bitwise(op, to_operand(b), a, name);
    });
  }
  // After the methods: defining them resets the slots.
  type->tp_as_number->nb_add = number_slot<ef::add>;
  type->tp_as_number->nb_subtract = number_slot<ef::subtract>;
  type->tp_as_number->nb_multiply = number_slot<ef::multiply>;
  type->tp_as_number->nb_true_divide = number_slot<true_divide>;
  PyType_Modified(type);
}

}  // namespace efpy
