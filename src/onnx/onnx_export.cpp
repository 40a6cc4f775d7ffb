// ef::onnx::export_to_bytes and export_function (Note [ONNX export] in
// eagerflow/onnx/onnx_export.h): walks a trace's graph, and its cond and while_loop
// sub-graphs, node by node; op nodes go to their translations (op_translations.cpp).
#include "eagerflow/onnx/onnx_export.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <set>
#include <unordered_map>

#include "eagerflow/ops/creation.h"
#include "eagerflow/runtime/dispatch.h"
#include "graph/function_internal.h"
#include "io/atomic_file.h"
#include "onnx/emitter.h"

namespace ef::onnx {

namespace {

using namespace detail;  // NOLINT: ef::onnx::detail, the exporter's own internals
using ef::detail::ConcreteFunctionState;
using ef::detail::GraphState;
using ef::detail::Node;
using ef::detail::NodeKind;
using ef::detail::SubGraph;
using ef::detail::ValueRef;

// ONNX's IR version for opsets 15-17 (onnx/helper.py's VERSION_TABLE); 13 and 14 go
// with IR 7.
int64_t ir_version_for(int opset) { return opset >= 15 ? 8 : 7; }

// The ONNX type of a value of `meta`: its element type and, unless `with_shape` is
// false, its shape, with unknown dimensions left unnamed (or named `dim_prefix_<i>`).
pb::TypeProto tensor_type(const TensorMeta& meta, bool with_shape, const std::string& dim_prefix = "") {
  pb::TypeProto type;
  pb::TypeProto::Tensor& t = *type.mutable_tensor_type();
  t.set_elem_type(onnx_type(meta.dtype));
  if (!with_shape) return type;
  pb::TensorShapeProto& shape = *t.mutable_shape();
  for (int i = 0; i < meta.shape.rank(); ++i) {
    pb::TensorShapeProto::Dimension& d = *shape.add_dim();
    if (meta.shape[i] != kUnknownDim)
      d.set_dim_value(meta.shape[i]);
    else if (!dim_prefix.empty())
      d.set_dim_param(dim_prefix + "_" + std::to_string(i));
  }
  return type;
}

pb::ValueInfoProto value_info(const std::string& name, pb::TypeProto type) {
  pb::ValueInfoProto v;
  v.set_name(name);
  *v.mutable_type() = std::move(type);
  return v;
}

// Translates eagerflow graphs into ONNX graphs of one model.
class GraphTranslator {
 public:
  explicit GraphTranslator(ModelBuilder& model) : model_(model) {}

  // Adds to `e` the nodes computing `wanted` of the first `count` nodes of `graph`, in
  // which the placeholder nodes of `bound` stand for the named values; returns the
  // names of `wanted`. Only the nodes `wanted` depends on are translated.
  std::vector<std::string> translate(const GraphState& graph, int count, const std::vector<ValueRef>& wanted,
                                     const std::unordered_map<int, std::string>& bound, Emitter& e) {
    std::vector<bool> needed(static_cast<size_t>(count), false);
    std::vector<int> stack;
    for (const ValueRef& r : wanted) stack.push_back(r.node);
    while (!stack.empty()) {
      const int i = stack.back();
      stack.pop_back();
      if (i < 0 || i >= count) fail<InternalError>("onnx export: a value refers to node ", i, " of ", count);
      if (needed[static_cast<size_t>(i)]) continue;
      needed[static_cast<size_t>(i)] = true;
      for (const ValueRef& r : graph.node(i).inputs) stack.push_back(r.node);
      for (int c : graph.node(i).control_inputs) stack.push_back(c);
    }
    std::vector<std::vector<std::string>> names(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i) {
      if (!needed[static_cast<size_t>(i)]) continue;
      const Node& n = graph.node(i);
      names[static_cast<size_t>(i)] = translate_node(graph, n, bound, i, names, e);
    }
    std::vector<std::string> out;
    for (const ValueRef& r : wanted)
      out.push_back(names[static_cast<size_t>(r.node)].at(static_cast<size_t>(r.index)));
    return out;
  }

 private:
  std::vector<std::string> translate_node(const GraphState& graph, const Node& n,
                                          const std::unordered_map<int, std::string>& bound, int index,
                                          const std::vector<std::vector<std::string>>& names, Emitter& e) {
    std::vector<std::string> inputs;
    std::vector<TensorMeta> metas;
    for (const ValueRef& r : n.inputs) {
      inputs.push_back(names[static_cast<size_t>(r.node)].at(static_cast<size_t>(r.index)));
      metas.push_back(graph.node(r.node).outputs.at(static_cast<size_t>(r.index)));
    }
    switch (n.kind) {
      case NodeKind::kPlaceholder: {
        const auto it = bound.find(index);
        if (it == bound.end())
          fail<InternalError>("onnx export: placeholder '", n.name, "' is neither an input nor a capture");
        return {it->second};
      }
      case NodeKind::kConstant:
        return {model_.add_initializer(n.value, n.name)};
      case NodeKind::kReadVariable:
        return {variable(*n.variable)};
      case NodeKind::kAssignVariable:
        fail<UnimplementedError>("onnx export: the function assigns variable '", n.variable->name(),
                                 "' (node '", n.name, "'); an ONNX model has no state to assign");
      case NodeKind::kGroup:
        return {};
      case NodeKind::kCond:
        return cond(n, inputs, e);
      case NodeKind::kWhile:
        return while_loop(n, inputs, metas, e);
      case NodeKind::kOp:
        break;
    }
    // An op that reads no tensor (fill, range, eye, linspace, ...) and draws no random
    // numbers gives the same values on every call: they are computed now and stored.
    if (n.inputs.empty() && !n.op->traits.random && !n.op->traits.stateful) {
      std::vector<Tensor> values =
          run_op_multi(*n.op, std::span<const Tensor>(), n.attrs, CallSite::current());
      std::vector<std::string> names;
      for (size_t k = 0; k < values.size(); ++k)
        names.push_back(
            model_.add_initializer(values[k], k == 0 ? n.name : n.name + "_" + std::to_string(k)));
      return names;
    }
    // ONNX's operators mostly take no 8- and 16-bit integers; eagerflow computes them
    // widened (Note [small integer dtypes]), which the export does not repeat yet. Cast
    // takes them, except from a float, whose saturation ONNX's Cast does not promise.
    auto small = [](const TensorMeta& m) { return is_small_integer(m.dtype); };
    const bool exact_cast = n.op->name == "cast" && !(metas.size() == 1 && is_floating(metas[0].dtype));
    if (!exact_cast && (std::any_of(metas.begin(), metas.end(), small) ||
                        std::any_of(n.outputs.begin(), n.outputs.end(), small)))
      fail<UnimplementedError>(
          "onnx export: op '", n.op->name, "' (node '", n.name,
          "') computes on int8, uint8, int16, uint16 or uint32 tensors, which the ONNX "
          "export does not support yet; cast them to int32 (or a float dtype) in the function");
    const Translation translation = find_translation(n.op->name);
    if (!translation)
      fail<UnimplementedError>("onnx export: op '", n.op->name, "' (node '", n.name,
                               "') has no ONNX counterpart that eagerflow can export");
    OpNode op{n, std::move(inputs), std::move(metas), {}};
    for (size_t k = 0; k < n.outputs.size(); ++k)
      op.outputs.push_back(model_.unique_name(k == 0 ? n.name : n.name + "_" + std::to_string(k)));
    translation(op, e);
    return op.outputs;
  }

  std::string variable(const Variable& v) {
    const auto it = variables_.find(v.key());
    if (it != variables_.end()) return it->second;
    if (!v.initialized())
      fail<FailedPreconditionError>("onnx export: variable '", v.name(),
                                    "' has no value yet (its graph's initializer has not run)");
    std::string name = model_.add_initializer(v.value(), v.name());
    variables_.emplace(v.key(), name);
    return name;
  }

  // The ONNX graph of `sub` (a branch, or part of a loop body), its placeholders
  // bound to `args` (the explicit arguments) and `captures` (values of the enclosing
  // graph, which ONNX sub-graphs read by name); outputs typed by `output_metas`.
  std::vector<std::string> inline_subgraph(const SubGraph& sub, const std::vector<std::string>& args,
                                           std::span<const std::string> captures, Emitter& e) {
    std::unordered_map<int, std::string> bound;
    for (size_t i = 0; i < sub.args.size(); ++i) bound[sub.args[i].node] = args.at(i);
    const auto& capture_refs = sub.graph->capture_refs;
    for (size_t i = 0; i < capture_refs.size(); ++i) bound[capture_refs[i].node] = captures[i];
    return translate(*sub.graph, static_cast<int>(sub.graph->nodes.size()), sub.outputs, bound, e);
  }

  // Ends a sub-graph: each value of `values` becomes an output (through an Identity,
  // since an ONNX graph output must be defined in that graph).
  void add_outputs(Emitter& e, const std::vector<std::string>& values, const std::vector<TensorMeta>& metas) {
    for (size_t k = 0; k < values.size(); ++k) {
      std::string out = e.op("Identity", {values[k]});
      *e.graph.add_output() = value_info(out, tensor_type(metas[k], false));
    }
  }

  std::vector<std::string> cond(const Node& n, const std::vector<std::string>& inputs, Emitter& e) {
    const ef::detail::ControlFlow& c = *n.control;
    const size_t first = c.first.graph->capture_refs.size();
    const std::span<const std::string> all(inputs);
    std::vector<TensorMeta> metas(n.outputs.begin(), n.outputs.end());
    auto branch = [&](const SubGraph& sub, std::span<const std::string> captures, const char* name) {
      pb::GraphProto g;
      g.set_name(model_.unique_name(n.name + "_" + name));
      Emitter be(model_, g);
      add_outputs(be, inline_subgraph(sub, {}, captures, be), metas);
      return g;
    };
    pb::GraphProto then_graph = branch(c.first, all.subspan(1, first), "then");
    pb::GraphProto else_graph = branch(c.second, all.subspan(1 + first), "else");
    std::vector<std::string> outputs;
    for (size_t k = 0; k < n.outputs.size(); ++k)
      outputs.push_back(model_.unique_name(n.name + "_" + std::to_string(k)));
    pb::NodeProto& node = e.add("If", {inputs[0]}, outputs);
    set_attr(node, "then_branch", std::move(then_graph));
    set_attr(node, "else_branch", std::move(else_graph));
    return outputs;
  }

  // while_loop as ONNX's Loop, which tests its condition after each body run: the
  // condition runs once before the loop on the initial values, and again at the end of
  // every body run on the new ones.
  std::vector<std::string> while_loop(const Node& n, const std::vector<std::string>& inputs,
                                      const std::vector<TensorMeta>& metas, Emitter& e) {
    const ef::detail::ControlFlow& c = *n.control;
    if (c.accumulate)
      fail<UnimplementedError>("onnx export: while_loop node '", n.name,
                               "' keeps its iterations for a gradient; export the forward function alone");
    const size_t vars = c.second.args.size();
    const size_t first = c.first.graph->capture_refs.size();
    const std::span<const std::string> all(inputs);
    const std::vector<std::string> initial(inputs.begin(), inputs.begin() + static_cast<ptrdiff_t>(vars));
    const std::span<const std::string> cond_captures = all.subspan(vars, first);
    const std::span<const std::string> body_captures = all.subspan(vars + first);
    const std::string cond0 = inline_subgraph(c.first, initial, cond_captures, e).at(0);

    pb::GraphProto body;
    body.set_name(model_.unique_name(n.name + "_body"));
    Emitter be(model_, body);
    const std::string iteration = model_.unique_name(n.name + "_iteration");
    const std::string cond_in = model_.unique_name(n.name + "_cond_in");
    *body.add_input() = value_info(iteration, tensor_type({DType::Int64, Shape{}}, true));
    *body.add_input() = value_info(cond_in, tensor_type({DType::Bool, Shape{}}, true));
    std::vector<std::string> vars_in;
    for (size_t k = 0; k < vars; ++k) {
      vars_in.push_back(model_.unique_name(n.name + "_var_" + std::to_string(k)));
      *body.add_input() = value_info(vars_in.back(), tensor_type(metas[k], false));
    }
    const std::vector<std::string> vars_out = inline_subgraph(c.second, vars_in, body_captures, be);
    const std::string cond_out = inline_subgraph(c.first, vars_out, cond_captures, be).at(0);
    std::vector<std::string> body_outputs{cond_out};
    body_outputs.insert(body_outputs.end(), vars_out.begin(), vars_out.end());
    std::vector<TensorMeta> body_metas{{DType::Bool, Shape{}}};
    body_metas.insert(body_metas.end(), n.outputs.begin(), n.outputs.begin() + static_cast<ptrdiff_t>(vars));
    add_outputs(be, body_outputs, body_metas);

    std::string trip_count;
    if (c.maximum_iterations >= 0) {
      const int64_t m = c.maximum_iterations;
      trip_count =
          model_.add_initializer(ef::detail::tensor_from_host(DType::Int64, Shape{}, &m, "onnx export"),
                                 n.name + "_maximum_iterations");
    }
    std::vector<std::string> outputs;
    for (size_t k = 0; k < vars; ++k) outputs.push_back(model_.unique_name(n.name + "_" + std::to_string(k)));
    std::vector<std::string> loop_inputs{trip_count, cond0};
    loop_inputs.insert(loop_inputs.end(), initial.begin(), initial.end());
    set_attr(e.add("Loop", std::move(loop_inputs), outputs), "body", std::move(body));
    return outputs;
  }

  ModelBuilder& model_;
  std::unordered_map<const void*, std::string> variables_;
};

std::vector<std::string> complete_names(std::vector<std::string> names, size_t count, const char* what,
                                        const std::vector<TensorSpec>* specs) {
  if (names.empty())
    for (size_t i = 0; i < count; ++i)
      names.push_back(specs && !(*specs)[i].name.empty() ? (*specs)[i].name
                                                         : std::string(what) + "_" + std::to_string(i));
  if (names.size() != count)
    fail("onnx export: ", names.size(), " ", what, " names for a function with ", count, " ", what, "s");
  std::set<std::string> seen;
  for (const std::string& n : names)
    if (n.empty() || !seen.insert(n).second)
      fail("onnx export: the ", what, " name '", n, "' is empty or repeated");
  return names;
}

// ONNX's checker and its strict shape inference (the checker's full check) on `model`.
void check(const pb::ModelProto& model) {
  try {
    ::onnx::checker::check_model(model);
    pb::ModelProto inferred = model;
    ::onnx::shape_inference::InferShapes(inferred, ::onnx::OpSchemaRegistry::Instance(),
                                         ::onnx::ShapeInferenceOptions(true, 1, true));
  } catch (const std::exception& e) {
    fail<InternalError>("onnx export: the exported model fails ONNX's checker (an exporter bug): ", e.what());
  }
}

}  // namespace

std::string export_to_bytes(const ConcreteFunction& function, const ExportOptions& options) {
  if (!function.state()) fail("onnx export: the ConcreteFunction is empty");
  if (options.opset < kMinOpset || options.opset > kMaxOpset)
    fail("onnx export: opset ", options.opset, " is not supported; choose one from ", kMinOpset, " to ",
         kMaxOpset);
  const ConcreteFunctionState& st = *function.state();
  const std::vector<std::string> input_names =
      complete_names(options.input_names, st.inputs.size(), "input", &st.inputs);
  const std::vector<std::string> output_names =
      complete_names(options.output_names, st.outputs.size(), "output", nullptr);
  for (int i : st.stateful) {
    const Node& n = st.graph->node(i);
    if (n.kind == NodeKind::kAssignVariable || (n.control && n.stateful()))
      fail<UnimplementedError>("onnx export: the function assigns a variable (node '", n.name,
                               "'); an ONNX model has no state to assign");
  }

  pb::ModelProto model;
  model.set_ir_version(ir_version_for(options.opset));
  model.set_producer_name("eagerflow");
  pb::OperatorSetIdProto& opset = *model.add_opset_import();
  opset.set_domain("");
  opset.set_version(options.opset);
  ModelBuilder builder(model, options.opset);
  pb::GraphProto& graph = builder.main_graph();
  graph.set_name(options.graph_name.empty() ? st.name : options.graph_name);
  // Reserve the interface's names first, so that no inner value takes them.
  for (const std::string& n : input_names) builder.unique_name(n);
  for (const std::string& n : output_names) builder.unique_name(n);

  std::unordered_map<int, std::string> bound;
  for (size_t i = 0; i < st.input_refs.size(); ++i) {
    bound[st.input_refs[i].node] = input_names[i];
    *graph.add_input() = value_info(
        input_names[i], tensor_type({st.inputs[i].dtype, st.inputs[i].shape}, true, input_names[i]));
  }
  Emitter e(builder, graph);
  GraphTranslator translator(builder);
  const std::vector<std::string> values =
      translator.translate(*st.graph, st.forward_nodes, st.outputs, bound, e);
  for (size_t k = 0; k < values.size(); ++k) {
    e.add("Identity", {values[k]}, {output_names[k]});
    const ValueRef& r = st.outputs[k];
    *graph.add_output() =
        value_info(output_names[k], tensor_type(st.graph->node(r.node).outputs.at(r.index), true));
  }
  check(model);
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    fail<ResourceExhaustedError>(
        "onnx export: the model does not fit in one ONNX file (2 GB protobuf limit)");
  return bytes;
}

void export_function(const ConcreteFunction& function, const std::string& path,
                     const ExportOptions& options) {
  const std::string bytes = export_to_bytes(function, options);
  io::detail::write_file_atomically(
      path, [&](io::detail::FileWriter& w) { w.write(bytes.data(), bytes.size()); }, "onnx export");
}

}  // namespace ef::onnx
