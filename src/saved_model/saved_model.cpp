// ef::saved_model::save and load (Note [saved model directories] and Note [loading
// validates everything] in eagerflow/saved_model/saved_model.h).
#include "eagerflow/saved_model/saved_model.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <unordered_map>

#include <google/protobuf/stubs/logging.h>

#include "eagerflow/io/safetensors.h"
#include "io/atomic_file.h"
#include "saved_model/graph_serialization.h"

namespace ef::saved_model {

namespace fs = std::filesystem;
using detail::Place;
using ef::detail::ConcreteFunctionState;
using ef::detail::NodeKind;
using ef::detail::ValueRef;
namespace pb = detail::pb;

namespace {

constexpr const char* kGraphFile = "saved_model.pb";
constexpr const char* kVariablesFile = "variables/variables.safetensors";

std::string default_name(const std::string& prefix, size_t i) { return prefix + "_" + std::to_string(i); }

// The export's names, filled in where empty, checked for count and repeats.
void complete_names(Export& e) {
  const ConcreteFunctionState& st = *e.function.state();
  if (e.input_names.empty())
    for (size_t i = 0; i < st.inputs.size(); ++i)
      e.input_names.push_back(st.inputs[i].name.empty() ? default_name("input", i) : st.inputs[i].name);
  if (e.output_names.empty())
    for (size_t k = 0; k < st.outputs.size(); ++k) e.output_names.push_back(default_name("output", k));
  const auto check = [&](const std::vector<std::string>& names, size_t expected, const char* what) {
    if (names.size() != expected)
      fail("saved_model.save: export '", e.name, "' names ", names.size(), " ", what, "s, its function has ",
           expected);
    std::set<std::string> seen;
    for (const std::string& n : names)
      if (n.empty() || !seen.insert(n).second)
        fail("saved_model.save: export '", e.name, "' has an empty or repeated ", what, " name '", n, "'");
  };
  check(e.input_names, st.inputs.size(), "input");
  check(e.output_names, st.outputs.size(), "output");
}

void write_function(const ConcreteFunctionState& st, detail::VariableTable& variables, pb::FunctionDef& out) {
  out.set_name(st.name);
  detail::write_graph(*st.graph, st.forward_nodes, variables, *out.mutable_graph());
  for (const TensorSpec& s : st.inputs) detail::write_spec(s, *out.add_inputs());
  for (const ValueRef& r : st.input_refs) detail::write_ref(r, *out.add_input_refs());
  for (const ValueRef& r : st.outputs) detail::write_ref(r, *out.add_outputs());
  out.set_jit_compile(st.jit_compile);
}

// Replaces `dir` by the complete directory `written` (beside it): `dir` is either its
// old self or the new one, except between two renames, when it is briefly absent.
void move_into_place(const fs::path& written, const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    fs::rename(written, dir);
    return;
  }
  if (!fs::is_directory(dir) || (!fs::is_empty(dir) && !fs::exists(dir / kGraphFile)))
    fail<FailedPreconditionError>("saved_model.save: '", dir.string(),
                                  "' exists and is not a saved model; refusing to replace it");
  const fs::path old =
      dir.parent_path() / ("." + dir.filename().string() + ".old-" + std::to_string(::getpid()));
  fs::remove_all(old);
  fs::rename(dir, old);
  fs::rename(written, dir);
  fs::remove_all(old, ec);
}

std::string read_whole_file(const fs::path& path, const std::string& what) {
  // Non-blocking open: a FIFO must not wait for a writer; only regular files are read.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) io::detail::fail_io("saved_model.load", "open " + what, path.string(), errno);
  struct stat st;
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  ::close(fd);
  if (!regular) fail<DataLossError>("saved_model.load: '", path.string(), "' is not a regular file");
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) fail<DataLossError>("saved_model.load: reading '", path.string(), "' failed");
  return bytes;
}

}  // namespace

void save(const std::string& dir, const std::vector<Export>& exports, const std::vector<Variable>& variables,
          CallSite where) {
  fs::path tmp;
  try {
    if (dir.empty()) fail("saved_model.save: the directory name is empty");
    if (exports.empty()) fail("saved_model.save: nothing to save; pass at least one export");
    pb::SavedModel model;
    model.set_format_version(kFormatVersion);
    model.set_producer("eagerflow");
    detail::VariableTable table;
    for (const Variable& v : variables) table.index_of(v);
    std::unordered_map<const ConcreteFunctionState*, int> written;
    std::set<std::string> names;
    for (Export e : exports) {
      if (e.name.empty() || !names.insert(e.name).second)
        fail("saved_model.save: export name '", e.name, "' is empty or repeated");
      if (!e.function.state()) fail("saved_model.save: export '", e.name, "' has no function");
      complete_names(e);
      const ConcreteFunctionState* st = e.function.state().get();
      auto [it, added] = written.try_emplace(st, model.functions_size());
      if (added) write_function(*st, table, *model.add_functions());
      pb::Export& out = *model.add_exports();
      out.set_name(e.name);
      out.set_signature(e.signature);
      out.set_function(it->second);
      for (const std::string& n : e.input_names) out.add_input_names(n);
      for (const std::string& n : e.output_names) out.add_output_names(n);
      out.set_structure(e.structure);
    }
    std::map<std::string, Tensor> values;
    for (size_t i = 0; i < table.variables().size(); ++i) {
      const Variable& v = table.variables()[i];
      pb::VariableDef& def = *model.add_variables();
      def.set_name(v.name());
      def.set_key("variable_" + std::to_string(i));
      detail::write_spec({v.dtype(), v.shape(), ""}, *def.mutable_spec());
      def.set_trainable(v.trainable());
      values.emplace(def.key(), v.value().cpu());
    }
    std::string bytes;
    if (!model.SerializeToString(&bytes))
      fail<InternalError>("saved_model.save: the graph file could not be encoded");

    const fs::path target = fs::absolute(fs::path(dir).lexically_normal());
    static std::atomic<int> counter{0};
    tmp = target.parent_path() / ("." + target.filename().string() + ".saving-" + std::to_string(::getpid()) +
                                  "-" + std::to_string(counter++));
    std::error_code ec;
    if (!fs::is_directory(target.parent_path(), ec))
      fail<NotFoundError>("saved_model.save: the folder '", target.parent_path().string(),
                          "' does not exist");
    fs::create_directories(tmp / "variables");
    io::detail::write_file_atomically((tmp / kGraphFile).string(),
                                      [&](io::detail::FileWriter& w) { w.write(bytes.data(), bytes.size()); },
                                      "saved_model.save");
    io::save_safetensors((tmp / kVariablesFile).string(), values, {{"producer", "eagerflow saved model"}});
    move_into_place(tmp, target);
  } catch (Error& e) {
    std::error_code ec;
    if (!tmp.empty()) fs::remove_all(tmp, ec);
    e.add_call_site(where);
    throw;
  } catch (const fs::filesystem_error& e) {
    std::error_code ec;
    if (!tmp.empty()) fs::remove_all(tmp, ec);
    try {
      fail<FailedPreconditionError>("saved_model.save: writing '", dir, "' failed: ", e.what());
    } catch (Error& err) {
      err.add_call_site(where);
      throw;
    }
  }
}

LoadedModel load(const std::string& dir, CallSite where) {
  try {
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
      fail<NotFoundError>("saved_model.load: '", dir, "' is not a directory holding a saved model");
    const std::string graph = read_whole_file(fs::path(dir) / kGraphFile, "the graph file");
    const std::string variables = read_whole_file(fs::path(dir) / kVariablesFile, "the variables file");
    return load_from_bytes(graph, variables, dir);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

namespace {

std::vector<Variable> read_variables(const pb::SavedModel& model, const std::string& variables_bytes,
                                     const std::string& graph_file, const std::string& variables_file) {
  const io::TensorFile file = io::parse_safetensors(
      {reinterpret_cast<const uint8_t*>(variables_bytes.data()), variables_bytes.size()}, variables_file);
  if (!file.checksummed)
    fail<DataLossError>(variables_file,
                        ": the file has no checksums, so it was not written by a saved model");
  std::vector<Variable> out;
  std::set<std::string> keys;
  for (int i = 0; i < model.variables_size(); ++i) {
    const pb::VariableDef& def = model.variables(i);
    const Place at{graph_file, "variables[" + std::to_string(i) + "] ('" + def.name() + "')"};
    if (!keys.insert(def.key()).second)
      at.fail("key", "'" + def.key() + "' is used by an earlier variable too");
    const TensorSpec spec = detail::read_spec(def.spec(), at, "spec", /*allow_unknown=*/false);
    auto it = file.tensors.find(def.key());
    if (it == file.tensors.end()) at.fail("key", "'" + def.key() + "' is not in " + variables_file);
    if (it->second.dtype() != spec.dtype || it->second.shape() != spec.shape)
      at.fail("spec", "declares " + ef::detail::meta_string({spec.dtype, spec.shape}) + " but " +
                          variables_file + " holds " +
                          ef::detail::meta_string({it->second.dtype(), it->second.shape()}));
    out.emplace_back(it->second, def.name(), def.trainable());
  }
  for (const auto& [key, tensor] : file.tensors)
    if (!keys.count(key))
      fail<DataLossError>(variables_file, ": tensor '", key, "' belongs to no variable of ", graph_file);
  return out;
}

std::shared_ptr<ConcreteFunctionState> read_function(const pb::FunctionDef& def,
                                                     const std::vector<Variable>& variables,
                                                     const Place& at) {
  auto st = std::make_shared<ConcreteFunctionState>();
  st->name = def.name().empty() ? "function" : def.name();
  st->graph = detail::read_graph(def.graph(), variables, at, 0);
  if (!st->graph->capture_refs.empty()) at.fail("graph.captures", "a function's graph captures nothing");
  if (def.inputs_size() != def.input_refs_size())
    at.fail("input_refs", std::to_string(def.input_refs_size()) + " placeholders for " +
                              std::to_string(def.inputs_size()) + " inputs");
  for (int i = 0; i < def.inputs_size(); ++i) {
    const std::string field = "inputs[" + std::to_string(i) + "]";
    st->inputs.push_back(detail::read_spec(def.inputs(i), at, field, /*allow_unknown=*/true));
    const ValueRef r =
        detail::read_ref(def.input_refs(i), *st->graph, at, "input_refs[" + std::to_string(i) + "]");
    const ef::detail::Node& p = st->graph->node(r.node);
    if (p.kind != NodeKind::kPlaceholder || p.outputs[0].dtype != st->inputs.back().dtype ||
        p.outputs[0].shape != st->inputs.back().shape)
      at.fail(field,
              "is not the placeholder node " + std::to_string(r.node) + " of the same dtype and shape");
    for (const ValueRef& earlier : st->input_refs)
      if (earlier.node == r.node) at.fail(field, "feeds node " + std::to_string(r.node) + " again");
    st->input_refs.push_back(r);
  }
  for (int k = 0; k < def.outputs_size(); ++k)
    st->outputs.push_back(
        detail::read_ref(def.outputs(k), *st->graph, at, "outputs[" + std::to_string(k) + "]"));
  st->forward_nodes = static_cast<int>(st->graph->nodes.size());
  for (int i = 0; i < st->forward_nodes; ++i)
    if (st->graph->node(i).stateful()) st->stateful.push_back(i);
  st->jit_compile = def.jit_compile();
  return st;
}

}  // namespace

LoadedModel load_from_bytes(const std::string& graph_bytes, const std::string& variables_bytes,
                            const std::string& source) {
  const std::string graph_file = (fs::path(source) / kGraphFile).string();
  const std::string variables_file = (fs::path(source) / kVariablesFile).string();
  pb::SavedModel model;
  // A damaged file is our error to report; protobuf would also print its own.
  const google::protobuf::LogSilencer quiet;
  if (!model.ParseFromString(graph_bytes))
    fail<DataLossError>(graph_file, ": not a saved model's graph file (the protobuf message does not parse)");
  if (model.format_version() == 0)
    fail<DataLossError>(graph_file, ": format_version: missing, so this is not a saved model's graph file");
  if (model.format_version() > static_cast<uint32_t>(kFormatVersion))
    fail<UnimplementedError>(graph_file, ": format_version: ", model.format_version(),
                             " is newer than this eagerflow reads (", kFormatVersion,
                             "); load it with the version that wrote it or a newer one");
  LoadedModel loaded;
  loaded.format_version_ = static_cast<int>(model.format_version());
  loaded.variables_ = read_variables(model, variables_bytes, graph_file, variables_file);
  std::vector<ConcreteFunction> functions;
  for (int i = 0; i < model.functions_size(); ++i)
    functions.emplace_back(read_function(
        model.functions(i), loaded.variables_,
        Place{graph_file, "functions[" + std::to_string(i) + "] ('" + model.functions(i).name() + "')"}));
  if (model.exports_size() == 0)
    fail<DataLossError>(graph_file, ": exports: none; a saved model exports something");
  std::set<std::string> names;
  for (int i = 0; i < model.exports_size(); ++i) {
    const pb::Export& def = model.exports(i);
    const Place at{graph_file, "exports[" + std::to_string(i) + "] ('" + def.name() + "')"};
    if (def.name().empty() || !names.insert(def.name()).second) at.fail("name", "empty or repeated");
    if (def.function() < 0 || def.function() >= static_cast<int>(functions.size()))
      at.fail("function", "refers to function " + std::to_string(def.function()) + " of " +
                              std::to_string(functions.size()));
    Export e;
    e.name = def.name();
    e.signature = def.signature();
    e.function = functions[static_cast<size_t>(def.function())];
    e.input_names.assign(def.input_names().begin(), def.input_names().end());
    e.output_names.assign(def.output_names().begin(), def.output_names().end());
    e.structure = def.structure();
    try {
      complete_names(e);
    } catch (const Error& err) {
      at.fail("input_names", err.message());
    }
    if (e.input_names.size() != static_cast<size_t>(def.input_names_size()) ||
        e.output_names.size() != static_cast<size_t>(def.output_names_size()))
      at.fail("output_names", "the names do not match the function's inputs and outputs");
    loaded.exports_.push_back(std::move(e));
  }
  return loaded;
}

// ---- LoadedModel ----

const Export& LoadedModel::get(const std::string& name) const {
  for (const Export& e : exports_)
    if (e.name == name) return e;
  std::string known;
  for (const Export& e : exports_) known += (known.empty() ? "'" : ", '") + e.name + "'";
  fail<NotFoundError>("saved model: no export named '", name, "'; it has ", known);
}

std::vector<std::string> LoadedModel::signature_keys() const {
  std::vector<std::string> keys;
  for (const Export& e : exports_)
    if (e.signature) keys.push_back(e.name);
  return keys;
}

std::vector<Variable> LoadedModel::trainable_variables() const {
  std::vector<Variable> out;
  for (const Variable& v : variables_)
    if (v.trainable()) out.push_back(v);
  return out;
}

std::vector<Tensor> LoadedModel::call(const std::string& name, const std::vector<Tensor>& inputs,
                                      CallSite where) const {
  try {
    return get(name).function(inputs);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

std::map<std::string, Tensor> LoadedModel::call_signature(const std::string& name,
                                                          const std::map<std::string, Tensor>& inputs,
                                                          CallSite where) const {
  try {
    const Export& e = get(name);
    std::vector<Tensor> args;
    for (const std::string& input : e.input_names) {
      auto it = inputs.find(input);
      if (it == inputs.end()) fail("saved model: signature '", name, "' needs input '", input, "'");
      args.push_back(it->second);
    }
    for (const auto& [input, value] : inputs)
      if (std::find(e.input_names.begin(), e.input_names.end(), input) == e.input_names.end())
        fail("saved model: signature '", name, "' has no input '", input, "'");
    const std::vector<Tensor> results = e.function(args);
    std::map<std::string, Tensor> out;
    for (size_t k = 0; k < results.size(); ++k) out.emplace(e.output_names[k], results[k]);
    return out;
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

}  // namespace ef::saved_model
