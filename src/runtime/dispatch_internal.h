// Dispatch entries for the runtime's own callers (the graph executor), next to the
// public ones in include/eagerflow/runtime/dispatch.h. Internal to the library.
#pragma once

#include <span>
#include <vector>

#include "eagerflow/runtime/dispatch.h"

namespace ef::detail {

// run_op_multi, except that output 0 is written into the buffer of inputs[donor] when
// the op allows it (OpTraits::in_place) and that input is a contiguous tensor of output
// 0's dtype, shape and device in memory the library owns; otherwise output 0 is
// allocated as usual. The caller promises that nothing else can see that buffer (Note
// [in-place reuse] in src/graph/executor.cpp): its old contents are overwritten.
std::vector<Tensor> run_op_reusing(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs, size_t donor,
                                   const CallSite& where);

// Whether run_op_reusing would write output 0 of an op of `op`, of dtype `dtype` and
// shape `shape`, into `input`'s buffer (everything but the promise above).
bool can_reuse_buffer(const OpDef& op, const Tensor& input, DType dtype, const Shape& shape);

}  // namespace ef::detail
