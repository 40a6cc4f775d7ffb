// Reading event files back: every record's CRCs checked, every event parsed.
#include <cstring>
#include <fstream>
#include <sstream>
#include <type_traits>

#include "eagerflow/core/error.h"
#include "eagerflow/io/summary.h"
#include "eagerflow/ops/creation.h"
#include "event_file.h"
#include "tensorboard.pb.h"

namespace ef::summary {
namespace {

// A numeric TensorProto's values: from tensor_content when set, else the typed field.
template <class T, class Repeated>
Tensor numeric(const ef_tensorboard::TensorProto& proto, DType dtype, const Shape& shape,
               const Repeated& field, const std::string& where) {
  using Stored = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;  // vector<bool> has no data()
  std::vector<Stored> values(static_cast<size_t>(shape.num_elements()));
  if (!proto.tensor_content().empty()) {
    if (proto.tensor_content().size() != values.size() * sizeof(Stored))
      fail<DataLossError>(where, ": tensor_content has ", proto.tensor_content().size(), " bytes for shape ",
                          shape);
    std::memcpy(values.data(), proto.tensor_content().data(), proto.tensor_content().size());
  } else if (field.size() == static_cast<int>(values.size())) {
    std::copy(field.begin(), field.end(), values.begin());
  } else if (field.size() == 1) {  // one value stands for all
    std::fill(values.begin(), values.end(), static_cast<Stored>(field[0]));
  } else if (!values.empty()) {
    fail<DataLossError>(where, ": ", field.size(), " values for shape ", shape);
  }
  return ef::detail::tensor_from_host(dtype, shape, values.data(), "read_event_file");
}

Value read_value(const ef_tensorboard::Summary::Value& proto, const std::string& where) {
  Value value;
  value.tag = proto.tag();
  value.plugin_name = proto.metadata().plugin_data().plugin_name();
  value.description = proto.metadata().summary_description();
  value.data_class = proto.metadata().data_class();
  if (proto.has_simple_value()) {
    value.tensor = constant(proto.simple_value());
    return value;
  }
  if (!proto.has_tensor()) fail<UnimplementedError>(where, ": value '", proto.tag(), "' is not a tensor");
  const ef_tensorboard::TensorProto& t = proto.tensor();
  Dims dims;
  for (const auto& dim : t.tensor_shape().dim()) {
    if (dim.size() < 0) fail<DataLossError>(where, ": value '", proto.tag(), "' has a negative dimension");
    dims.push_back(dim.size());
  }
  const Shape shape(dims);
  switch (t.dtype()) {
    case ef_tensorboard::DT_FLOAT:
      value.tensor = numeric<float>(t, DType::Float32, shape, t.float_val(), where);
      break;
    case ef_tensorboard::DT_DOUBLE:
      value.tensor = numeric<double>(t, DType::Float64, shape, t.double_val(), where);
      break;
    case ef_tensorboard::DT_INT32:
      value.tensor = numeric<int32_t>(t, DType::Int32, shape, t.int_val(), where);
      break;
    case ef_tensorboard::DT_INT64:
      value.tensor = numeric<int64_t>(t, DType::Int64, shape, t.int64_val(), where);
      break;
    case ef_tensorboard::DT_BOOL:
      value.tensor = numeric<bool>(t, DType::Bool, shape, t.bool_val(), where);
      break;
    case ef_tensorboard::DT_STRING:
      if (t.string_val_size() != shape.num_elements())
        fail<DataLossError>(where, ": value '", proto.tag(), "' has ", t.string_val_size(),
                            " strings for shape ", shape);
      value.string_shape = shape;
      value.strings.assign(t.string_val().begin(), t.string_val().end());
      break;
    default:
      fail<UnimplementedError>(where, ": value '", proto.tag(), "' has dtype ", static_cast<int>(t.dtype()),
                               ", which eagerflow does not read");
  }
  return value;
}

}  // namespace

std::vector<Event> read_event_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) fail<NotFoundError>("read_event_file: cannot open '", path, "'");
  std::ostringstream content;
  content << file.rdbuf();
  return parse_event_file(content.str(), path);
}

std::vector<Event> parse_event_file(std::string_view content, const std::string& path) {
  std::vector<Event> events;
  const std::vector<std::string> records = io::detail::split_records(content, path);
  for (size_t i = 0; i < records.size(); ++i) {
    const std::string where = "read_event_file: '" + path + "': record " + std::to_string(i);
    ef_tensorboard::Event proto;
    if (!proto.ParseFromString(records[i])) fail<DataLossError>(where, " is not an Event protocol buffer");
    Event event;
    event.wall_time = proto.wall_time();
    event.step = proto.step();
    event.file_version = proto.file_version();
    if (proto.has_graph_def()) {
      ef_tensorboard::GraphDef graph_def;
      if (!graph_def.ParseFromString(proto.graph_def()))
        fail<DataLossError>(where, ": graph_def is not a GraphDef");
      event.has_graph = true;
      for (const auto& node : graph_def.node())
        event.graph_nodes.push_back({node.name(), node.op(), {node.input().begin(), node.input().end()}});
    }
    for (const auto& value : proto.summary().value()) event.values.push_back(read_value(value, where));
    events.push_back(std::move(event));
  }
  return events;
}

}  // namespace ef::summary
