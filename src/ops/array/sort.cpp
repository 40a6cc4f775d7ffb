// top_k, sort and argsort. One total order serves all three: NaN counts as larger than
// every number (so it sorts last ascending, first descending, and top_k picks it
// first), and equal values keep their original order (stable).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/runtime/context.h"
#include "ops/array/copy.h"
#include "ops/batch_helpers.h"
#include "ops/jvp_helpers.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

template <class T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  else return false;
}

// a < b in the total order above.
template <class T>
bool less_total(T a, T b) {
  if (is_nan(a)) return false;
  if (is_nan(b)) return true;
  return a < b;
}

// The lines along `axis` of a contiguous tensor: outer * inner lines of `n` elements,
// line (o, i) starting at o * n * inner + i, stepping by `inner`.
struct Lines {
  int64_t outer, n, inner;
};

Lines lines_of(const Shape& shape, int axis) {
  return {detail::product(shape.begin(), shape.begin() + axis, "sort"), shape[axis],
          detail::product(shape.begin() + axis + 1, shape.end(), "sort")};
}

// Sorts every line of `x` along `axis`; writes the sorted values (if `values`) and the
// int32 source positions (if `indices`), keeping the first `k` of each line.
void sort_lines(const Tensor& x, int axis, bool descending, int64_t k, Tensor* values, Tensor* indices) {
  Tensor dense = detail::materialize(x);
  Lines l = lines_of(dense.shape(), axis);
  if (l.outer * l.inner == 0 || l.n == 0) return;
  dispatch_dtype(dense.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = cpu::typed_data<T>(dense);
    T* vout = values ? cpu::typed_output<T>(*values) : nullptr;
    int32_t* iout = indices ? cpu::typed_output<int32_t>(*indices) : nullptr;
    const double cost = static_cast<double>(l.n) * std::log2(static_cast<double>(l.n) + 1) * 2 + 1;
    parallel_for(l.outer * l.inner, cost, [&](int64_t begin, int64_t end) {
      std::vector<int64_t> order(static_cast<size_t>(l.n));
      for (int64_t line = begin; line < end; ++line) {
        int64_t o = line / l.inner, i = line % l.inner;
        const T* in = src + o * l.n * l.inner + i;
        auto value = [&](int64_t j) { return in[j * l.inner]; };
        std::iota(order.begin(), order.end(), int64_t{0});
        // Ties break by position, which makes the (unstable) partial sort stable too.
        auto cmp = [&](int64_t a, int64_t b) {
          T va = value(a), vb = value(b);
          if (descending ? less_total(vb, va) : less_total(va, vb)) return true;
          if (descending ? less_total(va, vb) : less_total(vb, va)) return false;
          return a < b;
        };
        if (k < l.n) std::partial_sort(order.begin(), order.begin() + k, order.end(), cmp);
        else std::sort(order.begin(), order.end(), cmp);
        // Outputs have the same layout with the axis of size k.
        int64_t out_base = o * k * l.inner + i;
        for (int64_t j = 0; j < k; ++j) {
          if (vout) vout[out_base + j * l.inner] = value(order[static_cast<size_t>(j)]);
          if (iout) iout[out_base + j * l.inner] = static_cast<int32_t>(order[static_cast<size_t>(j)]);
        }
      }
    });
  });
}

// The gradient of a tensor of shape `shape` whose last axis was read at `indices`
// (shape shape[:-1] + [k]) into `g` (same shape as indices): g added at those
// positions into zeros (scatter_nd with (row, index) tuples over the flattened rows).
Tensor scatter_last_axis(const Tensor& g, const Tensor& indices, const Shape& shape) {
  const int rank = shape.rank();
  const int64_t n = shape[rank - 1], k = indices.shape()[rank - 1];
  int64_t rows = 1;
  for (int i = 0; i < rank - 1; ++i) rows *= shape[i];
  const DeviceScope on_indices(indices.device());  // the row coordinates are made where indices are
  Tensor row = ef::broadcast_to(ef::reshape(ef::range(0, rows, 1, indices.dtype()), Shape{rows, 1}), Shape{rows, k});
  Tensor coords = ef::stack({row, ef::reshape(indices, Shape{rows, k})}, -1);
  return ef::reshape(ef::scatter_nd(coords, ef::reshape(g, Shape{rows, k}), Shape{rows, n}), shape);
}

// ---- sort / argsort(x, axis, direction) ----
enum SortAttr { kAxis, kDirection };

bool descending(const OpCall& call) {
  const std::string& d = call.attrs.get<std::string>(kDirection);
  if (d == "ASCENDING") return false;
  if (d == "DESCENDING") return true;
  fail(call.op.name, ": argument 'direction' = \"", d, "\" must be \"ASCENDING\" or \"DESCENDING\"");
}

int sort_axis(const OpCall& call) {
  const Tensor& x = call.inputs[0];
  if (x.rank() == 0) fail(call.op.name, ": the input must have at least one axis, got a scalar");
  descending(call);
  int axis = normalize_axis(call.attrs.get_int(kAxis), x.rank(), call.op.name);
  int64_t n = x.shape()[axis];
  if (call.op.name == "argsort" && n > std::numeric_limits<int32_t>::max())
    fail(call.op.name, ": axis ", axis, " has ", n, " elements, too many for int32 indices");
  return axis;
}

void infer_sort(const OpCall& call, OutputMetas& out) {
  sort_axis(call);
  out.add(call.inputs[0].dtype(), call.inputs[0].shape());
}
void infer_argsort(const OpCall& call, OutputMetas& out) {
  sort_axis(call);
  out.add(DType::Int32, call.inputs[0].shape());
}

// On CUDA devices: sort_lines of backends/cuda (ranks counted per element), the same
// order.
void sort_cuda(const OpCall& call, std::span<Tensor> outputs) {
  int axis = sort_axis(call);
  cuda::sort_lines(call.inputs[0], axis, descending(call), call.inputs[0].shape()[axis], &outputs[0], nullptr,
                   call.op.name);
}
void argsort_cuda(const OpCall& call, std::span<Tensor> outputs) {
  int axis = sort_axis(call);
  cuda::sort_lines(call.inputs[0], axis, descending(call), call.inputs[0].shape()[axis], nullptr, &outputs[0],
                   call.op.name);
}

void sort_cpu(const OpCall& call, std::span<Tensor> outputs) {
  int axis = sort_axis(call);
  sort_lines(call.inputs[0], axis, descending(call), call.inputs[0].shape()[axis], &outputs[0], nullptr);
}
void argsort_cpu(const OpCall& call, std::span<Tensor> outputs) {
  int axis = sort_axis(call);
  sort_lines(call.inputs[0], axis, descending(call), call.inputs[0].shape()[axis], nullptr, &outputs[0]);
}

// Gradient: the output gradient sent back to the positions the sorted values came
// from (argsort of x, with the same axis and direction). Equal values (ties) are a
// non-differentiable point: each tied element gets the gradient of the slot that
// argsort's stable order gives it (as with top_k: the lower index comes first).
std::vector<Tensor> sort_grad(const GradCall& call) {
  const Tensor& x = call.forward.inputs[0];
  const int axis = sort_axis(call.forward);
  const int rank = x.rank();
  const std::string& direction = call.forward.attrs.get<std::string>(kDirection);
  Tensor order = ef::argsort(x, axis, direction);
  Tensor g = call.output_grads[0];
  if (axis == rank - 1) return {scatter_last_axis(g, order, x.shape())};
  // Move the axis last, scatter, move it back.
  std::vector<int64_t> perm, back(rank);
  for (int i = 0; i < rank; ++i)
    if (i != axis) perm.push_back(i);
  perm.push_back(axis);
  for (int i = 0; i < rank; ++i) back[static_cast<size_t>(perm[i])] = i;
  Dims moved;
  for (int64_t p : perm) moved.push_back(x.shape()[static_cast<int>(p)]);
  Tensor grad = scatter_last_axis(ef::transpose(g, perm), ef::transpose(order, perm), Shape(moved));
  return {ef::transpose(grad, back)};
}

// The tangent follows the values: gathered along the axis in argsort's order (the
// permutation the gradient transposes), tied elements as the gradient takes them.
Tensor take_along_axis(const Tensor& t, const Tensor& order, int axis) {
  const int rank = t.rank();
  if (axis == rank - 1) return ef::gather(t, order, axis, rank - 1);
  std::vector<int64_t> perm, back(rank);
  for (int i = 0; i < rank; ++i)
    if (i != axis) perm.push_back(i);
  perm.push_back(axis);
  for (int i = 0; i < rank; ++i) back[static_cast<size_t>(perm[i])] = i;
  Tensor moved = ef::gather(ef::transpose(t, perm), ef::transpose(order, perm), rank - 1, rank - 1);
  return ef::transpose(moved, back);
}

std::vector<Tensor> sort_jvp(const JvpCall& call) {
  const Tensor& x = call.forward.inputs[0];
  const int axis = sort_axis(call.forward);
  Tensor order = ef::argsort(x, axis, call.forward.attrs.get<std::string>(kDirection));
  return {take_along_axis(call.input_tangents[0], order, axis)};
}

const OpDef& kSort = define_op({
    .name = "sort",
    .attr_names = {"axis", "direction"},
    .infer = infer_sort,
    .kernels = {sort_cpu, sort_cuda},
    .gradient = sort_grad,
    .jvp = sort_jvp,
    .batch = [](const BatchCall& call) { return detail::batch_shifting_axis(call, kAxis); },
});

const OpDef& kArgsort = define_op({
    .name = "argsort",
    .attr_names = {"axis", "direction"},
    .infer = infer_argsort,
    .kernels = {argsort_cpu, argsort_cuda},
    .not_differentiable = "its output holds integer positions",
    .batch = [](const BatchCall& call) { return detail::batch_shifting_axis(call, kAxis); },
});

// ---- top_k(x, k, sorted) ----
enum TopKAttr { kK, kSorted };

void infer_top_k(const OpCall& call, OutputMetas& out) {
  const Tensor& x = call.inputs[0];
  int64_t k = call.attrs.get_int(kK);
  if (x.rank() == 0) fail(call.op.name, ": the input must have at least one axis, got a scalar");
  detail::check_dtype(call, x.dtype(), cpu::kNumericTypes, "input");
  if (k < 0) fail(call.op.name, ": argument 'k' must be non-negative, got ", k);
  int64_t n = x.shape()[x.rank() - 1];
  if (n != kUnknownDim && k > n)
    fail(call.op.name, ": argument 'k' = ", k, " is larger than the last axis of the input of shape ", x.shape());
  if (n > std::numeric_limits<int32_t>::max())
    fail(call.op.name, ": the last axis has ", n, " elements, too many for int32 indices");
  Shape shape = x.shape();
  shape[x.rank() - 1] = k;
  out.add(x.dtype(), shape);
  out.add(DType::Int32, shape);
}

void top_k_cpu(const OpCall& call, std::span<Tensor> outputs) {
  // Always sorted: that satisfies sorted=false too, and makes results reproducible.
  const Tensor& x = call.inputs[0];
  sort_lines(x, x.rank() - 1, true, call.attrs.get_int(kK), &outputs[0], &outputs[1]);
}

void top_k_cuda(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor& x = call.inputs[0];
  cuda::sort_lines(x, x.rank() - 1, true, call.attrs.get_int(kK), &outputs[0], &outputs[1], call.op.name);
}

// Gradient: the values' gradient added at the positions in the indices output (which
// itself is not differentiable). Ties follow the forward pass: the lower index wins.
std::vector<Tensor> top_k_grad(const GradCall& call) {
  const Tensor& x = call.forward.inputs[0];
  return {scatter_last_axis(call.output_grads[0], call.outputs[1], x.shape())};
}

// The values' tangent is the input's tangent at the indices output (last axis).
std::vector<Tensor> top_k_jvp(const JvpCall& call) {
  const Tensor& t = call.input_tangents[0];
  return {ef::gather(t, call.outputs[1], t.rank() - 1, t.rank() - 1), Tensor()};
}

const OpDef& kTopK = define_op({
    .name = "top_k",
    .attr_names = {"k", "sorted"},
    .infer = infer_top_k,
    .kernels = {top_k_cpu, top_k_cuda},
    .gradient = top_k_grad,
    .jvp = top_k_jvp,
    .batch = detail::batch_leading_dims,
});

}  // namespace

TopKResult top_k(const Tensor& x, int64_t k, bool sorted, CallSite where) {
  std::vector<Tensor> out = run_op_multi(kTopK, {x}, {k, sorted}, where);
  return {out[0], out[1]};
}

Tensor sort(const Tensor& x, int64_t axis, const std::string& direction, CallSite where) {
  return run_op(kSort, {x}, {axis, direction}, where);
}

Tensor argsort(const Tensor& x, int64_t axis, const std::string& direction, CallSite where) {
  return run_op(kArgsort, {x}, {axis, direction}, where);
}

}  // namespace ef
