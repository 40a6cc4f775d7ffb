// Graph summaries: an eagerflow Graph written as TensorFlow's GraphDef, which
// TensorBoard's graph tab draws; trace_on / trace_export collect the graphs of the
// functions a thread calls.
#include <set>

#include "eagerflow/core/error.h"
#include "eagerflow/graph/function.h"
#include "eagerflow/graph/graph.h"
#include "eagerflow/io/summary.h"
#include "summary_internal.h"
#include "tensorboard.pb.h"

namespace ef::summary {
namespace {

ef_tensorboard::DataType data_type(DType dtype) {
  switch (dtype) {
    case DType::Float32:
      return ef_tensorboard::DT_FLOAT;
    case DType::Float64:
      return ef_tensorboard::DT_DOUBLE;
    case DType::Int32:
      return ef_tensorboard::DT_INT32;
    case DType::Int64:
      return ef_tensorboard::DT_INT64;
    case DType::Bool:
      return ef_tensorboard::DT_BOOL;
    case DType::Float16:
      return ef_tensorboard::DT_HALF;
    case DType::BFloat16:
      return ef_tensorboard::DT_BFLOAT16;
    case DType::Int8:
      return ef_tensorboard::DT_INT8;
    case DType::UInt8:
      return ef_tensorboard::DT_UINT8;
    case DType::Int16:
      return ef_tensorboard::DT_INT16;
    case DType::UInt16:
      return ef_tensorboard::DT_UINT16;
    case DType::UInt32:
      return ef_tensorboard::DT_UINT32;
    case DType::Complex64:
      return ef_tensorboard::DT_COMPLEX64;
    case DType::Complex128:
      return ef_tensorboard::DT_COMPLEX128;
  }
  return ef_tensorboard::DT_INVALID;
}

// Adds `graph`'s nodes to `out`, their names (and the names their inputs use) prefixed
// by `prefix` so that several functions share one GraphDef as name scopes.
void add_nodes(const Graph& graph, const std::string& prefix, ef_tensorboard::GraphDef& out) {
  for (const NodeInfo& info : graph.nodes()) {
    ef_tensorboard::NodeDef& node = *out.add_node();
    node.set_name(prefix + info.name);
    node.set_op(info.op);
    for (const std::string& input : info.inputs)
      node.add_input(input[0] == '^' ? "^" + prefix + input.substr(1) : prefix + input);
    auto& attrs = *node.mutable_attr();
    if (!info.outputs.empty()) {
      attrs["T"].set_type(data_type(info.outputs[0].dtype));
      auto& shapes = *attrs["_output_shapes"].mutable_list();
      for (const TensorMeta& meta : info.outputs) {
        ef_tensorboard::TensorShapeProto& shape = *shapes.add_shape();
        for (int64_t d : meta.shape.dims()) shape.add_dim()->set_size(d == kUnknownDim ? -1 : d);
      }
    }
    for (const auto& [name, value] : info.attrs) attrs[name].set_s(value);
  }
}

bool write_graph_def(const ef_tensorboard::GraphDef& graph_def, std::optional<int64_t> step) {
  Writer writer = default_writer();
  if (!writer) return false;
  ef_tensorboard::Event event;
  event.set_wall_time(detail::now_seconds());
  event.set_step(step ? *step : get_step().value_or(0));
  event.set_graph_def(graph_def.SerializeAsString());
  writer->write_event(event.SerializeAsString());
  return true;
}

// The functions called on this thread since trace_on, each concrete function once.
struct Trace {
  bool on = false;
  std::vector<ConcreteFunction> functions;
  std::set<const void*> seen;  // their graphs' states
};
thread_local Trace t_trace;

}  // namespace

bool graph(const Graph& graph, std::optional<int64_t> step) {
  ef_tensorboard::GraphDef graph_def;
  add_nodes(graph, "", graph_def);
  return write_graph_def(graph_def, step);
}

void trace_on() {
  t_trace = Trace{};
  t_trace.on = true;
  set_function_observer([](const ConcreteFunction& function) {
    if (t_trace.seen.insert(function.graph().state().get()).second) t_trace.functions.push_back(function);
  });
}

void trace_off() {
  set_function_observer({});
  t_trace = Trace{};
}

bool tracing() { return t_trace.on; }

bool trace_export(std::string_view name, std::optional<int64_t> step) {
  if (name.empty()) fail("summary.trace_export: name is empty");
  if (!t_trace.on) fail<FailedPreconditionError>("summary.trace_export: tracing is off; call trace_on first");
  const std::vector<ConcreteFunction> functions = std::move(t_trace.functions);
  trace_off();
  // One name scope per function, "<name>" then "<name>_1", ... for further traces.
  ef_tensorboard::GraphDef graph_def;
  std::set<std::string> scopes;
  for (const ConcreteFunction& function : functions) {
    std::string scope = function.name();
    for (int k = 1; !scopes.insert(scope).second; ++k) scope = function.name() + "_" + std::to_string(k);
    add_nodes(function.graph(), scope + "/", graph_def);
  }
  return write_graph_def(graph_def, step);
}

}  // namespace ef::summary
