// Conversions between Python objects and eagerflow values, used by every binding.
//
// Note [Python conversions]: ops accept whatever TensorFlow's accept. A Tensor passes
// through; a Variable is read (so tapes see the read); NumPy arrays keep their dtype;
// Python scalars and nested lists take TensorFlow's defaults (float → float32,
// int → int32, or int64 when a value needs it, bool → bool). As the operand of a
// binary op a Python number stays a number and takes the other operand's dtype
// (`x + 1` keeps x's dtype), as in TensorFlow. A list or tuple that holds tensors or
// variables becomes their `stack`, never a NumPy copy: a copy would cut the gradient
// silently (`ef.constant([x, y])` under a tape), and symbolic tensors have no values.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>

#include <eagerflow/eagerflow.h>

namespace efpy {

namespace py = pybind11;

// Anything tensor-like as a Tensor, cast to `dtype` when given (Note [Python conversions]).
ef::Tensor to_tensor(py::handle obj, std::optional<ef::DType> dtype = std::nullopt);
// A value meant for a tensor of dtype `like` (a variable's assign, a scatter's
// updates): a Python number or list takes that dtype, as TensorFlow converts it
// (`v.assign_add([1., 2.])` on a float64 variable, exactly, not through float32); a
// Python float for an integer `like` keeps its float dtype, so the op refuses it
// rather than truncating. Tensors and NumPy arrays keep their dtype.
ef::Tensor to_tensor_like(py::handle obj, ef::DType like);
// Like to_tensor, but a Python number stays a number (the operand of a binary op), and
// a Python list takes the dtype of the other operand, `like`, when known.
ef::TensorOrScalar to_operand(py::handle obj, std::optional<ef::DType> like = std::nullopt);
// Both operands of a binary op (Note [Python conversions]).
std::pair<ef::TensorOrScalar, ef::TensorOrScalar> to_operands(py::handle x, py::handle y);
// ef.float32, "float32", numpy dtypes and types, float/int/bool.
ef::DType to_dtype(py::handle obj);
// A sequence of ints (None: unknown), an int, or a 1-D integer tensor.
ef::Shape to_shape(py::handle obj, const char* what = "shape");
// None: every axis; an int; a sequence of ints.
ef::Axes to_axes(py::handle obj);
std::vector<int64_t> to_ints(py::handle obj, const char* what);
// A Python int (or anything with __index__) as int64; ValueError naming `what` when it
// does not fit (pybind11's own cast would raise an untyped "Unable to cast").
int64_t int64_of(py::handle obj, const char* what);
// A random op's seed: None (the global seed decides) or an int.
std::optional<int64_t> seed_of(py::handle seed);
// None as nothing, anything else as a tensor (optional arguments such as sample_weight).
std::optional<ef::Tensor> optional_tensor(py::handle obj);
// A name argument, or `fallback` for None.
std::string name_or(py::handle name, const char* fallback);

// values as an instance of the collections.namedtuple `type_name` with `fields` (one
// space-separated string), as TensorFlow returns top_k's TopKV2 and unique's Unique.
py::object named_tuple(const char* type_name, const char* fields, const py::tuple& values);
// list(seq): iterate this, not seq itself, whose __getitem__ may create each item
// afresh (a tensor's rows, NumPy scalars), leaving a borrowed handle dangling.
inline py::list owned_items(py::handle seq) { return py::list(py::reinterpret_borrow<py::object>(seq)); }

// A NumPy array sharing the tensor's memory (the array keeps the tensor alive).
// With a dtype: a copy converted to it (how a bfloat16 tensor reaches NumPy).
py::array to_numpy(const ef::Tensor& t, py::handle dtype = py::none());
py::dtype numpy_dtype(ef::DType dtype);
// "numpy=array([...])" for reprs ("values=[...]" for bfloat16, which NumPy lacks).
std::string values_repr(const ef::Tensor& t);

// Argument wrappers whose casters apply the conversions above, so bindings can be
// written with typed parameters.
struct TensorArg {
  ef::Tensor value;
  operator const ef::Tensor&() const { return value; }  // NOLINT: implicit by design
};
struct OperandArg {
  ef::TensorOrScalar value = 0;
  operator const ef::TensorOrScalar&() const { return value; }  // NOLINT
};
struct DTypeArg {
  std::optional<ef::DType> value;  // empty for None
};
struct ShapeArg {
  ef::Shape value;
  operator const ef::Shape&() const { return value; }  // NOLINT
};
struct AxesArg {
  ef::Axes value;
  operator const ef::Axes&() const { return value; }  // NOLINT
};
struct TensorListArg {
  std::vector<ef::Tensor> value;
  operator const std::vector<ef::Tensor>&() const { return value; }  // NOLINT
};

}  // namespace efpy

namespace pybind11::detail {

#define EFPY_CASTER(Type, python_name, convert_expr)                    \
  template <>                                                           \
  struct type_caster<efpy::Type> {                                      \
    PYBIND11_TYPE_CASTER(efpy::Type, const_name(python_name));          \
    bool load(handle src, bool) {                                       \
      value.value = convert_expr;                                       \
      return true;                                                      \
    }                                                                   \
  };

EFPY_CASTER(TensorArg, "TensorLike", efpy::to_tensor(src))
EFPY_CASTER(OperandArg, "TensorLike", efpy::to_operand(src))
EFPY_CASTER(ShapeArg, "ShapeLike", efpy::to_shape(src))
EFPY_CASTER(AxesArg, "Axes", efpy::to_axes(src))
#undef EFPY_CASTER

template <>
struct type_caster<efpy::DTypeArg> {
  PYBIND11_TYPE_CASTER(efpy::DTypeArg, const_name("DTypeLike"));
  bool load(handle src, bool) {
    if (!src.is_none()) value.value = efpy::to_dtype(src);
    return true;
  }
};

template <>
struct type_caster<efpy::TensorListArg> {
  PYBIND11_TYPE_CASTER(efpy::TensorListArg, const_name("Sequence[TensorLike]"));
  bool load(handle src, bool) {
    if (!PySequence_Check(src.ptr()) || isinstance<str>(src)) throw type_error("expected a list or tuple of tensors");
    for (handle item : efpy::owned_items(src))
      value.value.push_back(efpy::to_tensor(item));
    return true;
  }
};

}  // namespace pybind11::detail
