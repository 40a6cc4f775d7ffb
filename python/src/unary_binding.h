// The binding of a unary elementwise op: ef.<name>(x, name=None), without the GIL on
// large tensors (unary_ops.cpp, activation_ops.cpp).
#pragma once

#include "bindings.h"
#include "convert.h"

namespace efpy {

using UnaryOp = ef::Tensor (*)(const ef::Tensor&, ef::CallSite);

template <UnaryOp op>
void bind_unary(py::module_& m, const char* name, const char* doc) {
  using namespace pybind11::literals;
  m.def(
      name,
      [](TensorArg x, py::handle) {
        return maybe_without_gil(x.value.num_elements(), [&] { return op(x, ef::CallSite{}); });
      },
      doc, "x"_a, "name"_a = py::none());
}

}  // namespace efpy
