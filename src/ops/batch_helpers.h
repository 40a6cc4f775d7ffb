// Builders of batching rules shared by op definitions (Note [vectorization] in
// eagerflow/graph/vectorized_map.h). Internal to src/ops.
#pragma once

#include <vector>

#include "eagerflow/runtime/op_def.h"

namespace ef::detail {

// The rank input i has in the unbatched program.
int element_rank(const BatchCall& call, size_t input);

// An axis of an element of rank `rank` (negative counts from the end), checked, as an
// axis of the batched tensor (one more, for the batch in front).
int64_t batched_axis(int64_t axis, int rank, std::string_view op);

// `t`, the same for every element, repeated along a new first axis of `batch` entries
// (a broadcast view). Throws UnimplementedError naming `what` when the batch size or
// t's shape is unknown while tracing.
Tensor repeated_along_batch(const Tensor& t, int64_t batch, std::string_view what);

// Input i with the batch in front: batched inputs as they are, the others broadcast
// along a new first axis of the batch size (which must be known).
Tensor batched_input(const BatchCall& call, size_t input);

// A batched tensor with size-1 axes after its batch axis, up to an element rank of
// `rank`: lined up to broadcast against elements of that rank.
Tensor with_element_rank(const Tensor& batched, int rank);

// The op again on `inputs` with `attrs` (the batched program's call).
std::vector<Tensor> run_batched(const BatchCall& call, const std::vector<Tensor>& inputs, const Attrs& attrs);

// The rule of ops that broadcast their inputs' leading axes: elementwise ops
// (define_op's default for them), solve. Each batched input gets size-1 axes after its
// batch axis up to the highest element rank among the inputs, so that the batch lines
// up and the rest broadcasts as it did per element.
std::vector<Tensor> batch_broadcasting(const BatchCall& call);

// For ops that already take any number of leading batch dimensions (linear algebra,
// top_k): every input batched, the op as it is.
std::vector<Tensor> batch_leading_dims(const BatchCall& call);

// For ops whose attribute `axis_attr` names one axis of input 0's elements (negative
// from the end; softmax, cumsum, argmax): the op on the batched inputs with that axis
// shifted past the batch. Every input is batched first.
std::vector<Tensor> batch_shifting_axis(const BatchCall& call, size_t axis_attr);
// The same for an attribute listing axes (reductions, reverse).
std::vector<Tensor> batch_shifting_axes(const BatchCall& call, size_t axes_attr);

// For ops that treat the first axis of the inputs in `rows` (bit i: input i) as
// independent examples (conv2d's and the pools' batch, cross entropy's rows): the batch
// is merged into that axis, the op runs once, and its outputs' first axis is split
// again. Inputs outside `rows` must not be batched (the rule declines otherwise).
// `sizes_attr`, when not -1, is an attribute holding a shape whose first entry is
// that axis (conv2d_backprop_input's input_sizes), scaled to match.
std::vector<Tensor> batch_merging_rows(const BatchCall& call, uint64_t rows, int sizes_attr = -1);

// For random ops whose first attribute is the output shape: one draw of the batch in
// front of it, so that each element gets numbers of its own.
std::vector<Tensor> batch_random(const BatchCall& call);

}  // namespace ef::detail
