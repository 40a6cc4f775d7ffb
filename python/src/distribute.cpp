// ef.distribute from Python: the process group and the collectives
// (eagerflow/distribute/distribute.h; the package side is eagerflow/distribute.py).
// Built when CMake found MPI (EF_HAVE_DISTRIBUTE); without it _core has no
// `distribute` submodule and the package says why on use.
#include "bindings.h"
#include "convert.h"

#include <memory>
#include <optional>

#ifdef EF_HAVE_DISTRIBUTE
#include "eagerflow/distribute/distribute.h"
#include "eagerflow/distribute/gradient_sync.h"
#include "eagerflow/distribute/sync_batch_norm.h"
#include "py_layer.h"
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
  d.def("broadcast_variables", &dist::broadcast_variables, py::arg("variables"), py::arg("root") = 0,
        release());
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
  // GradientSync over a list of variables, or over every variable this thread
  // differentiates (variables=None); a context manager, or closed with close().
  struct Sync {
    std::optional<dist::GradientSync> sync;
    std::optional<dist::GradientSyncStats> stats;  // kept after close()
  };
  py::class_<Sync>(d, "GradientSync", "Gradients all-reduced in buckets during the backward pass.")
      .def(py::init([](std::optional<std::vector<ef::Variable>> variables, const std::string& op, double cap_mb) {
             const dist::GradientSyncOptions options{.reduction = dist::reduction_from_name(op),
                                                     .bucket_cap_mb = cap_mb};
             auto s = std::make_unique<Sync>();
             if (variables) s->sync.emplace(*variables, options);
             else s->sync.emplace(dist::GradientSync::for_this_thread(options));
             return s;
           }),
           py::arg("variables") = py::none(), py::arg("op") = "mean", py::arg("bucket_cap_mb") = 25.0)
      .def("close",
           [](Sync& s) {
             if (s.sync) s.stats = s.sync->last_stats();
             s.sync.reset();
           })
      .def("__enter__", [](Sync& s) -> Sync& { return s; }, py::return_value_policy::reference)
      .def("__exit__",
           [](Sync& s, py::args) {
             if (s.sync) s.stats = s.sync->last_stats();
             s.sync.reset();
             return false;
           })
      .def("last_stats", [](const Sync& s) {
        const dist::GradientSyncStats st = s.sync ? s.sync->last_stats() : s.stats.value_or(dist::GradientSyncStats{});
        py::dict out;
        out["buckets"] = st.buckets;
        out["bytes"] = st.bytes;
        out["communication_seconds"] = st.communication_seconds;
        out["exposed_seconds"] = st.exposed_seconds;
        return out;
      });
  py::class_<dist::SyncBatchNormalization, ef::nn::BatchNormalization,
             std::shared_ptr<dist::SyncBatchNormalization>>
      sync_batch_normalization(d, "SyncBatchNormalization",
                               R"doc(BatchNormalization with the global batch's statistics.

In training, the mean and variance are those of every rank's examples together
(all-reduced, differentiably): n ranks with batch B normalize as one process with
batch n * B. Without ef.distribute.init(), or with one rank, it is
BatchNormalization. TensorFlow's tf.keras.layers.experimental.SyncBatchNormalization,
PyTorch's nn.SyncBatchNorm.

>>> layer = ef.keras.layers.experimental.SyncBatchNormalization()
>>> layer(ef.ones([4, 3]), training=True).shape
TensorShape([4, 3])

Args: those of ef.keras.layers.BatchNormalization (name default
"sync_batch_normalization").
)doc");
  def_batch_normalization_init<dist::SyncBatchNormalization>(sync_batch_normalization,
                                                             "sync_batch_normalization");
#else
  (void)m;
#endif
}

}  // namespace efpy
