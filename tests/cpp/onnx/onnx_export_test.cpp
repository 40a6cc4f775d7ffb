// ONNX export from C++: what the file holds (interface, initializers, If/Loop), ONNX's
// checker on every export, and the refusals. The numbers are checked against ONNX
// Runtime by tests/python/test_onnx_export.py.
#include <eagerflow/onnx/onnx_export.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>

#include "io/io_test_util.h"
#include "onnx/emitter.h"

namespace ef {
namespace {

using testing::TempDir;

ConcreteFunction trace(const Function& f) { return f.get_concrete_function(std::vector<Tensor>{}); }

::onnx::ModelProto parse(const std::string& bytes) {
  ::onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromString(bytes));
  ::onnx::checker::check_model(model);  // throws on an invalid model
  return model;
}

std::vector<std::string> op_types(const ::onnx::GraphProto& g) {
  std::vector<std::string> types;
  for (const auto& n : g.node()) types.push_back(n.op_type());
  return types;
}

bool has_op(const ::onnx::GraphProto& g, const std::string& type) {
  const auto types = op_types(g);
  return std::find(types.begin(), types.end(), type) != types.end();
}

TEST(OnnxExport, AnMlpBecomesMatMulsOverInitializersWithTheVariablesValues) {
  Variable w{constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}}), "dense/kernel"};
  Variable b{constant({0.5f, -0.5f}), "dense/bias"};
  Function f(
      [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{softmax(relu(matmul(in[0], w) + b))}; },
      "predict", std::vector<TensorSpec>{{DType::Float32, {kUnknownDim, 3}, "x"}});
  const ::onnx::ModelProto m = parse(onnx::export_to_bytes(trace(f), {.output_names = {"probabilities"}}));
  EXPECT_EQ(m.opset_import(0).version(), onnx::kMaxOpset);
  const auto& g = m.graph();
  ASSERT_EQ(g.input_size(), 1);
  EXPECT_EQ(g.input(0).name(), "x");
  const auto& shape = g.input(0).type().tensor_type().shape();
  ASSERT_EQ(shape.dim_size(), 2);
  EXPECT_FALSE(shape.dim(0).has_dim_value());  // the unknown batch size
  EXPECT_EQ(shape.dim(1).dim_value(), 3);
  ASSERT_EQ(g.output_size(), 1);
  EXPECT_EQ(g.output(0).name(), "probabilities");
  EXPECT_TRUE(has_op(g, "MatMul") && has_op(g, "Add") && has_op(g, "Relu") && has_op(g, "Softmax"));
  const auto kernel = std::find_if(g.initializer().begin(), g.initializer().end(),
                                   [](const auto& t) { return t.name() == "dense/kernel"; });
  ASSERT_NE(kernel, g.initializer().end());
  EXPECT_EQ(std::vector<int64_t>(kernel->dims().begin(), kernel->dims().end()), (std::vector<int64_t>{3, 2}));
  std::vector<float> values(6);
  ASSERT_EQ(kernel->raw_data().size(), sizeof(float) * 6);
  std::memcpy(values.data(), kernel->raw_data().data(), sizeof(float) * 6);
  EXPECT_EQ(values, (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(OnnxExport, AVariableReadTwiceIsOneInitializerAndSameNamedVariablesStayApart) {
  Variable a{constant({1.f}), "kernel"}, b{constant({2.f}), "kernel"};
  Function f([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * a + in[0] * a + b}; },
             "f", std::vector<TensorSpec>{{DType::Float32, {1}, "x"}});
  const ::onnx::ModelProto m = parse(onnx::export_to_bytes(trace(f)));
  std::vector<std::string> names;
  for (const auto& t : m.graph().initializer()) names.push_back(t.name());
  EXPECT_EQ(std::count(names.begin(), names.end(), "kernel"), 1);
  EXPECT_EQ(std::count(names.begin(), names.end(), "kernel_1"), 1);
}

TEST(OnnxExport, ConvAndPoolingRunInNchwBetweenTransposes) {
  Variable k{random::normal({3, 3, 2, 4}, 0.0, 1.0, DType::Float32, 3), "kernel"};
  Function f(
      [&](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{max_pool2d(conv2d(in[0], k, {1, 1}, "SAME"), {2, 2}, {2, 2}, "VALID")};
      },
      "cnn", std::vector<TensorSpec>{{DType::Float32, {kUnknownDim, 8, 8, 2}, "image"}});
  const ::onnx::ModelProto m = parse(onnx::export_to_bytes(trace(f)));
  const auto types = op_types(m.graph());
  EXPECT_EQ(std::count(types.begin(), types.end(), "Transpose"), 5);  // filter, 2 in, 2 out
  for (const auto& n : m.graph().node()) {
    if (n.op_type() != "Conv") continue;
    for (const auto& a : n.attribute()) {
      if (a.name() == "auto_pad") {
        EXPECT_EQ(a.s(), "SAME_UPPER");
      }
    }
  }
  const auto& out = m.graph().output(0).type().tensor_type().shape();
  EXPECT_EQ(out.dim(1).dim_value(), 4);
  EXPECT_EQ(out.dim(3).dim_value(), 4);
}

TEST(OnnxExport, CondBecomesIfAndWhileLoopBecomesLoop) {
  Function f(
      [](const std::vector<Tensor>& in) {
        auto halvings = while_loop([](const std::vector<Tensor>& v) { return v[0] > 1.f; },
                                   [](const std::vector<Tensor>& v) {
                                     return std::vector<Tensor>{v[0] / 2.f, v[1] + 1};
                                   },
                                   {reduce_sum(in[0]), constant(0)});
        Tensor y = cond(
            reduce_sum(in[0]) > 0.f, [&] { return in[0] * 2.f; }, [&] { return -in[0]; });
        return std::vector<Tensor>{halvings[1], y};
      },
      "control", std::vector<TensorSpec>{{DType::Float32, {kUnknownDim}, "x"}});
  const ::onnx::ModelProto m = parse(onnx::export_to_bytes(trace(f)));
  EXPECT_TRUE(has_op(m.graph(), "If"));
  EXPECT_TRUE(has_op(m.graph(), "Loop"));
  for (const auto& n : m.graph().node()) {
    if (n.op_type() != "Loop") continue;
    EXPECT_EQ(n.input(0), "");  // no maximum number of iterations
    const auto& body = n.attribute(0).g();
    EXPECT_EQ(body.input_size(), 4);   // iteration, condition, two loop variables
    EXPECT_EQ(body.output_size(), 3);  // condition, two loop variables
  }
}

TEST(OnnxExport, WhatOnnxCannotExpressIsRefusedByName) {
  Function special([](const std::vector<Tensor>& in) { return std::vector<Tensor>{lgamma(in[0])}; },
                   "special", std::vector<TensorSpec>{{DType::Float32, {2}, "x"}});
  EXPECT_ERROR((onnx::export_to_bytes(trace(special))), UnimplementedError, "op 'lgamma'");
  Variable counter{constant(0.f), "counter"};
  Function assigns(
      [&](const std::vector<Tensor>& in) {
        counter.assign_add(reduce_sum(in[0]));
        return std::vector<Tensor>{in[0] * 2.f};
      },
      "assigns", std::vector<TensorSpec>{{DType::Float32, {2}, "x"}});
  EXPECT_ERROR((onnx::export_to_bytes(trace(assigns))), UnimplementedError, "assigns a variable");
  Function symmetric(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{pad(in[0], {{1, 1}}, "SYMMETRIC")};
      },
      "pad", std::vector<TensorSpec>{{DType::Float32, {3}, "x"}});
  EXPECT_ERROR((onnx::export_to_bytes(trace(symmetric))), UnimplementedError, "SYMMETRIC");
}

TEST(OnnxExport, BadOptionsAreRefusedAndNothingIsWritten) {
  Function f([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + 1.f}; }, "f",
             std::vector<TensorSpec>{{DType::Float32, {2}, "x"}});
  EXPECT_ERROR((onnx::export_to_bytes(trace(f), {.opset = 9})), InvalidArgumentError, "opset 9");
  EXPECT_ERROR((onnx::export_to_bytes(trace(f), {.output_names = {"a", "b"}})), InvalidArgumentError,
               "2 output names");
  EXPECT_ERROR((onnx::export_to_bytes(trace(f), {.input_names = {""}})), InvalidArgumentError, "empty");
  TempDir dir("onnx_export");
  Function bad([](const std::vector<Tensor>& in) { return std::vector<Tensor>{lgamma(in[0])}; }, "bad",
               std::vector<TensorSpec>{{DType::Float32, {2}, "x"}});
  EXPECT_THROW(onnx::export_function(trace(bad), dir.file("bad.onnx")), UnimplementedError);
  EXPECT_TRUE(dir.entries().empty());
  onnx::export_function(trace(f), dir.file("f.onnx"), {.opset = 13});
  std::ifstream in(dir.file("f.onnx"), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(parse(bytes).opset_import(0).version(), 13);
}

// docs/onnx_coverage.md lists every op and whether it exports to ONNX; regenerate it
// with `make docs` (EF_UPDATE_DOCS=1) after adding an op or a translation.
TEST(OnnxExport, CoverageTableIsCurrent) {
  std::string table =
      "# ONNX export coverage\n\n"
      "Generated from the op registry and src/onnx/op_translations.cpp by `make docs`\n"
      "(tests/cpp/onnx/onnx_export_test.cpp); do not edit. `ef.onnx.export` refuses a function\n"
      "using an op marked \"no\" with UnimplementedError naming the op. Some exportable ops are\n"
      "refused for particular attributes (e.g. `pad` in SYMMETRIC mode, `gather` with\n"
      "batch_dims), also by name. A call that reads no tensor and draws no random numbers\n"
      "(`fill`, `eye`, `linspace`, ...) exports whatever its op, as the constant it computes.\n"
      "Gradient ops and ops the optimizer adds never appear in the traced forward graphs that\n"
      "are exported.\n\n"
      "| op | ONNX export |\n| --- | --- |\n";
  int with = 0, total = 0;
  for (const OpDef* op : registered_ops()) {
    const bool has = onnx::detail::find_translation(op->name) != nullptr;
    table += "| `" + std::string(op->name) + "` | " + (has ? "yes" : "no") + " |\n";
    with += has;
    ++total;
  }
  table += "\n" + std::to_string(with) + " of " + std::to_string(total) + " ops.\n";
  testing::expect_generated_doc(std::filesystem::path(EF_SOURCE_DIR) / "docs" / "onnx_coverage.md", table);
}

}  // namespace
}  // namespace ef
