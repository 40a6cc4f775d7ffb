// What a Profile reports: per-op statistics, a table, and Chrome trace-event JSON.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "eagerflow/runtime/profiler.h"

namespace ef::profiler {

std::vector<OpStats> Profile::key_averages() const {
  std::map<std::string, OpStats> by_name;
  for (const OpEvent& e : events) {
    OpStats& s = by_name[e.name];
    if (s.calls == 0) {
      s.name = e.name;
      s.min_ns = s.max_ns = e.duration_ns;
    }
    ++s.calls;
    s.total_ns += e.duration_ns;
    s.min_ns = std::min(s.min_ns, e.duration_ns);
    s.max_ns = std::max(s.max_ns, e.duration_ns);
  }
  std::vector<OpStats> rows;
  for (auto& [name, stats] : by_name) rows.push_back(std::move(stats));
  std::stable_sort(rows.begin(), rows.end(),
                   [](const OpStats& a, const OpStats& b) { return a.total_ns > b.total_ns; });
  return rows;
}

namespace {

std::string duration_text(double ns) {
  char buf[32];
  if (ns >= 1e9)
    std::snprintf(buf, sizeof buf, "%.3fs", ns / 1e9);
  else if (ns >= 1e6)
    std::snprintf(buf, sizeof buf, "%.3fms", ns / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.3fus", ns / 1e3);
  return buf;
}

}  // namespace

std::string Profile::table(size_t row_limit) const {
  const std::vector<OpStats> rows = key_averages();
  int64_t sum = 0;
  size_t width = 4;
  for (const OpStats& s : rows) {
    sum += s.total_ns;
    width = std::max(width, s.name.size());
  }
  const size_t shown = row_limit ? std::min(row_limit, rows.size()) : rows.size();
  std::string out;
  char line[512];
  const int header_length =
      std::snprintf(line, sizeof line, "%-*s  %8s  %8s  %12s  %12s  %12s  %12s\n", static_cast<int>(width),
                    "Name", "Calls", "Total %", "Total", "Mean", "Min", "Max");
  auto rule = [&] { out += std::string(static_cast<size_t>(header_length - 1), '-') + "\n"; };
  rule();
  out += line;
  rule();
  for (size_t i = 0; i < shown; ++i) {
    const OpStats& s = rows[i];
    const double share = sum ? 100.0 * static_cast<double>(s.total_ns) / static_cast<double>(sum) : 0;
    std::snprintf(line, sizeof line, "%-*s  %8lld  %7.2f%%  %12s  %12s  %12s  %12s\n",
                  static_cast<int>(width), s.name.c_str(), static_cast<long long>(s.calls), share,
                  duration_text(static_cast<double>(s.total_ns)).c_str(), duration_text(s.mean_ns()).c_str(),
                  duration_text(static_cast<double>(s.min_ns)).c_str(),
                  duration_text(static_cast<double>(s.max_ns)).c_str());
    out += line;
  }
  rule();
  out += "Op time total: " + duration_text(static_cast<double>(sum)) +
         "; wall time profiled: " + duration_text(static_cast<double>(wall_ns)) + "\n";
  return out;
}

std::string Profile::chrome_trace() const {
  using nlohmann::json;
  const int pid = static_cast<int>(::getpid());
  json trace_events = json::array();
  std::map<uint64_t, bool> threads;
  for (const OpEvent& e : events) {
    json args = {{"device", e.device.to_string()}};
    if (!e.input_shapes.empty()) {
      json dims = json::array(), types = json::array();
      for (const Shape& s : e.input_shapes) dims.push_back(std::vector<int64_t>(s.begin(), s.end()));
      for (DType d : e.input_dtypes) types.push_back(std::string(name(d)));
      args["Input Dims"] = std::move(dims);
      args["Input type"] = std::move(types);
    }
    trace_events.push_back({{"ph", "X"},
                            {"cat", "op"},
                            {"name", e.name},
                            {"pid", pid},
                            {"tid", e.thread},
                            {"ts", static_cast<double>(e.start_ns) / 1e3},  // microseconds
                            {"dur", static_cast<double>(e.duration_ns) / 1e3},
                            {"args", std::move(args)}});
    threads[e.thread] = true;
  }
  for (const auto& [thread, unused] : threads)
    trace_events.push_back({{"ph", "M"},
                            {"name", "thread_name"},
                            {"pid", pid},
                            {"tid", thread},
                            {"args", {{"name", "thread " + std::to_string(thread)}}}});
  trace_events.push_back(
      {{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"tid", 0}, {"args", {{"name", "eagerflow"}}}});
  return json{{"traceEvents", std::move(trace_events)}, {"displayTimeUnit", "ms"}}.dump();
}

}  // namespace ef::profiler
