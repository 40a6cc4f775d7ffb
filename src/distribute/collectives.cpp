// The collectives as ops: all_reduce, broadcast, all_gather, reduce_scatter. Each is a
// stateful OpDef (never folded, deduplicated or reordered: graphs run stateful nodes in
// creation order on the calling thread, which keeps every rank's sequence the same).
//
// Note [collective gradients]: the ranks together compute one function, and the loss
// is the sum of the ranks' losses (each rank differentiates its own). So:
//   y = all_reduce_sum(x)   on every rank:  dL/dx_s = Σ_r g_r           = all_reduce_sum(g)
//   y = all_reduce_mean(x):                 dL/dx_s = Σ_r g_r / n       = all_reduce_mean(g)
//   y = all_reduce_max(x):  to the ranks whose x is the max, split among ties
//   y = broadcast(x, root): dL/dx_root = Σ_r g_r, zero on the other ranks
//   y = all_gather(x):      dL/dx_s = Σ_r g_r[slice s]                  = reduce_scatter_sum(g)
//   y = reduce_scatter(x):  dL/dx_s[slice r] = g_r                      = all_gather(g)
// The gradients are written with these same public collectives, so they run in graphs
// and can be differentiated again. Forward mode is the same: sum, mean, broadcast and
// all_gather are linear, so a tangent goes through the collective itself; max and min
// pass the tangent of the rank holding the extremum (averaged over ties). Every rank
// must have a tangent for the input when one has, as every rank must call the collective.
// Likewise backward: a rank whose loss does not depend on a collective's output never
// runs its gradient, so the others would wait in theirs until the timeout ends the job.
#include <climits>
#include <cstring>

#include "distribute/process_group.h"
#include "eagerflow/distribute/distribute.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/operators.h"
#include "eagerflow/runtime/dispatch.h"

namespace ef::distribute {
namespace {

using detail::Group;

enum ReductionAttr { kReduction };
enum BroadcastAttr { kRoot };

MPI_Op mpi_op(Reduction r) {
  switch (r) {
    case Reduction::kMax:
      return MPI_MAX;
    case Reduction::kMin:
      return MPI_MIN;
    default:
      return MPI_SUM;  // kMean divides afterwards
  }
}

Reduction reduction_of(const OpCall& call) {
  return reduction_from_name(call.attrs.get<std::string>(kReduction));
}

// "all_reduce(sum) float32 [2, 3]": what the agreement check compares across ranks.
std::string describe(const OpCall& call, const std::string& attrs) {
  const Tensor& x = call.inputs[0];
  return ef::detail::str(call.op.name, "(", attrs, ") ", x.dtype(), " ", x.shape().to_string());
}

// Checks shared by every collective's inference: the group exists, one input of a
// supported dtype, and (for a reduction) a float dtype for kMean.
Group& check_input(const OpCall& call, bool reduces) {
  Group& g = detail::group(call.op.name);
  if (call.inputs.size() != 1) fail(call.op.name, ": takes one tensor, got ", call.inputs.size());
  const Tensor& x = call.inputs[0];
  detail::mpi_type(x.dtype(), call.op.name);
  if (reduces && reduction_of(call) == Reduction::kMean && !is_floating(x.dtype()))
    fail(call.op.name, ": reduction 'mean' needs a floating dtype, got ", x.dtype(), " of shape ", x.shape(),
         " (use 'sum')");
  return g;
}

// MPI counts are ints: a larger tensor is refused rather than truncated.
int mpi_count(int64_t n, std::string_view op) {
  if (n > INT_MAX)
    fail<ResourceExhaustedError>(op, ": ", n, " elements is more than one MPI call carries (", INT_MAX, ")");
  return static_cast<int>(n);
}

void* data_of(Tensor& t) { return t.impl()->storage ? t.impl()->storage->data() : nullptr; }

// Runs a nonblocking MPI call and waits for it, bounded by the timeout.
template <class Start>
void run_mpi(Group& g, std::string_view what, Start start) {
  MPI_Request request;
  if (start(&request) != MPI_SUCCESS) fail<InternalError>(what, ": the MPI call failed");
  detail::wait(g, request, what);
}

// ---- all_reduce ----

void infer_all_reduce(const OpCall& call, OutputMetas& out) {
  check_input(call, true);
  out.add(call.inputs[0].dtype(), call.inputs[0].shape());
}

void all_reduce_cpu(const OpCall& call, std::span<Tensor> outputs) {
  Group& g = detail::group(call.op.name);
  const auto lock = detail::lock_in_order(g);
  const Reduction r = reduction_of(call);
  const Tensor x = call.inputs[0].contiguous();
  const std::string what = describe(call, std::string(name(r)));
  const int n = mpi_count(x.num_elements(), call.op.name);
  detail::check_agreement(g, call.op.name, what);
  if (!g.uses_mpi) {
    std::memcpy(data_of(outputs[0]), x.raw_data(), static_cast<size_t>(n) * size_of(x.dtype()));
    return;
  }
  const MPI_Datatype type = detail::mpi_type(x.dtype(), call.op.name);
  run_mpi(g, what, [&](MPI_Request* rq) {
    return MPI_Iallreduce(x.raw_data(), data_of(outputs[0]), n, type, mpi_op(r), g.comm, rq);
  });
  if (r == Reduction::kMean) detail::divide_in_place(outputs[0], g.size);
}

std::vector<Tensor> all_reduce_grad(const GradCall& call) {
  const Reduction r = reduction_of(call.forward);
  const Tensor& g = call.output_grads[0];
  if (r == Reduction::kSum || r == Reduction::kMean) return {all_reduce(g, r)};
  const Tensor& x = call.forward.inputs[0];
  const Tensor mask = cast(equal(x, call.outputs[0]), x.dtype());
  return {all_reduce(g, Reduction::kSum) * mask / all_reduce(mask, Reduction::kSum)};
}

std::vector<Tensor> all_reduce_jvp(const JvpCall& call) {
  const Reduction r = reduction_of(call.forward);
  const Tensor& t = call.input_tangents[0];
  if (r == Reduction::kSum || r == Reduction::kMean) return {all_reduce(t, r)};
  const Tensor& x = call.forward.inputs[0];
  const Tensor mask = cast(equal(x, call.outputs[0]), x.dtype());
  return {all_reduce(t * mask, Reduction::kSum) / all_reduce(mask, Reduction::kSum)};
}

const OpDef& kAllReduce = define_op({
    .name = "all_reduce",
    .attr_names = {"reduction"},
    .infer = infer_all_reduce,
    .kernels = {all_reduce_cpu},
    .gradient = all_reduce_grad,
    .jvp = all_reduce_jvp,
    .traits = {.stateful = true},
});

// ---- broadcast ----

void infer_broadcast(const OpCall& call, OutputMetas& out) {
  const Group& g = check_input(call, false);
  const int64_t root = call.attrs.get_int(kRoot);
  if (root < 0 || root >= g.size)
    fail(call.op.name, ": root ", root, " is not a rank of this group of ", g.size);
  out.add(call.inputs[0].dtype(), call.inputs[0].shape());
}

void broadcast_cpu(const OpCall& call, std::span<Tensor> outputs) {
  Group& g = detail::group(call.op.name);
  const auto lock = detail::lock_in_order(g);
  const int root = static_cast<int>(call.attrs.get_int(kRoot));
  const Tensor x = call.inputs[0].contiguous();
  const std::string what = describe(call, ef::detail::str("root ", root));
  const int n = mpi_count(x.num_elements(), call.op.name);
  detail::check_agreement(g, call.op.name, what);
  if (g.rank == root)
    std::memcpy(data_of(outputs[0]), x.raw_data(), static_cast<size_t>(n) * size_of(x.dtype()));
  if (!g.uses_mpi) return;
  const MPI_Datatype type = detail::mpi_type(x.dtype(), call.op.name);
  run_mpi(g, what,
          [&](MPI_Request* rq) { return MPI_Ibcast(data_of(outputs[0]), n, type, root, g.comm, rq); });
}

std::vector<Tensor> broadcast_grad(const GradCall& call) {
  const Tensor total = all_reduce(call.output_grads[0], Reduction::kSum);
  return {rank() == call.forward.attrs.get_int(kRoot) ? total : zeros_like(total)};
}

std::vector<Tensor> broadcast_jvp(const JvpCall& call) {
  return {broadcast(call.input_tangents[0], static_cast<int>(call.forward.attrs.get_int(kRoot)))};
}

const OpDef& kBroadcast = define_op({
    .name = "broadcast",
    .attr_names = {"root"},
    .infer = infer_broadcast,
    .kernels = {broadcast_cpu},
    .gradient = broadcast_grad,
    .gradient_uses = kGradientReadsNoValues,
    .jvp = broadcast_jvp,
    .traits = {.stateful = true},
});

// ---- all_gather ----

void infer_all_gather(const OpCall& call, OutputMetas& out) {
  const Group& g = check_input(call, false);
  const Tensor& x = call.inputs[0];
  if (x.rank() == 0)
    fail(call.op.name, ": argument 'x' is a scalar; it needs an axis 0 to concatenate along");
  Shape shape = x.shape();
  if (shape[0] != kUnknownDim) shape.dims()[0] *= g.size;
  out.add(x.dtype(), shape);
}

void all_gather_cpu(const OpCall& call, std::span<Tensor> outputs) {
  Group& g = detail::group(call.op.name);
  const auto lock = detail::lock_in_order(g);
  const Tensor x = call.inputs[0].contiguous();
  const std::string what = describe(call, "");
  const int n = mpi_count(outputs[0].num_elements(), call.op.name) / g.size;
  detail::check_agreement(g, call.op.name, what);
  if (!g.uses_mpi) {
    std::memcpy(data_of(outputs[0]), x.raw_data(), static_cast<size_t>(n) * size_of(x.dtype()));
    return;
  }
  const MPI_Datatype type = detail::mpi_type(x.dtype(), call.op.name);
  run_mpi(g, what, [&](MPI_Request* rq) {
    return MPI_Iallgather(x.raw_data(), n, type, data_of(outputs[0]), n, type, g.comm, rq);
  });
}

std::vector<Tensor> all_gather_grad(const GradCall& call) {
  return {reduce_scatter(call.output_grads[0], Reduction::kSum)};
}

std::vector<Tensor> all_gather_jvp(const JvpCall& call) { return {all_gather(call.input_tangents[0])}; }

const OpDef& kAllGather = define_op({
    .name = "all_gather",
    .attr_names = {},
    .infer = infer_all_gather,
    .kernels = {all_gather_cpu},
    .gradient = all_gather_grad,
    .gradient_uses = kGradientReadsNoValues,
    .jvp = all_gather_jvp,
    .traits = {.stateful = true},
});

// ---- reduce_scatter ----

void infer_reduce_scatter(const OpCall& call, OutputMetas& out) {
  const Group& g = check_input(call, true);
  const Tensor& x = call.inputs[0];
  if (x.rank() == 0)
    fail(call.op.name, ": argument 'x' is a scalar; it needs an axis 0 to split among the ranks");
  Shape shape = x.shape();
  if (shape[0] != kUnknownDim) {
    if (shape[0] % g.size != 0)
      fail(call.op.name, ": axis 0 of x (shape ", shape, ") does not split into ", g.size, " equal parts");
    shape.dims()[0] /= g.size;
  }
  out.add(x.dtype(), shape);
}

void reduce_scatter_cpu(const OpCall& call, std::span<Tensor> outputs) {
  Group& g = detail::group(call.op.name);
  const auto lock = detail::lock_in_order(g);
  const Reduction r = reduction_of(call);
  const Tensor x = call.inputs[0].contiguous();
  const std::string what = describe(call, std::string(name(r)));
  const int n = mpi_count(x.num_elements(), call.op.name) / g.size;
  detail::check_agreement(g, call.op.name, what);
  if (!g.uses_mpi) {
    std::memcpy(data_of(outputs[0]), x.raw_data(), static_cast<size_t>(n) * size_of(x.dtype()));
    return;
  }
  const MPI_Datatype type = detail::mpi_type(x.dtype(), call.op.name);
  run_mpi(g, what, [&](MPI_Request* rq) {
    return MPI_Ireduce_scatter_block(x.raw_data(), data_of(outputs[0]), n, type, mpi_op(r), g.comm, rq);
  });
  if (r == Reduction::kMean) detail::divide_in_place(outputs[0], g.size);
}

std::vector<Tensor> reduce_scatter_grad(const GradCall& call) {
  const Reduction r = reduction_of(call.forward);
  const Tensor gathered = all_gather(call.output_grads[0]);
  if (r == Reduction::kSum) return {gathered};
  if (r == Reduction::kMean) return {gathered / static_cast<double>(size())};
  // max/min: to the ranks holding the extremum of each element, split among ties.
  const Tensor& x = call.forward.inputs[0];
  const Tensor mask = cast(equal(x, all_gather(call.outputs[0])), x.dtype());
  return {gathered * mask / all_gather(reduce_scatter(mask, Reduction::kSum))};
}

std::vector<Tensor> reduce_scatter_jvp(const JvpCall& call) {
  const Reduction r = reduction_of(call.forward);
  const Tensor& t = call.input_tangents[0];
  if (r == Reduction::kSum || r == Reduction::kMean) return {reduce_scatter(t, r)};
  const Tensor& x = call.forward.inputs[0];
  const Tensor mask = cast(equal(x, all_gather(call.outputs[0])), x.dtype());
  return {reduce_scatter(t * mask, Reduction::kSum) / reduce_scatter(mask, Reduction::kSum)};
}

const OpDef& kReduceScatter = define_op({
    .name = "reduce_scatter",
    .attr_names = {"reduction"},
    .infer = infer_reduce_scatter,
    .kernels = {reduce_scatter_cpu},
    .gradient = reduce_scatter_grad,
    .jvp = reduce_scatter_jvp,
    .traits = {.stateful = true},
});

}  // namespace

Tensor all_reduce(const Tensor& x, Reduction reduction, CallSite where) {
  return run_op(kAllReduce, {x}, {std::string(name(reduction))}, where);
}

Tensor broadcast(const Tensor& x, int root, CallSite where) {
  return run_op(kBroadcast, {x}, {static_cast<int64_t>(root)}, where);
}

Tensor all_gather(const Tensor& x, CallSite where) { return run_op(kAllGather, {x}, {}, where); }

Tensor reduce_scatter(const Tensor& x, Reduction reduction, CallSite where) {
  return run_op(kReduceScatter, {x}, {std::string(name(reduction))}, where);
}

void barrier() {
  Group& g = detail::group("barrier");
  const auto lock = detail::lock_in_order(g);
  detail::check_agreement(g, "barrier", "barrier");
  if (!g.uses_mpi) return;
  run_mpi(g, "barrier", [&](MPI_Request* rq) { return MPI_Ibarrier(g.comm, rq); });
}

}  // namespace ef::distribute
