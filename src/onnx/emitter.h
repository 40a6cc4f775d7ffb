// What ONNX translation builds with (Note [ONNX export] in eagerflow/onnx/onnx_export.h):
// a model whose value names are unique, emitters that append nodes to one of its graphs
// (the main graph or an If/Loop body), and OpNode, one eagerflow op node as the
// per-op translations (op_translations.cpp) see it. Internal to src/onnx.
#pragma once

#include <onnx/onnx_pb.h>

#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "eagerflow/core/error.h"
#include "eagerflow/runtime/op_def.h"
#include "graph/graph_internal.h"

namespace ef::onnx::detail {

namespace pb = ::onnx;

// ONNX's TensorProto element type for `dtype`.
int32_t onnx_type(DType dtype);

// The whole model: unique value names and the initializers (variables, captured
// constants, constants the translations need), all kept in the main graph, whose
// names every sub-graph sees.
class ModelBuilder {
 public:
  ModelBuilder(pb::ModelProto& model, int opset) : model_(model), opset_(opset) {}

  int opset() const { return opset_; }
  pb::GraphProto& main_graph() { return *model_.mutable_graph(); }
  // A name no other value of the model has: `base`, else `base_1`, `base_2`, ...
  std::string unique_name(std::string_view base);
  // Adds `value` (copied to the host) as an initializer named uniquely after `base`.
  std::string add_initializer(const Tensor& value, std::string_view base);

 private:
  pb::ModelProto& model_;
  int opset_;
  std::unordered_set<std::string> names_;
};

// Appends nodes to one graph of the model.
class Emitter {
 public:
  Emitter(ModelBuilder& model, pb::GraphProto& graph) : model(model), graph(graph) {}

  // A node of type `op_type` reading `inputs` and defining `outputs`.
  pb::NodeProto& add(std::string_view op_type, std::vector<std::string> inputs,
                     std::vector<std::string> outputs);
  // A node with one fresh output, whose name it returns.
  std::string op(std::string_view op_type, std::vector<std::string> inputs);
  // Like op, and sets attributes on the node through `set` before returning.
  template <class F>
  std::string op(std::string_view op_type, std::vector<std::string> inputs, F&& set) {
    std::string out = fresh(op_type);
    set(add(op_type, std::move(inputs), {out}));
    return out;
  }
  std::string fresh(std::string_view base) { return model.unique_name(base); }
  // Constants (initializers): a 1-D int64 tensor, and a 0-d one of `dtype`.
  std::string ints(std::span<const int64_t> values);
  std::string scalar(double value, DType dtype);

  ModelBuilder& model;
  pb::GraphProto& graph;
};

void set_attr(pb::NodeProto& node, const std::string& name, int64_t value);
void set_attr(pb::NodeProto& node, const std::string& name, double value);
void set_attr(pb::NodeProto& node, const std::string& name, std::span<const int64_t> values);
void set_attr(pb::NodeProto& node, const std::string& name, const std::string& value);
void set_attr(pb::NodeProto& node, const std::string& name, pb::GraphProto graph);

// One op node of the eagerflow graph being translated: its op, attributes, the names
// and metas of its inputs, and the names its translation must define, in order.
struct OpNode {
  const ef::detail::Node& node;
  std::vector<std::string> inputs;
  std::vector<TensorMeta> input_metas;
  std::vector<std::string> outputs;

  std::string_view op() const { return node.op->name; }
  const TensorMeta& output_meta(size_t k = 0) const { return node.outputs[k]; }
  int rank(size_t input = 0) const { return input_metas[input].shape.rank(); }
  // Attributes by name (the op's OpDef::attr_names).
  const AttrValue& attr(std::string_view name) const;
  int64_t attr_int(std::string_view name) const;
  double attr_float(std::string_view name) const;
  bool attr_bool(std::string_view name) const;
  const Dims& attr_ints(std::string_view name) const;
  const std::string& attr_string(std::string_view name) const;
  DType attr_dtype(std::string_view name) const;

  // Throws UnimplementedError: this call of the op has no ONNX counterpart, because...
  template <class... Args>
  [[noreturn]] void unsupported(const Args&... why) const {
    fail<UnimplementedError>("onnx export: op '", op(), "' (node '", node.name, "') ", why...);
  }
};

// Writes the ONNX nodes computing `n` into `e`. Throws UnimplementedError for what
// ONNX cannot express.
using Translation = void (*)(const OpNode& n, Emitter& e);
// The translation of `op`, or null when ONNX has no counterpart.
Translation find_translation(std::string_view op);
// The NHWC image ops' translations (image_translations.cpp), which find_translation
// also searches.
const std::unordered_map<std::string_view, Translation>& image_translations();

}  // namespace ef::onnx::detail
