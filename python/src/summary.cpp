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
  py::class_<summary::SummaryWriter, summary::Writer>(s, "SummaryWriter")
      .def("flush", &summary::SummaryWriter::flush, py::call_guard<py::gil_scoped_release>())
      .def("close", &summary::SummaryWriter::close, py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("closed", &summary::SummaryWriter::closed)
      .def_property_readonly("logdir", &summary::SummaryWriter::logdir)
      .def_property_readonly("path", &summary::SummaryWriter::path)
      .def(
          "as_default",
          [](summary::Writer writer, py::handle step) {
            return PyWriterScope(std::move(writer), step_of(step));
          },
          py::arg("step") = py::none())
      .def(
          "set_as_default",
          [](summary::Writer writer, py::handle step) {
            t_set_default.reset();  // the previous one's writer and step come back first
            t_set_default = std::make_unique<summary::WriterScope>(std::move(writer), step_of(step));
          },
          py::arg("step") = py::none());
  py::class_<PyWriterScope>(s, "WriterScope")
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
      py::arg("logdir"), py::arg("max_queue") = 10, py::arg("flush_millis") = 120000,
      py::arg("filename_suffix") = ".v2");
  s.def("default_writer", &summary::default_writer);
  s.def(
      "set_step", [](py::handle step) { summary::set_step(step_of(step)); }, py::arg("step"));
  s.def("get_step", &summary::get_step);
  s.def(
      "scalar",
      [](const std::string& name, py::handle data, py::handle step, py::handle description) {
        return summary::scalar(name, to_tensor(data), step_of(step), description_of(description));
      },
      py::arg("name"), py::arg("data"), py::arg("step") = py::none(), py::arg("description") = py::none());
  s.def(
      "histogram",
      [](const std::string& name, py::handle data, py::handle step, py::handle buckets,
         py::handle description) {
        return summary::histogram(name, to_tensor(data), step_of(step),
                                  buckets.is_none() ? 30 : static_cast<int>(int64_of(buckets, "buckets")),
                                  description_of(description));
      },
      py::arg("name"), py::arg("data"), py::arg("step") = py::none(), py::arg("buckets") = py::none(),
      py::arg("description") = py::none());
  s.def(
      "image",
      [](const std::string& name, py::handle data, py::handle step, int max_outputs, py::handle description) {
        return summary::image(name, to_tensor(data), step_of(step), max_outputs, description_of(description));
      },
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
      py::arg("name"), py::arg("data"), py::arg("step") = py::none(), py::arg("description") = py::none());
  s.def(
      "graph", [](const ef::Graph& graph, py::handle step) { return summary::graph(graph, step_of(step)); },
      py::arg("graph_data"), py::arg("step") = py::none());
  s.def("trace_on", &summary::trace_on);
  s.def("trace_off", &summary::trace_off);
  s.def("tracing", &summary::tracing);
  s.def(
      "trace_export",
      [](const std::string& name, py::handle step) { return summary::trace_export(name, step_of(step)); },
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
      py::arg("path"));
}

}  // namespace efpy
