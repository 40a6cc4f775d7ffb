// tensor_scatter_nd_update / _min / _max: a copy of `tensor` whose rows at the index
// tuples are replaced by the updates, or combined with them by min or max (TensorFlow's
// tensor_scatter_nd_*). Duplicate indices apply in order: for update the last one wins.
// tensor_scatter_nd_sub is a composite (add of the negated updates).
#include <cmath>
#include <type_traits>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/reduction.h"
#include "eagerflow/runtime/context.h"
#include "ops/array/copy.h"
#include "ops/array/scatter_rows.h"
#include "ops/jvp_helpers.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

enum class Combine { Update, Min, Max };

template <Combine C>
void infer_scatter_update(const OpCall& call, OutputMetas& out) {
  detail::check_input_count(call, 3);
  const Tensor& tensor = call.inputs[0];
  detail::check_dtype(call, call.inputs[1].dtype(), cpu::kIntTypes, "indices");
  if (C != Combine::Update) detail::check_dtype(call, tensor.dtype(), cpu::kNumericTypes, "tensor");
  detail::check_same_dtype(call, 0, 2, "tensor", "updates");
  detail::check_scatter_shapes(call.op.name, call.inputs[1].shape(), call.inputs[2].shape(), tensor.shape());
  out.add(tensor.dtype(), tensor.shape());
}

template <Combine C>
void scatter_update_cpu(const OpCall& call, std::span<Tensor> outputs) {
  Tensor& out = outputs[0];
  detail::copy_elements(*call.inputs[0].impl(), *out.impl());
  const detail::Rows rows = detail::scatter_rows(out.shape(), call.inputs[1], call.op.name);
  const int64_t K = static_cast<int64_t>(rows.offsets.size()), S = rows.row;
  if (out.num_elements() == 0 || K * S == 0) return;
  const Tensor updates = detail::materialize(call.inputs[2]);
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* dst = cpu::typed_output<T>(out);
    const T* src = cpu::typed_data<T>(updates);
    // In order, so that duplicates apply one after the other.
    for (int64_t t = 0; t < K; ++t) {
      T* o = dst + rows.offsets[static_cast<size_t>(t)];
      const T* u = src + t * S;
      for (int64_t s = 0; s < S; ++s) {
        if constexpr (C == Combine::Update) {
          o[s] = u[s];
        } else if constexpr (std::is_same_v<T, bool>) {
          o[s] = C == Combine::Max ? (o[s] || u[s]) : (o[s] && u[s]);  // not reached: bool is refused
        } else {
          bool take = C == Combine::Max ? u[s] > o[s] : u[s] < o[s];
          if constexpr (std::is_floating_point_v<T>)
            take = take || std::isnan(u[s]);  // NaN wins, as in maximum
          if (take) o[s] = u[s];
        }
      }
    }
  });
}

// Whether each update is the one that lands (the last of its index tuple), shaped like
// the updates' leading axes (indices[:-1]) and broadcastable to the updates.
Tensor lands(const Tensor& tensor, const Tensor& indices, const Tensor& updates) {
  const DeviceScope on_indices(indices.device());  // the helper tensors are made where indices are
  const Shape& ts = tensor.shape();
  const int m = static_cast<int>(indices.shape()[indices.rank() - 1]);
  const Dims lead(ts.begin(), ts.begin() + m);
  const Shape tuples(Dims(indices.shape().begin(), indices.shape().end() - 1));
  if (!tuples.is_fully_defined())
    fail<UnimplementedError>(
        "tensor_scatter_nd_update: the gradient of updates needs indices of known shape, got ",
        indices.shape());
  // -1 over tensor's indexed axes; where their sizes are unknown (a graph), shaped from
  // tensor itself when it runs.
  Tensor unset;
  if (Shape(lead).is_fully_defined()) {
    unset = fill(Shape(lead), -1, DType::Int64);
  } else {
    std::vector<int64_t> trailing;
    for (int i = m; i < ts.rank(); ++i) trailing.push_back(i);
    Tensor zero = cast(zeros_like(tensor), DType::Int64);
    unset = subtract(trailing.empty() ? zero : reduce_max(zero, Axes(trailing)), 1);
  }
  Tensor order = reshape(range(0, tuples.num_elements(), 1, DType::Int64), tuples);
  Tensor last = tensor_scatter_nd_max(unset, indices, order);
  Tensor mask = equal(gather_nd(last, indices), order);
  for (int i = indices.rank() - 1; i < updates.rank(); ++i) mask = expand_dims(mask, -1);
  return mask;
}

// Update: the tensor's gradient, zero where an update landed; each update gets the
// output gradient at its index if it is the one that landed, else zero.
std::vector<Tensor> scatter_update_grad(const GradCall& call) {
  const Tensor &g = call.output_grads[0], &indices = call.forward.inputs[1],
               &updates = call.forward.inputs[2];
  Tensor dtensor = call.needs(0) ? tensor_scatter_nd_update(g, indices, zeros_like(updates)) : Tensor();
  Tensor dupdates;
  if (call.needs(2)) {
    Tensor picked = gather_nd(g, indices);
    dupdates = where(lands(call.forward.inputs[0], indices, updates), picked, zeros_like(picked));
  }
  return {dtensor, Tensor(), dupdates};
}

// Min/max: the gradient goes to the values equal to the result, split evenly among
// ties between the tensor and the updates (TensorFlow's _TensorScatterMinOrMaxGrad).
// The count is clamped to 1, so no branch ever divides by zero.
std::vector<Tensor> scatter_extreme_grad(const GradCall& call) {
  const Tensor &x = call.forward.inputs[0], &indices = call.forward.inputs[1], &y = call.forward.inputs[2];
  const Tensor &out = call.outputs[0], &g = call.output_grads[0];
  Tensor x_ind = cast(equal(x, out), x.dtype());
  Tensor y_ind = cast(equal(y, gather_nd(out, indices)), x.dtype());
  Tensor count = maximum(tensor_scatter_nd_add(x_ind, indices, y_ind), 1);
  Tensor share = divide(g, count);
  return {multiply(share, x_ind), Tensor(), multiply(gather_nd(share, indices), y_ind)};
}

// Min/max: each output element moves with the values equal to it, averaged over ties
// (the gradient's split, transposed).
std::vector<Tensor> scatter_extreme_jvp(const JvpCall& call) {
  const Tensor &x = call.forward.inputs[0], &indices = call.forward.inputs[1], &y = call.forward.inputs[2];
  const Tensor& out = call.outputs[0];
  Tensor x_ind = cast(equal(x, out), x.dtype());
  Tensor y_ind = cast(equal(y, gather_nd(out, indices)), x.dtype());
  Tensor count = maximum(tensor_scatter_nd_add(x_ind, indices, y_ind), 1);
  Tensor moved = tensor_scatter_nd_add(multiply(x_ind, detail::tangent_or_zeros(call, 0)), indices,
                                       multiply(y_ind, detail::tangent_or_zeros(call, 2)));
  return {divide(moved, count)};
}

template <Combine C>
OpDef scatter_update_op(std::string_view name) {
  return OpDef{
      .name = name,
      .infer = infer_scatter_update<C>,
      .kernels = {scatter_update_cpu<C>},
      .gradient = C == Combine::Update ? scatter_update_grad : scatter_extreme_grad,
      // Update: the kernel picks the same landing update for the tangents.
      .jvp = C == Combine::Update ? detail::jvp_linear<value_bit(0) | value_bit(2)> : scatter_extreme_jvp,
      .batch = [](const BatchCall& call) { return detail::batch_scatter_nd(call, 1); },
  };
}

const OpDef& kUpdate = define_op(scatter_update_op<Combine::Update>("tensor_scatter_nd_update"));
const OpDef& kMin = define_op(scatter_update_op<Combine::Min>("tensor_scatter_nd_min"));
const OpDef& kMax = define_op(scatter_update_op<Combine::Max>("tensor_scatter_nd_max"));

}  // namespace

Tensor tensor_scatter_nd_update(const Tensor& tensor, const Tensor& indices, const Tensor& updates,
                                CallSite where) {
  return run_op(kUpdate, {tensor, indices, updates}, {}, where);
}
Tensor tensor_scatter_nd_min(const Tensor& tensor, const Tensor& indices, const Tensor& updates,
                             CallSite where) {
  return run_op(kMin, {tensor, indices, updates}, {}, where);
}
Tensor tensor_scatter_nd_max(const Tensor& tensor, const Tensor& indices, const Tensor& updates,
                             CallSite where) {
  return run_op(kMax, {tensor, indices, updates}, {}, where);
}
Tensor tensor_scatter_nd_sub(const Tensor& tensor, const Tensor& indices, const Tensor& updates,
                             CallSite where) {
  return detail::with_call_site(where, [&] {
    if (updates.defined() && updates.dtype() == DType::Bool)
      fail("tensor_scatter_nd_sub: argument 'updates' must be numeric, got bool");
    return tensor_scatter_nd_add(tensor, indices, negative(updates));
  });
}

}  // namespace ef
