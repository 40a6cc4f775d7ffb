// Dispatch: the one path every op call takes.
//
//   infer (validate, describe outputs)
//     → graph mode: the thread's OpBuilder adds a node       (Context::builder)
//     → eager: allocate outputs, run the device's kernel now
//   → if a recorder (tape) is installed, record the call      (Context::recorder)
//
// Errors thrown anywhere on the way get the caller's file:line appended. The eager
// fast path allocates only the outputs and never looks anything up by name.
#pragma once

#include <initializer_list>
#include <span>
#include <vector>

#include "eagerflow/runtime/context.h"
#include "eagerflow/runtime/op_def.h"

namespace ef {

// Runs a single-output op.
Tensor run_op(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs,
              const CallSite& where);
inline Tensor run_op(const OpDef& op, std::initializer_list<Tensor> inputs, const Attrs& attrs,
                     const CallSite& where) {
  return run_op(op, std::span<const Tensor>(inputs.begin(), inputs.size()), attrs, where);
}

// Runs an op with any number of outputs.
std::vector<Tensor> run_op_multi(const OpDef& op, std::span<const Tensor> inputs,
                                 const Attrs& attrs, const CallSite& where);
inline std::vector<Tensor> run_op_multi(const OpDef& op, std::initializer_list<Tensor> inputs,
                                        const Attrs& attrs, const CallSite& where) {
  return run_op_multi(op, std::span<const Tensor>(inputs.begin(), inputs.size()), attrs, where);
}

}  // namespace ef
