// Fast paths around pybind11's type look-ups for the per-call cost of tiny ops.
//
// Note [Python op overhead]: pybind11 finds the C++ type of an argument or a result by
// hashing its type name on every call; for a 1-element add that was a third of the
// Python-level cost. The binary operators and the tensor conversions check for an
// exact ef.Tensor by comparing one pointer, and results are wrapped with the type
// information looked up once at import.
#pragma once

#include <pybind11/pybind11.h>

#include <eagerflow/eagerflow.h>

namespace efpy {

namespace py = pybind11;

// Called once the ef.Tensor class is bound.
void init_fast_paths(py::handle tensor_class);

// The tensor inside `obj` when it is exactly an ef.Tensor, else null.
const ef::Tensor* tensor_ptr(py::handle obj);

// `t` as a new Python ef.Tensor.
py::object wrap(ef::Tensor t);

}  // namespace efpy
