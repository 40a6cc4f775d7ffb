#include "eagerflow/runtime/context.h"

#include "eagerflow/runtime/variable.h"

namespace ef {

Context& Context::current() {
  thread_local Context context;
  return context;
}

Tensor OpBuilder::read_variable(const Variable& variable) { return symbolic_tensor(variable.dtype(), variable.shape()); }

Tensor OpBuilder::assign_variable(const Variable& variable, const Tensor&, AssignKind) {
  return symbolic_tensor(variable.dtype(), variable.shape());
}

bool OpBuilder::variable_created(const Variable&, const Tensor& initial) { return !initial.is_symbolic(); }

Tensor symbolic_tensor(DType dtype, Shape shape) {
  validate_shape(shape, "symbolic_tensor", "shape", size_of(dtype), /*allow_unknown=*/true);
  auto impl = make_ref<TensorImpl>();
  impl->dtype = dtype;
  impl->strides = contiguous_strides(shape);
  impl->shape = std::move(shape);
  impl->symbolic = make_ref<SymbolicValue>();
  return Tensor(std::move(impl));
}

std::vector<Tensor> InferenceOnlyBuilder::build(const OpCall&, const OutputMetas& outputs) {
  ++ops_built_;
  std::vector<Tensor> out;
  for (size_t i = 0; i < outputs.size(); ++i) out.push_back(symbolic_tensor(outputs[i].dtype, outputs[i].shape));
  return out;
}

}  // namespace ef
