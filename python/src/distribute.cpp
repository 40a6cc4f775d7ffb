// ef.distribute from Python: the process group and the collectives
// (eagerflow/distribute/distribute.h; the package side is eagerflow/distribute.py).
// Built when CMake found MPI (EF_HAVE_DISTRIBUTE); without it _core has no
// `distribute` submodule and the package says why on use.
#include "bindings.h"
#include "convert.h"

#include <memory>

#ifdef EF_HAVE_DISTRIBUTE
#include "eagerflow/distribute/distribute.h"
#endif

namespace efpy {

void bind_distribute(py::module_& m) {
#ifdef EF_HAVE_DISTRIBUTE
  namespace dist = ef::distribute;
  py::module_ d = m.def_submodule("distribute", "Collectives over MPI (eagerflow/distribute/distribute.h)");
  // Collectives wait for the other ranks: without the GIL, so other Python threads run.
  using release = py::call_guard<py::gil_scoped_release>;
  d.def(
      "init",
      [](double timeout, bool check_agreement) {
        dist::init({.timeout_seconds = timeout, .check_agreement = check_agreement});
      },
      py::arg("timeout") = 300.0, py::arg("check_agreement") = true, release());
  d.def("initialized", &dist::initialized);
  d.def("rank", &dist::rank);
  d.def("size", &dist::size);
  d.def("local_rank", &dist::local_rank);
  d.def("finalize", &dist::finalize, release());
  d.def(
      "set_options",
      [](double timeout, bool check_agreement) {
        dist::set_options({.timeout_seconds = timeout, .check_agreement = check_agreement});
      },
      py::arg("timeout"), py::arg("check_agreement"));
  d.def("timeout", [] { return dist::options().timeout_seconds; });
  d.def("check_agreement", [] { return dist::options().check_agreement; });
  d.def(
      "abort", [](const std::string& message, int code) { dist::abort(message, code); }, py::arg("message"),
      py::arg("code") = 1);
  d.def(
      "all_reduce",
      [](TensorArg x, const std::string& op) {
        const dist::Reduction r = dist::reduction_from_name(op);
        py::gil_scoped_release unlocked;
        return dist::all_reduce(x.value, r, {});
      },
      py::arg("x"), py::arg("op") = "sum");
  d.def(
      "all_reduce_many",
      [](const py::list& xs, const std::string& op) {
        const dist::Reduction r = dist::reduction_from_name(op);
        std::vector<ef::Tensor> tensors;  // None stays None (an undefined tensor)
        for (py::handle x : xs) tensors.push_back(x.is_none() ? ef::Tensor() : to_tensor(x));
        std::vector<ef::Tensor> reduced;
        {
          py::gil_scoped_release unlocked;
          reduced = dist::all_reduce_many(tensors, r, {});
        }
        py::list out;
        for (const ef::Tensor& t : reduced) out.append(t.defined() ? py::cast(t) : py::none());
        return out;
      },
      py::arg("xs"), py::arg("op") = "sum");
  d.def(
      "broadcast", [](TensorArg x, int root) { return dist::broadcast(x.value, root, {}); }, py::arg("x"),
      py::arg("root") = 0, release());
  d.def(
      "all_gather", [](TensorArg x) { return dist::all_gather(x.value, {}); }, py::arg("x"), release());
  d.def(
      "reduce_scatter",
      [](TensorArg x, const std::string& op) {
        const dist::Reduction r = dist::reduction_from_name(op);
        py::gil_scoped_release unlocked;
        return dist::reduce_scatter(x.value, r, {});
      },
      py::arg("x"), py::arg("op") = "sum");
  d.def("barrier", &dist::barrier, release());
  // A context manager over dist::MirroredScope (the strategy's scope()).
  struct Mirrored {
    std::unique_ptr<dist::MirroredScope> scope;
  };
  py::class_<Mirrored>(d, "MirroredScope",
                       "Variables created inside start with rank 0's initial values on every rank.")
      .def(py::init<>())
      .def("__enter__",
           [](Mirrored& m) {
             if (m.scope) throw py::value_error("MirroredScope: already entered");
             m.scope = std::make_unique<dist::MirroredScope>();
           })
      .def("__exit__", [](Mirrored& m, py::args) {
        m.scope.reset();
        return false;
      });
#else
  (void)m;
#endif
}

}  // namespace efpy
