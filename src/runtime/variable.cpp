#include "eagerflow/runtime/variable.h"

#include "eagerflow/ops/math.h"
#include "eagerflow/runtime/context.h"

namespace ef {

Variable::Variable(const Tensor& initial, std::string name, bool trainable) {
  if (!initial.defined()) fail("Variable: the initial value of '", name, "' is an undefined tensor");
  if (initial.is_symbolic()) fail("Variable: the initial value of '", name, "' is symbolic (graph mode)");
  state_ = std::make_shared<State>(State{initial, std::move(name), trainable});
}

Tensor Variable::value() const {
  if (OpRecorder* recorder = Context::current().recorder) recorder->variable_read(*this, state_->value);
  return state_->value;
}

void Variable::assign(const Tensor& value, CallSite where) {
  try {
    if (!value.defined()) fail("assign: the new value of variable '", name(), "' is undefined");
    if (value.dtype() != dtype() || value.shape() != shape())
      fail("assign: variable '", name(), "' has dtype ", dtype(), " and shape ", shape(), " but the new value has dtype ",
           value.dtype(), " and shape ", value.shape());
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
  state_->value = value;
}

void Variable::assign_add(const Tensor& delta, CallSite where) { assign(add(state_->value, delta, where), where); }
void Variable::assign_sub(const Tensor& delta, CallSite where) {
  assign(subtract(state_->value, delta, where), where);
}

std::ostream& operator<<(std::ostream& os, const Variable& v) {
  Tensor t = v.value();
  std::string s = t.to_string();  // "Tensor(...)": present it as a variable
  return os << "Variable '" << v.name() << "' " << s.substr(s.find('('));
}

}  // namespace ef
