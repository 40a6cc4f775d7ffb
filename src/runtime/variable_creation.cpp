// Note [variable creation hooks] in eagerflow/runtime/variable_creation.h.
#include "eagerflow/runtime/variable_creation.h"

#include <algorithm>
#include <vector>

#include "eagerflow/core/error.h"

namespace ef {
namespace {
thread_local std::vector<const std::function<void(Variable&)>*> hooks;
}  // namespace

VariableCreationHook::VariableCreationHook(std::function<void(Variable&)> on_create)
    : on_create_(std::move(on_create)) {
  if (!on_create_) fail("VariableCreationHook: the hook is an empty function");
  hooks.push_back(&on_create_);
}

VariableCreationHook::~VariableCreationHook() {
  // Scopes end in reverse order on their thread; erase by identity all the same.
  hooks.erase(std::remove(hooks.begin(), hooks.end(), &on_create_), hooks.end());
}

namespace detail {
void run_variable_creation_hooks(Variable& variable) {
  if (hooks.empty()) return;
  // A copy: a hook may create variables (and so run the hooks) itself.
  const std::vector<const std::function<void(Variable&)>*> now(hooks.rbegin(), hooks.rend());
  for (const auto* hook : now) (*hook)(variable);
}
}  // namespace detail

}  // namespace ef
