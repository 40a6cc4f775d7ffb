// Shape, slicing, joining, gathering and sorting ops, with TensorFlow's argument names.
#include "bindings.h"
#include "convert.h"

namespace efpy {
namespace {

using namespace pybind11::literals;
constexpr ef::CallSite kPython{};

}  // namespace

void bind_array_ops(py::module_& m) {
  m.def("reshape", [](TensorArg t, ShapeArg shape, py::handle) { return ef::reshape(t, shape, kPython); },
        "tensor"_a, "shape"_a, "name"_a = py::none());
  m.def(
      "transpose",
      [](TensorArg a, py::handle perm, bool, py::handle) {
        if (perm.is_none()) return ef::transpose(a, kPython);
        return ef::transpose(a, to_ints(perm, "transpose: perm"), kPython);
      },
      "a"_a, "perm"_a = py::none(), "conjugate"_a = false, "name"_a = py::none());
  m.def("expand_dims", [](TensorArg x, int64_t axis, py::handle) { return ef::expand_dims(x, axis, kPython); },
        "input"_a, "axis"_a, "name"_a = py::none());
  m.def("squeeze", [](TensorArg x, AxesArg axis, py::handle) { return ef::squeeze(x, axis, kPython); }, "input"_a,
        "axis"_a = py::none(), "name"_a = py::none());
  m.def(
      "strided_slice",
      [](TensorArg x, py::handle begin, py::handle end, py::handle strides, int64_t begin_mask, int64_t end_mask,
         int64_t ellipsis_mask, int64_t new_axis_mask, int64_t shrink_axis_mask, py::handle) {
        std::vector<int64_t> s = strides.is_none() ? std::vector<int64_t>{} : to_ints(strides, "strided_slice: strides");
        return ef::strided_slice(x, to_ints(begin, "strided_slice: begin"), to_ints(end, "strided_slice: end"), s,
                                 {begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask}, kPython);
      },
      "input_"_a, "begin"_a, "end"_a, "strides"_a = py::none(), "begin_mask"_a = 0, "end_mask"_a = 0,
      "ellipsis_mask"_a = 0, "new_axis_mask"_a = 0, "shrink_axis_mask"_a = 0, "name"_a = py::none());
  m.def(
      "slice",
      [](TensorArg x, py::handle begin, py::handle size, py::handle) {
        return ef::slice(x, to_ints(begin, "slice: begin"), to_ints(size, "slice: size"), kPython);
      },
      "input_"_a, "begin"_a, "size"_a, "name"_a = py::none());
  m.def("broadcast_to", [](TensorArg x, ShapeArg shape, py::handle) { return ef::broadcast_to(x, shape, kPython); },
        "input"_a, "shape"_a, "name"_a = py::none());
  m.def("identity", [](TensorArg x, py::handle) { return ef::identity(x, kPython); }, "input"_a, "name"_a = py::none());
  m.def("reverse", [](TensorArg x, AxesArg axis, py::handle) { return ef::reverse(x, axis, kPython); }, "tensor"_a,
        "axis"_a, "name"_a = py::none());
  m.def(
      "concat", [](TensorListArg values, int64_t axis, py::handle) { return ef::concat(values, axis, kPython); },
      "values"_a, "axis"_a, "name"_a = py::none());
  m.def(
      "stack", [](TensorListArg values, int64_t axis, py::handle) { return ef::stack(values, axis, kPython); },
      "values"_a, "axis"_a = 0, "name"_a = py::none());
  m.def(
      "unstack",
      [](TensorArg x, std::optional<int64_t> num, int64_t axis, py::handle) {
        std::vector<ef::Tensor> parts = ef::unstack(x, axis, kPython);
        if (num && *num != static_cast<int64_t>(parts.size()))
          throw ef::InvalidArgumentError("unstack: num is " + std::to_string(*num) + " but axis " +
                                         std::to_string(axis) + " has size " + std::to_string(parts.size()));
        return parts;
      },
      "value"_a, "num"_a = py::none(), "axis"_a = 0, "name"_a = py::none());
  m.def(
      "split",
      [](TensorArg x, py::handle splits, int64_t axis, py::handle, py::handle) {
        if (PyLong_Check(splits.ptr())) return ef::split(x, int64_of(splits, "split"), axis, kPython);
        return ef::split(x, to_ints(splits, "split: num_or_size_splits"), axis, kPython);
      },
      "value"_a, "num_or_size_splits"_a, "axis"_a = 0, "num"_a = py::none(), "name"_a = py::none());
  m.def(
      "tile",
      [](TensorArg x, py::handle multiples, py::handle) {
        return ef::tile(x, to_ints(multiples, "tile: multiples"), kPython);
      },
      "input"_a, "multiples"_a, "name"_a = py::none());
  m.def(
      "pad",
      [](TensorArg x, py::handle paddings, const std::string& mode, OperandArg constant_values, py::handle) {
        std::vector<std::pair<int64_t, int64_t>> pairs;
        py::object rows = py::reinterpret_borrow<py::object>(paddings);
        if (py::isinstance<ef::Tensor>(paddings)) rows = to_numpy(paddings.cast<ef::Tensor>()).attr("tolist")();
        for (py::handle row : owned_items(rows)) {
          std::vector<int64_t> p = to_ints(row, "pad: paddings");
          if (p.size() != 2) throw ef::InvalidArgumentError("pad: each row of paddings needs two values (before, after)");
          pairs.emplace_back(p[0], p[1]);
        }
        return ef::pad(x, pairs, mode, constant_values, kPython);
      },
      "tensor"_a, "paddings"_a, "mode"_a = "CONSTANT", "constant_values"_a = 0, "name"_a = py::none());
  m.def(
      "gather",
      [](TensorArg params, TensorArg indices, py::handle, std::optional<int64_t> axis, int64_t batch_dims,
         py::handle) { return ef::gather(params, indices, axis.value_or(batch_dims), batch_dims, kPython); },
      "params"_a, "indices"_a, "validate_indices"_a = py::none(), "axis"_a = py::none(), "batch_dims"_a = 0, "name"_a = py::none());
  m.def(
      "gather_nd",
      [](TensorArg params, TensorArg indices, int64_t batch_dims, py::handle) {
        return ef::gather_nd(params, indices, batch_dims, kPython);
      },
      "params"_a, "indices"_a, "batch_dims"_a = 0, "name"_a = py::none());
  m.def(
      "scatter_nd",
      [](TensorArg indices, TensorArg updates, ShapeArg shape, py::handle) {
        return ef::scatter_nd(indices, updates, shape, kPython);
      },
      "indices"_a, "updates"_a, "shape"_a, "name"_a = py::none());
  m.def(
      "tensor_scatter_nd_add",
      [](TensorArg tensor, TensorArg indices, TensorArg updates, py::handle) {
        return ef::tensor_scatter_nd_add(tensor, indices, updates, kPython);
      },
      "tensor"_a, "indices"_a, "updates"_a, "name"_a = py::none());
  m.def(
      "where",
      [](TensorArg condition, py::handle x, py::handle y, py::handle) {
        if (x.is_none() != y.is_none()) throw ef::InvalidArgumentError("where: give both x and y, or neither");
        if (x.is_none()) return ef::where(condition.value, kPython);
        return ef::where(condition.value, to_operand(x), to_operand(y), kPython);
      },
      "condition"_a, "x"_a = py::none(), "y"_a = py::none(), "name"_a = py::none());
  m.def(
      "one_hot",
      [](TensorArg indices, int64_t depth, py::handle on_value, py::handle off_value, std::optional<int64_t> axis,
         DTypeArg dtype, py::handle) {
        ef::TensorOrScalar on = on_value.is_none() ? ef::TensorOrScalar(1) : to_operand(on_value);
        ef::TensorOrScalar off = off_value.is_none() ? ef::TensorOrScalar(0) : to_operand(off_value);
        // TensorFlow: the dtype of on_value when given, else float32.
        ef::DType d = dtype.value ? *dtype.value
                      : on.is_tensor() ? on.tensor().dtype()
                                       : ef::DType::Float32;
        return ef::one_hot(indices, depth, on, off, axis.value_or(-1), d, kPython);
      },
      "indices"_a, "depth"_a, "on_value"_a = py::none(), "off_value"_a = py::none(), "axis"_a = py::none(),
      "dtype"_a = py::none(), "name"_a = py::none());
  m.def(
      "top_k",
      [](TensorArg x, int64_t k, bool sorted, py::handle) {
        ef::TopKResult r = maybe_without_gil(x.value.num_elements(), [&] { return ef::top_k(x, k, sorted, kPython); });
        return std::make_pair(r.values, r.indices);
      },
      "input"_a, "k"_a = 1, "sorted"_a = true, "name"_a = py::none());
  m.def(
      "sort",
      [](TensorArg x, int64_t axis, const std::string& direction, py::handle) {
        return maybe_without_gil(x.value.num_elements(), [&] { return ef::sort(x, axis, direction, kPython); });
      },
      "values"_a, "axis"_a = -1, "direction"_a = "ASCENDING", "name"_a = py::none());
  m.def(
      "argsort",
      [](TensorArg x, int64_t axis, const std::string& direction, bool, py::handle) {
        return maybe_without_gil(x.value.num_elements(), [&] { return ef::argsort(x, axis, direction, kPython); });
      },
      "values"_a, "axis"_a = -1, "direction"_a = "ASCENDING", "stable"_a = false, "name"_a = py::none());
  m.def(
      "shape",
      [](TensorArg x, DTypeArg out_type, py::handle) {
        return ef::shape(x, out_type.value.value_or(ef::DType::Int32), kPython);
      },
      "input"_a, "out_type"_a = py::none(), "name"_a = py::none());
  m.def("rank", [](TensorArg x, py::handle) { return ef::constant(static_cast<int32_t>(x.value.rank())); },
        "input"_a, "name"_a = py::none());
  m.def(
      "size",
      [](TensorArg x, DTypeArg out_type, py::handle) {
        return ef::size(x, out_type.value.value_or(ef::DType::Int32), kPython);
      },
      "input"_a, "out_type"_a = py::none(), "name"_a = py::none());
}

}  // namespace efpy
