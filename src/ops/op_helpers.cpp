#include "ops/op_helpers.h"

namespace ef::detail {

std::string dtype_set_names(DTypeSet set) {
  std::string out;
  for (DType t : kAllDTypes) {
    if (!cpu::contains(set, t)) continue;
    if (!out.empty()) out += ", ";
    out += name(t);
  }
  return out;
}

void check_dtype(const OpCall& call, DType t, DTypeSet allowed, std::string_view arg) {
  if (!cpu::contains(allowed, t))
    fail(call.op.name, ": argument '", arg, "' has dtype ", t, ", which this op does not support (supported: ",
         dtype_set_names(allowed), ")");
}

void check_input_count(const OpCall& call, size_t count) {
  if (call.inputs.size() != count)
    fail(call.op.name, ": expects ", count, count == 1 ? " input" : " inputs", ", got ", call.inputs.size());
}

void check_same_dtype(const OpCall& call, size_t i, size_t j, std::string_view arg_i,
                      std::string_view arg_j) {
  DType a = call.inputs[i].dtype(), b = call.inputs[j].dtype();
  if (a != b)
    fail(call.op.name, ": argument '", arg_j, "' has dtype ", b, " but argument '", arg_i, "' has dtype ", a,
         " (shapes ", call.inputs[i].shape(), " and ", call.inputs[j].shape(),
         "); both must have the same dtype — convert one with ef::cast");
}

}  // namespace ef::detail
