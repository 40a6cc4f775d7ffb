// Note [Python op overhead] in fast_paths.h.
#include "fast_paths.h"

namespace efpy {
namespace {

PyTypeObject* tensor_type = nullptr;
py::detail::type_info* tensor_info = nullptr;

}  // namespace

void init_fast_paths(py::handle tensor_class) {
  tensor_type = reinterpret_cast<PyTypeObject*>(tensor_class.ptr());
  tensor_info = py::detail::get_type_info(typeid(ef::Tensor));
}

const ef::Tensor* tensor_ptr(py::handle obj) {
  if (Py_TYPE(obj.ptr()) != tensor_type) return nullptr;
  auto* inst = reinterpret_cast<py::detail::instance*>(obj.ptr());
  void* value = inst->simple_layout ? inst->simple_value_holder[0] : inst->get_value_and_holder(tensor_info).value_ptr();
  return static_cast<const ef::Tensor*>(value);
}

py::object wrap(ef::Tensor t) {
  auto* heap = new ef::Tensor(std::move(t));
  return py::reinterpret_steal<py::object>(py::detail::type_caster_generic::cast(
      heap, py::return_value_policy::take_ownership, py::handle(), tensor_info, nullptr, nullptr));
}

}  // namespace efpy
