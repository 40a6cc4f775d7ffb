// Module bookkeeping: tracking by name and the depth-first walk behind variables()
// and named_variables() (Note [module paths] in eagerflow/nn/module.h).
#include "eagerflow/nn/module.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "eagerflow/core/error.h"

namespace ef::nn {

Module::Module(std::string name) : name_(name.empty() ? "module" : std::move(name)) {}

void Module::check_new_name(const std::string& name) const {
  if (name.empty() || name.find('/') != std::string::npos)
    fail("Module '", name_, "': a tracked name must be non-empty and contain no '/', got \"", name, "\"");
  auto same = [&](const auto& entry) { return entry.first == name; };
  if (std::any_of(variables_.begin(), variables_.end(), same) ||
      std::any_of(children_.begin(), children_.end(), same))
    fail("Module '", name_, "' already tracks something named \"", name, "\"");
}

Variable Module::track_variable(const std::string& name, Variable variable) {
  // Tracking the same variable under the same name again changes nothing (a layer's
  // add_weight result assigned to an attribute of that name, in Python).
  for (const auto& [tracked_name, tracked] : variables_)
    if (tracked_name == name && tracked.same_as(variable)) return variable;
  check_new_name(name);
  variables_.emplace_back(name, variable);
  return variable;
}

void Module::track_child(const std::string& name, std::shared_ptr<Module> module) {
  if (!module) fail("Module '", name_, "': cannot track a null module as \"", name, "\"");
  if (module.get() == this) fail("Module '", name_, "' cannot track itself as \"", name, "\"");
  check_new_name(name);
  children_.emplace_back(name, std::move(module));
}

bool Module::untrack(const std::string& name) {
  auto named = [&](const auto& entry) { return entry.first == name; };
  const size_t before = variables_.size() + children_.size();
  std::erase_if(variables_, named);
  std::erase_if(children_, named);
  return variables_.size() + children_.size() != before;
}

// Depth first: own variables, then each child's. `seen_*` make shared modules and
// variables appear once, and stop a cycle of modules from recursing forever.
void Module::collect(const std::string& prefix, std::vector<const void*>& seen_modules,
                     std::vector<const void*>& seen_variables,
                     std::vector<std::pair<std::string, Variable>>& out) const {
  seen_modules.push_back(this);
  for (const auto& [name, variable] : variables_) {
    if (std::find(seen_variables.begin(), seen_variables.end(), variable.key()) != seen_variables.end())
      continue;
    seen_variables.push_back(variable.key());
    out.emplace_back(prefix + name, variable);
  }
  for (const auto& [name, child] : children_) {
    if (std::find(seen_modules.begin(), seen_modules.end(), child.get()) != seen_modules.end()) continue;
    child->collect(prefix + name + "/", seen_modules, seen_variables, out);
  }
}

std::vector<std::pair<std::string, Variable>> Module::named_variables() const {
  std::vector<const void*> seen_modules, seen_variables;
  std::vector<std::pair<std::string, Variable>> out;
  collect("", seen_modules, seen_variables, out);
  return out;
}

std::vector<Variable> Module::variables() const {
  std::vector<Variable> out;
  for (auto& [path, variable] : named_variables()) out.push_back(variable);
  return out;
}

std::vector<Variable> Module::trainable_variables() const {
  std::vector<Variable> out;
  for (auto& [path, variable] : named_variables())
    if (variable.trainable()) out.push_back(variable);
  return out;
}

std::vector<Variable> Module::non_trainable_variables() const {
  std::vector<Variable> out;
  for (auto& [path, variable] : named_variables())
    if (!variable.trainable()) out.push_back(variable);
  return out;
}

std::string Module::summary() const {
  auto named = named_variables();
  size_t width = 8;
  for (auto& [path, variable] : named) width = std::max(width, path.size());
  std::ostringstream os;
  os << "Module '" << name_ << "'\n";
  os << std::left << std::setw(static_cast<int>(width) + 2) << "variable" << std::setw(18) << "shape"
     << std::setw(10) << "dtype" << "params\n";
  int64_t trainable = 0, total = 0;
  for (auto& [path, variable] : named) {
    std::ostringstream shape;
    shape << variable.shape();
    const int64_t count = variable.shape().num_elements();
    os << std::setw(static_cast<int>(width) + 2) << path << std::setw(18) << shape.str() << std::setw(10)
       << variable.dtype() << count << (variable.trainable() ? "" : " (non-trainable)") << "\n";
    total += count;
    if (variable.trainable()) trainable += count;
  }
  os << "Total params: " << total << " (trainable: " << trainable << ")\n";
  return os.str();
}

}  // namespace ef::nn
