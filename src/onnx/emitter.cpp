// ModelBuilder, Emitter and OpNode (emitter.h).
#include "onnx/emitter.h"

#include <algorithm>

#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"

namespace ef::onnx::detail {

int32_t onnx_type(DType dtype) {
  switch (dtype) {
    case DType::Float32:
      return pb::TensorProto::FLOAT;
    case DType::Float64:
      return pb::TensorProto::DOUBLE;
    case DType::Int32:
      return pb::TensorProto::INT32;
    case DType::Int64:
      return pb::TensorProto::INT64;
    case DType::Bool:
      return pb::TensorProto::BOOL;
    case DType::Float16:
      return pb::TensorProto::FLOAT16;
    case DType::BFloat16:
      return pb::TensorProto::BFLOAT16;
    case DType::Int8:
      return pb::TensorProto::INT8;
    case DType::UInt8:
      return pb::TensorProto::UINT8;
    case DType::Int16:
      return pb::TensorProto::INT16;
    case DType::UInt16:
      return pb::TensorProto::UINT16;
    case DType::UInt32:
      return pb::TensorProto::UINT32;
    case DType::Complex64:
      return pb::TensorProto::COMPLEX64;
    case DType::Complex128:
      return pb::TensorProto::COMPLEX128;
  }
  fail<InternalError>("onnx export: unknown dtype ", static_cast<int>(dtype));
}

std::string ModelBuilder::unique_name(std::string_view base) {
  std::string name(base.empty() ? "value" : base);
  if (names_.insert(name).second) return name;
  for (int i = 1;; ++i) {
    std::string candidate = name + "_" + std::to_string(i);
    if (names_.insert(candidate).second) return candidate;
  }
}

std::string ModelBuilder::add_initializer(const Tensor& value, std::string_view base) {
  const Tensor host = value.cpu().contiguous();
  pb::TensorProto& t = *main_graph().add_initializer();
  std::string name = unique_name(base);
  t.set_name(name);
  t.set_data_type(onnx_type(host.dtype()));
  for (int64_t d : host.shape().dims()) t.add_dims(d);
  // raw_data is little-endian, as eagerflow's buffers on the machines it builds for.
  t.set_raw_data(static_cast<const char*>(host.raw_data()),
                 static_cast<size_t>(host.num_elements()) * size_of(host.dtype()));
  return name;
}

pb::NodeProto& Emitter::add(std::string_view op_type, std::vector<std::string> inputs,
                            std::vector<std::string> outputs) {
  pb::NodeProto& node = *graph.add_node();
  node.set_op_type(std::string(op_type));
  node.set_name(
      model.unique_name(std::string("node_") + (outputs.empty() ? std::string(op_type) : outputs[0])));
  for (std::string& in : inputs) node.add_input(std::move(in));
  for (std::string& out : outputs) node.add_output(std::move(out));
  return node;
}

std::string Emitter::op(std::string_view op_type, std::vector<std::string> inputs) {
  std::string out = fresh(op_type);
  add(op_type, std::move(inputs), {out});
  return out;
}

std::string Emitter::ints(std::span<const int64_t> values) {
  const Tensor t = ef::detail::tensor_from_host(DType::Int64, Shape({static_cast<int64_t>(values.size())}),
                                                values.data(), "onnx export");
  return model.add_initializer(t, "const_ints");
}

std::string Emitter::scalar(double value, DType dtype) {
  return model.add_initializer(cast(constant(value), dtype), "const");
}

namespace {
pb::AttributeProto& new_attr(pb::NodeProto& node, const std::string& name,
                             pb::AttributeProto::AttributeType type) {
  pb::AttributeProto& a = *node.add_attribute();
  a.set_name(name);
  a.set_type(type);
  return a;
}
}  // namespace

void set_attr(pb::NodeProto& node, const std::string& name, int64_t value) {
  new_attr(node, name, pb::AttributeProto::INT).set_i(value);
}
void set_attr(pb::NodeProto& node, const std::string& name, double value) {
  new_attr(node, name, pb::AttributeProto::FLOAT).set_f(static_cast<float>(value));
}
void set_attr(pb::NodeProto& node, const std::string& name, std::span<const int64_t> values) {
  pb::AttributeProto& a = new_attr(node, name, pb::AttributeProto::INTS);
  for (int64_t v : values) a.add_ints(v);
}
void set_attr(pb::NodeProto& node, const std::string& name, const std::string& value) {
  new_attr(node, name, pb::AttributeProto::STRING).set_s(value);
}
void set_attr(pb::NodeProto& node, const std::string& name, pb::GraphProto graph) {
  *new_attr(node, name, pb::AttributeProto::GRAPH).mutable_g() = std::move(graph);
}

const AttrValue& OpNode::attr(std::string_view name) const {
  const auto& names = node.op->attr_names;
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end() || static_cast<size_t>(it - names.begin()) >= node.attrs.size())
    fail<InternalError>("onnx export: op '", op(), "' has no attribute '", name, "'");
  return node.attrs[static_cast<size_t>(it - names.begin())];
}

namespace {
template <class T>
const T& attr_as(const OpNode& n, std::string_view name) {
  const T* v = std::get_if<T>(&n.attr(name));
  if (!v)
    fail<InternalError>("onnx export: attribute '", name, "' of op '", n.op(), "' has an unexpected type");
  return *v;
}
}  // namespace

int64_t OpNode::attr_int(std::string_view name) const { return attr_as<int64_t>(*this, name); }
double OpNode::attr_float(std::string_view name) const { return attr_as<double>(*this, name); }
bool OpNode::attr_bool(std::string_view name) const { return attr_as<bool>(*this, name); }
const Dims& OpNode::attr_ints(std::string_view name) const { return attr_as<Dims>(*this, name); }
const std::string& OpNode::attr_string(std::string_view name) const {
  return attr_as<std::string>(*this, name);
}
DType OpNode::attr_dtype(std::string_view name) const { return attr_as<DType>(*this, name); }

}  // namespace ef::onnx::detail
