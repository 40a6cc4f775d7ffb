// Hooks that see each variable as it is created, on the thread that installed them
// (TensorFlow's variable_creator_scope, reduced to what strategies need).
//
//   {
//     ef::VariableCreationHook mirror([](ef::Variable& v) { v.assign(same_on_every_rank(v.value())); });
//     model.build(...);   // every variable created here passes through the hook
//   }
//
// Note [variable creation hooks]: Variable's constructor calls the thread's hooks,
// innermost first, once the variable holds its initial value; variables created in
// graph mode (whose value is symbolic until an initializer runs) are not passed. A
// hook may read and assign the variable. ef::distribute's MirroredScope is one: it
// makes every rank start from rank 0's initial values.
#pragma once

#include <functional>

namespace ef {

class Variable;

class VariableCreationHook {
 public:
  explicit VariableCreationHook(std::function<void(Variable&)> on_create);
  ~VariableCreationHook();
  VariableCreationHook(const VariableCreationHook&) = delete;
  VariableCreationHook& operator=(const VariableCreationHook&) = delete;

 private:
  std::function<void(Variable&)> on_create_;
};

namespace detail {
// Passes a new variable to this thread's hooks (Variable's constructor calls it).
void run_variable_creation_hooks(Variable& variable);
}  // namespace detail

}  // namespace ef
