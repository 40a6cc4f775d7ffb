// ef.summary from Python: file writers (with `as_default` as a context manager), the
// summary ops, graph traces, and reading event files back
// (eagerflow/io/summary.h; the package side is eagerflow/summary.py).
#include "bindings.h"
#include "convert.h"

namespace efpy {
namespace {

namespace summary = ef::summary;

// writer.as_default(step): a WriterScope alive between __enter__ and __exit__.
class PyWriterScope {
 public:
  PyWriterScope(summary::Writer writer, std::optional<int64_t> step)
      : writer_(std::move(writer)), step_(step) {}
  void enter() { scopes_.push_back(std::make_shared<summary::WriterScope>(writer_, step_)); }
  void exit() { scopes_.pop_back(); }

 private:
  summary::Writer writer_;
  std::optional<int64_t> step_;
  std::vector<std::shared_ptr<summary::WriterScope>> scopes_;  // shared: pybind11 copies the object
};

// writer.set_as_default(): the default writer of this thread until the next call.
thread_local std::unique_ptr<summary::WriterScope> t_set_default;

std::optional<int64_t> step_of(py::handle step) {
  if (step.is_none()) return std::nullopt;
  if (py::isinstance<ef::Tensor>(step) || py::isinstance<ef::Variable>(step))
    return to_tensor(step).item<int64_t>();
  return int64_of(step, "step");
}

std::string description_of(py::handle description) {
  return description.is_none() ? std::string() : py::cast<std::string>(description);
}

py::object value_to_python(const summary::Value& v) {
  py::dict d;
  d["tag"] = v.tag;
  d["plugin_name"] = v.plugin_name;
  d["description"] = v.description;
  d["data_class"] = v.data_class;
  if (v.tensor.defined()) {
    d["tensor"] = to_numpy(v.tensor);
  } else {
    py::list strings;
    for (const std::string& s : v.strings) strings.append(py::bytes(s));
    d["strings"] = strings;
    d["shape"] = py::tuple(py::cast(std::vector<int64_t>(v.string_shape.begin(), v.string_shape.end())));
  }
  return d;
}

}  // namespace

void bind_summary(py::module_& m) {
  py::module_ s = m.def_submodule("summary", "TensorBoard event files (eagerflow/io/summary.h)");
  py::class_<summary::SummaryWriter, summary::Writer>(
      s, "SummaryWriter", R"doc(Writes summaries to a TensorBoard event file, from a background thread.

Made by ef.summary.create_file_writer. Summary ops queue their events and never
wait for the disk; flush() returns when everything queued is in the file.
)doc")
      .def("flush", &summary::SummaryWriter::flush, py::call_guard<py::gil_scoped_release>(),
           "Returns when every event queued so far is in the file; raises the writer thread's I/O error, if "
           "any.")
      .def("close", &summary::SummaryWriter::close, py::call_guard<py::gil_scoped_release>(),
           "Flushes and closes the file; later writes raise FailedPreconditionError.")
      .def_property_readonly("closed", &summary::SummaryWriter::closed, "Whether close() was called.")
      .def_property_readonly("logdir", &summary::SummaryWriter::logdir, "The log directory.")
      .def_property_readonly(
          "path", &summary::SummaryWriter::path,
          "The event file's path (events.out.tfevents.<seconds>.<host>.<pid>.<n><suffix>).")
      .def(
          "as_default",
          [](summary::Writer writer, py::handle step) {
            return PyWriterScope(std::move(writer), step_of(step));
          },
          R"doc(Returns a context manager in which this thread's summary ops write to this writer.

Scopes nest; the previous default writer and step come back at the end.

    with writer.as_default(step=0):
        ef.summary.scalar("loss", 0.5)

Args:
  step: None, or the default step inside the block (an int or integer tensor).
)doc",
          py::arg("step") = py::none())
      .def(
          "set_as_default",
          [](summary::Writer writer, py::handle step) {
            t_set_default.reset();  // the previous one's writer and step come back first
            t_set_default = std::make_unique<summary::WriterScope>(std::move(writer), step_of(step));
          },
          R"doc(Makes this writer the thread's default until the next set_as_default call.

Args:
  step: None, or the default step (an int or integer tensor).
)doc",
          py::arg("step") = py::none());
  py::class_<PyWriterScope>(s, "WriterScope", "The context manager SummaryWriter.as_default returns.")
      .def(py::init([](summary::Writer writer, py::handle step) {
             return PyWriterScope(std::move(writer), step_of(step));
           }),
           py::arg("writer"), py::arg("step") = py::none())
      .def("__enter__", [](PyWriterScope& scope) { scope.enter(); })
      .def("__exit__", [](PyWriterScope& scope, py::args) { scope.exit(); });
  s.def(
      "create_file_writer",
      [](const std::string& logdir, int max_queue, int64_t flush_millis, const std::string& suffix) {
        return summary::create_file_writer(logdir, {max_queue, flush_millis, suffix});
      },
      R"doc(Creates a SummaryWriter for a new event file in `logdir` (tf.summary.create_file_writer).

The directory and its parents are created.

    writer = ef.summary.create_file_writer("logs/run1")

Args:
  logdir: The directory, a str.
  max_queue: Events held before the writer thread writes them (default 10).
  flush_millis: The writer thread writes at least this often (default 120000).
  filename_suffix: The event file name's suffix (default ".v2").

Returns:
  A SummaryWriter.
)doc",
      py::arg("logdir"), py::arg("max_queue") = 10, py::arg("flush_millis") = 120000,
      py::arg("filename_suffix") = ".v2");
  s.def("default_writer", &summary::default_writer,
        "The SummaryWriter this thread's summary ops write to, or None.");
  s.def(
      "set_step", [](py::handle step) { summary::set_step(step_of(step)); },
      "Sets the default step of this thread's summary ops (None clears it); "
      "ef.summary.experimental.set_step.",
      py::arg("step"));
  s.def("get_step", &summary::get_step,
        "The default step of this thread's summary ops, or None; ef.summary.experimental.get_step.");
  s.def(
      "scalar",
      [](const std::string& name, py::handle data, py::handle step, py::handle description) {
        return summary::scalar(name, to_tensor(data), step_of(step), description_of(description));
      },
      R"doc(Writes a scalar summary (a point of a training curve) to the default writer.

    with writer.as_default():
        ef.summary.scalar("loss", loss, step=step)

Args:
  name: The tag, a str.
  data: A real or bool scalar (a number or a rank-0 tensor); written as float32.
  step: None (the default step: as_default's, or set_step's), an int, or an
    integer scalar tensor / Variable.
  description: None, or a str shown by TensorBoard.

Returns:
  True when written; False (writing nothing) when no writer is the default.

Raises:
  InvalidArgumentError: neither step nor a default step is set, or data is not a scalar.
)doc",
      py::arg("name"), py::arg("data"), py::arg("step") = py::none(), py::arg("description") = py::none());
  s.def(
      "histogram",
      [](const std::string& name, py::handle data, py::handle step, py::handle buckets,
         py::handle description) {
        return summary::histogram(name, to_tensor(data), step_of(step),
                                  buckets.is_none() ? 30 : static_cast<int>(int64_of(buckets, "buckets")),
                                  description_of(description));
      },
      R"doc(Writes a histogram of `data`'s values to the default writer.

The values fall into `buckets` equal-width buckets between their minimum and
maximum (TensorFlow 2's rule).

Args:
  name: The tag, a str.
  data: A tensor-like of any shape and a real dtype, with finite values.
  step: None (the default step: as_default's, or set_step's), an int, or an
    integer scalar tensor / Variable.
  buckets: None (30) or a positive int.
  description: None, or a str shown by TensorBoard.

Returns:
  True when written; False (writing nothing) when no writer is the default.

Raises:
  InvalidArgumentError: neither step nor a default step is set, or data is not real or not finite.
)doc",
      py::arg("name"), py::arg("data"), py::arg("step") = py::none(), py::arg("buckets") = py::none(),
      py::arg("description") = py::none());
  s.def(
      "image",
      [](const std::string& name, py::handle data, py::handle step, int max_outputs, py::handle description) {
        return summary::image(name, to_tensor(data), step_of(step), max_outputs, description_of(description));
      },
      R"doc(Writes images to the default writer, as PNGs.

Args:
  name: The tag, a str.
  data: A [k, height, width, channels] tensor-like, channels 1, 3 or 4: floats
    in [0, 1] (clamped, scaled to 0..255) or integers in 0..255.
  step: None (the default step: as_default's, or set_step's), an int, or an
    integer scalar tensor / Variable.
  max_outputs: How many of the k images to write (default 3).
  description: None, or a str shown by TensorBoard.

Returns:
  True when written; False (writing nothing) when no writer is the default.

Raises:
  InvalidArgumentError: neither step nor a default step is set, or a bad shape or dtype.
)doc",
      py::arg("name"), py::arg("data"), py::arg("step") = py::none(), py::arg("max_outputs") = 3,
      py::arg("description") = py::none());
  s.def(
      "text",
      [](const std::string& name, py::handle data, py::handle step, py::handle description) -> bool {
        if (py::isinstance<py::str>(data) || py::isinstance<py::bytes>(data))
          return summary::text(name, py::cast<std::string>(data), step_of(step), description_of(description));
        return summary::text(name, py::cast<std::vector<std::string>>(data), step_of(step),
                             description_of(description));
      },
      R"doc(Writes text (Markdown, shown in TensorBoard's text tab) to the default writer.

Args:
  name: The tag, a str.
  data: A str (or bytes), or a list of them.
  step: None (the default step: as_default's, or set_step's), an int, or an
    integer scalar tensor / Variable.
  description: None, or a str shown by TensorBoard.

Returns:
  True when written; False (writing nothing) when no writer is the default.

Raises:
  InvalidArgumentError: neither step nor a default step is set.
)doc",
      py::arg("name"), py::arg("data"), py::arg("step") = py::none(), py::arg("description") = py::none());
  s.def(
      "graph", [](const ef::Graph& graph, py::handle step) { return summary::graph(graph, step_of(step)); },
      R"doc(Writes a graph's nodes (inputs, dtypes, shapes) for TensorBoard's graph tab.

Args:
  graph_data: An ef.Graph (e.g. a ConcreteFunction's graph).
  step: None (the default step: as_default's, or set_step's), an int, or an
    integer scalar tensor / Variable.

Returns:
  True when written; False (writing nothing) when no writer is the default.

Raises:
  InvalidArgumentError: neither step nor a default step is set.
)doc",
      py::arg("graph_data"), py::arg("step") = py::none());
  s.def("trace_on", &summary::trace_on,
        "Keeps the graph of every ef.function this thread calls, until trace_export or trace_off.");
  s.def("trace_off", &summary::trace_off,
        R"doc(Stops tracing and drops the graphs kept since trace_on, writing nothing.

    ef.summary.trace_on()
    step(x)                  # an ef.function
    ef.summary.trace_off()   # or trace_export("step", step=0) to write them
)doc");
  s.def("tracing", &summary::tracing, "Whether trace_on is in effect on this thread.");
  s.def(
      "trace_export",
      [](const std::string& name, py::handle step) { return summary::trace_export(name, step_of(step)); },
      "Writes the graphs kept since trace_on to the default writer as one graph and stops tracing; "
      "returns whether it wrote.",
      py::arg("name"), py::arg("step") = py::none());
  s.def(
      "read_event_file",
      [](const std::string& path) {
        py::list events;
        for (const summary::Event& e : summary::read_event_file(path)) {
          py::dict d;
          d["wall_time"] = e.wall_time;
          d["step"] = e.step;
          d["file_version"] = e.file_version;
          if (e.has_graph) {
            py::list nodes;
            for (const summary::GraphNodeDef& n : e.graph_nodes) {
              py::dict node;
              node["name"] = n.name;
              node["op"] = n.op;
              node["inputs"] = n.inputs;
              nodes.append(node);
            }
            d["graph"] = nodes;
          }
          py::list values;
          for (const summary::Value& v : e.values) values.append(value_to_python(v));
          d["values"] = values;
          events.append(d);
        }
        return events;
      },
      R"doc(Reads an event file back, checking both CRCs of every record.

Returns:
  A list of dicts, one per event: "wall_time", "step", "file_version", "values"
  (a list of dicts with "tag", "plugin_name", "description", "data_class" and
  "tensor" as a NumPy array, or "strings" and "shape"), and "graph" (a list of
  {"name", "op", "inputs"} nodes) for a graph event.

Args:
  path: The event file's path, a str.

Raises:
  DataLossError: a damaged or truncated record, naming the file and the byte offset.
)doc",
      py::arg("path"));
}

}  // namespace efpy
