// A generated corpus of damaged and hand-edited saved models (Note [loading validates
// everything]): truncations and bit flips of both files must give a typed error or a
// model that still runs; each kind of edit must be refused with its error type and a
// message naming the field.
#include <eagerflow/saved_model/saved_model.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "io/io_test_util.h"
#include "saved_model.pb.h"

namespace ef {
namespace {

namespace pb = ::eagerflow::saved_model;
using testing::iota;
using testing::TempDir;

struct Files {
  std::string graph, variables;
};

std::string read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A model with a bit of everything: variables, a dense layer, a cond, a while loop with
// a nested cond, int and bool constants, and an input of unknown batch size. The loop's
// iterations are bounded, so that a flipped bit in its limit `5` runs briefly.
Files good_files() {
  static const Files files = [] {
    TempDir dir("damaged_saved_model");
    Variable w(iota({4, 3}) * 0.1f, "w");
    Variable b(constant({0.5f, -0.5f, 1.f}), "b");
    Function f(
        [&](const std::vector<Tensor>& in) {
          Tensor y = matmul(in[0], w) + b;
          y = cond(
              reduce_sum(y) > 0.f, [&] { return relu(y); }, [&] { return -y; });
          auto loop = while_loop([](const std::vector<Tensor>& v) { return v[0] < 5; },
                                 [](const std::vector<Tensor>& v) {
                                   Tensor twice = cond(
                                       v[0] > 2, [&] { return v[1] * 2.f; }, [&] { return v[1]; });
                                   return std::vector<Tensor>{v[0] + 1, twice};
                                 },
                                 {constant(0), y}, /*maximum_iterations=*/10);
          return std::vector<Tensor>{loop[1], logical_and(in[1], constant(true))};
        },
        "model", std::vector<TensorSpec>{{DType::Float32, {kUnknownDim, 4}, "x"}, {DType::Bool, {}, "flag"}});
    saved_model::save(dir.file("m"), {{.name = "serving_default",
                                       .function = f.get_concrete_function(std::vector<Tensor>{}),
                                       .signature = true}});
    return Files{read_bytes(dir.path() / "m" / "saved_model.pb"),
                 read_bytes(dir.path() / "m" / "variables" / "variables.safetensors")};
  }();
  return files;
}

pb::SavedModel parsed(const std::string& bytes) {
  pb::SavedModel m;
  EXPECT_TRUE(m.ParseFromString(bytes));
  return m;
}

std::string serialized(const pb::SavedModel& m) {
  std::string out;
  m.SerializeToString(&out);
  return out;
}

// Loads and, when that succeeds, runs the model: either may refuse with a typed error.
// Anything else (a crash, an exception of another type) fails the test.
void load_and_run(const Files& files, const std::string& what) {
  try {
    const saved_model::LoadedModel m = saved_model::load_from_bytes(files.graph, files.variables, "model");
    for (const saved_model::Export& e : m.exports()) {
      std::vector<Tensor> args;
      for (const TensorSpec& s : e.function.input_signature()) {
        Shape shape = s.shape;
        for (int d = 0; d < shape.rank(); ++d)
          if (shape[d] == kUnknownDim) shape[d] = 2;
        args.push_back(zeros(shape, s.dtype));
      }
      e.function(args);
    }
  } catch (const Error&) {
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": an untyped exception: " << e.what();
  }
}

TEST(DamagedSavedModel, TheUndamagedModelLoadsAndRuns) {
  const Files f = good_files();
  const saved_model::LoadedModel m = saved_model::load_from_bytes(f.graph, f.variables, "model");
  const auto out = m.call_signature("serving_default", {{"x", ones({2, 4})}, {"flag", constant(true)}});
  EXPECT_EQ(out.at("output_0").shape(), Shape({2, 3}));
  EXPECT_EQ(m.variables().size(), 2u);
}

TEST(DamagedSavedModel, TruncatedFilesAreRefused) {
  const Files good = good_files();
  int cases = 0;
  for (size_t len = 0; len < good.graph.size(); len += len < 256 ? 1 : 5, ++cases) {
    const Files f{good.graph.substr(0, len), good.variables};
    EXPECT_THROW(saved_model::load_from_bytes(f.graph, f.variables, "model"), Error)
        << "graph cut at " << len;
  }
  for (size_t len = 0; len < good.variables.size(); len += 3, ++cases)
    EXPECT_THROW(saved_model::load_from_bytes(good.graph, good.variables.substr(0, len), "model"),
                 DataLossError)
        << "variables cut at " << len;
  EXPECT_GT(cases, 300);
}

TEST(DamagedSavedModel, FlippedBitsGiveATypedErrorOrAModelThatRuns) {
  const Files good = good_files();
  for (size_t i = 0; i < good.graph.size(); ++i) {
    Files f = good;
    f.graph[i] = static_cast<char>(f.graph[i] ^ (1 << (i * 5 % 8)));
    load_and_run(f, "graph bit flip at " + std::to_string(i));
  }
  for (size_t i = 0; i < good.variables.size(); i += 2) {
    Files f = good;
    f.variables[i] = static_cast<char>(f.variables[i] ^ (1 << (i * 3 % 8)));
    EXPECT_THROW(saved_model::load_from_bytes(f.graph, f.variables, "model"), DataLossError)
        << "variables bit flip at " << i;  // every byte is covered by a checksum or the header
  }
}

// The first op node of the top graph named `op`.
pb::NodeDef& node_of(pb::SavedModel& m, const std::string& op) {
  for (pb::NodeDef& n : *m.mutable_functions(0)->mutable_graph()->mutable_nodes())
    if (n.op() == op) return n;
  ADD_FAILURE() << "no node " << op;
  return *m.mutable_functions(0)->mutable_graph()->mutable_nodes(0);
}

pb::NodeDef& node_of_kind(pb::SavedModel& m, pb::NodeKind kind) {
  for (pb::NodeDef& n : *m.mutable_functions(0)->mutable_graph()->mutable_nodes())
    if (n.kind() == kind) return n;
  ADD_FAILURE() << "no node of kind " << kind;
  return *m.mutable_functions(0)->mutable_graph()->mutable_nodes(0);
}

struct Edit {
  std::string name;
  std::function<void(pb::SavedModel&)> edit;
  std::string expected;  // in the message
  enum { kDataLoss, kUnimplemented } type = kDataLoss;
};

std::vector<Edit> edits() {
  auto matmul = [](pb::SavedModel& m) -> pb::NodeDef& { return node_of(m, "matmul"); };
  return {
      {"newer format", [](auto& m) { m.set_format_version(2); }, "format_version: 2", Edit::kUnimplemented},
      {"no format version", [](auto& m) { m.set_format_version(0); }, "format_version"},
      {"unknown op", [=](auto& m) { matmul(m).set_op("matmul_v9"); }, "'matmul_v9' is not an op",
       Edit::kUnimplemented},
      {"input from a later node (a cycle)",
       [=](auto& m) { matmul(m).mutable_inputs(0)->set_node(m.functions(0).graph().nodes_size() - 1); },
       "inputs[0]"},
      {"input from itself",
       [=](auto& m) {
         auto& nodes = *m.mutable_functions(0)->mutable_graph()->mutable_nodes();
         for (int i = 0; i < nodes.size(); ++i)
           if (nodes[i].op() == "matmul") nodes[i].mutable_inputs(0)->set_node(i);
       },
       "inputs[0]"},
      {"negative input", [=](auto& m) { matmul(m).mutable_inputs(1)->set_node(-1); }, "inputs[1]"},
      {"output index out of range", [=](auto& m) { matmul(m).mutable_inputs(0)->set_index(3); }, "output 3"},
      {"wrong output dtype", [=](auto& m) { matmul(m).mutable_outputs(0)->set_dtype(pb::FLOAT64); },
       "outputs[0]"},
      {"wrong output shape", [=](auto& m) { matmul(m).mutable_outputs(0)->set_shape(1, 7); }, "outputs[0]"},
      {"missing output", [=](auto& m) { matmul(m).clear_outputs(); }, "outputs"},
      {"unknown dtype",
       [=](auto& m) { matmul(m).mutable_outputs(0)->set_dtype(static_cast<pb::DataType>(99)); },
       "unknown dtype 99"},
      {"attribute dropped", [=](auto& m) { matmul(m).mutable_attrs()->RemoveLast(); }, "attrs"},
      {"attribute of another type", [=](auto& m) { matmul(m).mutable_attrs(0)->set_s("yes"); },
       "inputs and attrs"},
      {"input dropped", [=](auto& m) { matmul(m).mutable_inputs()->RemoveLast(); }, "input 1 is read"},
      {"attribute without a value", [=](auto& m) { matmul(m).mutable_attrs(0)->Clear(); }, "holds no value"},
      {"huge placeholder",
       [](auto& m) {
         auto& p = node_of_kind(m, pb::PLACEHOLDER);
         p.mutable_outputs(0)->set_shape(1, int64_t{1} << 62);
       },
       "outputs[0]"},
      {"rank 9",
       [](auto& m) {
         auto& p = node_of_kind(m, pb::PLACEHOLDER);
         for (int i = 0; i < 8; ++i) p.mutable_outputs(0)->add_shape(1);
       },
       "rank"},
      {"negative size",
       [](auto& m) { node_of_kind(m, pb::PLACEHOLDER).mutable_outputs(0)->set_shape(1, -5); }, "outputs[0]"},
      {"constant too short",
       [](auto& m) { node_of_kind(m, pb::CONSTANT).mutable_value()->mutable_data()->pop_back(); },
       "value.data"},
      {"constant of unknown shape",
       [](auto& m) { node_of_kind(m, pb::CONSTANT).mutable_value()->mutable_spec()->add_shape(-1); },
       "value.spec"},
      {"bool constant of 2",
       [](auto& m) {
         for (auto& n : *m.mutable_functions(0)->mutable_graph()->mutable_nodes())
           if (n.kind() == pb::CONSTANT && n.value().spec().dtype() == pb::BOOL)
             (*n.mutable_value()->mutable_data())[0] = 2;
       },
       "a bool byte is 2"},
      {"constant with inputs", [](auto& m) { *node_of_kind(m, pb::CONSTANT).add_inputs() = pb::ValueRef(); },
       "inputs"},
      {"variable out of range", [](auto& m) { node_of_kind(m, pb::READ_VARIABLE).set_variable(7); },
       "variable"},
      {"variable on an op node", [=](auto& m) { matmul(m).set_variable(1); }, "variable"},
      {"variable key missing", [](auto& m) { m.mutable_variables(0)->set_key("nothing"); }, "key"},
      {"variable dtype differs",
       [](auto& m) { m.mutable_variables(0)->mutable_spec()->set_dtype(pb::INT32); }, "spec"},
      {"variable shape differs", [](auto& m) { m.mutable_variables(0)->mutable_spec()->add_shape(1); },
       "spec"},
      {"two variables, one key", [](auto& m) { m.mutable_variables(1)->set_key(m.variables(0).key()); },
       "key"},
      {"variable dropped", [](auto& m) { m.mutable_variables()->RemoveLast(); }, "variable"},
      {"assignment kind",
       [](auto& m) {
         auto& n = node_of_kind(m, pb::READ_VARIABLE);
         n.set_kind(pb::ASSIGN_VARIABLE);
       },
       "an assignment has one input"},
      {"unknown node kind", [=](auto& m) { matmul(m).set_kind(static_cast<pb::NodeKind>(42)); }, "kind"},
      {"op on a placeholder", [](auto& m) { node_of_kind(m, pb::PLACEHOLDER).set_op("add"); }, "op"},
      {"control input from a later node",
       [=](auto& m) { matmul(m).add_control_inputs(m.functions(0).graph().nodes_size()); }, "control_inputs"},
      {"order after itself", [=](auto& m) { matmul(m).add_order_after(1000); }, "order_after"},
      {"cond without sub-graphs", [](auto& m) { node_of_kind(m, pb::COND).clear_control(); }, "control"},
      {"cond with a float predicate",
       [](auto& m) {
         auto& c = node_of_kind(m, pb::COND);
         c.mutable_inputs(0)->set_node(c.inputs(1).node());
       },
       "inputs"},
      {"branch gives another dtype",
       [](auto& m) { node_of_kind(m, pb::COND).mutable_outputs(0)->set_dtype(pb::FLOAT64); }, "outputs[0]"},
      {"while body gives too few values",
       [](auto& m) {
         node_of_kind(m, pb::WHILE).mutable_control()->mutable_second()->mutable_outputs()->RemoveLast();
       },
       "control.second"},
      {"while condition gives a float",
       [](auto& m) {
         auto* cond = node_of_kind(m, pb::WHILE).mutable_control()->mutable_first();
         *cond->mutable_outputs(0) = cond->args(0);
       },
       "control.first"},
      {"while with an extra output",
       [](auto& m) { *node_of_kind(m, pb::WHILE).add_outputs() = pb::TensorSpecDef(); }, "outputs"},
      {"capture that is not a placeholder",
       [](auto& m) {
         auto* g = node_of_kind(m, pb::COND).mutable_control()->mutable_first()->mutable_graph();
         g->add_captures(g->nodes_size() - 1);
       },
       "captures"},
      {"node inside a branch refers ahead",
       [](auto& m) {
         auto* g = node_of_kind(m, pb::COND).mutable_control()->mutable_first()->mutable_graph();
         for (auto& n : *g->mutable_nodes())
           if (n.inputs_size() > 0) n.mutable_inputs(0)->set_node(g->nodes_size() + 3);
       },
       "control.first"},
      {"function input is not a placeholder",
       [](auto& m) {
         m.mutable_functions(0)->mutable_input_refs(0)->set_node(m.functions(0).graph().nodes_size() - 1);
       },
       "inputs[0]"},
      {"function input spec differs",
       [](auto& m) { m.mutable_functions(0)->mutable_inputs(0)->set_dtype(pb::FLOAT64); }, "inputs[0]"},
      {"function input fed twice",
       [](auto& m) { *m.mutable_functions(0)->mutable_input_refs(1) = m.functions(0).input_refs(0); },
       "input"},
      {"function output out of range",
       [](auto& m) { m.mutable_functions(0)->mutable_outputs(0)->set_node(100000); }, "outputs[0]"},
      {"top graph with captures", [](auto& m) { m.mutable_functions(0)->mutable_graph()->add_captures(0); },
       "captures"},
      {"export of a missing function", [](auto& m) { m.mutable_exports(0)->set_function(3); }, "function"},
      {"export without a name", [](auto& m) { m.mutable_exports(0)->clear_name(); }, "name"},
      {"two exports of one name", [](auto& m) { *m.add_exports() = m.exports(0); }, "name"},
      {"no exports", [](auto& m) { m.clear_exports(); }, "exports"},
      {"export names an extra input", [](auto& m) { m.mutable_exports(0)->add_input_names("z"); }, "input"},
      {"export with repeated output names",
       [](auto& m) { m.mutable_exports(0)->set_output_names(1, m.exports(0).output_names(0)); }, "output"},
  };
}

TEST(DamagedSavedModel, EachKindOfEditIsRefusedNamingTheField) {
  const Files good = good_files();
  for (const Edit& e : edits()) {
    pb::SavedModel m = parsed(good.graph);
    e.edit(m);
    try {
      saved_model::load_from_bytes(serialized(m), good.variables, "model");
      ADD_FAILURE() << e.name << ": loaded";
    } catch (const Error& err) {
      const bool right_type = e.type == Edit::kDataLoss
                                  ? dynamic_cast<const DataLossError*>(&err) != nullptr
                                  : dynamic_cast<const UnimplementedError*>(&err) != nullptr;
      EXPECT_TRUE(right_type) << e.name << ": " << err.what();
      EXPECT_NE(std::string(err.what()).find(e.expected), std::string::npos) << e.name << ": " << err.what();
      EXPECT_NE(std::string(err.what()).find("model/"), std::string::npos) << e.name << ": " << err.what();
    }
  }
}

TEST(DamagedSavedModel, ATensorOfNoVariableAndAFileWithoutChecksumsAreRefused) {
  const Files good = good_files();
  io::TensorFile vars = io::parse_safetensors(
      {reinterpret_cast<const uint8_t*>(good.variables.data()), good.variables.size()}, "variables");
  vars.tensors.emplace("stray", zeros({2}));
  const std::vector<uint8_t> extra = io::serialize_safetensors(vars.tensors);
  EXPECT_THROW(saved_model::load_from_bytes(good.graph, std::string(extra.begin(), extra.end()), "model"),
               DataLossError);
  EXPECT_THROW(saved_model::load_from_bytes("", good.variables, "model"), DataLossError);
  EXPECT_THROW(saved_model::load_from_bytes(good.graph, "", "model"), DataLossError);
}

}  // namespace
}  // namespace ef
