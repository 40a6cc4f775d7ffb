// ONNX export: a traced function written as an ONNX model, for ONNX Runtime, TensorRT,
// OpenVINO and the other runtimes that read ONNX, as torch.onnx.export and tf2onnx do.
//
//   auto f = ef::function([&](ef::Tensor x) { return ef::relu(ef::matmul(x, w) + b); }, "predict",
//                         std::vector<ef::TensorSpec>{{ef::DType::Float32, {ef::kUnknownDim, 4}, "x"}});
//   ef::onnx::export_function(f.untyped().get_concrete_function(std::vector<ef::Tensor>{}), "model.onnx");
//
// This part of eagerflow lives in its own library, libeagerflow_onnx (it links Debian's
// libonnx, whose checker validates every file written), so programs that never export
// do not load ONNX.
//
// Note [ONNX export]: the function's graph, as traced (before optimization), becomes
// one ONNX graph: placeholders become the graph's inputs, variables the initializers
// holding their current values, captured constants initializers too, each op one or a
// few ONNX nodes, cond an If and while_loop a Loop. eagerflow's images are NHWC and
// ONNX's NCHW: conv2d and pooling are wrapped in Transposes that ONNX runtimes remove.
// A function that ONNX cannot express is refused with UnimplementedError naming the
// op (and the node): an op with no ONNX counterpart (linear algebra, random numbers,
// segment ops, ...), an attribute value ONNX lacks, or a variable assignment (an ONNX
// model has no state). Before anything is written the model passes ONNX's checker and
// its strict shape inference; a failure there is an InternalError (an exporter bug).
#pragma once

#include <string>
#include <vector>

#include "eagerflow/graph/function.h"

namespace ef::onnx {

// The ONNX opsets export can target; export refuses others.
inline constexpr int kMinOpset = 13;
inline constexpr int kMaxOpset = 17;

struct ExportOptions {
  int opset = kMaxOpset;
  // Names of the graph's inputs and outputs; empty: the input specs' names (else
  // "input_<i>") and "output_<i>".
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  std::string graph_name;  // empty: the function's name
};

// The ONNX model (a serialized onnx.ModelProto) of `function`. Throws
// UnimplementedError for what ONNX cannot express, InvalidArgumentError for bad
// options.
std::string export_to_bytes(const ConcreteFunction& function, const ExportOptions& options = {});

// Writes export_to_bytes(function, options) to `path`, atomically (the file appears
// complete or not at all).
void export_function(const ConcreteFunction& function, const std::string& path,
                     const ExportOptions& options = {});

}  // namespace ef::onnx
