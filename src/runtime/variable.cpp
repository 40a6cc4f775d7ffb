#include "eagerflow/runtime/variable.h"

#include "eagerflow/ops/math.h"
#include "eagerflow/runtime/context.h"
#include "eagerflow/runtime/variable_creation.h"
#include "runtime/state_writes.h"

namespace ef {

Variable::Variable(const Tensor& initial, std::string name, bool trainable) {
  if (!initial.defined()) fail("Variable: the initial value of '", name, "' is an undefined tensor");
  const Context& context = Context::current();
  if (context.function_trace && !context.function_trace->may_create_variables)
    fail<FailedPreconditionError>(
        "Variable: '", name, "' is created while function '", context.function_trace->function,
        "' is traced again (a new input signature); a function may create variables on its first trace only, "
        "and later traces reuse them (Keras layers and optimizers do). Create it outside the function or on "
        "the "
        "first call");
  OpBuilder* builder = context.builder;
  if (initial.is_symbolic() && !builder)
    fail("Variable: the initial value of '", name, "' is symbolic (graph mode) but no graph is being built");
  if (!initial.shape().is_fully_defined())
    fail("Variable: the initial value of '", name, "' has the partially known shape ", initial.shape(),
         "; a variable's shape must be fully known");
  state_ = std::make_shared<State>(State{Tensor(), initial.dtype(), initial.shape(), std::move(name), trainable});
  // A variable lives on its initial value's device, or on the GPU a DeviceScope names.
  const bool moves =
      !initial.is_symbolic() && context.device.type != DeviceType::CPU && initial.device() != context.device;
  const Tensor placed = moves ? initial.to(context.device) : initial;
  if (!builder || builder->variable_created(*this, placed)) state_->value = placed;
  // Note [variable creation hooks]: eager variables only, once they hold their value.
  if (state_->value.defined() && !state_->value.is_symbolic()) detail::run_variable_creation_hooks(*this);
}

Tensor Variable::checked_value(const char* op) const {
  if (!state_->value.defined())
    fail<FailedPreconditionError>(op, ": variable '", name(), "' (", dtype(), ", shape ", shape(),
                                  ") is not initialized: it was created in graph mode; run the graph's "
                                  "global_variables_initializer() first");
  return state_->value;
}

Tensor Variable::value() const {
  Context& ctx = Context::current();
  Tensor v = ctx.builder ? ctx.builder->read_variable(*this) : checked_value("read");
  if (ctx.recorder) ctx.recorder->variable_read(*this, v);
  if (state_->autocast && ctx.autocast_dtype && *ctx.autocast_dtype != v.dtype())
    return cast(v, *ctx.autocast_dtype);
  return v;
}

AutoCastScope::AutoCastScope(std::optional<DType> dtype) : saved_(Context::current().autocast_dtype) {
  Context::current().autocast_dtype = dtype;
}
AutoCastScope::~AutoCastScope() { Context::current().autocast_dtype = saved_; }

namespace {
Tensor combined(const Tensor& value, AssignKind kind, const Tensor& current, const CallSite& where) {
  switch (kind) {
    case AssignKind::kAssign: break;
    case AssignKind::kAdd: return add(current, value, where);
    case AssignKind::kSubtract: return subtract(current, value, where);
  }
  return value;
}
const char* assign_name(AssignKind kind) {
  return kind == AssignKind::kAssign ? "assign" : kind == AssignKind::kAdd ? "assign_add" : "assign_sub";
}
}  // namespace

namespace {
thread_local std::string_view refused_writes;  // why, while detail::StateWritesRefused lives
}  // namespace

detail::StateWritesRefused::StateWritesRefused(std::string_view why) : saved_(refused_writes) {
  refused_writes = why;
}
detail::StateWritesRefused::~StateWritesRefused() { refused_writes = saved_; }

Tensor Variable::update(const Tensor& new_value, AssignKind kind, const CallSite& where) {
  const char* op = assign_name(kind);
  try {
    if (!refused_writes.empty())
      fail<FailedPreconditionError>(op, ": variable '", name(), "' may not change here: ", refused_writes);
    if (!new_value.defined()) fail(op, ": the new value of variable '", name(), "' is undefined");
    const bool converts = state_->autocast && is_floating(new_value.dtype()) && new_value.dtype() != dtype();
    const Tensor value = converts ? cast(new_value, dtype(), where) : new_value;
    // += and -= broadcast like the ops they are; the result must keep the variable's shape.
    const bool exact = kind == AssignKind::kAssign && !value.is_symbolic();  // graphs check partial shapes
    if (value.dtype() != dtype() || (exact && value.shape() != shape()))
      fail(op, ": variable '", name(), "' has dtype ", dtype(), " and shape ", shape(), " but the new value has dtype ",
           value.dtype(), " and shape ", value.shape());
    if (OpBuilder* builder = Context::current().builder) return builder->assign_variable(*this, value, kind);
    // The variable stays on its device: a value from elsewhere is copied there.
    const Tensor& current = state_->value;  // undefined until a graph's initializer runs
    const Tensor here =
        !current.defined() || value.device() == current.device() ? value : value.to(current.device());
    Tensor next = kind == AssignKind::kAssign ? here : combined(here, kind, checked_value(op), where);
    if (next.shape() != shape())
      fail(op, ": variable '", name(), "' has shape ", shape(), " but the new value has shape ", next.shape());
    state_->value = next;
    return next;
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

Tensor Variable::assign(const Tensor& value, CallSite where) { return update(value, AssignKind::kAssign, where); }
Tensor Variable::assign_add(const Tensor& delta, CallSite where) { return update(delta, AssignKind::kAdd, where); }
Tensor Variable::assign_sub(const Tensor& delta, CallSite where) {
  return update(delta, AssignKind::kSubtract, where);
}

std::ostream& operator<<(std::ostream& os, const Variable& v) {
  if (!v.initialized())
    return os << "Variable '" << v.name() << "' (uninitialized, shape=" << v.shape() << ", dtype=" << v.dtype() << ")";
  Tensor t = v.value();
  std::string s = t.to_string();  // "Tensor(...)": present it as a variable
  return os << "Variable '" << v.name() << "' " << s.substr(s.find('('));
}

}  // namespace ef
