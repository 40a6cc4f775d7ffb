// Object-based checkpoints: keys by object path (Note [checkpoint keys] in eagerflow/io/checkpoint.h).
#include "eagerflow/io/checkpoint.h"

#include <cmath>
#include <iostream>
#include <mutex>
#include <set>
#include <unordered_map>

#include "eagerflow/io/safetensors.h"
#include "eagerflow/nn/module.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/optim/lbfgs.h"
#include "eagerflow/optim/optimizer.h"
#include "eagerflow/runtime/context.h"

namespace ef::io {
namespace {

using NamedVariables = std::vector<std::pair<std::string, Variable>>;

// The variables of the non-optimizer objects by key, in order, and each variable's
// first key (what optimizer slots are keyed by).
struct Tracked {
  NamedVariables variables;
  std::unordered_map<const void*, std::string> key_of;
};

Tensor int64_scalar(int64_t v) { return constant(v); }

// Note [checkpoints run eagerly]: a checkpoint reads and writes the variables' state
// itself, now, whatever mode the caller is in. Inside a graph being built (a TF1-style
// program restoring before Session.run) the same calls would otherwise only add
// unconnected assign nodes, and the restore would pass without changing anything. A
// graph holds its variables by reference, so a session sees the restored values; a
// variable created in graph mode and not yet initialized is initialized by a restore.
// Nothing a checkpoint does is recorded by tapes.
}  // namespace

Checkpoint::Object::Object(const nn::Module& module)
    : variables_([&module] { return module.named_variables(); }) {}
Checkpoint::Object::Object(optim::Optimizer& optimizer) : optimizer_(&optimizer) {}
Checkpoint::Object::Object(optim::LBFGS& lbfgs) : lbfgs_(&lbfgs) {}
Checkpoint::Object::Object(Variable variable)
    : variables_([variable] { return NamedVariables{{"", variable}}; }) {}
Checkpoint::Object::Object(std::function<NamedVariables()> named_variables)
    : variables_(std::move(named_variables)) {}

Checkpoint::Checkpoint(std::initializer_list<std::pair<std::string, Object>> objects)
    : Checkpoint(std::vector<std::pair<std::string, Object>>(objects)) {}

Checkpoint::Checkpoint(std::vector<std::pair<std::string, Object>> objects) : objects_(std::move(objects)) {
  std::set<std::string> names;
  for (const auto& [name, object] : objects_) {
    if (name.empty() || name.find('/') != std::string::npos)
      fail("Checkpoint: object name '", name, "' must be non-empty and contain no '/'");
    if (!names.insert(name).second) fail("Checkpoint: two objects are named '", name, "'");
  }
}

namespace {

// The keys under "<name>/" of `tensors`, without that prefix (an L-BFGS object's state).
std::map<std::string, Tensor> under(const std::map<std::string, Tensor>& tensors, const std::string& name) {
  const std::string prefix = name + "/";
  std::map<std::string, Tensor> out;
  for (auto it = tensors.lower_bound(prefix); it != tensors.end() && it->first.starts_with(prefix); ++it)
    out.emplace(it->first.substr(prefix.size()), it->second);
  return out;
}

Tracked track(const std::vector<std::pair<std::string, Checkpoint::Object>>& objects,
              const std::function<NamedVariables(const Checkpoint::Object&)>& variables_of,
              const std::function<bool(const Checkpoint::Object&)>& has_variables) {
  Tracked t;
  std::set<std::string> keys;
  for (const auto& [name, object] : objects) {
    if (!has_variables(object)) continue;
    for (const auto& [path, var] : variables_of(object)) {
      std::string key = path.empty() ? name : name + "/" + path;
      if (!keys.insert(key).second) fail("Checkpoint: two variables have the key '", key, "'");
      t.key_of.try_emplace(var.key(), key);
      t.variables.emplace_back(std::move(key), var);
    }
  }
  return t;
}

}  // namespace

std::map<std::string, Tensor> Checkpoint::state() const {
  EagerScope eager;  // Note [checkpoints run eagerly]
  Tracked t = track(
      objects_, [](const Object& o) { return o.variables_(); }, [](const Object& o) { return o.has_variables(); });
  std::map<std::string, Tensor> out;
  for (const auto& [key, var] : t.variables) out.emplace(key, var.value());
  for (const auto& [name, object] : objects_) {
    if (object.lbfgs_)
      for (const auto& [key, value] : object.lbfgs_->state()) out[name + "/" + key] = value;
    if (!object.optimizer_) continue;
    out[name + "/iterations"] = int64_scalar(object.optimizer_->iterations());
    if (auto scale = object.optimizer_->loss_scale_state()) {
      out[name + "/loss_scale"] = constant(scale->scale);
      out[name + "/loss_scale_good_steps"] = int64_scalar(scale->good_steps);
    }
    for (const optim::Optimizer::VariableState& s : object.optimizer_->variable_states()) {
      auto it = t.key_of.find(s.variable.key());
      if (it == t.key_of.end())
        fail<FailedPreconditionError>("Checkpoint: optimizer '", name, "' has state for variable '", s.variable.name(),
                                      "', which no object of this checkpoint tracks (add its module or variable)");
      out[name + "/steps/" + it->second] = int64_scalar(s.steps);
      for (const auto& [slot, value] : s.slots) out[name + "/slots/" + it->second + "/" + slot] = value;
    }
  }
  return out;
}

void Checkpoint::save(const std::string& path, CallSite where) const {
  EagerScope eager;  // Note [checkpoints run eagerly]
  try {
    save_safetensors(path, state(), {{"format", "eagerflow.io.Checkpoint"}}, where);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

void Checkpoint::restore(const std::string& path, const RestoreOptions& options, CallSite where) {
  EagerScope eager;  // Note [checkpoints run eagerly]: the file's tensors are values, not graph constants
  try {
    TensorFile file = load_safetensors(path, where);
    restore_state(file.tensors, "file '" + path + "'", where, options);
    if (!file.checksummed) {
      // Another tool's safetensors file: nothing could verify its bytes. Said once per process.
      static std::once_flag said;
      std::call_once(said, [&] {
        std::cerr
            << "eagerflow: warning: Checkpoint.restore: '" << path
            << "' has no checksums (not written by eagerflow), so damage to its data cannot be detected\n";
      });
    }
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

void Checkpoint::restore_state(const std::map<std::string, Tensor>& tensors, const std::string& source,
                               CallSite where, const RestoreOptions& options) {
  EagerScope eager;  // Note [checkpoints run eagerly]
  try {
    const std::string context = "Checkpoint.restore: " + source;
    Tracked t = track(
        objects_, [](const Object& o) { return o.variables_(); },
        [](const Object& o) { return o.has_variables(); });
    std::set<std::string> used;
    std::map<std::string, Tensor> converted;  // with convert_dtypes: the file's floats cast
    // Finds `key` with exactly `dtype` and `shape` (or, with convert_dtypes, any float
    // dtype for a float one, cast to it), or throws naming both sides.
    auto expect = [&](const std::string& key, DType dtype, const Shape& shape) -> const Tensor& {
      auto it = tensors.find(key);
      if (it == tensors.end())
        fail<NotFoundError>(context, ": key '", key, "' (dtype ", dtype, ", shape ", shape, ") is missing");
      const bool convertible =
          options.convert_dtypes && is_floating(dtype) && is_floating(it->second.dtype());
      if ((it->second.dtype() != dtype && !convertible) || it->second.shape() != shape)
        fail(context, ": key '", key, "' has dtype ", it->second.dtype(), " and shape ", it->second.shape(),
             " but the object expects dtype ", dtype, " and shape ", shape,
             it->second.dtype() != dtype && is_floating(dtype) && is_floating(it->second.dtype())
                 ? " (restore with convert_dtypes to cast between float dtypes)"
                 : "");
      used.insert(key);
      if (it->second.dtype() == dtype) return it->second;
      return converted[key] = cast(it->second, dtype);
    };
    auto expect_count = [&](const std::string& key) {
      int64_t v = expect(key, DType::Int64, Shape{}).item<int64_t>();
      if (v < 0) fail(context, ": key '", key, "' is ", v, ", a count must be >= 0");
      return v;
    };

    // 1. Validate everything and gather what to assign.
    std::vector<std::pair<Variable, Tensor>> assignments;
    for (const auto& [key, var] : t.variables) assignments.emplace_back(var, expect(key, var.dtype(), var.shape()));
    struct OptimizerRestore {
      optim::Optimizer* optimizer;
      int64_t iterations;
      std::vector<optim::Optimizer::VariableState> states;
      std::optional<optim::Optimizer::LossScaleState> loss_scale;
    };
    std::vector<OptimizerRestore> optimizers;
    for (const auto& [name, object] : objects_) {
      if (!object.optimizer_) continue;
      OptimizerRestore r{object.optimizer_, expect_count(name + "/iterations"), {}, {}};
      // The loss scale, when the optimizer scales: a checkpoint written without it (a
      // float32 run being continued in mixed_float16) leaves the scale as it is.
      if (object.optimizer_->loss_scaling() && tensors.count(name + "/loss_scale")) {
        const double scale = expect(name + "/loss_scale", DType::Float64, Shape{}).item<double>();
        if (!(scale > 0 && std::isfinite(scale)))
          fail(context, ": key '", name, "/loss_scale' is ", scale,
               ", a loss scale must be positive and finite");
        r.loss_scale = optim::Optimizer::LossScaleState{scale, expect_count(name + "/loss_scale_good_steps")};
      } else if (!object.optimizer_->loss_scaling()) {
        used.insert(name + "/loss_scale");  // a mixed_float16 run continued without scaling needs none
        used.insert(name + "/loss_scale_good_steps");
      }
      const std::vector<std::string> slots = object.optimizer_->slot_names();
      // Each variable with a step count has every slot the optimizer uses.
      for (const auto& [key, var] : t.variables) {
        if (t.key_of.at(var.key()) != key || !tensors.count(name + "/steps/" + key)) continue;
        optim::Optimizer::VariableState s{var, expect_count(name + "/steps/" + key), {}};
        for (const std::string& slot : slots)
          s.slots.emplace(slot, expect(name + "/slots/" + key + "/" + slot, var.dtype(), var.shape()));
        r.states.push_back(std::move(s));
      }
      optimizers.push_back(std::move(r));
    }
    std::vector<std::pair<optim::LBFGS*, std::map<std::string, Tensor>>> lbfgs_states;
    for (const auto& [name, object] : objects_) {
      if (!object.lbfgs_) continue;
      std::map<std::string, Tensor> state = under(tensors, name);
      object.lbfgs_->check_state(state, source + ", object '" + name + "'");
      for (const auto& [key, value] : state) used.insert(name + "/" + key);
      lbfgs_states.emplace_back(object.lbfgs_, std::move(state));
    }
    std::vector<std::string> unexpected;
    for (const auto& [key, value] : tensors)
      if (!used.count(key)) unexpected.push_back(key);
    if (!unexpected.empty()) {
      std::string list;
      for (size_t i = 0; i < unexpected.size() && i < 5; ++i)
        list += (i ? ", '" : "'") + unexpected[i] + "' " + tensors.at(unexpected[i]).shape().to_string();
      fail(context, ": ", unexpected.size(), " key(s) match no object of the checkpoint: ", list,
           unexpected.size() > 5 ? ", ..." : "",
           " (a slot of an optimizer configured differently, or a variable the model does not have)");
    }

    // 2. Assign: nothing below can fail on validated input.
    for (auto& [var, value] : assignments) var.assign(value);
    for (OptimizerRestore& r : optimizers) {
      r.optimizer->restore_state(r.iterations, r.states, where);
      if (r.loss_scale) r.optimizer->restore_loss_scale(*r.loss_scale);
    }
    for (auto& [lbfgs, state] : lbfgs_states) lbfgs->restore_state(state, source, where);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

}  // namespace ef::io
