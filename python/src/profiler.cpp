// ef.profiler from Python: start / stop and the Profile they return
// (eagerflow/runtime/profiler.h; the package side is eagerflow/profiler.py).
#include "eagerflow/runtime/profiler.h"
#include "bindings.h"
#include "convert.h"

namespace efpy {

void bind_profiler(py::module_& m) {
  namespace profiler = ef::profiler;
  py::module_ p = m.def_submodule("profiler", "Op timings and Chrome traces (eagerflow/runtime/profiler.h)");
  py::class_<profiler::OpStats>(p, "OpStats",
                                "The timings of one op over a profile, a row of key_averages():\n\n"
                                "name, count, total_us, mean_us, min_us and max_us.")
      .def_readonly("name", &profiler::OpStats::name, "The op's name.")
      .def_readonly("count", &profiler::OpStats::calls, "How many times the op ran.")
      .def_property_readonly(
          "total_us", [](const profiler::OpStats& s) { return static_cast<double>(s.total_ns) / 1e3; },
          "The total time, in microseconds.")
      .def_property_readonly(
          "mean_us", [](const profiler::OpStats& s) { return s.mean_ns() / 1e3; },
          "The mean time per run, in microseconds.")
      .def_property_readonly(
          "min_us", [](const profiler::OpStats& s) { return static_cast<double>(s.min_ns) / 1e3; },
          "The shortest run, in microseconds.")
      .def_property_readonly(
          "max_us", [](const profiler::OpStats& s) { return static_cast<double>(s.max_ns) / 1e3; },
          "The longest run, in microseconds.")
      .def("__repr__", [](const profiler::OpStats& s) {
        return "<OpStats " + s.name + ": " + std::to_string(s.calls) + " calls, " +
               std::to_string(static_cast<double>(s.total_ns) / 1e3) + " us>";
      });
  py::class_<profiler::OpEvent>(p, "OpEvent",
                                "One run of one op in a profile, an item of Profile.events:\n\n"
                                "name, start_us, duration_us, thread, device and input_shapes.")
      .def_readonly("name", &profiler::OpEvent::name, "The op's name.")
      .def_property_readonly(
          "start_us", [](const profiler::OpEvent& e) { return static_cast<double>(e.start_ns) / 1e3; },
          "When it started, in microseconds.")
      .def_property_readonly(
          "duration_us", [](const profiler::OpEvent& e) { return static_cast<double>(e.duration_ns) / 1e3; },
          "How long it ran, in microseconds.")
      .def_readonly("thread", &profiler::OpEvent::thread, "The id of the thread that ran it.")
      .def_property_readonly(
          "device", [](const profiler::OpEvent& e) { return ef::full_device_name(e.device); },
          "The device it ran on, as Tensor.device names it.")
      .def_property_readonly(
          "input_shapes",
          [](const profiler::OpEvent& e) {
            py::list shapes;
            for (const ef::Shape& s : e.input_shapes)
              shapes.append(py::tuple(py::cast(std::vector<int64_t>(s.begin(), s.end()))));
            return shapes;
          },
          "The shapes of its inputs, a list of tuples (empty when record_shapes was off).");
  py::class_<profiler::Profile>(p, "Profile", "What ef.profiler.stop() returns: the recorded op runs.")
      .def_readonly("events", &profiler::Profile::events, "Every op run recorded, as OpEvents.")
      .def_readonly("trace_path", &profiler::Profile::trace_path,
                    "The Chrome trace file written (empty without a logdir).")
      .def_property_readonly(
          "wall_us", [](const profiler::Profile& pr) { return static_cast<double>(pr.wall_ns) / 1e3; },
          "The profile's wall-clock duration, in microseconds.")
      .def("_key_averages", &profiler::Profile::key_averages)
      .def("_table", &profiler::Profile::table, py::arg("row_limit") = 0)
      .def("chrome_trace", &profiler::Profile::chrome_trace,
           "The events as Chrome trace-event JSON (a str), for Perfetto or chrome://tracing.");
  p.def(
      "start",
      [](py::handle logdir, bool record_shapes) {
        profiler::start(logdir.is_none() ? std::string() : py::str(logdir).cast<std::string>(),
                        {record_shapes});
      },
      py::arg("logdir") = py::none(), py::arg("record_shapes") = true);
  p.def("stop", &profiler::stop, py::call_guard<py::gil_scoped_release>());
}

}  // namespace efpy
