#include "backends/cuda/kernels.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "backends/cpu/strided_loop.h"
#include "backends/cuda/codegen.h"
#include "backends/cuda/kernel_cache.h"
#include "backends/cuda/runtime.h"
#include "eagerflow/core/error.h"
#include "eagerflow/ops/axes.h"

namespace ef::cuda {
namespace {

// Mirrors EfDims of device_code/prelude.cuh: passed to kernels by value.
struct EfDims {
  long long v[8] = {};
};
static_assert(kMaxRank == 8, "EfDims holds kMaxRank dimensions");

// `t`'s strides as seen by an iteration over `shape` (t broadcast to it).
Dims broadcast_strides(const Tensor& t, const Shape& shape) {
  Dims out(static_cast<size_t>(shape.rank()), 0);
  const int shift = shape.rank() - t.rank();
  for (int d = 0; d < t.rank(); ++d)
    out[static_cast<size_t>(d + shift)] = t.shape()[d] == 1 ? 0 : t.strides()[d];
  return out;
}

void* element_ptr(const Tensor& t) {
  const TensorImpl& impl = *t.impl();
  return static_cast<char*>(impl.storage->data()) + impl.offset * static_cast<int64_t>(size_of(impl.dtype));
}

DeviceState& device_of(const Tensor& t) {
  if (t.device().type != DeviceType::CUDA)
    fail<InternalError>("a CUDA kernel was given a tensor on ", t.device());
  return device(t.device().index);
}

// Runs the map kernel of `source` writing the contiguous `out` from `inputs`.
// Runs the map kernel of `source` writing `out` (any strides: a view of a larger
// output, for concat and pad) from N - 1 `inputs`; `param` is the functor's parameter.
template <int N>
void run_map_of(const std::string& source, Tensor& out, std::span<const Tensor> inputs, std::string_view op,
                double param) {
  int64_t strides[N][kMaxRank] = {};
  std::copy(out.strides().begin(), out.strides().end(), strides[0]);
  for (int k = 1; k < N; ++k) {
    const Dims b = broadcast_strides(inputs[static_cast<size_t>(k - 1)], out.shape());
    std::copy(b.begin(), b.end(), strides[k]);
  }
  const cpu::StridedLayout<N> l = cpu::merged_layout<N>(out.shape(), strides);
  EfDims sizes, operand_strides[N];
  std::copy(l.sizes, l.sizes + kMaxRank, sizes.v);
  for (int k = 0; k < N; ++k) std::copy(l.strides[k], l.strides[k] + kMaxRank, operand_strides[k].v);
  DeviceState& d = device_of(out);
  api::CUfunction fn = compiled_kernel(d, source, op);
  void* pointers[N] = {element_ptr(out)};
  for (int k = 1; k < N; ++k) pointers[k] = element_ptr(inputs[static_cast<size_t>(k - 1)]);
  long long n = l.total;
  int rank = l.rank;
  std::vector<void*> params;
  for (void*& p : pointers) params.push_back(&p);
  params.push_back(&n);
  params.push_back(&rank);
  params.push_back(&sizes);
  for (EfDims& s : operand_strides) params.push_back(&s);
  params.push_back(&param);
  launch(d, fn, n, params.data(), op);
}

void run_map(const std::string& source, Tensor& out, std::span<const Tensor> inputs, std::string_view op,
             double param = 0) {
  if (out.num_elements() == 0) return;
  switch (inputs.size()) {
    case 1:
      return run_map_of<2>(source, out, inputs, op, param);
    case 2:
      return run_map_of<3>(source, out, inputs, op, param);
    case 3:
      return run_map_of<4>(source, out, inputs, op, param);
    default:
      fail<InternalError>(op, ": a CUDA map kernel takes 1 to 3 inputs, got ", inputs.size());
  }
}

// A host value of `dtype` in 8 bytes, for passing scalars to kernels.
struct Scalar {
  alignas(8) unsigned char bytes[8] = {};
};
template <class T>
Scalar scalar_of(T v) {
  Scalar s;
  std::memcpy(s.bytes, &v, sizeof v);
  return s;
}
Scalar scalar_from(DType dtype, double f, int64_t i, bool integer) {
  switch (dtype) {
    case DType::Float32:
      return scalar_of(integer ? static_cast<float>(i) : static_cast<float>(f));
    case DType::Float64:
      return scalar_of(integer ? static_cast<double>(i) : f);
    case DType::Int32:
      return scalar_of(static_cast<int32_t>(integer ? i : static_cast<int64_t>(f)));
    case DType::Int64:
      return scalar_of(integer ? i : static_cast<int64_t>(f));
    case DType::Bool:
      return scalar_of(integer ? i != 0 : f != 0);
    default:
      fail<InternalError>("scalar_from: dtype ", dtype);
  }
}

template <class T>
Scalar reduce_identity(std::string_view reducer) {
  using L = std::numeric_limits<T>;
  if (reducer == "sum" || reducer == "any") return scalar_of(T(0));
  if (reducer == "prod" || reducer == "all") return scalar_of(T(1));
  if (reducer == "max") return scalar_of(L::has_infinity ? -L::infinity() : L::lowest());
  return scalar_of(L::has_infinity ? L::infinity() : L::max());
}

}  // namespace

bool has_elementwise_kernel(std::string_view op) { return find_elementwise_functor(op) != nullptr; }

void elementwise_kernel(const OpCall& call, std::span<Tensor> outputs) {
  const ElementwiseFunctor* f = find_elementwise_functor(call.op.name);
  if (!f) fail<InternalError>(call.op.name, ": no CUDA functor");
  const DType t = call.inputs[static_cast<size_t>(f->dtype_input)].dtype();
  if (!(f->dtypes & (uint32_t{1} << static_cast<int>(t))))
    fail<UnimplementedError>(call.op.name, ": dtype ", t, " is not computed on CUDA devices yet (device ",
                             call.inputs[0].device(), ")");
  std::vector<DType> types;
  for (const Tensor& x : call.inputs) types.push_back(x.dtype());
  double param = 0;
  if (f->param_attr >= 0) {
    const AttrValue& v = call.attrs[static_cast<size_t>(f->param_attr)];
    param = std::holds_alternative<bool>(v) ? std::get<bool>(v) : call.attrs.get_float(f->param_attr);
  }
  run_map(elementwise_source(functor_call(f->op, f->arity, f->param_attr >= 0), types, outputs[0].dtype(),
                             call.op.name),
          outputs[0], call.inputs, call.op.name, param);
}

void cast_kernel(const OpCall& call, std::span<Tensor> outputs) {
  const DType from = call.inputs[0].dtype(), to = outputs[0].dtype();
  run_map(elementwise_source(cast_call(call.attrs.get_dtype(0), to, call.op.name),
                             std::span<const DType>(&from, 1), to, call.op.name),
          outputs[0], call.inputs, call.op.name);
}

Tensor converted(const Tensor& src, DType to, std::string_view op) {
  Tensor out = detail::empty_tensor(to, src.shape(), src.device(), op);
  run_map(convert_source(src.dtype(), to), out, std::span<const Tensor>(&src, 1), op);
  return out;
}

void copy_strided(const Tensor& src, Tensor& dst) {
  if (src.is_contiguous() && dst.is_contiguous()) {
    copy_on_device(device_of(dst), element_ptr(dst), element_ptr(src),
                   static_cast<size_t>(src.num_elements()) * size_of(src.dtype()));
    return;
  }
  run_map(copy_source(size_of(src.dtype())), dst, std::span<const Tensor>(&src, 1), "contiguous");
}

void fill(Tensor& out, const AttrValue& value) {
  if (out.num_elements() == 0) return;
  device_type(out.dtype(), "fill");  // float16 / bfloat16: UnimplementedError naming the dtype
  DeviceState& d = device_of(out);
  const bool integer = std::holds_alternative<int64_t>(value);
  const bool flag = std::holds_alternative<bool>(value);
  Scalar v =
      scalar_from(out.dtype(), integer || flag ? 0.0 : std::get<double>(value),
                  integer ? std::get<int64_t>(value) : (flag ? std::get<bool>(value) : 0), integer || flag);
  api::CUfunction fn = compiled_kernel(d, fill_source(out.dtype(), "fill"), "fill");
  void* ptr = element_ptr(out);
  long long n = out.num_elements();
  void* params[] = {&ptr, &n, v.bytes};
  launch(d, fn, n, params, "fill");
}

void reduce_kernel(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor& x = call.inputs[0];
  Tensor& out = outputs[0];
  if (out.num_elements() == 0) return;
  const Dims& attr = call.attrs.get_ints(0);
  Dims axes =
      normalize_axes(std::span<const int64_t>(attr.data(), attr.size()), x.rank(), call.op.name, false);
  std::string_view reducer = call.op.name;
  reducer.remove_prefix(reducer.find('_') + 1);  // "reduce_sum" -> "sum"
  EfDims out_sizes, out_strides, red_sizes, red_strides;
  int out_rank = 0, red_rank = 0;
  long long count = 1;
  for (int d = 0; d < x.rank(); ++d) {
    const bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (x.shape()[d] == 1) continue;
    if (reduced) {
      red_sizes.v[red_rank] = x.shape()[d];
      red_strides.v[red_rank++] = x.strides()[d];
      count *= x.shape()[d];
    } else {
      out_sizes.v[out_rank] = x.shape()[d];
      out_strides.v[out_rank++] = x.strides()[d];
    }
  }
  for (int d = 0; d < x.rank(); ++d)  // an empty reduced axis leaves every output at the identity
    if (x.shape()[d] == 0) count = 0;
  if (out_rank == 0) out_sizes.v[out_rank++] = 1;
  if (red_rank == 0) red_sizes.v[red_rank++] = 1;
  Scalar identity;
  switch (x.dtype()) {
    case DType::Float32:
      identity = reduce_identity<float>(reducer);
      break;
    case DType::Float64:
      identity = reduce_identity<double>(reducer);
      break;
    case DType::Int32:
      identity = reduce_identity<int32_t>(reducer);
      break;
    case DType::Int64:
      identity = reduce_identity<int64_t>(reducer);
      break;
    case DType::Bool:
      identity = reduce_identity<bool>(reducer);
      break;
    default:
      device_type(x.dtype(), call.op.name);  // throws UnimplementedError
  }
  DeviceState& d = device_of(out);
  api::CUfunction fn = compiled_kernel(d, reduce_source(reducer, x.dtype(), call.op.name), call.op.name);
  void* out_ptr = element_ptr(out);
  void* in_ptr = count == 0 ? out_ptr : element_ptr(x);
  long long outputs_n = out.num_elements();
  constexpr long long kMaxBlocks = 65535LL * 16;  // the kernel's block loop covers the rest
  // Few outputs over many elements: each output's elements are split among `chunks`
  // blocks (enough to fill the device), and a second launch reduces the parts.
  long long chunks = 1;
  const long long blocks_wanted = int64_t{d.multiprocessors} * 8;
  if (outputs_n < blocks_wanted && count >= 16LL * kReduceBlock)
    chunks = std::min<long long>((blocks_wanted + outputs_n - 1) / outputs_n,
                                 (count + kReduceBlock - 1) / kReduceBlock);
  if (chunks == 1) {
    void* params[] = {&out_ptr,   &in_ptr,      identity.bytes, &outputs_n, &count,       &out_rank,
                      &out_sizes, &out_strides, &red_rank,      &red_sizes, &red_strides, &chunks};
    launch_blocks(d, fn, std::min(outputs_n, kMaxBlocks), kReduceBlock, params, call.op.name);
    return;
  }
  Tensor parts = detail::empty_tensor(out.dtype(), Shape{outputs_n * chunks}, out.device(), call.op.name);
  void* parts_ptr = element_ptr(parts);
  void* first[] = {&parts_ptr, &in_ptr,      identity.bytes, &outputs_n, &count,       &out_rank,
                   &out_sizes, &out_strides, &red_rank,      &red_sizes, &red_strides, &chunks};
  launch_blocks(d, fn, std::min(outputs_n * chunks, kMaxBlocks), kReduceBlock, first, call.op.name);
  // The parts as [outputs, chunks], reduced along their last axis.
  EfDims part_out_sizes, part_out_strides, part_sizes, part_strides;
  part_out_sizes.v[0] = outputs_n;
  part_out_strides.v[0] = chunks;
  part_sizes.v[0] = chunks;
  part_strides.v[0] = 1;
  int one_dim = 1;
  long long part_count = chunks, one_chunk = 1;
  void* second[] = {&out_ptr,    &parts_ptr,  identity.bytes,  &outputs_n,
                    &part_count, &one_dim,    &part_out_sizes, &part_out_strides,
                    &one_dim,    &part_sizes, &part_strides,   &one_chunk};
  launch_blocks(d, fn, std::min(outputs_n, kMaxBlocks), kReduceBlock, second, call.op.name);
}

void matmul_kernel(const OpCall& call, std::span<Tensor> outputs) {
  Tensor a = call.inputs[0], b = call.inputs[1];
  Tensor& out = outputs[0];
  const bool ta = call.attrs.get_bool(0), tb = call.attrs.get_bool(1);
  if (a.dtype() != DType::Float32 && a.dtype() != DType::Float64)
    fail<UnimplementedError>(call.op.name, ": dtype ", a.dtype(),
                             " is not computed on CUDA devices yet (float32 and float64 are)");
  const int r = out.rank();
  const int64_t m = out.shape()[r - 2], n = out.shape()[r - 1];
  const int64_t k = ta ? a.shape()[a.rank() - 2] : a.shape()[a.rank() - 1];
  if (out.num_elements() == 0) return;
  if (k == 0) {
    fill(out, 0.0);
    return;
  }
  for (int64_t v : {m, n, k})
    if (v > std::numeric_limits<int>::max())
      fail<UnimplementedError>(call.op.name, ": matrices with a dimension over 2^31 - 1 (", a.shape(), " x ",
                               b.shape(), ") are not supported on CUDA devices");
  Dims batch(out.shape().dims().begin(), out.shape().dims().end() - 2);
  int64_t batch_count = 1;
  for (int64_t v : batch) batch_count *= v;
  // Each operand as a contiguous stack of matrices: either one matrix for every batch
  // entry (stride 0), or one per entry (broadcast to the batch shape first).
  auto prepare = [&](const Tensor& t, long long& stride) {
    int64_t t_batch = 1;
    for (int d = 0; d < t.rank() - 2; ++d) t_batch *= t.shape()[d];
    const int64_t rows = t.shape()[t.rank() - 2], cols = t.shape()[t.rank() - 1];
    Tensor view = t;
    if (t_batch != batch_count) {
      Dims shape = batch;
      shape.push_back(rows);
      shape.push_back(cols);
      Dims strides = broadcast_strides(t, Shape(shape));
      view = t_batch == 1 ? detail::make_view(t, Shape({rows, cols}),
                                              Dims{t.strides()[t.rank() - 2], t.strides()[t.rank() - 1]},
                                              t.impl()->offset)
                          : detail::make_view(t, Shape(shape), strides, t.impl()->offset);
    }
    stride = view.rank() == 2 && batch_count > 1 ? 0 : rows * cols;
    if (view.is_contiguous()) return view;
    Tensor dense = detail::empty_tensor(view.dtype(), view.shape(), view.device(), call.op.name);
    copy_strided(view, dense);
    return dense;
  };
  long long stride_a = 0, stride_b = 0;
  a = prepare(a, stride_a);
  b = prepare(b, stride_b);
  DeviceState& d = device_of(out);
  api::cublasHandle_t handle = cublas_handle(d);
  const int op_a = ta ? api::CUBLAS_OP_T : api::CUBLAS_OP_N, op_b = tb ? api::CUBLAS_OP_T : api::CUBLAS_OP_N;
  const int lda = static_cast<int>(ta ? m : k), ldb = static_cast<int>(tb ? k : n);
  api::cublasStatus_t status;
  d.last_op = call.op.name;
  // Row-major C = A B is column-major C^T = B^T A^T: the operands swap places.
  if (a.dtype() == DType::Float32) {
    const float one = 1, zero = 0;
    status = api::cublas().cublasSgemmStridedBatched(
        handle, op_b, op_a, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &one,
        static_cast<const float*>(element_ptr(b)), ldb, stride_b, static_cast<const float*>(element_ptr(a)),
        lda, stride_a, &zero, static_cast<float*>(element_ptr(out)), static_cast<int>(n), m * n,
        static_cast<int>(batch_count));
  } else {
    const double one = 1, zero = 0;
    status = api::cublas().cublasDgemmStridedBatched(
        handle, op_b, op_a, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &one,
        static_cast<const double*>(element_ptr(b)), ldb, stride_b, static_cast<const double*>(element_ptr(a)),
        lda, stride_a, &zero, static_cast<double*>(element_ptr(out)), static_cast<int>(n), m * n,
        static_cast<int>(batch_count));
  }
  if (status != api::CUBLAS_STATUS_SUCCESS)
    fail<InternalError>(call.op.name, ": cuBLAS failed with status ", status, " for a of shape ", a.shape(),
                        " and b of shape ", b.shape(), " on ", out.device());
}

Tensor copy_to(const Tensor& src, Device target) {
  const size_t bytes = static_cast<size_t>(src.num_elements()) * size_of(src.dtype());
  if (src.device().type == DeviceType::CPU) {  // host -> device
    Tensor dense = src.contiguous();
    Tensor out = detail::empty_tensor(src.dtype(), src.shape(), target, "to");
    copy_to_device(device(target.index), element_ptr(out), element_ptr(dense), bytes);
    return out;
  }
  Tensor dense = src;
  if (!src.is_contiguous()) {
    dense = detail::empty_tensor(src.dtype(), src.shape(), src.device(), "to");
    copy_strided(src, dense);
  }
  Tensor host = detail::empty_tensor(src.dtype(), src.shape(), kCPU, "to");
  copy_to_host(device(src.device().index), element_ptr(host), element_ptr(dense), bytes);
  return target.type == DeviceType::CPU ? host : copy_to(host, target);
}

}  // namespace ef::cuda

namespace ef::cuda {

void arg_reduce_kernel(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor& x = call.inputs[0];
  Tensor& out = outputs[0];
  if (out.num_elements() == 0) return;
  const int axis = static_cast<int>(normalize_axis(call.attrs.get_int(0), x.rank(), call.op.name));
  EfDims out_sizes, out_strides;
  int out_rank = 0;
  for (int d = 0; d < x.rank(); ++d)
    if (d != axis && x.shape()[d] != 1) {
      out_sizes.v[out_rank] = x.shape()[d];
      out_strides.v[out_rank++] = x.strides()[d];
    }
  if (out_rank == 0) out_sizes.v[out_rank++] = 1;
  long long count = x.shape()[axis], red_stride = x.strides()[axis], outputs_n = out.num_elements();
  DeviceState& d = device_of(out);
  const bool is_max = call.op.name == "argmax";
  api::CUfunction fn =
      compiled_kernel(d, arg_reduce_source(x.dtype(), out.dtype(), is_max, call.op.name), call.op.name);
  void* out_ptr = element_ptr(out);
  void* in_ptr = element_ptr(x);
  void* params[] = {&out_ptr, &in_ptr, &outputs_n, &count, &out_rank, &out_sizes, &out_strides, &red_stride};
  launch_blocks(d, fn, std::min<long long>(outputs_n, 65535LL * 16), kReduceBlock, params, call.op.name);
}

void scan_kernel(const OpCall& call, std::span<Tensor> outputs) {
  Tensor& out = outputs[0];
  if (out.num_elements() == 0) return;
  const Tensor x = call.inputs[0].contiguous();
  const int axis = static_cast<int>(normalize_axis(call.attrs.get_int(0), x.rank(), call.op.name));
  const bool exclusive = call.attrs.get_bool(1), reverse = call.attrs.get_bool(2);
  long long inner = 1, n = x.shape()[axis];
  for (int d = axis + 1; d < x.rank(); ++d) inner *= x.shape()[d];
  long long lines = x.num_elements() / n;
  DeviceState& d = device_of(out);
  api::CUfunction fn = compiled_kernel(
      d, scan_source(x.dtype(), call.op.name == "cumsum" ? "sum" : "prod", exclusive, reverse, call.op.name),
      call.op.name);
  void* out_ptr = element_ptr(out);
  void* x_ptr = element_ptr(x);
  void* params[] = {&out_ptr, &x_ptr, &lines, &n, &inner};
  launch(d, fn, lines, params, call.op.name, 128);
}

}  // namespace ef::cuda

namespace ef::cuda {

void run_window(WindowKernel kind, const WindowGeometry& g, std::span<const Tensor> inputs, Tensor& out,
                std::string_view op) {
  static_assert(sizeof(WindowGeometry) == 15 * sizeof(long long), "WindowGeometry mirrors EfWindow");
  if (out.num_elements() == 0) return;
  std::vector<Tensor> dense;
  for (const Tensor& t : inputs) dense.push_back(t.contiguous());
  DeviceState& d = device_of(out);
  api::CUfunction fn = compiled_kernel(d, window_source(kind, out.dtype(), op), op);
  std::vector<void*> pointers{element_ptr(out)};
  for (const Tensor& t : dense) pointers.push_back(element_ptr(t));
  long long total = out.num_elements();
  WindowGeometry geometry = g;
  std::vector<void*> params;
  for (void*& p : pointers) params.push_back(&p);
  params.push_back(&total);
  params.push_back(&geometry);
  launch(d, fn, total, params.data(), op);
}

}  // namespace ef::cuda

namespace ef::cuda {

void gather_rows(const Tensor& x, const Tensor& offsets, int64_t row, Tensor& out, std::string_view op) {
  if (out.num_elements() == 0) return;
  const Tensor dense = x.contiguous();
  DeviceState& d = device_of(out);
  api::CUfunction fn = compiled_kernel(d, gather_rows_source(size_of(x.dtype())), op);
  void* out_ptr = element_ptr(out);
  void* x_ptr = element_ptr(dense);
  void* offsets_ptr = element_ptr(offsets);
  long long n = out.num_elements(), row_size = row;
  void* params[] = {&out_ptr, &x_ptr, &offsets_ptr, &n, &row_size};
  launch(d, fn, n, params, op);
}

void scatter_add_rows(const Tensor& updates, const Tensor& offsets, int64_t row, Tensor& out,
                      std::string_view op) {
  const Tensor dense = updates.contiguous();
  long long n = dense.num_elements(), row_size = row;
  if (n == 0) return;
  DeviceState& d = device_of(out);
  api::CUfunction fn = compiled_kernel(d, scatter_add_source(out.dtype(), op), op);
  void* out_ptr = element_ptr(out);
  void* updates_ptr = element_ptr(dense);
  void* offsets_ptr = element_ptr(offsets);
  void* params[] = {&out_ptr, &updates_ptr, &offsets_ptr, &n, &row_size};
  launch(d, fn, n, params, op);
}

}  // namespace ef::cuda

namespace ef::cuda {

void sort_lines(const Tensor& x, int axis, bool descending, int64_t k, Tensor* values, Tensor* indices,
                std::string_view op) {
  const Tensor dense = x.contiguous();
  long long n = x.shape()[axis], inner = 1, total = dense.num_elements(), kk = k;
  for (int d = axis + 1; d < x.rank(); ++d) inner *= x.shape()[d];
  if (total == 0 || k == 0) return;
  Tensor& any_output = values ? *values : *indices;
  DeviceState& d = device_of(any_output);
  api::CUfunction fn = compiled_kernel(
      d, sort_rank_source(x.dtype(), descending, values != nullptr, indices != nullptr, op), op);
  void* values_ptr = values ? element_ptr(*values) : nullptr;
  void* indices_ptr = indices ? element_ptr(*indices) : nullptr;
  void* x_ptr = element_ptr(dense);
  void* params[] = {&values_ptr, &indices_ptr, &x_ptr, &total, &n, &inner, &kk};
  launch(d, fn, total, params, op);
}

}  // namespace ef::cuda
