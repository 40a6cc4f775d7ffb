// Refusing variable assignments for a while on this thread: recompute_grad runs its
// function a second time to differentiate it (Note [recompute_grad]), and the state
// changes the function makes already happened in the first run; doing them again would
// apply them twice (a BatchNormalization's moving statistics, a counter).
#pragma once

#include <string_view>

namespace ef::detail {

// While it lives, Variable::assign/assign_add/assign_sub on this thread throw
// FailedPreconditionError naming the variable and `why`.
class StateWritesRefused {
 public:
  explicit StateWritesRefused(std::string_view why);
  ~StateWritesRefused();
  StateWritesRefused(const StateWritesRefused&) = delete;
  StateWritesRefused& operator=(const StateWritesRefused&) = delete;

 private:
  std::string_view saved_;
};

}  // namespace ef::detail
