// gather, gather_nd, scatter_nd and tensor_scatter_nd_add: copying kernels driven by integer index tensors.
// Index values are data, so they are checked in the kernels (before anything is
// written); a bad index is an InvalidArgumentError naming its position and value.
#include <cstring>
#include <type_traits>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/runtime/context.h"
#include "ops/array/copy.h"
#include "ops/array/scatter_rows.h"
#include "ops/batch_helpers.h"
#include "ops/jvp_helpers.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

using detail::product;

constexpr cpu::DTypeSet kIndexTypes = cpu::kIntTypes;

// The index values of a contiguous int32/int64 tensor as int64.
std::vector<int64_t> index_values(const Tensor& indices) {
  Tensor dense = detail::host_values(indices);
  std::vector<int64_t> out(static_cast<size_t>(dense.num_elements()));
  cpu::dispatch_in<kIndexTypes>(dense.dtype(), "indices", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = cpu::typed_data<T>(dense);
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int64_t>(p[i]);
  });
  return out;
}

// "[1, 2]": the position of flat element `flat` of a tensor of `shape`.
std::string position(const Shape& shape, int64_t flat) {
  Dims index(shape.rank(), 0);
  for (int i = shape.rank() - 1; i >= 0; --i) {
    index[i] = shape[i] > 0 ? flat % shape[i] : 0;
    flat = shape[i] > 0 ? flat / shape[i] : 0;
  }
  return Shape(index).to_string();
}

[[noreturn]] void bad_index(std::string_view op, const Shape& indices_shape, int64_t flat, int64_t value,
                            int64_t limit, const Shape& params_shape) {
  fail(op, ": indices", position(indices_shape, flat), " = ", value, " is not in [0, ", limit,
       ") (params shape ", params_shape, ")");
}

// Batch axes [0, batch_dims) of params and indices must agree.
void check_batch_axes(const OpCall& call, const Shape& a, const Shape& b, int batch_dims, std::string_view a_name) {
  for (int i = 0; i < batch_dims; ++i)
    if (a[i] != b[i] && a[i] != kUnknownDim && b[i] != kUnknownDim)
      fail(call.op.name, ": the first ", batch_dims, " (batch) axes of ", a_name, " and indices must match, got ",
           a_name, " shape ", a, " and indices shape ", b);
}

// Index tuples with the batch positions prepended: `tuples` has shape lead + [m]
// (lead starting with the batch_dims batch axes); the result has shape
// lead + [batch_dims + m], entry j < batch_dims being the position on batch axis j.
Tensor with_batch_coordinates(const Tensor& tuples, int batch_dims) {
  if (batch_dims == 0) return tuples;
  const Shape& shape = tuples.shape();
  Dims lead(shape.begin(), shape.end() - 1);
  lead.push_back(1);
  std::vector<Tensor> parts;
  const DeviceScope on_tuples(tuples.device());  // the batch coordinates are made where tuples are
  for (int j = 0; j < batch_dims; ++j) {
    Dims axis_shape(lead.size(), 1);
    axis_shape[j] = shape[j];
    Tensor r = ef::reshape(ef::range(0, shape[j], 1, tuples.dtype()), Shape(axis_shape));
    parts.push_back(ef::broadcast_to(r, Shape(lead)));
  }
  parts.push_back(tuples);
  return ef::concat(parts, -1);
}

}  // namespace

std::vector<Tensor> detail::batch_scatter_nd(const BatchCall& call, size_t indices_input, int shape_attr) {
  if (call.batch_size == kUnknownDim) return {};
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < call.call.inputs.size(); ++i) inputs.push_back(detail::batched_input(call, i));
  Tensor& indices = inputs[indices_input];
  if (indices.rank() < 2 || !indices.shape().is_fully_defined()) return {};
  indices = with_batch_coordinates(indices, 1);
  Attrs attrs = call.attrs();
  if (shape_attr >= 0) {
    Dims shape = attrs.get_ints(static_cast<size_t>(shape_attr));
    shape.insert(0, call.batch_size);
    attrs.set(static_cast<size_t>(shape_attr), std::move(shape));
  }
  return detail::run_batched(call, inputs, attrs);
}

namespace {

// ---- gather(params, indices, axis, batch_dims) ----
enum GatherAttr { kAxis, kBatchDims };

struct GatherDims {
  int axis, batch_dims;
};

GatherDims gather_dims(const OpCall& call) {
  const Tensor& params = call.inputs[0];
  const Tensor& indices = call.inputs[1];
  detail::check_dtype(call, indices.dtype(), kIndexTypes, "indices");
  if (params.rank() == 0) fail(call.op.name, ": argument 'params' must have at least one axis, got a scalar");
  int64_t bd = call.attrs.get_int(kBatchDims);
  if (bd < 0) bd += indices.rank();
  if (bd < 0 || bd > indices.rank())
    fail(call.op.name, ": argument 'batch_dims' = ", call.attrs.get_int(kBatchDims),
         " is out of range for indices of shape ", indices.shape());
  int axis = normalize_axis(call.attrs.get_int(kAxis), params.rank(), call.op.name);
  if (bd > axis)
    fail(call.op.name, ": argument 'batch_dims' = ", bd, " must be <= axis = ", axis, " (params shape ",
         params.shape(), ")");
  check_batch_axes(call, params.shape(), indices.shape(), static_cast<int>(bd), "params");
  return {axis, static_cast<int>(bd)};
}

void infer_gather(const OpCall& call, OutputMetas& out) {
  auto [axis, bd] = gather_dims(call);
  const Shape& p = call.inputs[0].shape();
  const Shape& ind = call.inputs[1].shape();
  Dims dims(p.begin(), p.begin() + axis);
  for (int i = bd; i < ind.rank(); ++i) dims.push_back(ind[i]);
  for (int i = axis + 1; i < p.rank(); ++i) dims.push_back(p[i]);
  Shape shape(dims);
  validate_shape(shape, call.op.name, "output", size_of(call.inputs[0].dtype()), /*allow_unknown=*/true);
  out.add(call.inputs[0].dtype(), shape);
}

// The values of gather's indices, each checked against the axis it indexes (on the
// host, whatever the device: a bad index is the same error everywhere).
std::vector<int64_t> checked_gather_indices(const OpCall& call, int axis) {
  const Shape& ps = call.inputs[0].shape();
  const Shape& is = call.inputs[1].shape();
  std::vector<int64_t> idx = index_values(call.inputs[1]);
  for (size_t i = 0; i < idx.size(); ++i)
    if (idx[i] < 0 || idx[i] >= ps[axis])
      bad_index(call.op.name, is, static_cast<int64_t>(i), idx[i], ps[axis], ps);
  return idx;
}

void gather_cpu(const OpCall& call, std::span<Tensor> outputs) {
  auto [axis, bd] = gather_dims(call);
  Tensor params = detail::materialize(call.inputs[0]);
  const Shape& ps = params.shape();
  const Shape& is = call.inputs[1].shape();
  const int64_t B = product(ps.begin(), ps.begin() + bd, "gather");
  const int64_t O = product(ps.begin() + bd, ps.begin() + axis, "gather");
  const int64_t N = ps[axis];
  const int64_t I = product(ps.begin() + axis + 1, ps.end(), "gather");
  const int64_t K = product(is.begin() + bd, is.end(), "gather");
  const std::vector<int64_t> idx = checked_gather_indices(call, axis);
  if (outputs[0].num_elements() == 0) return;
  detail::dispatch_word(params.dtype(), [&](auto tag) {
    using W = typename decltype(tag)::type;
    const W* src = static_cast<const W*>(params.raw_data());
    W* dst = static_cast<W*>(outputs[0].impl()->storage->data());
    parallel_for(B * O * K, static_cast<double>(I) * detail::kCopyElementNs + 1, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        int64_t k = r % K, bo = r / K, b = bo / O;
        int64_t row = bo * N + idx[static_cast<size_t>(b * K + k)];
        if (I == 1) dst[r] = src[row];  // the common 1-D case: no memcpy call per element
        else std::memcpy(dst + r * I, src + row * I, static_cast<size_t>(I) * sizeof(W));
      }
    });
  });
}

// Gradient of params: the output gradient added (duplicate indices add up) into zeros
// of params' shape with scatter_nd (tensor_scatter_nd_add into zeros_like where a
// graph knows that shape only partly). The gradient is laid out as B + K + O + I (batch
// axes, indices' other axes, params' axes between the batch axes and `axis`, params'
// trailing axes) and scattered into B + [N] + O + I by index tuples (batch position,
// index); then axis N moves back to `axis`. Indices get none.
std::vector<Tensor> gather_grad(const GradCall& call) {
  auto [axis, bd] = gather_dims(call.forward);
  const Shape& ps = call.forward.inputs[0].shape();
  const Tensor& indices = call.forward.inputs[1];
  const int nk = indices.rank() - bd, no = axis - bd, ni = ps.rank() - axis - 1;
  // The output gradient's axes: B [0, bd), O [bd, axis), K [axis, axis + nk), I after.
  std::vector<int64_t> to_bkoi;
  for (int i = 0; i < bd; ++i) to_bkoi.push_back(i);
  for (int i = 0; i < nk; ++i) to_bkoi.push_back(axis + i);
  for (int i = 0; i < no; ++i) to_bkoi.push_back(bd + i);
  for (int i = 0; i < ni; ++i) to_bkoi.push_back(axis + nk + i);
  Tensor updates = ef::transpose(call.output_grads[0], to_bkoi);
  Tensor coords = with_batch_coordinates(ef::expand_dims(indices, -1), bd);
  Dims scattered(ps.begin(), ps.begin() + bd);
  scattered.push_back(ps[axis]);
  for (int i = bd; i < axis; ++i) scattered.push_back(ps[i]);
  for (int i = axis + 1; i < ps.rank(); ++i) scattered.push_back(ps[i]);
  Tensor grad;
  if (Shape(scattered).is_fully_defined()) {
    grad = ef::scatter_nd(coords, updates, Shape(scattered));
  } else {  // a graph's params of partly known shape: zeros shaped like them when it runs
    std::vector<int64_t> to_scattered;
    for (int i = 0; i < bd; ++i) to_scattered.push_back(i);
    to_scattered.push_back(axis);
    for (int i = bd; i < axis; ++i) to_scattered.push_back(i);
    for (int i = axis + 1; i < ps.rank(); ++i) to_scattered.push_back(i);
    const Tensor like = no == 0 ? call.forward.inputs[0] : ef::transpose(call.forward.inputs[0], to_scattered);
    grad = ef::tensor_scatter_nd_add(ef::zeros_like(like), coords, updates);
  }
  if (no == 0) return {grad, Tensor()};
  std::vector<int64_t> back;
  for (int i = 0; i < bd; ++i) back.push_back(i);
  for (int i = 0; i < no; ++i) back.push_back(bd + 1 + i);
  back.push_back(bd);
  for (int i = 0; i < ni; ++i) back.push_back(bd + 1 + no + i);
  return {ef::transpose(grad, back), Tensor()};
}

// On CUDA devices: each output row of I elements is a row of params, found on the host
// as the CPU kernel finds it (params seen as [B, O, N, I], indices as [B, K]), then
// copied by one kernel.
void gather_cuda(const OpCall& call, std::span<Tensor> outputs) {
  auto [axis, bd] = gather_dims(call);
  const std::vector<int64_t> idx = checked_gather_indices(call, axis);
  if (outputs[0].num_elements() == 0) return;
  const Shape& ps = call.inputs[0].shape();
  const Shape& is = call.inputs[1].shape();
  const int64_t O = product(ps.begin() + bd, ps.begin() + axis, "gather");
  const int64_t N = ps[axis];
  const int64_t I = product(ps.begin() + axis + 1, ps.end(), "gather");
  const int64_t K = product(is.begin() + bd, is.end(), "gather");
  const int64_t rows = outputs[0].num_elements() / I;
  std::vector<int64_t> offsets(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t k = r % K, bo = r / K, b = bo / O;
    offsets[static_cast<size_t>(r)] = (bo * N + idx[static_cast<size_t>(b * K + k)]) * I;
  }
  const Tensor device_offsets = constant(offsets, Shape{rows}).to(outputs[0].device());
  cuda::gather_rows(call.inputs[0], device_offsets, I, outputs[0], call.op.name);
}

// Batched params with shared indices (an embedding lookup per element): the axis moves
// past the batch. Shared params with batched indices on axis 0: the batch comes out
// first as it is. Otherwise both are batched and the batch is one more batch dimension.
std::vector<Tensor> batch_gather(const BatchCall& call) {
  Attrs attrs = call.attrs();
  const int params_rank = detail::element_rank(call, 0), indices_rank = detail::element_rank(call, 1);
  const int64_t axis = normalize_axis(attrs.get_int(kAxis), params_rank, call.call.op.name);
  int64_t batch_dims = attrs.get_int(kBatchDims);
  if (batch_dims < 0) batch_dims += indices_rank;
  attrs.set(kBatchDims, batch_dims);
  if (batch_dims == 0 && !call.is_batched(1)) {
    attrs.set(kAxis, axis + 1);
    return detail::run_batched(call, {call.input(0), call.input(1)}, attrs);
  }
  if (batch_dims == 0 && !call.is_batched(0) && axis == 0)
    return detail::run_batched(call, {call.input(0), call.input(1)}, attrs);
  attrs.set(kAxis, axis + 1);
  attrs.set(kBatchDims, batch_dims + 1);
  return detail::run_batched(call, {detail::batched_input(call, 0), detail::batched_input(call, 1)}, attrs);
}

const OpDef& kGather = define_op({
    .name = "gather",
    .attr_names = {"axis", "batch_dims"},
    .infer = infer_gather,
    .kernels = {gather_cpu, gather_cuda},
    .gradient = gather_grad,
    .jvp = detail::jvp_linear<value_bit(0)>,
    .batch = batch_gather,
    .traits = {.complex = true},
});

// ---- gather_nd(params, indices, batch_dims) ----
enum GatherNdAttr { kNdBatchDims };

// Batch axes and the length M of each index tuple.
std::pair<int, int> gather_nd_dims(const OpCall& call) {
  const Shape& p = call.inputs[0].shape();
  const Shape& ind = call.inputs[1].shape();
  detail::check_dtype(call, call.inputs[1].dtype(), kIndexTypes, "indices");
  if (ind.rank() == 0) fail(call.op.name, ": argument 'indices' must have at least one axis, got a scalar");
  int64_t bd = call.attrs.get_int(kNdBatchDims);
  if (bd < 0 || bd >= ind.rank() || bd > p.rank())
    fail(call.op.name, ": argument 'batch_dims' = ", bd, " is out of range for params of shape ", p,
         " and indices of shape ", ind);
  int64_t m = ind[ind.rank() - 1];
  if (m == kUnknownDim)
    fail(call.op.name, ": the last axis of indices (shape ", ind, ") must have a known size");
  if (m > p.rank() - bd)
    fail(call.op.name, ": index tuples of length ", m, " (indices shape ", ind, ") are too long for params of shape ",
         p, " with batch_dims = ", bd);
  check_batch_axes(call, p, ind, static_cast<int>(bd), "params");
  return {static_cast<int>(bd), static_cast<int>(m)};
}

void infer_gather_nd(const OpCall& call, OutputMetas& out) {
  auto [bd, m] = gather_nd_dims(call);
  const Shape& p = call.inputs[0].shape();
  const Shape& ind = call.inputs[1].shape();
  Dims dims(ind.begin(), ind.end() - 1);
  for (int i = bd + m; i < p.rank(); ++i) dims.push_back(p[i]);
  Shape shape(dims);
  validate_shape(shape, call.op.name, "output", size_of(call.inputs[0].dtype()), /*allow_unknown=*/true);
  out.add(call.inputs[0].dtype(), shape);
}

// The rows gather_nd copies: row t of the output (of `row` elements) is params'
// elements [offsets[t], offsets[t] + row), params seen contiguous. The indices are
// checked here, on the host, whatever the device.
using detail::Rows;
Rows gather_nd_rows(const OpCall& call) {
  auto [bd, m] = gather_nd_dims(call);
  const Shape& ps = call.inputs[0].shape();
  const Shape& is = call.inputs[1].shape();
  const int64_t B = product(ps.begin(), ps.begin() + bd, "gather_nd");
  const int64_t K = product(is.begin() + bd, is.end() - 1, "gather_nd");
  const int64_t S = product(ps.begin() + bd + m, ps.end(), "gather_nd");
  const int64_t P = product(ps.begin() + bd, ps.end(), "gather_nd");
  std::vector<int64_t> idx = index_values(call.inputs[1]);
  // Offset (in elements) of each index tuple within its batch, checked as we go.
  std::vector<int64_t> offsets(static_cast<size_t>(B * K));
  for (size_t t = 0; t < offsets.size(); ++t) {
    int64_t off = 0, stride = S;
    for (int j = m - 1; j >= 0; --j) {
      int64_t v = idx[t * m + j], limit = ps[bd + j];
      if (v < 0 || v >= limit) bad_index(call.op.name, is, static_cast<int64_t>(t) * m + j, v, limit, ps);
      off += v * stride;
      stride *= limit;
    }
    offsets[t] = static_cast<int64_t>(t) / std::max<int64_t>(K, 1) * P + off;
  }
  return {std::move(offsets), S};
}

void gather_nd_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const Rows rows = gather_nd_rows(call);
  if (outputs[0].num_elements() == 0) return;
  Tensor params = detail::materialize(call.inputs[0]);
  const int64_t S = rows.row;
  const size_t esize = size_of(params.dtype());
  const char* src = static_cast<const char*>(params.raw_data());
  char* dst = static_cast<char*>(outputs[0].impl()->storage->data());
  parallel_for(static_cast<int64_t>(rows.offsets.size()), static_cast<double>(S) * detail::kCopyElementNs + 1,
               [&](int64_t begin, int64_t end) {
                 for (int64_t t = begin; t < end; ++t)
                   std::memcpy(dst + t * S * esize, src + rows.offsets[static_cast<size_t>(t)] * esize,
                               static_cast<size_t>(S) * esize);
               });
}

// On CUDA devices: the rows' offsets computed (and the indices checked) on the host,
// then one kernel copies them.
void gather_nd_cuda(const OpCall& call, std::span<Tensor> outputs) {
  const Rows rows = gather_nd_rows(call);
  if (outputs[0].num_elements() == 0) return;
  const Tensor offsets = constant(rows.offsets, Shape{static_cast<int64_t>(rows.offsets.size())});
  cuda::gather_rows(call.inputs[0], offsets.to(outputs[0].device()), rows.row, outputs[0], call.op.name);
}

// Gradient of params: scatter_nd of the output gradient at the index tuples (with the
// batch positions prepended); indices get none.
std::vector<Tensor> gather_nd_grad(const GradCall& call) {
  auto [bd, m] = gather_nd_dims(call.forward);
  (void)m;
  Tensor coords = with_batch_coordinates(call.forward.inputs[1], bd);
  const Tensor& params = call.forward.inputs[0];
  if (!params.shape().is_fully_defined())  // a graph's params of partly known shape
    return {ef::tensor_scatter_nd_add(ef::zeros_like(params), coords, call.output_grads[0]), Tensor()};
  return {ef::scatter_nd(coords, call.output_grads[0], params.shape()), Tensor()};
}

std::vector<Tensor> batch_gather_nd(const BatchCall& call) {
  Attrs attrs = call.attrs();
  attrs.set(kNdBatchDims, attrs.get_int(kNdBatchDims) + 1);
  return detail::run_batched(call, {detail::batched_input(call, 0), detail::batched_input(call, 1)}, attrs);
}

const OpDef& kGatherNd = define_op({
    .name = "gather_nd",
    .attr_names = {"batch_dims"},
    .infer = infer_gather_nd,
    .kernels = {gather_nd_cpu, gather_nd_cuda},
    .gradient = gather_nd_grad,
    .jvp = detail::jvp_linear<value_bit(0)>,
    .batch = batch_gather_nd,
    .traits = {.complex = true},
});

// ---- scatter_nd(indices, updates, shape) ----
enum ScatterAttr { kShape };

}  // namespace

// Shared with the other tensor_scatter_nd ops (ops/array/scatter_rows.h).
namespace detail {

void check_scatter_shapes(std::string_view op, const Shape& ind, const Shape& upd, const Shape& shape) {
  if (ind.rank() == 0) fail(op, ": argument 'indices' must have at least one axis, got a scalar");
  int64_t m = ind[ind.rank() - 1];
  if (m == kUnknownDim) fail(op, ": the last axis of indices (shape ", ind, ") must have a known size");
  if (m > shape.rank())
    fail(op, ": index tuples of length ", m, " (indices shape ", ind, ") are too long for output shape ", shape);
  Dims expected(ind.begin(), ind.end() - 1);
  for (int i = static_cast<int>(m); i < shape.rank(); ++i) expected.push_back(shape[i]);
  bool match = static_cast<int>(expected.size()) == upd.rank();
  for (int i = 0; match && i < upd.rank(); ++i)
    match = upd[i] == expected[i] || upd[i] == kUnknownDim || expected[i] == kUnknownDim;
  if (!match)
    fail(op, ": argument 'updates' has shape ", upd, " but indices of shape ", ind, " and output shape ", shape,
         " need updates of shape ", Shape(expected));
}

}  // namespace detail

namespace {

using detail::check_scatter_shapes;

void infer_scatter_nd(const OpCall& call, OutputMetas& out) {
  const Shape& ind = call.inputs[0].shape();
  const Shape& upd = call.inputs[1].shape();
  Shape shape(call.attrs.get_ints(kShape));
  const std::string_view op = call.op.name;
  detail::check_dtype(call, call.inputs[0].dtype(), kIndexTypes, "indices");
  validate_shape(shape, op, "shape", size_of(call.inputs[1].dtype()));
  check_scatter_shapes(op, ind, upd, shape);
  out.add(call.inputs[1].dtype(), shape);
}

}  // namespace

namespace detail {

Rows scatter_rows(const Shape& shape, const Tensor& indices, std::string_view op) {
  const Shape& is = indices.shape();
  const int m = static_cast<int>(is[is.rank() - 1]);
  const int64_t K = product(is.begin(), is.end() - 1, op);
  const int64_t S = product(shape.begin() + m, shape.end(), op);
  std::vector<int64_t> idx = index_values(indices);
  std::vector<int64_t> offsets(static_cast<size_t>(K));
  for (size_t t = 0; t < offsets.size(); ++t) {
    int64_t off = 0, stride = S;
    for (int j = m - 1; j >= 0; --j) {
      int64_t v = idx[t * m + j], limit = shape[j];
      if (v < 0 || v >= limit) bad_index(op, is, static_cast<int64_t>(t) * m + j, v, limit, shape);
      off += v * stride;
      stride *= limit;
    }
    offsets[t] = off;
  }
  return {std::move(offsets), S};
}

}  // namespace detail

namespace {

using detail::scatter_rows;

// Adds `updates` into `out` at the index tuples of `indices` (the last axis of
// indices addresses the leading axes of out); duplicates add up, bool combines with or.
void scatter_add_into(Tensor& out, const Tensor& indices, const Tensor& update_values, std::string_view op) {
  const Rows rows = scatter_rows(out.shape(), indices, op);
  const std::vector<int64_t>& offsets = rows.offsets;
  const int64_t K = static_cast<int64_t>(offsets.size()), S = rows.row;
  if (out.device().type == DeviceType::CUDA) {
    if (out.num_elements() == 0 || K * S == 0) return;
    const Tensor device_offsets = constant(offsets, Shape{K}).to(out.device());
    cuda::scatter_add_rows(update_values, device_offsets, S, out, op);
    return;
  }
  Tensor updates = detail::materialize(update_values);
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* dst = cpu::typed_output<T>(out);
    const T* src = out.num_elements() > 0 && K * S > 0 ? cpu::typed_data<T>(updates) : nullptr;
    // Sequential: duplicate indices add into the same elements.
    for (int64_t t = 0; t < K && src; ++t) {
      T* o = dst + offsets[static_cast<size_t>(t)];
      const T* u = src + t * S;
      for (int64_t s = 0; s < S; ++s) {
        if constexpr (std::is_same_v<T, bool>) {
          o[s] = o[s] || u[s];
        } else if constexpr (std::is_integral_v<T>) {  // wraps like ef::add
          using U = std::make_unsigned_t<T>;
          o[s] = static_cast<T>(static_cast<U>(o[s]) + static_cast<U>(u[s]));
        } else {
          o[s] += u[s];
        }
      }
    }
  });
}

// On CUDA devices: zeros, then the rows added with atomic adds (duplicates sum in an
// unspecified order, so float sums may differ from the CPU's in the last bits).
void scatter_nd_cuda(const OpCall& call, std::span<Tensor> outputs) {
  cuda::fill(outputs[0], int64_t{0});
  scatter_add_into(outputs[0], call.inputs[0], call.inputs[1], call.op.name);
}

void scatter_nd_cpu(const OpCall& call, std::span<Tensor> outputs) {
  Tensor& out = outputs[0];
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* dst = cpu::typed_output<T>(out);
    std::fill(dst, dst + out.num_elements(), T(0));
  });
  scatter_add_into(out, call.inputs[0], call.inputs[1], call.op.name);
}

// Gradient of updates: the output gradient read back at the indices (gather_nd);
// indices get none.
std::vector<Tensor> scatter_nd_grad(const GradCall& call) {
  return {Tensor(), ef::gather_nd(call.output_grads[0], call.forward.inputs[0])};
}

const OpDef& kScatterNd = define_op({
    .name = "scatter_nd",
    .attr_names = {"shape"},
    .infer = infer_scatter_nd,
    .kernels = {scatter_nd_cpu, scatter_nd_cuda},
    .gradient = scatter_nd_grad,
    .jvp = detail::jvp_linear<value_bit(1)>,
    .batch = [](const BatchCall& call) { return detail::batch_scatter_nd(call, 0, 0); },
});

// ---- tensor_scatter_nd_add(tensor, indices, updates) ----
// scatter_nd added into a tensor: the output's shape is the tensor's, so it need not be
// known while a graph is built (the gradients of gather and gather_nd use it then).
void infer_tensor_scatter_nd_add(const OpCall& call, OutputMetas& out) {
  const Tensor& tensor = call.inputs[0];
  detail::check_dtype(call, call.inputs[1].dtype(), kIndexTypes, "indices");
  if (call.inputs[2].dtype() != tensor.dtype())
    fail(call.op.name, ": argument 'updates' has dtype ", call.inputs[2].dtype(), " but 'tensor' has ",
         tensor.dtype());
  check_scatter_shapes(call.op.name, call.inputs[1].shape(), call.inputs[2].shape(), tensor.shape());
  out.add(tensor.dtype(), tensor.shape());
}

// Runs on any device: copy_elements and scatter_add_into work on the output's device.
void tensor_scatter_nd_add_kernel(const OpCall& call, std::span<Tensor> outputs) {
  Tensor& out = outputs[0];
  detail::copy_elements(*call.inputs[0].impl(), *out.impl());
  scatter_add_into(out, call.inputs[1], call.inputs[2], call.op.name);
}

// Gradient: the output gradient for the tensor, read back at the indices for updates.
std::vector<Tensor> tensor_scatter_nd_add_grad(const GradCall& call) {
  return {call.output_grads[0], Tensor(), ef::gather_nd(call.output_grads[0], call.forward.inputs[1])};
}

const OpDef& kTensorScatterNdAdd = define_op({
    .name = "tensor_scatter_nd_add",
    .infer = infer_tensor_scatter_nd_add,
    .kernels = {tensor_scatter_nd_add_kernel, tensor_scatter_nd_add_kernel},
    .gradient = tensor_scatter_nd_add_grad,
    .jvp = detail::jvp_linear<value_bit(0) | value_bit(2)>,
    .batch = [](const BatchCall& call) { return detail::batch_scatter_nd(call, 1); },
});

}  // namespace

Tensor gather(const Tensor& params, const Tensor& indices, int64_t axis, int64_t batch_dims, CallSite where) {
  return run_op(kGather, {params, indices}, {axis, batch_dims}, where);
}

Tensor gather_nd(const Tensor& params, const Tensor& indices, int64_t batch_dims, CallSite where) {
  return run_op(kGatherNd, {params, indices}, {batch_dims}, where);
}

Tensor scatter_nd(const Tensor& indices, const Tensor& updates, const Shape& shape, CallSite where) {
  return run_op(kScatterNd, {indices, updates}, {shape.dims()}, where);
}

Tensor tensor_scatter_nd_add(const Tensor& tensor, const Tensor& indices, const Tensor& updates, CallSite where) {
  return run_op(kTensorScatterNdAdd, {tensor, indices, updates}, {}, where);
}

}  // namespace ef
